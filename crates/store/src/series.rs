//! Totals over time: a selection's values summed per time step, grouped
//! by a label, optionally only of the stacks through one function, as
//! Pyroscope's `SelectSeries` and Parca's `QueryRange` answer them. A
//! sample whose events OTLP timed counts at each event's time, each event
//! its own value (or one, for times alone); any other row counts whole at
//! its time, its profile's start (so a step shorter than pprof profiles'
//! period shows their cadence). Days rolled up are read from their
//! values per hour (`rollups.rs`) where a step's buckets are unions of
//! hours and nothing else a rollup drops is asked for.

use datafusion::arrow::array::{ArrayRef, RecordBatch};
use datafusion::arrow::compute::cast as cast_array;
use datafusion::arrow::datatypes::{DataType, TimeUnit};
use datafusion::common::ScalarValue;
use datafusion::common::{Column, JoinType};
use datafusion::dataframe::DataFrame;
use datafusion::functions::expr_fn::coalesce;
use datafusion::functions_aggregate::expr_fn::sum;
use datafusion::functions_nested::expr_fn::cardinality;
use datafusion::logical_expr::{cast, col, lit, when, Expr};

use crate::error::StoreError;
use crate::layout::HOUR;
use crate::query::Query;
use crate::read::{column_of, int_values, string_values};
use crate::rollup_read::RollupPlan;
use crate::rollups::Level;
use crate::select::Store;
use crate::selector::{has_column, is_service_key, key_expr};

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
        let selection = self.selection(&series.query).await;
        let rollups = self.series_rollups(series).await;
        let mut rows = ctx.table("samples").await?.filter(selection)?;
        if let Some(rollups) = &rollups {
            rows = rows.filter(rollups.raw_filter())?;
        }
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
        let group = series.group_by.as_deref();
        let grouped: Vec<(Expr, &str)> =
            group.map(|key| (key_expr(key), key)).into_iter().collect();
        let mut rows = counted_at(rows, &grouped)?;
        if let Some(rollups) = &rollups {
            rows = rows.union(rollups.hour_totals(ctx, &series.query, group).await?)?;
        }
        let step = series.step_nanos;
        let bucket = (col("at") / lit(step)) * lit(step);
        let time = cast(
            bucket,
            DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into())),
        );
        let mut groups: Vec<Expr> = vec![time.alias("time")];
        if let Some(key) = &series.group_by {
            groups.push(named(key));
        }
        groups.extend([col("sample_type"), col("sample_unit")]);
        let mut order = vec![col("time").sort(true, false)];
        if let Some(key) = &series.group_by {
            order.push(named(key).sort(true, false));
        }
        order.push(col("sample_type").sort(true, false));
        let answer = rows
            .aggregate(groups, vec![sum(col("value")).alias("value")])?
            .sort(order)?
            .collect()
            .await?;
        Ok(answer)
    }

    /// The days' rollups `series` reads its rolled-up days from, where
    /// they give its answer: steps of whole hours (the rollups count
    /// values per hour), no function (they keep no stacks), grouped by
    /// nothing or by a column they keep; summed over the resources unless
    /// the selection or the grouping names one.
    pub(crate) async fn series_rollups(&self, series: &SeriesQuery) -> Option<RollupPlan> {
        let whole_hours = series.step_nanos % HOUR == 0;
        let group = series.group_by.as_deref();
        if !whole_hours || series.function.is_some() || !group.is_none_or(has_column) {
            return None;
        }
        let plan = self.rollup_plan(&series.query, false).await?;
        Some(match group {
            Some(key) if !is_service_key(key) => plan.at_level(Level::Resource),
            _ => plan,
        })
    }
}

/// `rows` as what each counts and when (`at`, `value`): one row per event
/// where a sample's events say what each is worth (values paired with its
/// times, or times alone that count one each, as many as its value), else
/// the row whole at its `time_unix_nano`; with the sample type, unit and
/// each of `kept` (an expression, by the name given).
pub(crate) fn counted_at(rows: DataFrame, kept: &[(Expr, &str)]) -> Result<DataFrame, StoreError> {
    let times = col("timestamps_unix_nano");
    let unpaired = col("event_values")
        .is_null()
        .and(cast(cardinality(times.clone()), DataType::Int64).not_eq(col("value")));
    let mut columns = vec![
        when(unpaired, lit(ScalarValue::Null))
            .otherwise(times)?
            .alias("event_time"),
        col("event_values").alias("event_value"),
        col("time_unix_nano"),
        col("value"),
        col("sample_type"),
        col("sample_unit"),
    ];
    columns.extend(kept.iter().map(|(expr, name)| expr.clone().alias(*name)));
    // A null list gives one row of nulls: the row counted whole.
    let events = rows
        .select(columns)?
        .unnest_columns(&["event_time", "event_value"])?;
    let at = coalesce(vec![col("event_time"), col("time_unix_nano")]);
    let value = when(col("event_time").is_null(), col("value"))
        .when(col("event_value").is_null(), lit(1i64))
        .otherwise(col("event_value"))?;
    let mut counted = vec![at.alias("at"), value.alias("value")];
    counted.extend([col("sample_type"), col("sample_unit")]);
    counted.extend(kept.iter().map(|(_, name)| named(name)));
    Ok(events.select(counted)?)
}

/// The column of that name as it is (dots and all).
pub(crate) fn named(name: &str) -> Expr {
    Expr::Column(Column::from_name(name))
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

    #[test]
    fn a_sample_counts_at_its_events_times_where_they_tell_its_value() {
        use crate::test_profiles::profile;
        use crate::{ProfileContext, SampleEvents, StoreWriter};
        let dir = tempfile::tempdir().unwrap();
        let mut p = profile(5);
        let start = p.time_nanos;
        let at = |tenths: i64| start + tenths * 100_000_000;
        for value in [2, 7, 4] {
            let mut s = p.sample[0].clone();
            s.value = vec![value];
            p.sample.push(s);
        }
        let events = |times: &[i64], values: &[i64]| SampleEvents {
            timestamps_unix_nano: times.iter().map(|&t| at(t)).collect(),
            values: values.to_vec(),
        };
        let context = ProfileContext {
            sample_events: vec![
                events(&[2, 12], &[2, 3]), // 5: 2 then 3
                events(&[5, 25], &[]),     // 2: one each
                events(&[], &[]),          // 7: at the profile's start
                events(&[35], &[]),        // 4 for one time: whole
            ],
            ..Default::default()
        };
        let mut writer = StoreWriter::new(dir.path());
        writer.add(&p, &context).unwrap();
        writer.flush().unwrap();
        let store = Store::open(dir.path()).unwrap();
        for group_by in [None, Some("host.name".to_string())] {
            let series = SeriesQuery {
                step_nanos: 1_000_000_000,
                group_by,
                ..Default::default()
            };
            let points = store.series_points(&series).unwrap();
            let seen: Vec<(i64, i64)> = (points.iter())
                .map(|p| ((p.time_nanos - start) / 1_000_000_000, p.value))
                .collect();
            assert_eq!(seen, [(0, 2 + 1 + 7), (1, 3), (2, 1), (3, 4)]);
        }
    }
}
