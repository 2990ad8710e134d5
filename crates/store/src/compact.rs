//! `store compact`: each partition's files of each table merged into one,
//! dictionary rows taken once per id, samples rows once per profile,
//! sample and sample type (so a request stored twice, at least once
//! delivery's risk, counts once again), samples sorted for pruning.
//!
//! A partition is swapped whole: the merged file is written into a hidden
//! sibling directory, which is exchanged with the partition's directory in
//! one atomic `renameat2(RENAME_EXCHANGE)` (Linux), then the old files go.
//! A reader sees the old files or the merged one, never both; dictionaries
//! are swapped before samples. Writers wait on the store's lock meanwhile.

use std::collections::HashSet;
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
use crate::layout::table_directory;
use crate::lock::StoreLock;
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

/// Merges the files of every partition of every table of the store in
/// directory `root` that has more than one.
pub(crate) fn compact_directory(root: &Path) -> Result<Compacted, StoreError> {
    let _lock = StoreLock::exclusive(root)?;
    let mut done = Compacted::default();
    // Partitions (below their table) whose attributes an earlier writer
    // stored in a debug form: rewritten even when they hold one file.
    let mut legacy = HashSet::new();
    let mut swapped = Vec::new();
    for table in COMPACTION_ORDER {
        let directory = table_directory(root, table);
        for partition in partitions(&directory) {
            let files = parquet_files(&partition);
            let below = partition
                .strip_prefix(&directory)
                .unwrap_or(&partition)
                .to_path_buf();
            let merged = match files.len() {
                0 => false,
                1 if table == PROFILES && has_legacy_text(&files[0])? => legacy.insert(below),
                1 => legacy.contains(&below),
                _ => true,
            };
            if !merged {
                continue;
            }
            done.count(files.len(), compact_partition(&partition, &files, table)?);
            swapped.push(sibling(&partition, "compact"));
        }
    }
    remove_old_files(&swapped)?;
    Ok(done)
}

/// How long the old files of a swapped partition stay: a reader that
/// opened the partition's directory just before the swap lists it after,
/// and must find the old files there, not a directory emptied under it
/// (which would read as a partition without rows, with no error to retry).
const OLD_FILES_GRACE: std::time::Duration = std::time::Duration::from_millis(250);

/// Removes the directories the old files were swapped into, once
/// [`OLD_FILES_GRACE`] has passed since the last swap. A reader that
/// reads a file removed then finds it gone and reads again.
fn remove_old_files(swapped: &[PathBuf]) -> Result<(), StoreError> {
    if swapped.is_empty() {
        return Ok(());
    }
    std::thread::sleep(OLD_FILES_GRACE);
    for old in swapped {
        std::fs::remove_dir_all(old).map_err(|e| io(old, e))?;
    }
    Ok(())
}

/// Whether a `profiles` file holds attribute values in a debug form (its
/// `samples` file, of the same partition, holds them then too). Only its
/// `resource_attributes` column is read: every compaction looks at every
/// partition of one file.
fn has_legacy_text(file: &Path) -> Result<bool, StoreError> {
    use parquet::arrow::ProjectionMask;
    let bad = |e: &dyn std::fmt::Display| StoreError::Engine(format!("{}: {e}", file.display()));
    let opened = File::open(file).map_err(|e| io(file, e))?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(opened).map_err(|e| bad(&e))?;
    let Ok(column) = builder.schema().index_of("resource_attributes") else {
        return Ok(false);
    };
    let only = ProjectionMask::roots(builder.parquet_schema(), [column]);
    let reader = builder.with_projection(only).build().map_err(|e| bad(&e))?;
    for batch in reader {
        if crate::legacy_text::holds_debug_forms(&batch.map_err(|e| bad(&e))?) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The partition directories below a table's: three levels down.
fn partitions(table: &Path) -> Vec<PathBuf> {
    let mut level = vec![table.to_path_buf()];
    for _ in 0..3 {
        let mut next = Vec::new();
        for dir in level {
            for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let name = entry.file_name();
                let visible = !name.to_string_lossy().starts_with('.');
                if visible && entry.path().is_dir() {
                    next.push(entry.path());
                }
            }
        }
        level = next;
    }
    level.sort();
    level
}

fn parquet_files(dir: &Path) -> Vec<PathBuf> {
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

/// Merges `files` of `partition` into one, swapped in; rows before and after.
fn compact_partition(
    partition: &Path,
    files: &[PathBuf],
    table: &str,
) -> Result<(usize, usize), StoreError> {
    let mut batches = Vec::new();
    for file in files {
        batches.extend(read_file(file, table)?);
    }
    let (all, merged) = merged_rows(&batches, table, &partition.display().to_string())?;
    let name = merged_name(&files[0]);
    let staging = sibling(partition, "compact");
    let _ = std::fs::remove_dir_all(&staging);
    crate::files::write_file(&staging, &name, &merged, crate::files::FileKind::Compacted)?;
    swap(partition, &staging)?;
    // `staging` now holds the old files: removed after a grace
    // ([`remove_old_files`]).
    Ok((all, merged.num_rows()))
}

/// The merged file's name: the first file's (names sort by time) with a
/// compaction count, `-c1`, `-c2`, ... The same in every table, as the
/// first files of a flush are, so the profiles a `profiles` file holds are
/// still known stored by its `samples` file of the same name. Never a name
/// the partition had: a reader that listed the old files finds them gone
/// and reads again, where under an old name it would read the merged
/// file at the old file's size.
fn merged_name(first: &Path) -> String {
    let stem = first
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_default();
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
    let opened = File::open(file).map_err(|e| io(file, e))?;
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

/// A hidden sibling of `dir`: `.service=x.compact` beside `service=x`.
fn sibling(dir: &Path, what: &str) -> PathBuf {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    dir.with_file_name(format!(".{name}.{what}"))
}

/// Exchanges the directories `a` and `b` atomically where the system can
/// (Linux's `renameat2`); elsewhere by two renames.
fn swap(a: &Path, b: &Path) -> Result<(), StoreError> {
    #[cfg(target_os = "linux")]
    {
        use std::ffi::CString;
        use std::os::unix::ffi::OsStrExt;
        let path = |p: &Path| {
            CString::new(p.as_os_str().as_bytes()).map_err(|e| StoreError::Io(e.to_string()))
        };
        let (pa, pb) = (path(a)?, path(b)?);
        // SAFETY: two valid NUL-terminated paths; renameat2 reads them only.
        let done = unsafe {
            libc::renameat2(
                libc::AT_FDCWD,
                pa.as_ptr(),
                libc::AT_FDCWD,
                pb.as_ptr(),
                libc::RENAME_EXCHANGE,
            )
        };
        if done == 0 {
            return sync_parent(a);
        }
    }
    let aside = sibling(a, "old");
    std::fs::rename(a, &aside).map_err(|e| io(a, e))?;
    std::fs::rename(b, a).map_err(|e| io(b, e))?;
    std::fs::rename(&aside, b).map_err(|e| io(&aside, e))?;
    sync_parent(a)
}

fn sync_parent(dir: &Path) -> Result<(), StoreError> {
    crate::files::sync_dir(dir.parent().unwrap_or(dir))
}

fn io(path: &Path, e: std::io::Error) -> StoreError {
    StoreError::Io(format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};

    use crate::test_profiles::profile;
    use crate::{ProfileContext, Query, Store, StoreWriter};

    #[test]
    fn a_merged_file_is_never_named_as_a_file_it_replaces() {
        let name = |file: &str| super::merged_name(std::path::Path::new(file));
        let first = "dt=2026-12-05/00000001764892800000000000-0a1b2c3d4e5f.parquet";
        assert_eq!(name(first), "00000001764892800000000000-0a1b2c3d4e5f-c1");
        assert_eq!(
            name("00000001764892800000000000-0a1b2c3d4e5f-c1.parquet"),
            "00000001764892800000000000-0a1b2c3d4e5f-c2"
        );
        assert_eq!(name("-c7.parquet"), "-c7-c1");
    }

    /// `samples` files written before `profile_time_unix_nano`,
    /// `timestamps_unix_nano` and `event_values` were added still read,
    /// merge in the same order, and compact beside new ones.
    #[test]
    fn samples_files_older_than_the_event_columns_still_read_and_compact() {
        use datafusion::arrow::array::{Array, Int64Array};
        let dir = tempfile::tempdir().unwrap();
        let context = ProfileContext::default();
        let mut writer = StoreWriter::new(dir.path());
        let (mut older, newer) = (profile(3), profile(4));
        older.time_nanos -= 1;
        writer.add(&older, &context).unwrap();
        writer.flush().unwrap();
        let samples = crate::layout::table_directory(dir.path(), crate::schema::SAMPLES);
        let old_file = super::parquet_files(&super::partitions(&samples)[0])[0].clone();
        let file = std::fs::File::open(&old_file).unwrap();
        let batches = super::read_parquet(file, "", "samples").unwrap();
        let schema = batches[0].schema();
        let added = [
            "profile_time_unix_nano",
            "timestamps_unix_nano",
            "event_values",
        ];
        let kept: Vec<usize> = (0..schema.fields().len())
            .filter(|&i| !added.contains(&schema.field(i).name().as_str()))
            .collect();
        let old = batches[0].project(&kept).unwrap();
        let mut bytes = Vec::new();
        let mut out = parquet::arrow::ArrowWriter::try_new(&mut bytes, old.schema(), None).unwrap();
        out.write(&old).unwrap();
        out.close().unwrap();
        std::fs::write(&old_file, bytes).unwrap();
        writer.add(&newer, &context).unwrap();
        writer.flush().unwrap();
        let merged = |store: &Store| store.select(&Query::default()).unwrap().profile;
        let before = merged(&Store::open(dir.path()).unwrap());
        let values: Vec<i64> = before.sample.iter().map(|s| s.value[0]).collect();
        assert_eq!(values, [3 + 4], "one stack, both profiles");
        super::compact_directory(dir.path()).unwrap();
        let store = Store::open(dir.path()).unwrap();
        assert_eq!(merged(&store), before);
        let times = store
            .sql("SELECT profile_time_unix_nano - time_unix_nano FROM samples")
            .unwrap();
        let column = times[0].column(0);
        let column = column.as_any().downcast_ref::<Int64Array>().unwrap();
        assert_eq!((column.len(), column.null_count()), (2, 0));
        assert!(column.values().iter().all(|&d| d == 0));
    }

    /// Attribute values an earlier writer stored in Rust's debug form are
    /// rewritten as JSON by a compaction, in a partition of one file too,
    /// in `profiles` and `samples` alike; other values stay as they were.
    #[test]
    fn compaction_rewrites_attribute_values_stored_in_a_debug_form() {
        let dir = tempfile::tempdir().unwrap();
        let special = "special_fields: SpecialFields { unknown_fields: UnknownFields { fields: None }, cached_size: CachedSize { size: 0 } }";
        let debug = format!(
            "ArrayValue(ArrayValue {{ values: [AnyValue {{ value: Some(IntValue(0)), {special} }}, AnyValue {{ value: Some(IntValue(1)), {special} }}], {special} }})"
        );
        let context = ProfileContext {
            service_name: "old".into(),
            resource_attributes: vec![("order".into(), debug), ("region".into(), "eu [1]".into())],
            ..Default::default()
        };
        let mut writer = StoreWriter::new(dir.path());
        writer.add(&profile(3), &context).unwrap();
        writer.flush().unwrap();
        let attributes = |table: &str| {
            let store = Store::open(dir.path()).unwrap();
            let sql = format!(
                "SELECT DISTINCT resource_attributes['order'] || ' ' || resource_attributes['region'] FROM {table}"
            );
            let batches = store.sql(&sql).unwrap();
            let column = batches[0].column(0).as_any();
            let column = column.downcast_ref::<datafusion::arrow::array::StringArray>();
            column.unwrap().value(0).to_string()
        };
        assert!(attributes("profiles").contains("special_fields"));
        let done = super::compact_directory(dir.path()).unwrap();
        assert_eq!(done.files, (2, 2), "profiles and samples: {done:?}");
        for table in ["profiles", "samples"] {
            assert_eq!(attributes(table), "[0,1] eu [1]", "{table}");
        }
        // Once rewritten, there is nothing more to do.
        let again = super::compact_directory(dir.path()).unwrap();
        assert_eq!(again.partitions, 0);
    }

    #[test]
    fn a_reader_racing_compactions_reads_the_old_files_or_the_merged_ones() {
        let dir = tempfile::tempdir().unwrap();
        let context = ProfileContext {
            service_name: "s".into(),
            ..Default::default()
        };
        let mut total = 0;
        for round in 0..6 {
            // Small files to merge: one flush per profile.
            for n in 1..=8 {
                let value = round * 8 + n;
                let mut writer = StoreWriter::new(dir.path());
                writer.add(&profile(value), &context).unwrap();
                writer.flush().unwrap();
                total += value;
            }
            let store = Store::open(dir.path()).unwrap();
            let compacted = AtomicBool::new(false);
            std::thread::scope(|scope| {
                scope.spawn(|| {
                    super::compact_directory(dir.path()).unwrap();
                    compacted.store(true, Ordering::SeqCst);
                });
                let mut reads = 0;
                while reads == 0 || !compacted.load(Ordering::SeqCst) {
                    let all = store.select(&Query::default());
                    let all = all.unwrap_or_else(|e| panic!("round {round}: {e}")).profile;
                    assert_eq!(all.sample.iter().map(|s| s.value[0]).sum::<i64>(), total);
                    reads += 1;
                }
            });
        }
    }
}
