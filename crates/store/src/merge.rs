//! A partition's rows merged: the rows of its files read in the table's
//! schema (files older than a column read with it null), each row taken
//! once (dictionary rows once per id, `samples` rows once per profile,
//! sample and sample type: a request stored twice, at least once
//! delivery's risk, counts once again), samples sorted by sample type and
//! time for pruning, and written as one file. `store compact` merges an
//! hour's files so (`compact.rs`), a day's (`blocks.rs`), and an object
//! store's partitions (`compact_object.rs`).

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::fs::File;
use std::path::{Path, PathBuf};

use datafusion::arrow::array::{new_null_array, ArrayRef, RecordBatch, UInt32Array};
use datafusion::arrow::compute::{
    concat_batches, lexsort_to_indices, take_record_batch, SortColumn,
};
use datafusion::arrow::datatypes::Field;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::file::reader::ChunkReader;

use crate::error::StoreError;
use crate::read::{column_of, id_values, int_values, string_values};
use crate::schema::{schema_of, FUNCTIONS, LOCATIONS, MAPPINGS, PROFILES, SAMPLES, STACKS};

/// What a compaction did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Compacted {
    /// Partitions (of any table) whose files were merged.
    pub partitions: usize,
    /// Files before and after.
    pub files: (usize, usize),
    /// Rows before and after.
    pub rows: (usize, usize),
    /// Whether every `samples` row is in its own time's hour's partition,
    /// so that a range's start bounds the partitions read (docs/store.md):
    /// the store is marked so.
    pub start_bounds_reads: bool,
    /// Services' days whose rollups were written (`rollups.rs`).
    pub rollups: usize,
    /// Services' spans of days whose rollups were written (`spans.rs`).
    pub spans: usize,
}

impl Compacted {
    /// Counts one partition whose `files` were merged, rows before and after.
    pub(crate) fn count(&mut self, files: usize, (before, after): (usize, usize)) {
        self.partitions += 1;
        self.files.0 += files;
        self.files.1 += 1;
        self.rows.0 += before;
        self.rows.1 += after;
    }
}

/// The tables in the order their partitions are compacted: dictionaries
/// before what refers to them.
pub(crate) const COMPACTION_ORDER: [&str; 6] =
    [MAPPINGS, FUNCTIONS, LOCATIONS, STACKS, PROFILES, SAMPLES];

/// The Parquet files of `dir`, by name.
pub(crate) fn parquet_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
        .collect();
    files.sort();
    files
}

/// Merges the rows of `files` of `table` (`shown` names where they are)
/// into `dir/<name>.parquet`; rows before and after.
pub(crate) fn compact_rows_of_files(
    files: &[PathBuf],
    table: &str,
    shown: &str,
    dir: &Path,
    name: &str,
) -> Result<(usize, usize), StoreError> {
    let mut batches = Vec::new();
    for file in files {
        batches.extend(read_file(file, table)?);
    }
    let (all, merged) = merged_rows(&batches, table, shown)?;
    crate::files::write_file(dir, name, &merged, crate::files::FileKind::Compacted)?;
    Ok((all, merged.num_rows()))
}

/// The merged file's name: the first file's name without `.parquet`
/// (`stem`: names sort by time) with a
/// compaction count, `-c1`, `-c2`, ... The same in every table, as the
/// first files of a flush are, so the profiles a `profiles` file holds are
/// still known stored by its `samples` file of the same name. Never a name
/// the partition had: a reader that listed the old files finds them gone
/// and reads again, where under an old name it would read the merged
/// file at the old file's size.
fn merged_name(stem: &str) -> String {
    let counted = stem.rsplit_once("-c").and_then(|(base, n)| {
        let n: u64 = n
            .parse()
            .ok()
            .filter(|_| n.bytes().all(|b| b.is_ascii_digit()))?;
        Some((base.to_string(), n))
    });
    match counted {
        Some((base, n)) if !base.is_empty() => format!("{base}-c{}", n + 1),
        _ => format!("{stem}-c1"),
    }
}

/// The merged files' name of a partition whose files, in every table,
/// begin with `first` (the least of their names): [`merged_name`] of it,
/// counted on while it is one of `taken` (the partition's names). One
/// name in every table, whichever table's files begin the earliest (a
/// partition of samples moved from their profile's hour has `samples`
/// files of batches that wrote no `profiles` file there).
fn merged_name_among(first: &str, taken: &BTreeSet<String>) -> String {
    let mut name = merged_name(first);
    while taken.contains(&name) {
        name = merged_name(&name);
    }
    name
}

/// The file names (without `.parquet`) of each partition, over every
/// table, by its path below its table: a partition's merged files take
/// one name in every table, as a flush's files do, so that the profiles
/// of a merged `profiles` file are still known stored by the `samples`
/// file of the same name (`held.rs`).
#[derive(Debug, Default)]
pub(crate) struct PartitionNames(BTreeMap<String, BTreeSet<String>>);

impl PartitionNames {
    /// Notes a file `stem` of the partition `below` its table.
    pub(crate) fn note(&mut self, below: String, stem: String) {
        self.0.entry(below).or_default().insert(stem);
    }

    /// The name of the merged files of the partition `below` in every
    /// table: [`merged_name_among`] its first file's and all it had.
    pub(crate) fn merged(&self, below: &str) -> String {
        let names = self.0.get(below).cloned().unwrap_or_default();
        let first = names.first().cloned().unwrap_or_default();
        merged_name_among(&first, &names)
    }
}

/// The rows of one partition's `batches` taken once each (`shown` names
/// the partition): how many there were, and the merged rows.
pub(crate) fn merged_rows(
    batches: &[RecordBatch],
    table: &str,
    shown: &str,
) -> Result<(usize, RecordBatch), StoreError> {
    let engine =
        |e: datafusion::arrow::error::ArrowError| StoreError::Engine(format!("{shown}: {e}"));
    let all = concat_batches(&schema_of(table), batches).map_err(engine)?;
    let merged = once_each(&all, table).map_err(engine)?;
    let merged = crate::legacy_text::readable_attributes(merged).map_err(engine)?;
    Ok((all.num_rows(), merged))
}

/// A file's record batches, in the table's schema exactly.
fn read_file(file: &Path, table: &str) -> Result<Vec<RecordBatch>, StoreError> {
    let opened = File::open(file).map_err(crate::error::io_at(file))?;
    read_parquet(opened, &file.display().to_string(), table)
}

/// The record batches of the Parquet file `reader` reads (`shown` names
/// it), in the table's schema exactly.
pub(crate) fn read_parquet<R: ChunkReader + 'static>(
    reader: R,
    shown: &str,
    table: &str,
) -> Result<Vec<RecordBatch>, StoreError> {
    let bad = |e: &dyn std::fmt::Display| {
        StoreError::Engine(format!(
            "{shown}: {e}; nothing was compacted in its partition"
        ))
    };
    let reader = ParquetRecordBatchReaderBuilder::try_new(reader)
        .and_then(|b| b.build())
        .map_err(|e| bad(&e))?;
    let schema = schema_of(table);
    let mut batches = Vec::new();
    for batch in reader {
        let batch = batch.map_err(|e| bad(&e))?;
        let columns = schema
            .fields()
            .iter()
            .map(|f| {
                (batch.column_by_name(f.name()).cloned())
                    .or_else(|| added_since(&batch, f))
                    .ok_or_else(|| bad(&format!("no column {}", f.name())))
            })
            .collect::<Result<Vec<_>, _>>()?;
        batches.push(RecordBatch::try_new(schema.clone(), columns).map_err(|e| bad(&e))?);
    }
    Ok(batches)
}

/// Column `field` of `batch`, read from a file written before the column
/// was added: the samples' `profile_time_unix_nano` was their
/// `time_unix_nano`; any other nullable column is null.
fn added_since(batch: &RecordBatch, field: &Field) -> Option<ArrayRef> {
    match field.name().as_str() {
        "profile_time_unix_nano" => batch.column_by_name("time_unix_nano").cloned(),
        _ if field.is_nullable() => Some(new_null_array(field.data_type(), batch.num_rows())),
        _ => None,
    }
}

/// The rows of `all` taken once per key (the id of a dictionary row; a
/// samples row's profile, sample and sample type), samples sorted by
/// sample type and time.
fn once_each(
    all: &RecordBatch,
    table: &str,
) -> Result<RecordBatch, datafusion::arrow::error::ArrowError> {
    let keys: Vec<Vec<u8>> = match table {
        SAMPLES => {
            let profiles = column_of(all, "profile_id", id_values);
            let indexes = column_of(all, "sample_index", int_values);
            let types = column_of(all, "sample_type", string_values);
            (0..all.num_rows())
                .map(|i| {
                    let mut key = profiles[i].unwrap_or_default().to_vec();
                    key.extend(indexes[i].to_le_bytes());
                    key.extend(types[i].as_bytes());
                    key
                })
                .collect()
        }
        _ => {
            let ids = all.column(0).clone();
            id_values(&ids)
                .into_iter()
                .map(|id| id.unwrap_or_default().to_vec())
                .collect()
        }
    };
    let mut seen = HashSet::new();
    let kept: Vec<u32> = (0..all.num_rows() as u32)
        .filter(|&i| seen.insert(keys[i as usize].clone()))
        .collect();
    let unique = take_record_batch(all, &UInt32Array::from(kept))?;
    if table != SAMPLES {
        return Ok(unique);
    }
    let sort = |name: &str| SortColumn {
        values: unique
            .column_by_name(name)
            .cloned()
            .expect("a samples column"),
        options: None,
    };
    let order = lexsort_to_indices(&[sort("sample_type"), sort("time_unix_nano")], None)?;
    take_record_batch(&unique, &order)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_merged_file_is_never_named_as_a_file_it_replaces() {
        let name = |file: &str| {
            let stem = std::path::Path::new(file).file_stem().unwrap();
            super::merged_name(&stem.to_string_lossy())
        };
        let first = "dt=2026-12-05/00000001764892800000000000-0a1b2c3d4e5f.parquet";
        assert_eq!(name(first), "00000001764892800000000000-0a1b2c3d4e5f-c1");
        assert_eq!(
            name("00000001764892800000000000-0a1b2c3d4e5f-c1.parquet"),
            "00000001764892800000000000-0a1b2c3d4e5f-c2"
        );
        assert_eq!(name("-c7.parquet"), "-c7-c1");
    }
}
