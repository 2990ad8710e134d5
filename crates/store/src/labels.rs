//! What a selector can name, as a picker offers it: `service.name` and
//! the resource attributes with columns of their own, each with the
//! values present (the most frequent first), then the keys of the other
//! resource attributes and of the sample labels.

use datafusion::functions_aggregate::expr_fn::count;
use datafusion::functions_nested::expr_fn::map_keys;
use datafusion::logical_expr::{col, lit, Expr};

use crate::error::StoreError;
use crate::read::{column_of, string_values};
use crate::schema::{RESOURCE_COLUMNS, SAMPLES};
use crate::select::{Batches, Store};

/// The most values offered for one key.
const VALUES_PER_KEY: usize = 200;

impl Store {
    /// Each key a selector can name, with the values present where the
    /// store has a column of them (map keys come without values).
    pub fn label_values(&self) -> Result<Vec<(String, Vec<String>)>, StoreError> {
        let mut keys = vec![("service.name".to_string(), "service_name")];
        keys.extend(RESOURCE_COLUMNS.iter().map(|(k, c)| (k.to_string(), *c)));
        let mut out = Vec::new();
        for (key, column) in keys {
            let values = self.retried(|| self.block_on(self.frequent_values(column)))?;
            if !values.is_empty() {
                out.push((key, values));
            }
        }
        let mut map_keys_seen = Vec::new();
        for map in ["resource_attributes", "labels"] {
            for key in self.retried(|| self.block_on(self.map_keys_of(map)))? {
                if !out.iter().any(|(k, _)| *k == key) && !map_keys_seen.contains(&key) {
                    map_keys_seen.push(key);
                }
            }
        }
        map_keys_seen.sort();
        out.extend(map_keys_seen.into_iter().map(|k| (k, Vec::new())));
        Ok(out)
    }

    async fn frequent_values(&self, column: &str) -> Result<Vec<String>, StoreError> {
        let rows = self.context().table(SAMPLES).await?;
        let answer = rows
            .filter(col(column).is_not_null())?
            .aggregate(vec![col(column).alias("v")], vec![count(lit(1)).alias("n")])?
            .sort(vec![
                col("n").sort(false, false),
                col("v").sort(true, false),
            ])?
            .limit(0, Some(VALUES_PER_KEY))?
            .collect()
            .await?;
        Ok(strings(&answer, "v"))
    }

    async fn map_keys_of(&self, map: &str) -> Result<Vec<String>, StoreError> {
        let keys: Expr = map_keys(col(map)).alias("k");
        let answer = self
            .context()
            .table(SAMPLES)
            .await?
            .select(vec![keys])?
            .unnest_columns(&["k"])?
            .distinct()?
            .collect()
            .await?;
        Ok(strings(&answer, "k"))
    }
}

fn strings(batches: &Batches, column: &str) -> Vec<String> {
    batches
        .iter()
        .flat_map(|b| column_of(b, column, string_values))
        .collect()
}
