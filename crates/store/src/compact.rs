//! `store compact`: each partition's files of each table merged into one,
//! dictionary rows taken once per id, samples rows once per profile,
//! sample and sample type (so a request stored twice, at least once
//! delivery's risk, counts once again), samples sorted for pruning.
//!
//! A day that is over becomes one partition per service first, its day
//! block (`blocks.rs`); the hours left are merged hour by hour. A
//! partition is swapped whole: the merged file is written into a hidden
//! sibling directory, which is exchanged with the partition's directory in
//! one atomic `renameat2(RENAME_EXCHANGE)` (Linux), then the old files go.
//! A reader sees the old files or the merged one, never both; dictionaries
//! are swapped before samples. Writers wait on the store's lock meanwhile.

use std::collections::HashSet;
use std::fs::File;
use std::path::{Path, PathBuf};

use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use crate::error::{io_at, StoreError};
use crate::layout::table_directory;
use crate::lock::StoreLock;
use crate::merge::{
    compact_rows_of_files, parquet_files, Compacted, PartitionNames, COMPACTION_ORDER,
};
use crate::schema::PROFILES;
use crate::swaps::{sibling, swap};

/// Merges the files of every partition of every table of the store in
/// directory `root` that has more than one.
pub(crate) fn compact_directory(root: &Path) -> Result<Compacted, StoreError> {
    let _lock = StoreLock::exclusive(root)?;
    crate::swaps::recover(root)?;
    remove_leftovers(root)?;
    // A compaction that fails (a full disk) removes what it staged, still
    // under the lock: the store reads as it did, and has its space back.
    compact_locked(root).inspect_err(|_| {
        let _ = crate::swaps::recover(root);
        let _ = remove_leftovers(root);
    })
}

/// [`compact_directory`]'s work, under the store's exclusive lock.
fn compact_locked(root: &Path) -> Result<Compacted, StoreError> {
    let mut done = Compacted::default();
    // Days that are over become day blocks first (`blocks.rs`); the
    // hours left (of today, of services too busy for a block) are merged
    // hour by hour.
    let staged = crate::blocks::stage_day_blocks(root, now_unix_nano(), &mut done)?;
    let mut swapped = crate::blocks::swap_staged(root, staged)?;
    let (listed, names) = listed_partitions(root);
    // Partitions (by their path below their table) to merge in every
    // table, so that their files keep one name: those of several files in
    // some table, and those whose attributes an earlier writer stored in
    // a debug form (rewritten even when they hold one file).
    let mut merged = HashSet::new();
    for (table, _, below, files) in &listed {
        let legacy = *table == PROFILES && files.len() == 1 && has_legacy_text(&files[0])?;
        if files.len() > 1 || legacy {
            merged.insert(below.clone());
        }
    }
    for (table, partition, below, files) in listed {
        if files.is_empty() || !merged.contains(&below) {
            continue;
        }
        let name = names.merged(&below.display().to_string());
        let rows = compact_partition(&partition, &files, table, &name)?;
        done.count(files.len(), rows);
        swapped.push(sibling(&partition, "compact"));
    }
    remove_old_files(&swapped)?;
    // Rollups sum each day of a marked store only: elsewhere a day's
    // rows may be in other days' partitions.
    if crate::bounds::is_marked_directory(root) {
        let now = now_unix_nano();
        done.rollups = crate::rollup_build::build_rollups(root, now)?;
        done.spans = crate::span_build::build_spans(root, now)?;
    }
    Ok(done)
}

/// A partition of a table, its path below the table, and its files.
type Listed = (&'static str, PathBuf, PathBuf, Vec<PathBuf>);

/// Every partition of every table, listed before any is merged, and
/// the names of each partition's files over every table.
fn listed_partitions(root: &Path) -> (Vec<Listed>, PartitionNames) {
    let mut listed = Vec::new();
    let mut names = PartitionNames::default();
    for table in COMPACTION_ORDER {
        let directory = table_directory(root, table);
        for partition in partitions(&directory) {
            let files = parquet_files(&partition);
            let below = partition.strip_prefix(&directory).unwrap_or(&partition);
            let below = below.to_path_buf();
            for file in &files {
                names.note(below.display().to_string(), stem(file));
            }
            listed.push((table, partition, below, files));
        }
    }
    (listed, names)
}

/// Removes what processes killed while they changed the store left in
/// it, under its exclusive lock (no writer, no other compaction runs):
/// compactions' staging directories (`.NAME.compact`, `.NAME.old`) and
/// writers' files not renamed into place (`.NAME.parquet.tmp`). All are
/// hidden, so no reader ever read them.
fn remove_leftovers(root: &Path) -> Result<(), StoreError> {
    for table in COMPACTION_ORDER {
        let mut level = vec![table_directory(root, table)];
        for _ in 0..4 {
            let mut next = Vec::new();
            for dir in level {
                for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                    let name = entry.file_name().to_string_lossy().to_string();
                    let path = entry.path();
                    let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
                    let staging = name.ends_with(".compact") || name.ends_with(".old");
                    match (name.starts_with('.'), is_dir) {
                        (true, true) if staging => {
                            std::fs::remove_dir_all(&path).map_err(io_at(&path))?
                        }
                        (true, false) if name.ends_with(".parquet.tmp") => {
                            std::fs::remove_file(&path).map_err(io_at(&path))?
                        }
                        (false, true) => next.push(path),
                        _ => {}
                    }
                }
            }
            level = next;
        }
    }
    Ok(())
}

/// The time now, in Unix nanoseconds.
fn now_unix_nano() -> i64 {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    now.map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
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
        std::fs::remove_dir_all(old).map_err(io_at(old))?;
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
    let opened = File::open(file).map_err(io_at(file))?;
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

/// Merges `files` of `partition` into one, swapped in; rows before and after.
fn compact_partition(
    partition: &Path,
    files: &[PathBuf],
    table: &str,
    name: &str,
) -> Result<(usize, usize), StoreError> {
    // One a killed compaction left is gone already (`remove_leftovers`).
    let staging = sibling(partition, "compact");
    let shown = partition.display().to_string();
    let rows = compact_rows_of_files(files, table, &shown, &staging, name)?;
    swap(partition, &staging)?;
    // `staging` now holds the old files: removed after a grace
    // ([`remove_old_files`]).
    Ok(rows)
}

/// A file's name without `.parquet`.
fn stem(file: &Path) -> String {
    let stem = file.file_stem().map(|s| s.to_string_lossy().to_string());
    stem.unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};

    use crate::test_profiles::profile;
    use crate::{ProfileContext, Query, Store, StoreWriter};

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
        let batches = crate::merge::read_parquet(file, "", "samples").unwrap();
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
        // Of today: its hour stays an hour (a day over is made a block,
        // its attributes rewritten as it is merged).
        let mut today = profile(3);
        today.time_nanos = super::now_unix_nano();
        writer.add(&today, &context).unwrap();
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
        // The partition is rewritten in every table, so that its files
        // keep one name in all six.
        assert_eq!(done.files, (6, 6), "every table: {done:?}");
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
        // A hundred compactions: of a day over (its block made again with
        // new hours) and of the hour now, in turn.
        for round in 0..100 {
            // Small files to merge: one flush per profile.
            for n in 1..=3 {
                let value = round * 3 + n;
                let mut p = profile(value);
                if round % 2 == 1 {
                    p.time_nanos = super::now_unix_nano();
                }
                let mut writer = StoreWriter::new(dir.path());
                writer.add(&p, &context).unwrap();
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
