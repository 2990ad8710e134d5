//! Writing rollups (`rollups.rs`): `store compact`, once a day is over,
//! sums each service's day of it into its rollup files, named after the
//! `samples` files they sum, and removes the rollups no longer named so.
//! The engine sums the samples as a report sums them (`select.rs`: the
//! same keys, the same `first_key`) and the values per hour as a series
//! counts them (`series.rs`); the profiles' headers are grouped here
//! (`rollup_headers.rs`).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use datafusion::arrow::array::{ArrayRef, RecordBatch};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::dataframe::DataFrame;
use datafusion::functions_aggregate::expr_fn::{array_agg, count_distinct, sum};
use datafusion::logical_expr::{col, lit, Expr, ExprFunctionExt};

use crate::error::{engine_error, io_at, StoreError};
use crate::explain::Reads;
use crate::files::{write_files, FileKind, NewFile};
use crate::ids::Id;
use crate::layout::HOUR;
use crate::rollup_headers::grouped_headers;
use crate::rollups::{
    files_below, hour_total_keys, rollup_directory, rollup_schema, service_days, Level, ServiceDay,
    DAY_LABEL_SETS, HOUR_COLUMN, ROLLUP_TABLES,
};
use crate::schema::{PROFILES, RESOURCE_COLUMNS, SAMPLES};
use crate::select::{label_sets, Batches, Places, Store};
use crate::series::{counted_at, named};
use crate::spans::services_days;

/// Writes the rollup of every service's day of the store at `root` that
/// is over at `now` and has none of its files as they are; removes the
/// rollups of files no longer there. How many it wrote.
pub(crate) fn build_rollups(root: &Path, now: i64) -> Result<usize, StoreError> {
    let days = crate::blocks::days_over(root, now);
    let missing: Vec<ServiceDay> = (days.iter())
        .flat_map(|dt| service_days(root, dt))
        .filter(|day| !day.is_rolled_up(root))
        .collect();
    if !missing.is_empty() {
        let store = Store::open(root)?;
        for day in &missing {
            write_rollup(&store, root, day)?;
        }
    }
    remove_stale_rollups(root)?;
    Ok(missing.len())
}

/// Sums `day` into its rollup files, `samples` last.
fn write_rollup(store: &Store, root: &Path, day: &ServiceDay) -> Result<(), StoreError> {
    let ctx = store.context();
    let service = vec![lit(day.service_name()), lit(day.service.clone())];
    let in_day = col("dt")
        .eq(lit(day.dt.clone()))
        .and(col("service").in_list(service, false));
    let places = Places(day.partitions());
    let tables = store.block_on(async {
        let rows = ctx.table(SAMPLES).await?.filter(in_day)?;
        let mut reads = Reads::default();
        let mut tables = vec![(DAY_LABEL_SETS, label_sets(rows.clone(), &mut reads).await?)];
        let per_profile = reads.collect(per_profile(rows.clone())?).await?;
        let ids = crate::select::column_ids(&per_profile, "profile_id");
        let profiles = store
            .rows_of(PROFILES, "profile_id", ids, &places, &mut reads)
            .await?;
        // Per resource from the day's rows; per service from those sums
        // (sums of sums, the least of the least keys), not from the rows
        // again.
        let by_resource = reads
            .collect(summed_samples(rows.clone(), Level::Resource)?)
            .await?;
        let resources = ctx.read_batches(by_resource.clone())?;
        let by_service = summed_samples(resources, Level::Service)?.collect().await?;
        let hours = reads.collect(hour_totals(rows)?).await?;
        let service_hours = summed_hours(ctx.read_batches(hours.clone())?, Level::Service)?;
        tables.push((Level::Service.hour_totals(), service_hours.collect().await?));
        tables.push((Level::Resource.hour_totals(), hours));
        for (level, samples) in [(Level::Resource, by_resource), (Level::Service, by_service)] {
            tables.push((level.samples(), rollup_samples(&samples)?));
            let headers = grouped_headers(&per_profile, &profiles, level)?;
            tables.push((level.profiles(), vec![headers]));
        }
        Ok::<_, StoreError>(tables)
    })?;
    let records = (tables.iter())
        .map(|(table, batches)| Ok((*table, conformed(table, batches)?)))
        .collect::<Result<Vec<_>, StoreError>>()?;
    let files: Vec<NewFile> = (records.iter())
        .map(|(table, records)| NewFile {
            dir: day.directory(root, table),
            records,
            last: table.ends_with("samples"),
        })
        .collect();
    write_files(&files, &day.name(), FileKind::Compacted)?;
    Ok(())
}

/// `rows` summed by resource (at [`Level::Resource`]), label set, sample
/// type and stack, with the least `first_key` of each, as a report sums
/// them: a day's `samples` rows, or such sums already made (which have
/// their `first_key`).
pub(crate) fn summed_samples(rows: DataFrame, level: Level) -> Result<DataFrame, StoreError> {
    let mut by = vec![col("service_name")];
    if level == Level::Resource {
        by.extend(RESOURCE_COLUMNS.iter().map(|(_, c)| col(*c)));
    }
    by.extend(["label_set_id", "sample_type", "sample_unit", "stack_id"].map(col));
    let keyed = match rows.schema().has_column_with_unqualified_name("first_key") {
        true => rows,
        false => rows.with_column("first_key", crate::sums::first_key()?)?,
    };
    Ok(keyed.aggregate(by, crate::sums::summed())?)
}

/// `rows` (a day's `samples` rows) summed per hour they count in, as a
/// series counts them (`series::counted_at`: an event at its time), per
/// resource.
fn hour_totals(rows: DataFrame) -> Result<DataFrame, StoreError> {
    let kept: Vec<(Expr, &str)> = (hour_total_keys(Level::Resource).into_iter())
        .filter(|key| !matches!(*key, "sample_type" | "sample_unit" | HOUR_COLUMN))
        .map(|key| (named(key), key))
        .collect();
    let hour = (col("at") / lit(HOUR)) * lit(HOUR);
    let counted = counted_at(rows, &kept)?.with_column(HOUR_COLUMN, hour)?;
    summed_hours(counted, Level::Resource)
}

/// Rows of values per hour (or such sums) summed by `level`'s keys.
fn summed_hours(rows: DataFrame, level: Level) -> Result<DataFrame, StoreError> {
    let by = hour_total_keys(level).into_iter().map(named).collect();
    Ok(rows.aggregate(by, vec![sum(col("value")).alias("value")])?)
}

/// Each profile of the day: its resource, how many of its samples the
/// day holds, and the sample types its rows have.
fn per_profile(rows: DataFrame) -> Result<DataFrame, StoreError> {
    let mut by = vec![col("profile_id"), col("service_name")];
    by.extend(RESOURCE_COLUMNS.iter().map(|(_, c)| col(*c)));
    let types = array_agg(col("sample_type")).distinct().build()?;
    let aggregates = vec![
        count_distinct(col("sample_index")).alias("samples_here"),
        types.alias("row_types"),
    ];
    Ok(rows.aggregate(by, aggregates)?)
}

/// The summed samples as `day_samples` rows: `first_key` as its parts.
pub(crate) fn rollup_samples(batches: &Batches) -> Result<Batches, StoreError> {
    let mut out = Vec::new();
    for batch in batches {
        let Some(keys) = batch.column_by_name("first_key") else {
            continue;
        };
        let firsts = crate::sums::first_values(keys);
        let bad = || StoreError::Engine("a rollup's first_key does not read".into());
        let firsts: Vec<_> = firsts
            .into_iter()
            .map(|f| f.ok_or_else(bad))
            .collect::<Result<_, _>>()?;
        let mut columns: Vec<(&str, ArrayRef)> = Vec::new();
        let schema = batch.schema();
        for (field, column) in schema.fields().iter().zip(batch.columns()) {
            if field.name() != "first_key" {
                columns.push((field.name(), column.clone()));
            }
        }
        use crate::arrays::{flags, ids, ints};
        columns.push(("first_zero", flags(firsts.iter().map(|f| f.0))));
        columns.push(("first_time", ints(firsts.iter().map(|f| f.1))));
        let profiles: Vec<Id> = firsts.iter().map(|f| f.2).collect();
        columns.push(("first_profile_id", ids(profiles.iter().map(Some))));
        columns.push(("first_sample_index", ints(firsts.iter().map(|f| f.3))));
        let named = columns.into_iter().map(|(n, c)| (n.to_string(), c));
        out.push(RecordBatch::try_from_iter(named).map_err(engine_error)?);
    }
    Ok(out)
}

/// `batches` as one batch of rollup table `table`'s schema: its columns
/// by name, cast to their types.
fn conformed(table: &str, batches: &Batches) -> Result<RecordBatch, StoreError> {
    conformed_to(&rollup_schema(table), batches)
        .map_err(|e| StoreError::Engine(format!("{table}: {e}")))
}

/// `batches` as one batch of `schema`: their columns by name, cast to
/// its types.
pub(crate) fn conformed_to(
    schema: &SchemaRef,
    batches: &Batches,
) -> Result<RecordBatch, StoreError> {
    let mut parts = Vec::new();
    for batch in batches {
        let mut columns = Vec::new();
        for field in schema.fields() {
            let column = batch
                .column_by_name(field.name())
                .ok_or_else(|| StoreError::Engine(format!("no column {}", field.name())))?;
            columns.push(cast(column, field.data_type()).map_err(engine_error)?);
        }
        parts.push(RecordBatch::try_new(schema.clone(), columns).map_err(engine_error)?);
    }
    datafusion::arrow::compute::concat_batches(schema, &parts).map_err(engine_error)
}

/// Removes every rollup file that is not the rollup of its service's
/// day's files as they are (files since merged, added or removed), and
/// what writes killed left (hidden files).
fn remove_stale_rollups(root: &Path) -> Result<(), StoreError> {
    let services = services_days(root, |_| true, |_| true);
    let days = services.values().flat_map(|days| days.values());
    let current: HashSet<PathBuf> = days.flat_map(|day| day.files(root)).collect();
    let tables = ROLLUP_TABLES.map(String::from);
    remove_files_but(root, &tables, &current)
}

/// Removes every file of rollup tables `tables` that `current` does not
/// name, and the directories that leaves empty.
pub(crate) fn remove_files_but(
    root: &Path,
    tables: &[String],
    current: &HashSet<PathBuf>,
) -> Result<(), StoreError> {
    for table in tables {
        let directory = rollup_directory(root, table);
        for file in files_below(&directory) {
            if current.contains(&file) {
                continue;
            }
            std::fs::remove_file(&file).map_err(io_at(&file))?;
            // Gone when empty: a day removed leaves no directories.
            let parents = file.ancestors().skip(1);
            for parent in parents.take_while(|p| *p != directory) {
                let _ = std::fs::remove_dir(parent);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rollups::{DAY_SAMPLES, DAY_SERVICE_SAMPLES};
    use crate::test_profiles::profile;
    use crate::{ProfileContext, Query, SampleEvents, StoreWriter};

    /// 2026-11-02T00:00:00Z.
    const NOV_2: i64 = 1_793_577_600_000_000_000;
    const HOUR: i64 = crate::layout::HOUR;

    /// A selection reads the same profile from rollups as from raw rows:
    /// profiles alike summed as one row, one whose samples cross midnight
    /// (kept alone, counted once whichever days are read raw), one of
    /// negative duration, two hosts.
    #[test]
    fn rollups_give_the_profile_raw_rows_give() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let mut writer = StoreWriter::new(root);
        let context = |host: &str| ProfileContext {
            service_name: "s".into(),
            resource_attributes: vec![("host.name".into(), host.into())],
            ..Default::default()
        };
        for k in 0..4 {
            let mut p = profile(k + 1);
            (p.time_nanos, p.duration_nanos) = (NOV_2 - (k + 2) * HOUR, 10 + k);
            writer
                .add(&p, &context(["a", "b"][k as usize % 2]))
                .unwrap();
        }
        let mut negative = profile(5);
        (negative.time_nanos, negative.duration_nanos) = (NOV_2 + HOUR, -5);
        writer.add(&negative, &context("a")).unwrap();
        let mut crossing = profile(7);
        crossing.time_nanos = NOV_2 - 10_000_000_000;
        crossing.duration_nanos = 20_000_000_000;
        crossing.sample.push(crossing.sample[0].clone());
        crossing.sample[1].value = vec![9];
        let mut events = context("a");
        for time in [NOV_2 - 1_000_000_000, NOV_2 + 1_000_000_000] {
            let timestamps_unix_nano = vec![time];
            let at = SampleEvents {
                timestamps_unix_nano,
                values: vec![],
            };
            events.sample_events.push(at);
        }
        writer.add(&crossing, &events).unwrap();
        writer.flush().unwrap();
        // (Hours summed as they are, without day blocks: a rollup sums
        // whatever files a service's day has.)
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
        let now = now.unwrap().as_nanos() as i64;
        assert_eq!(build_rollups(root, now).unwrap(), 2);
        let (rolled, raw) = (
            Store::open(root).unwrap(),
            Store::open(root).unwrap().rollups(false),
        );
        let day = |n: i64| Some(NOV_2 + (n - 2) * 24 * HOUR);
        let ranges = [
            (None, None, 2),
            (day(1), day(2), 1),
            (day(2), day(3), 1),
            (Some(NOV_2 - 12 * HOUR), day(3), 1),
            (Some(NOV_2 - 12 * HOUR), Some(NOV_2 + 12 * HOUR), 0),
        ];
        for (from, to, days) in ranges {
            for host in ["", "a"] {
                let matchers = match host {
                    "" => vec![],
                    host => crate::parse_selector(&format!("host.name=\"{host}\"")).unwrap(),
                };
                let query = Query {
                    matchers,
                    from,
                    to,
                    ..Default::default()
                };
                let (ours, theirs) = (rolled.select(&query).unwrap(), raw.select(&query).unwrap());
                assert_eq!(ours.profile, theirs.profile, "{from:?} {to:?} {host}");
                assert_eq!(ours.profiles, theirs.profiles, "{from:?} {to:?} {host}");
                // Summed over the hosts, or per host when one is named.
                let table = [DAY_SERVICE_SAMPLES, DAY_SAMPLES][host.len().min(1)];
                let read = ours.reads.iter().find(|r| r.table == table);
                assert_eq!(read.map_or(0, |r| r.files), days, "{from:?} {to:?}");
            }
        }
    }
}
