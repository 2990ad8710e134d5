//! A stored profile's resource, as OTLP carries it: `service.name`, the
//! attributes with columns of their own (read from the profile's first
//! sample row), then the others (from its `profiles` row).

use datafusion::arrow::array::Array;
use datafusion::common::ScalarValue;
use datafusion::logical_expr::{col, lit};

use crate::error::StoreError;
use crate::ids::{hex, Id};
use crate::read::{map_values, string_values};
use crate::schema::{PROFILES, RESOURCE_COLUMNS, SAMPLES};
use crate::select::{Batches, Store};

impl Store {
    /// The resource attributes profile `id` was stored with. Their order
    /// is the layout's: `service.name`, the column attributes in
    /// [`RESOURCE_COLUMNS`] order, then the rest as they came.
    pub fn resource(&self, id: Id) -> Result<Vec<(String, String)>, StoreError> {
        let (header, first_sample) = self.retried(|| {
            self.block_on(async {
                let this = || {
                    col("profile_id").eq(lit(ScalarValue::FixedSizeBinary(16, Some(id.to_vec()))))
                };
                let header = self
                    .context()
                    .table(PROFILES)
                    .await?
                    .filter(this())?
                    .limit(0, Some(1))?;
                let mut columns = vec![col("service_name")];
                columns.extend(RESOURCE_COLUMNS.iter().map(|(_, c)| col(*c)));
                let sample = self.context().table(SAMPLES).await?.filter(this())?;
                let sample = sample.select(columns)?.limit(0, Some(1))?;
                Ok::<_, StoreError>((header.collect().await?, sample.collect().await?))
            })
        })?;
        let Some(service) = first_value(&header, "service_name") else {
            return Err(StoreError::Query(format!(
                "no profile {} in the store",
                hex(&id)
            )));
        };
        let mut attributes = vec![("service.name".to_string(), service)];
        for (key, column) in RESOURCE_COLUMNS {
            if let Some(value) = first_value(&first_sample, column) {
                attributes.push((key.to_string(), value));
            }
        }
        if let Some(map) = header.iter().find(|b| b.num_rows() > 0) {
            let others = map.column_by_name("resource_attributes").map(map_values);
            attributes.extend(others.into_iter().flatten().next().unwrap_or_default());
        }
        Ok(attributes)
    }
}

/// The first row's `column` in `batches`, unless it is null.
fn first_value(batches: &Batches, column: &str) -> Option<String> {
    let batch = batches.iter().find(|b| b.num_rows() > 0)?;
    let array = batch.column_by_name(column)?;
    match array.is_null(0) {
        true => None,
        false => string_values(array).into_iter().next(),
    }
}
