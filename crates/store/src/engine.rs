//! Where a store's queries run: Apache DataFusion in this process, or an
//! Apache DataFusion Ballista cluster, which takes the same logical plans
//! (serialized by `datafusion-proto`) and runs them on its executors.

use datafusion::prelude::SessionContext;

use crate::error::StoreError;

/// The engine a [`crate::Store`] is opened on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Engine {
    /// DataFusion, in this process.
    #[default]
    Local,
    /// A Ballista scheduler, as `df://host:port` (port 50050 when left
    /// out). Its executors must reach the store's files at the same path,
    /// or the same object store.
    Cluster(String),
}

impl Engine {
    /// The engine `--cluster` names: `df://host[:port]`.
    pub fn cluster(url: &str) -> Result<Engine, StoreError> {
        let parsed =
            url::Url::parse(url).map_err(|e| StoreError::Query(format!("cluster {url:?}: {e}")))?;
        if parsed.scheme() != "df" || parsed.host_str().is_none_or(str::is_empty) {
            return Err(StoreError::Query(format!(
                "cluster {url:?}: expected df://host:port, a Ballista scheduler"
            )));
        }
        Ok(Engine::Cluster(url.to_string()))
    }

    /// A session on this engine. A cluster's is checked at once: a
    /// scheduler that does not answer is an error here, not at the first
    /// query.
    pub(crate) async fn session(&self) -> Result<SessionContext, StoreError> {
        let ctx = match self {
            Engine::Local => local_session()?,
            Engine::Cluster(url) => cluster_session(url).await?,
        };
        // `SHOW TABLES`, `SHOW COLUMNS FROM samples` and
        // `information_schema`, so that SQL users find the tables there.
        let state = ctx.state_ref();
        let mut state = state.write();
        state.config_mut().options_mut().catalog.information_schema = true;
        drop(state);
        Ok(ctx)
    }
}

/// A session here that lists a table's files at each query. DataFusion
/// keeps listings for good by default: a store opened once (`serve
/// --store`) would never read what `receive` wrote since, and a read
/// retried after a compaction would look for the old files again.
fn local_session() -> Result<SessionContext, StoreError> {
    use datafusion::execution::cache::cache_manager::CacheManagerConfig;
    use datafusion::execution::runtime_env::RuntimeEnvBuilder;
    let caches = CacheManagerConfig::default().with_list_files_cache_limit(0);
    let runtime = RuntimeEnvBuilder::new()
        .with_cache_manager(caches)
        .build_arc()?;
    let config = datafusion::prelude::SessionConfig::new();
    Ok(SessionContext::new_with_config_rt(config, runtime))
}

/// A query only executors with DataFusion's nested functions run: the
/// values come from a plan, so no optimizer folds them away before them.
#[cfg(feature = "cluster")]
const NESTED_PROBE: &str = "SELECT array_element(make_array(column1), 1), \
     map_extract(map([column2], [column1]), column2) FROM (VALUES (1, 'a'))";

#[cfg(feature = "cluster")]
async fn cluster_session(url: &str) -> Result<SessionContext, StoreError> {
    use ballista::prelude::SessionContextExt;
    let failed = |e: &dyn std::fmt::Display| {
        let text = e.to_string().replace('\n', " ");
        StoreError::Engine(format!("cluster {url}: {text}"))
    };
    let ctx = SessionContext::remote(url).await.map_err(|e| failed(&e))?;
    // A trivial query, so that a scheduler which is not there is named
    // now rather than inside a report's first query.
    let run = |sql: &'static str| {
        let ctx = &ctx;
        async move { ctx.sql(sql).await?.collect().await }
    };
    run("SELECT 1").await.map_err(|e| failed(&e))?;
    // Ballista's stock executors register DataFusion's core functions
    // only; selectors on labels and the SQL views use the nested ones.
    run(NESTED_PROBE).await.map_err(|e| {
        StoreError::Engine(format!(
            "cluster {url}: its executors lack DataFusion's nested functions (array_element, \
             map_extract, ...), which label selectors and the store's views use; register \
             them in the executors (docs/store.md): {}",
            e.to_string().replace('\n', " ")
        ))
    })?;
    Ok(ctx)
}

#[cfg(not(feature = "cluster"))]
async fn cluster_session(url: &str) -> Result<SessionContext, StoreError> {
    Err(StoreError::Query(format!(
        "cluster {url}: this build of protoprof-store has no cluster support (feature `cluster`)"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cluster_is_a_df_url_with_a_host() {
        assert!(Engine::cluster("df://127.0.0.1:50050").is_ok());
        assert!(Engine::cluster("df://scheduler").is_ok());
        for bad in ["http://x:50050", "df://", "127.0.0.1:50050", ""] {
            let error = Engine::cluster(bad).unwrap_err().to_string();
            assert!(error.contains("cluster"), "{bad}: {error}");
        }
    }

    #[test]
    fn a_store_opened_once_reads_what_was_written_since() {
        let dir = tempfile::tempdir().unwrap();
        let context = crate::ProfileContext {
            service_name: "s".into(),
            ..Default::default()
        };
        let write = |value: i64| {
            let mut writer = crate::StoreWriter::new(dir.path());
            let p = crate::test_profiles::profile(value);
            writer.add(&p, &context).unwrap();
            writer.flush().unwrap();
        };
        write(1);
        let store = crate::Store::open(dir.path()).unwrap();
        let total = || {
            let all = store.select(&crate::Query::default()).unwrap().profile;
            all.sample.iter().map(|s| s.value[0]).sum::<i64>()
        };
        assert_eq!(total(), 1);
        write(2);
        assert_eq!(total(), 3);
    }
}
