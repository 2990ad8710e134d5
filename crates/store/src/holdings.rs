//! What a store holds, in one line: the services and the time range of
//! their profiles, for a selection that matches nothing to say what would.

use datafusion::functions_aggregate::expr_fn::{count, max, min};
use datafusion::logical_expr::col;

use crate::error::StoreError;
use crate::read::{column_of, int_values, string_values};
use crate::schema::PROFILES;
use crate::select::Store;

/// One service's profiles.
struct Held {
    service: String,
    profiles: i64,
    first: i64,
    last: i64,
}

impl Store {
    /// "the store holds checkout: 2 profiles, 2026-11-21T05:35:09Z to
    /// 2026-11-21T06:00:00Z; search: …", or that it holds none.
    pub(crate) fn holdings(&self) -> Result<String, StoreError> {
        let held = self.retried(|| self.block_on(self.held()))?;
        if held.is_empty() {
            return Ok("the store holds no profile".into());
        }
        let each: Vec<String> = held.iter().map(Held::text).collect();
        Ok(format!("the store holds {}", each.join("; ")))
    }

    async fn held(&self) -> Result<Vec<Held>, StoreError> {
        let profiles = self.context().table(PROFILES).await?;
        let batches = profiles
            .aggregate(
                vec![col("service_name")],
                vec![
                    count(col("profile_id")).alias("profiles"),
                    min(col("time_unix_nano")).alias("first"),
                    max(col("time_unix_nano")).alias("last"),
                ],
            )?
            .sort(vec![col("service_name").sort(true, false)])?
            .collect()
            .await?;
        let mut out = Vec::new();
        for batch in &batches {
            let services = column_of(batch, "service_name", string_values);
            let (profiles, first, last) = (
                column_of(batch, "profiles", int_values),
                column_of(batch, "first", int_values),
                column_of(batch, "last", int_values),
            );
            for (i, service) in services.into_iter().enumerate() {
                out.push(Held {
                    service,
                    profiles: profiles[i],
                    first: first[i],
                    last: last[i],
                });
            }
        }
        Ok(out)
    }
}

impl Held {
    fn text(&self) -> String {
        let plural = if self.profiles == 1 { "" } else { "s" };
        let range = match self.first == self.last {
            true => format!("at {}", rfc3339(self.first)),
            false => format!("from {} to {}", rfc3339(self.first), rfc3339(self.last)),
        };
        format!(
            "{}: {} profile{plural} {range}",
            self.service, self.profiles
        )
    }
}

/// Unix nanoseconds as RFC 3339 in UTC, to the second when whole.
fn rfc3339(nanos: i64) -> String {
    let time = chrono::DateTime::from_timestamp_nanos(nanos);
    time.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true)
}
