//! Totals over time: a selection's values summed per time step, grouped
//! by a label, optionally only of the stacks through one function, as
//! Pyroscope's `SelectSeries` and Parca's `QueryRange` answer them. A row's
//! time is its sample's earliest event where OTLP timed its events, else
//! its profile's start (so a step shorter than pprof profiles' period
//! shows their cadence).

use datafusion::arrow::array::{ArrayRef, RecordBatch};
use datafusion::arrow::compute::cast as cast_array;
use datafusion::arrow::datatypes::{DataType, TimeUnit};
use datafusion::common::JoinType;
use datafusion::functions_aggregate::expr_fn::sum;
use datafusion::logical_expr::{cast, col, lit, Expr};

use crate::error::StoreError;
use crate::read::{column_of, int_values, string_values};
use crate::select::{filter, Query, Store};
use crate::selector::key_expr;

/// What to sum over time.
#[derive(Debug, Clone, Default)]
pub struct SeriesQuery {
    /// The rows summed.
    pub query: Query,
    /// The step, in nanoseconds (at least 1).
    pub step_nanos: i64,
    /// A label or attribute to group by (as a selector's key).
    pub group_by: Option<String>,
    /// Only the stacks through the function of this exact name (its cum).
    pub function: Option<String>,
}

impl Store {
    /// Per step (and group, and sample type): `time`, the group's value
    /// when grouped, `sample_type`, `sample_unit`, `value`; in time order.
    pub fn series(&self, series: &SeriesQuery) -> Result<Vec<RecordBatch>, StoreError> {
        if series.step_nanos < 1 {
            return Err(StoreError::Query("the step must be at least 1 ns".into()));
        }
        self.retried(|| self.block_on(self.series_async(series)))
    }

    async fn series_async(&self, series: &SeriesQuery) -> Result<Vec<RecordBatch>, StoreError> {
        let ctx = self.context();
        let mut rows = ctx.table("samples").await?.filter(filter(&series.query))?;
        if let Some(function) = &series.function {
            let through = ctx
                .table("stack_frames")
                .await?
                .filter(col("function_name").eq(lit(function.clone())))?
                .select(vec![col("stack_id").alias("wanted")])?;
            rows = rows.join(
                through,
                JoinType::LeftSemi,
                &["stack_id"],
                &["wanted"],
                None,
            )?;
        }
        let step = series.step_nanos;
        let bucket = (col("time_unix_nano") / lit(step)) * lit(step);
        let time = cast(
            bucket,
            DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into())),
        );
        let mut groups: Vec<Expr> = vec![time.alias("time")];
        if let Some(key) = &series.group_by {
            groups.push(key_expr(key).alias(key.as_str()));
        }
        groups.extend([col("sample_type"), col("sample_unit")]);
        let mut order = vec![col("time").sort(true, false)];
        if let Some(key) = &series.group_by {
            order.push(col(format!("\"{key}\"")).sort(true, false));
        }
        order.push(col("sample_type").sort(true, false));
        let answer = rows
            .aggregate(groups, vec![sum(col("value")).alias("value")])?
            .sort(order)?
            .collect()
            .await?;
        Ok(answer)
    }
}

/// One total of [`Store::series_points`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeriesPoint {
    /// The step's start, Unix nanoseconds.
    pub time_nanos: i64,
    /// The group's value ("" when not grouped, or the label is absent).
    pub group: String,
    /// The sample type summed, and its unit.
    pub sample_type: (String, String),
    /// The step's total.
    pub value: i64,
}

impl Store {
    /// [`Store::series`] as values rather than batches.
    pub fn series_points(&self, series: &SeriesQuery) -> Result<Vec<SeriesPoint>, StoreError> {
        let batches = self.series(series)?;
        let mut points = Vec::new();
        for batch in &batches {
            let as_nanos = |a: &ArrayRef| match cast_array(a, &DataType::Int64) {
                Ok(ints) => int_values(&ints),
                Err(_) => vec![0; a.len()],
            };
            let times = column_of(batch, "time", as_nanos);
            let groups = match &series.group_by {
                Some(key) => column_of(batch, key, string_values),
                None => vec![String::new(); batch.num_rows()],
            };
            let types = column_of(batch, "sample_type", string_values);
            let units = column_of(batch, "sample_unit", string_values);
            let values = column_of(batch, "value", int_values);
            for (i, time_nanos) in times.into_iter().enumerate() {
                points.push(SeriesPoint {
                    time_nanos,
                    group: groups[i].clone(),
                    sample_type: (types[i].clone(), units[i].clone()),
                    value: values[i],
                });
            }
        }
        Ok(points)
    }
}

/// A step as users write it: `10s`, `1m`, `1h`, `1d` (or nanoseconds).
pub fn parse_step(text: &str) -> Result<i64, StoreError> {
    let bad = || {
        StoreError::Query(format!(
            "step {text:?}: expected 10s, 1m, 1h, 1d or nanoseconds"
        ))
    };
    if let Ok(nanos) = text.parse::<i64>() {
        return (nanos > 0).then_some(nanos).ok_or_else(bad);
    }
    let (number, unit) = text.split_at(text.len().saturating_sub(1));
    let number: i64 = number.parse().map_err(|_| bad())?;
    let unit = match unit {
        "s" => 1_000_000_000,
        "m" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        "d" => 86_400_000_000_000,
        _ => return Err(bad()),
    };
    number.checked_mul(unit).filter(|n| *n > 0).ok_or_else(bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_parse() {
        assert_eq!(parse_step("10s").unwrap(), 10_000_000_000);
        assert_eq!(parse_step("1h").unwrap(), 3_600_000_000_000);
        assert_eq!(parse_step("5").unwrap(), 5);
        for bad in ["", "0", "-1m", "1y", "m"] {
            assert!(parse_step(bad).is_err(), "{bad}");
        }
    }
}
