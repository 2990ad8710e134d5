//! Rollups: each service's day summed once, so that a report of a long
//! range reads a few rows per day where the raw rows of a day are
//! millions. `store compact` writes them (`rollup_build.rs`) for every
//! day that is over; a report reads them for the days its range covers
//! whole (`rollup_read.rs`), when its selection needs nothing they drop.
//!
//! Tables under `DIR/rollups/`, partitioned by day and service as the
//! store's own are (no hour):
//! - [`DAY_SAMPLES`]: one row per resource, label set, sample type and
//!   stack, its value summed and where it first appears;
//! - [`DAY_PROFILES`]: the headers of the day's profiles, those alike
//!   (same header, resource and sample types) as one row counting them;
//! - [`DAY_SERVICE_SAMPLES`], [`DAY_SERVICE_PROFILES`]: the same summed
//!   over the resources, for selections that name no resource ([`Level`]);
//! - [`DAY_LABEL_SETS`]: the labels of each label set the day uses;
//! - [`DAY_HOUR_TOTALS`], [`DAY_SERVICE_HOUR_TOTALS`]: the day's values
//!   summed per hour they count in (as `store series` counts them: each
//!   event at its time), without stacks or labels, per resource or per
//!   service alone (no span keeps them: a span would hold the same rows).
//!
//! A rollup is named after the `samples` files it sums (the hash of
//! their names, `ServiceDay::name`). Files are only ever added and
//! removed under new names, so a rollup whose name is that of the
//! service's day's files as they are now sums exactly what they hold; any
//! other is stale, and never read.

use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock};

use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};

use crate::blocks::{day_files, visible_names};
use crate::ids::{hex, RowHasher};
use crate::layout::{table_directory, unescape};
use crate::schema::{id_type, schema_of, PROFILES, RESOURCE_COLUMNS, SAMPLES};

/// The directory of the rollups, in the store's.
pub(crate) const ROLLUPS: &str = "rollups";
/// A day's samples, summed.
pub(crate) const DAY_SAMPLES: &str = "day_samples";
/// A day's profile headers, those alike counted as one.
pub(crate) const DAY_PROFILES: &str = "day_profiles";
/// A day's samples, summed over the service's resources (its hosts, pods).
pub(crate) const DAY_SERVICE_SAMPLES: &str = "day_service_samples";
/// A day's profile headers, alike over the service's resources.
pub(crate) const DAY_SERVICE_PROFILES: &str = "day_service_profiles";
/// A day's label sets.
pub(crate) const DAY_LABEL_SETS: &str = "day_label_sets";
/// A day's values per hour and resource.
pub(crate) const DAY_HOUR_TOTALS: &str = "day_hour_totals";
/// A day's values per hour, summed over the service's resources.
pub(crate) const DAY_SERVICE_HOUR_TOTALS: &str = "day_service_hour_totals";
/// The tables of values per hour, which spans do not keep.
pub(crate) const HOUR_TOTAL_TABLES: [&str; 2] = [DAY_HOUR_TOTALS, DAY_SERVICE_HOUR_TOTALS];
/// The rollup tables, in the order their files are put in place (the
/// samples last): a rollup is read only once all are there.
pub(crate) const ROLLUP_TABLES: [&str; 7] = [
    DAY_LABEL_SETS,
    DAY_PROFILES,
    DAY_SERVICE_PROFILES,
    DAY_HOUR_TOTALS,
    DAY_SERVICE_HOUR_TOTALS,
    DAY_SAMPLES,
    DAY_SERVICE_SAMPLES,
];

/// How finely a rollup sums: per resource (the resource columns kept, for
/// selections that name them), or per service (for those that name the
/// service alone: a service's hosts as one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Level {
    Resource,
    Service,
}

impl Level {
    /// The table of this level's samples.
    pub(crate) fn samples(self) -> &'static str {
        match self {
            Level::Resource => DAY_SAMPLES,
            Level::Service => DAY_SERVICE_SAMPLES,
        }
    }

    /// The table of this level's profile headers.
    pub(crate) fn profiles(self) -> &'static str {
        match self {
            Level::Resource => DAY_PROFILES,
            Level::Service => DAY_SERVICE_PROFILES,
        }
    }

    /// The table of this level's values per hour.
    pub(crate) fn hour_totals(self) -> &'static str {
        match self {
            Level::Resource => DAY_HOUR_TOTALS,
            Level::Service => DAY_SERVICE_HOUR_TOTALS,
        }
    }
}

/// One service's day in the `samples` table: where its files are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ServiceDay {
    /// The day, `YYYY-MM-DD`.
    pub dt: String,
    /// The service as its directory names it (escaped).
    pub service: String,
    /// Each `samples` file of the service's day: its hour (`HH` or the
    /// day block's) and its name.
    pub files: Vec<(String, String)>,
}

impl ServiceDay {
    /// The name of a rollup of exactly these files.
    pub(crate) fn name(&self) -> String {
        let mut hasher = RowHasher::new("rollup sources");
        hasher.text(&self.dt).text(&self.service);
        for (hour, file) in &self.files {
            hasher.text(hour).text(file);
        }
        hex(&hasher.finish())
    }

    /// The directory of this service's day in rollup table `table`.
    pub(crate) fn directory(&self, root: &Path, table: &str) -> PathBuf {
        rollup_directory(root, table)
            .join(format!("dt={}", self.dt))
            .join(format!("service={}", self.service))
    }

    /// The rollup file of these files in table `table`.
    pub(crate) fn file(&self, root: &Path, table: &str) -> PathBuf {
        let name = format!("{}.parquet", self.name());
        self.directory(root, table).join(name)
    }

    /// The files of the rollup of these files, one per rollup table.
    pub(crate) fn files(&self, root: &Path) -> Vec<PathBuf> {
        ROLLUP_TABLES.iter().map(|t| self.file(root, t)).collect()
    }

    /// Whether every rollup table holds the rollup of these files.
    pub(crate) fn is_rolled_up(&self, root: &Path) -> bool {
        self.files(root).iter().all(|file| file.is_file())
    }

    /// The service as the engine reads its directory's name.
    pub(crate) fn service_name(&self) -> String {
        unescape(&self.service)
    }

    /// The partitions (`dt`, `hour`, `service`) its files are in, as
    /// the engine reads them.
    pub(crate) fn partitions(&self) -> Vec<[String; 3]> {
        let mut hours: Vec<&String> = self.files.iter().map(|(hour, _)| hour).collect();
        hours.dedup();
        let service = self.service_name();
        let partition = |hour: &String| [self.dt.clone(), hour.clone(), service.clone()];
        hours.into_iter().map(partition).collect()
    }
}

/// The directory of rollup table `table` in the store at `root`.
pub(crate) fn rollup_directory(root: &Path, table: &str) -> PathBuf {
    root.join(ROLLUPS).join(table)
}

/// Each service's day `dt` in the `samples` table of the store at `root`,
/// with its files (services without any left out).
pub(crate) fn service_days(root: &Path, dt: &str) -> Vec<ServiceDay> {
    let day = table_directory(root, SAMPLES).join(format!("dt={dt}"));
    let mut by_service = std::collections::BTreeMap::<String, Vec<_>>::new();
    for (place, files) in day_files(&day) {
        let entry = by_service.entry(place.service).or_default();
        let names = files.iter().filter_map(|f| f.file_name());
        entry.extend(names.map(|f| (place.hour.clone(), f.to_string_lossy().into_owned())));
    }
    let days = by_service.into_iter().map(|(service, files)| ServiceDay {
        dt: dt.to_string(),
        service,
        files,
    });
    days.filter(|d| !d.files.is_empty()).collect()
}

/// The days (`YYYY-MM-DD`) the `samples` table of the store at `root`
/// holds.
pub(crate) fn stored_days(root: &Path) -> Vec<String> {
    let names = visible_names(&table_directory(root, SAMPLES));
    let days = names.iter().filter_map(|n| n.strip_prefix("dt="));
    days.map(String::from).collect()
}

/// Every file in the directories below `dir`, however deep
/// (`dt=…/service=…/…`, `dt=…/days=…/service=…/…`).
pub(crate) fn files_below(dir: &Path) -> Vec<PathBuf> {
    let listed = |dir: &Path| {
        let entries = std::fs::read_dir(dir).into_iter().flatten().flatten();
        entries.map(|e| e.path()).collect::<Vec<_>>()
    };
    let mut pending: Vec<PathBuf> = listed(dir).into_iter().filter(|p| p.is_dir()).collect();
    let mut files = Vec::new();
    while let Some(below) = pending.pop() {
        let (directories, found): (Vec<_>, Vec<_>) =
            listed(&below).into_iter().partition(|p| p.is_dir());
        pending.extend(directories);
        files.extend(found);
    }
    files
}

fn field(name: &str, data_type: DataType, nullable: bool) -> Field {
    Field::new(name, data_type, nullable)
}

/// A column of `table`'s schema.
fn column_of(table: &str, name: &str) -> Field {
    let schema = schema_of(table);
    let found = schema.field_with_name(name).expect("a column of the table");
    found.clone()
}

/// The resource columns, as `samples` has them.
fn resource_fields() -> Vec<Field> {
    let columns = RESOURCE_COLUMNS.iter();
    columns.map(|(_, c)| column_of(SAMPLES, c)).collect()
}

static DAY_SAMPLES_SCHEMA: LazyLock<SchemaRef> = LazyLock::new(|| {
    let mut fields = vec![column_of(SAMPLES, "service_name")];
    fields.extend(resource_fields());
    fields.extend(
        [
            "label_set_id",
            "sample_type",
            "sample_unit",
            "stack_id",
            "value",
        ]
        .map(|c| column_of(SAMPLES, c)),
    );
    fields.extend([
        field("first_zero", DataType::Boolean, false),
        field("first_time", DataType::Int64, false),
        field("first_profile_id", id_type(), false),
        field("first_sample_index", DataType::Int64, false),
    ]);
    Arc::new(Schema::new(fields))
});

static DAY_PROFILES_SCHEMA: LazyLock<SchemaRef> = LazyLock::new(|| {
    let mut fields: Vec<Field> = (schema_of(PROFILES).fields().iter())
        .map(|f| f.as_ref().clone())
        .collect();
    fields.extend(resource_fields());
    let types = DataType::List(Arc::new(field("item", DataType::Utf8, true)));
    fields.extend([
        field("row_types", types, false),
        field("grouped", DataType::Boolean, false),
        field("profiles", DataType::Int64, false),
        field("earliest_time_unix_nano", DataType::Int64, false),
    ]);
    Arc::new(Schema::new(fields))
});

/// `schema` without the resource columns.
fn without_resource(schema: &Schema) -> SchemaRef {
    let resource = |name: &str| RESOURCE_COLUMNS.iter().any(|(_, c)| *c == name);
    let fields = schema.fields().iter().filter(|f| !resource(f.name()));
    Arc::new(Schema::new(fields.cloned().collect::<Vec<_>>()))
}

static DAY_SERVICE_SAMPLES_SCHEMA: LazyLock<SchemaRef> =
    LazyLock::new(|| without_resource(&DAY_SAMPLES_SCHEMA));

static DAY_SERVICE_PROFILES_SCHEMA: LazyLock<SchemaRef> =
    LazyLock::new(|| without_resource(&DAY_PROFILES_SCHEMA));

static DAY_LABEL_SETS_SCHEMA: LazyLock<SchemaRef> = LazyLock::new(|| {
    let columns = [
        "label_set_id",
        "labels",
        "repeated_labels",
        "numeric_labels",
    ];
    Arc::new(Schema::new(columns.map(|c| column_of(SAMPLES, c)).to_vec()))
});

/// The columns a row of values per hour is summed by, at `level`: the
/// service, (per resource) the resource columns, the sample type and
/// unit, and [`HOUR_COLUMN`]. No label set: a series that names a label
/// reads raw rows.
pub(crate) fn hour_total_keys(level: Level) -> Vec<&'static str> {
    let mut keys = vec!["service_name"];
    if level == Level::Resource {
        keys.extend(RESOURCE_COLUMNS.iter().map(|(_, c)| *c));
    }
    keys.extend(["sample_type", "sample_unit", HOUR_COLUMN]);
    keys
}

/// The start of the hour (Unix nanoseconds) a row of values per hour
/// counts in.
pub(crate) const HOUR_COLUMN: &str = "hour_unix_nano";

fn hour_totals_schema(level: Level) -> SchemaRef {
    let mut fields = Vec::new();
    for key in hour_total_keys(level) {
        fields.push(match key {
            HOUR_COLUMN => field(HOUR_COLUMN, DataType::Int64, false),
            column => column_of(SAMPLES, column),
        });
    }
    fields.push(column_of(SAMPLES, "value"));
    Arc::new(Schema::new(fields))
}

static DAY_HOUR_TOTALS_SCHEMA: LazyLock<SchemaRef> =
    LazyLock::new(|| hour_totals_schema(Level::Resource));

static DAY_SERVICE_HOUR_TOTALS_SCHEMA: LazyLock<SchemaRef> =
    LazyLock::new(|| hour_totals_schema(Level::Service));

/// The schema of rollup table `table`'s files.
///
/// `day_samples`: `service_name`, the resource columns, `label_set_id`,
/// `sample_type`, `sample_unit`, `stack_id`, `value` (summed), and where
/// the rows first appear in pprof's merge order: `first_zero` (all of
/// them 0), `first_time` (the profile's start), `first_profile_id`,
/// `first_sample_index`.
///
/// `day_profiles`: a `profiles` row (the first of those alike, its
/// `duration_nano` their sum), the resource columns, `row_types` (the
/// sample types its rows have), `grouped` (false for a profile kept
/// alone: one with rows on other days, or a negative duration),
/// `profiles` (how many it stands for) and `earliest_time_unix_nano`
/// (their earliest start that is not 0, else 0).
///
/// `day_service_samples` and `day_service_profiles`: the same without
/// the resource columns, summed over them.
///
/// `day_label_sets`: `label_set_id` and its three label columns.
///
/// `day_hour_totals`: [`hour_total_keys`] per resource and `value`, the
/// values that count in the hour as a series counts them (an event at
/// its time, any other row at its own); `day_service_hour_totals`: the
/// same per service alone.
pub(crate) fn rollup_schema(table: &str) -> SchemaRef {
    match table {
        DAY_SAMPLES => DAY_SAMPLES_SCHEMA.clone(),
        DAY_PROFILES => DAY_PROFILES_SCHEMA.clone(),
        DAY_SERVICE_SAMPLES => DAY_SERVICE_SAMPLES_SCHEMA.clone(),
        DAY_SERVICE_PROFILES => DAY_SERVICE_PROFILES_SCHEMA.clone(),
        DAY_LABEL_SETS => DAY_LABEL_SETS_SCHEMA.clone(),
        DAY_HOUR_TOTALS => DAY_HOUR_TOTALS_SCHEMA.clone(),
        DAY_SERVICE_HOUR_TOTALS => DAY_SERVICE_HOUR_TOTALS_SCHEMA.clone(),
        other => panic!("no rollup table {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A rollup's name follows its files: another file, another name.
    #[test]
    fn a_rollup_is_named_after_the_files_it_sums() {
        let day = |files: &[(&str, &str)]| ServiceDay {
            dt: "2026-11-27".into(),
            service: "check%20out".into(),
            files: (files.iter())
                .map(|(h, f)| (h.to_string(), f.to_string()))
                .collect(),
        };
        let one = day(&[("all", "a-c1.parquet")]);
        assert_eq!(one.name(), day(&[("all", "a-c1.parquet")]).name());
        assert_ne!(one.name(), day(&[("all", "b-c1.parquet")]).name());
        let late = day(&[("all", "a-c1.parquet"), ("05", "c.parquet")]);
        assert_ne!(one.name(), late.name());
        assert_eq!(late.partitions().len(), 2);
        assert_eq!(late.partitions()[1][2], "check out");
        let root = Path::new("/s");
        let file = one.file(root, DAY_SAMPLES);
        let below = "rollups/day_samples/dt=2026-11-27/service=check%20out";
        assert_eq!(file.parent().unwrap(), root.join(below));
    }
}
