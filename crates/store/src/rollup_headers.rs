//! A day's profile headers as a rollup keeps them (`day_profiles`,
//! `rollups.rs`): the profiles whose samples all sit in the day, alike in
//! every header field a merged profile reads, in their resource and in
//! the sample types their rows have, are one row: the first's
//! `profiles` row (in merge order: time, then id) with their count, their
//! earliest start that is not 0, and their durations summed. A merged
//! profile is the same made of such rows as of the profiles one by one
//! (`assemble.rs`: comments, the default type, the period type and the
//! main mapping all come of the first profile that has them, which is
//! the first of its row).
//!
//! A profile with samples on other days too (events across midnight) is
//! kept alone, with its id, so that a range that reads those days raw
//! counts it once; so is one of negative duration, whose sum would not
//! saturate as the profiles' own sum does.

use std::collections::HashMap;

use datafusion::arrow::array::{ArrayRef, RecordBatch, UInt32Array};
use datafusion::arrow::compute::{concat_batches, take};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::row::{RowConverter, SortField};

use crate::arrays::{flags, ints, list, optional_strings, strings};
use crate::error::{engine_error, StoreError};
use crate::ids::Id;
use crate::read::{column_of, id_values, int_values, list_values, string_values};
use crate::rollups::{rollup_schema, Level, DAY_PROFILES};
use crate::schema::{schema_of, PROFILES, RESOURCE_COLUMNS};
use crate::select::Batches;

/// The columns of a `profiles` row a merged profile reads, or selects by.
const HEADER_COLUMNS: [&str; 11] = [
    "service_name",
    "sample_types",
    "period_type",
    "period_unit",
    "period",
    "default_sample_type",
    "comments",
    "drop_frames",
    "keep_frames",
    "doc_url",
    "main_mapping_id",
];

/// What the day's rows say of a profile.
struct InDay {
    resource: Vec<Option<String>>,
    row_types: Vec<String>,
    samples: i64,
}

/// One `day_profiles` row in the making.
struct Row {
    first: (i64, Id),
    at: usize,
    grouped: bool,
    count: i64,
    earliest: i64,
    duration: i64,
    profile: Id,
}

/// The `day_profiles` rows of the profiles `per_profile` (the day's rows
/// by profile: resource, `samples_here`, `row_types`) names, whose
/// `profiles` rows are `profiles`.
pub(crate) fn grouped_headers(
    per_profile: &Batches,
    profiles: &Batches,
    level: Level,
) -> Result<RecordBatch, StoreError> {
    let in_day = in_day(per_profile);
    let schema = schema_of(PROFILES);
    let projected: Vec<RecordBatch> = (profiles.iter())
        .map(|b| profiles_columns(b, &schema))
        .collect::<Result<_, _>>()?;
    let rows = concat_batches(&schema, &projected).map_err(engine_error)?;
    let keys = header_keys(&rows)?;
    let ids = id_values(rows.column(0));
    let times = column_of(&rows, "time_unix_nano", int_values);
    let durations = column_of(&rows, "duration_nano", int_values);
    let counts = column_of(&rows, "sample_count", int_values);
    let mut out: Vec<Row> = Vec::new();
    let mut groups: HashMap<Vec<u8>, usize> = HashMap::new();
    let mut seen = std::collections::HashSet::new();
    for i in 0..rows.num_rows() {
        let Some(id) = ids[i].filter(|id| seen.insert(*id)) else {
            continue;
        };
        let Some(day) = in_day.get(&id) else {
            continue;
        };
        let (time, duration) = (times[i], durations[i]);
        let alone = day.samples != counts[i] || duration < 0;
        let mut key = keys.row(i).as_ref().to_vec();
        if level == Level::Resource {
            key.extend(format!("{:?}", day.resource).bytes());
        }
        key.extend(format!("{:?}", day.row_types).bytes());
        let at = match alone {
            true => None,
            false => groups.get(&key).copied(),
        };
        let Some(at) = at else {
            if !alone {
                groups.insert(key, out.len());
            }
            let grouped = !alone;
            let (first, count, earliest, profile) = ((time, id), 1, time, id);
            out.push(Row {
                first,
                at: i,
                grouped,
                count,
                earliest,
                duration,
                profile,
            });
            continue;
        };
        let row = &mut out[at];
        row.count += 1;
        row.duration = row.duration.saturating_add(duration);
        if row.earliest == 0 || (time != 0 && time < row.earliest) {
            row.earliest = time;
        }
        if (time, id) < row.first {
            (row.first, row.at, row.profile) = ((time, id), i, id);
        }
    }
    rollup_rows(&rows, &out, &in_day)
}

/// `batch`'s columns of `schema`, the `profiles` table's (without the
/// partition columns the engine adds).
fn profiles_columns(batch: &RecordBatch, schema: &SchemaRef) -> Result<RecordBatch, StoreError> {
    let at = (schema.fields().iter())
        .map(|f| batch.schema().index_of(f.name()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(engine_error)?;
    batch.project(&at).map_err(engine_error)
}

/// What the day's rows say of each profile.
fn in_day(per_profile: &Batches) -> HashMap<Id, InDay> {
    let mut out = HashMap::new();
    for batch in per_profile {
        let ids = column_of(batch, "profile_id", id_values);
        let samples = column_of(batch, "samples_here", int_values);
        let types = column_of(batch, "row_types", list_values);
        let resources: Vec<Vec<Option<String>>> = (RESOURCE_COLUMNS.iter())
            .map(|(_, c)| optional_values(batch, c))
            .collect();
        for (i, id) in ids.into_iter().enumerate() {
            let Some(id) = id else { continue };
            let mut row_types = types[i].as_ref().map(string_values).unwrap_or_default();
            row_types.sort();
            let resource = resources.iter().map(|column| column[i].clone()).collect();
            out.insert(
                id,
                InDay {
                    resource,
                    row_types,
                    samples: samples[i],
                },
            );
        }
    }
    out
}

/// A string column's values, nulls as `None`.
fn optional_values(batch: &RecordBatch, name: &str) -> Vec<Option<String>> {
    let Some(column) = batch.column_by_name(name) else {
        return vec![None; batch.num_rows()];
    };
    let values = string_values(column);
    (0..batch.num_rows())
        .map(|i| (!column.is_null(i)).then(|| values[i].clone()))
        .collect()
}

/// Each row's header columns, as comparable bytes.
fn header_keys(rows: &RecordBatch) -> Result<datafusion::arrow::row::Rows, StoreError> {
    let columns: Vec<ArrayRef> = (HEADER_COLUMNS.iter())
        .map(|c| rows.column_by_name(c).cloned())
        .collect::<Option<_>>()
        .ok_or_else(|| StoreError::Engine("profiles: a header column is missing".into()))?;
    let fields = columns
        .iter()
        .map(|c| SortField::new(c.data_type().clone()));
    let converter = RowConverter::new(fields.collect()).map_err(engine_error)?;
    converter.convert_columns(&columns).map_err(engine_error)
}

/// The `day_profiles` batch of `out`, each the `profiles` row at its
/// `at` of `rows`, with what the rollup adds (the resource columns
/// those of its first profile: left out of [`Level::Service`]'s table).
fn rollup_rows(
    rows: &RecordBatch,
    out: &[Row],
    in_day: &HashMap<Id, InDay>,
) -> Result<RecordBatch, StoreError> {
    let at = UInt32Array::from_iter_values(out.iter().map(|r| r.at as u32));
    let schema = rollup_schema(DAY_PROFILES);
    let mut columns = Vec::new();
    for field in schema_of(PROFILES).fields() {
        let column = match field.name().as_str() {
            "duration_nano" => ints(out.iter().map(|r| r.duration)),
            name => take(
                rows.column_by_name(name).expect("a profiles column"),
                &at,
                None,
            )
            .map_err(engine_error)?,
        };
        columns.push(column);
    }
    let day = |r: &Row| &in_day[&r.profile];
    for at in 0..RESOURCE_COLUMNS.len() {
        let values = out.iter().map(|r| day(r).resource[at].as_deref());
        columns.push(optional_strings(values));
    }
    let types = out
        .iter()
        .flat_map(|r| day(r).row_types.iter().map(String::as_str));
    let lengths = out.iter().map(|r| day(r).row_types.len()).collect();
    let list_type = schema
        .field_with_name("row_types")
        .map_err(engine_error)?
        .data_type();
    columns.push(list(list_type, lengths, strings(types)));
    columns.push(flags(out.iter().map(|r| r.grouped)));
    columns.push(ints(out.iter().map(|r| r.count)));
    columns.push(ints(out.iter().map(|r| r.earliest)));
    RecordBatch::try_new(schema, columns).map_err(engine_error)
}
