//! Where a store lives: a local directory, or a prefix in object storage
//! (`s3://bucket/prefix`) read and written through the `object_store`
//! crate DataFusion reads with. S3's settings come from the environment
//! as AWS's tools take them (`AWS_ENDPOINT_URL`, `AWS_ACCESS_KEY_ID`,
//! `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`, `AWS_ALLOW_HTTP`, ...).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use datafusion::datasource::listing::ListingTableUrl;
use datafusion::prelude::SessionContext;
use futures::StreamExt;
use object_store::aws::AmazonS3Builder;
use object_store::path::Path as ObjectPath;
pub(crate) use object_store::path::Path as StoredPath;
/// An object's version, as conditional PUTs name it.
pub(crate) use object_store::UpdateVersion as Version;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};

use crate::error::StoreError;

/// A store's place.
#[derive(Clone)]
pub(crate) enum Location {
    /// A directory.
    Local(PathBuf),
    /// A prefix in an object store: the bucket's URL, the prefix, the client.
    Object {
        bucket: url::Url,
        prefix: String,
        store: Arc<dyn ObjectStore>,
    },
}

impl Location {
    /// `root` as given: `s3://…` is object storage, anything else a directory.
    pub(crate) fn of(root: &Path) -> Result<Location, StoreError> {
        let text = root.to_string_lossy();
        if !text.starts_with("s3://") {
            return Ok(Location::Local(root.to_path_buf()));
        }
        let bad = |e: &dyn std::fmt::Display| StoreError::Io(format!("{text}: {e}"));
        let url = url::Url::parse(&text).map_err(|e| bad(&e))?;
        let bucket_name = url.host_str().ok_or_else(|| bad(&"no bucket"))?.to_string();
        let store = AmazonS3Builder::from_env()
            .with_bucket_name(&bucket_name)
            .build()
            .map_err(|e| bad(&e))?;
        let bucket = url::Url::parse(&format!("s3://{bucket_name}")).map_err(|e| bad(&e))?;
        Ok(Location::Object {
            bucket,
            prefix: url.path().trim_matches('/').to_string(),
            store: Arc::new(store),
        })
    }

    /// The URL the engine lists `table` at; registers the object store.
    pub(crate) fn table_url(
        &self,
        ctx: &SessionContext,
        table: &str,
    ) -> Result<ListingTableUrl, StoreError> {
        match self {
            Location::Local(root) => crate::layout::table_url(root, table).map_err(StoreError::Io),
            Location::Object {
                bucket,
                prefix,
                store,
            } => {
                ctx.register_object_store(bucket, store.clone());
                let text = format!("{bucket}/{}", join(prefix, &format!("{table}/")));
                ListingTableUrl::parse(&text).map_err(|e| StoreError::Io(format!("{text}: {e}")))
            }
        }
    }

    /// Runs `step` (a call on this store) outside any runtime, as a
    /// writer's flush runs: object storage needs a client's runtime.
    pub(crate) fn block_on<T>(
        &self,
        step: impl std::future::Future<Output = T>,
    ) -> Result<T, StoreError> {
        match self {
            Location::Local(_) => Ok(futures::executor::block_on(step)),
            Location::Object { .. } => Ok(client_runtime()?.block_on(step)),
        }
    }

    /// Whether `table` holds anything (a directory, or objects under it).
    pub(crate) async fn has_table(&self, table: &str) -> bool {
        match self {
            Location::Local(root) => crate::layout::table_directory(root, table).is_dir(),
            Location::Object { prefix, store, .. } => {
                let under = ObjectPath::from(join(prefix, table));
                let listed = store.list_with_delimiter(Some(&under)).await;
                listed.is_ok_and(|l| !l.common_prefixes.is_empty() || !l.objects.is_empty())
            }
        }
    }

    /// Puts `bytes` at `relative` (a path under the store) in object
    /// storage: one atomic PUT. Returns its URL.
    pub(crate) async fn put(&self, relative: &str, bytes: Vec<u8>) -> Result<String, StoreError> {
        let path = self.object_path(relative)?;
        self.put_at(&path, bytes).await?;
        Ok(self.url_of(&path))
    }

    /// The URL of the object at `path`.
    fn url_of(&self, path: &ObjectPath) -> String {
        match self {
            Location::Object { bucket, .. } => format!("{bucket}/{path}"),
            Location::Local(_) => path.to_string(),
        }
    }
}

impl Location {
    /// The objects under `relative` (a path under the store), every level
    /// down, as the store names them (their parts already encoded), sorted.
    pub(crate) async fn list(&self, relative: &str) -> Result<Vec<ObjectPath>, StoreError> {
        self.list_at(&self.object_path(relative)?).await
    }

    /// The objects below `under`, a path in the object store, sorted.
    pub(crate) async fn list_at(&self, under: &ObjectPath) -> Result<Vec<ObjectPath>, StoreError> {
        let (_, store) = self.object()?;
        let mut listed = store.list(Some(under));
        let mut paths = Vec::new();
        while let Some(meta) = listed.next().await {
            let meta = meta.map_err(|e| StoreError::Io(format!("listing {under}: {e}")))?;
            paths.push(meta.location);
        }
        paths.sort();
        Ok(paths)
    }

    /// The bytes of the object at `path`, as [`Self::list`] gives it.
    pub(crate) async fn get(&self, path: &ObjectPath) -> Result<bytes::Bytes, StoreError> {
        let (_, store) = self.object()?;
        let failed = |e: object_store::Error| StoreError::Io(format!("{path}: {e}"));
        store
            .get(path)
            .await
            .map_err(failed)?
            .bytes()
            .await
            .map_err(failed)
    }

    /// Puts `bytes` at `path`, as [`Self::list`] gives paths: one atomic PUT.
    pub(crate) async fn put_at(&self, path: &ObjectPath, bytes: Vec<u8>) -> Result<(), StoreError> {
        let (_, store) = self.object()?;
        store
            .put(path, PutPayload::from(bytes))
            .await
            .map(|_| ())
            .map_err(|e| StoreError::Io(format!("{}: {e}", self.url_of(path))))
    }

    /// Puts `bytes` at `path` unless an object is there (a conditional
    /// PUT, `If-None-Match: *`): the version put, if it was.
    pub(crate) async fn put_if_absent(
        &self,
        path: &ObjectPath,
        bytes: Vec<u8>,
    ) -> Result<Option<Version>, StoreError> {
        let (_, store) = self.object()?;
        let options = object_store::PutOptions::from(object_store::PutMode::Create);
        match store.put_opts(path, PutPayload::from(bytes), options).await {
            Ok(put) => Ok(Some(self.version_put(path, put).await?)),
            Err(object_store::Error::AlreadyExists { .. }) => Ok(None),
            Err(e) => Err(StoreError::Io(format!("{}: {e}", self.url_of(path)))),
        }
    }

    /// The version a PUT at `path` made, as its answer says; asked of the
    /// object store only where the answer says none (another PUT may have
    /// come in between).
    async fn version_put(
        &self,
        path: &ObjectPath,
        put: object_store::PutResult,
    ) -> Result<Version, StoreError> {
        if put.e_tag.is_some() || put.version.is_some() {
            return Ok(Version {
                e_tag: put.e_tag,
                version: put.version,
            });
        }
        let meta = self.head(path).await?;
        Ok(meta.map(version_of).unwrap_or(Version {
            e_tag: None,
            version: None,
        }))
    }

    /// What the object store says of the object at `path`; `None` when it
    /// is not there.
    pub(crate) async fn head(
        &self,
        path: &ObjectPath,
    ) -> Result<Option<object_store::ObjectMeta>, StoreError> {
        let (_, store) = self.object()?;
        match store.head(path).await {
            Ok(meta) => Ok(Some(meta)),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(StoreError::Io(format!("{}: {e}", self.url_of(path)))),
        }
    }

    /// Puts `bytes` at `path` in place of the version `was` of the object
    /// there, unless it has changed since (a conditional PUT, `If-Match`):
    /// the version put, if it was.
    pub(crate) async fn replace_if_unchanged(
        &self,
        path: &ObjectPath,
        bytes: Vec<u8>,
        was: Version,
    ) -> Result<Option<Version>, StoreError> {
        let (_, store) = self.object()?;
        let options = object_store::PutOptions::from(object_store::PutMode::Update(was));
        match store.put_opts(path, PutPayload::from(bytes), options).await {
            Ok(put) => Ok(Some(self.version_put(path, put).await?)),
            Err(
                object_store::Error::Precondition { .. } | object_store::Error::NotFound { .. },
            ) => Ok(None),
            Err(e) => Err(StoreError::Io(format!("{}: {e}", self.url_of(path)))),
        }
    }

    /// The object path of `relative`, a path under the store.
    pub(crate) fn object_path(&self, relative: &str) -> Result<ObjectPath, StoreError> {
        let (prefix, _) = self.object()?;
        Ok(ObjectPath::from(join(prefix, relative)))
    }

    /// Deletes the object at `path`.
    pub(crate) async fn delete(&self, path: &ObjectPath) -> Result<(), StoreError> {
        let (_, store) = self.object()?;
        store
            .delete(path)
            .await
            .map_err(|e| StoreError::Io(format!("deleting {path}: {e}")))
    }

    fn object(&self) -> Result<(&String, &Arc<dyn ObjectStore>), StoreError> {
        match self {
            Location::Object { prefix, store, .. } => Ok((prefix, store)),
            Location::Local(_) => Err(StoreError::Io("not an object store".into())),
        }
    }
}

/// The version of an object the object store described.
pub(crate) fn version_of(meta: object_store::ObjectMeta) -> Version {
    Version {
        e_tag: meta.e_tag,
        version: meta.version,
    }
}

/// A runtime for the object store client's calls, made by each command
/// that reads or writes objects outside the engine.
pub(crate) fn client_runtime() -> Result<tokio::runtime::Runtime, StoreError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| StoreError::Io(format!("starting the object store client: {e}")))
}

fn join(prefix: &str, rest: &str) -> String {
    match prefix {
        "" => rest.to_string(),
        p => format!("{p}/{rest}"),
    }
}
