//! A store's Parquet files: encoded (`parquet_bytes`), and made durable
//! in a directory. Each file is written hidden, synced, renamed into place,
//! and its directory synced. A flush's files are written and synced at
//! once, on threads of their own, so that their syncs share the file
//! system's journal commits instead of waiting one after another, and its
//! `samples` files are renamed last, once the others are in place.

use std::collections::BTreeSet;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use datafusion::arrow::array::RecordBatch;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, Encoding, ZstdLevel};
use parquet::file::properties::WriterProperties;
use parquet::schema::types::ColumnPath;

use crate::error::{io_at, StoreError};

/// The most threads a flush writes and syncs its files on.
const MOST_THREADS: usize = 8;

/// A file to write: its directory, its rows, and whether it is renamed
/// into place after the others (a flush's `samples`).
pub(crate) struct NewFile<'r> {
    pub dir: PathBuf,
    pub records: &'r RecordBatch,
    pub last: bool,
}

/// Writes each of `files` as `<dir>/<batch>.parquet`, durably: every one
/// is in place and synced when this returns. Their paths, in order.
pub(crate) fn write_files(
    files: &[NewFile],
    batch: &str,
    kind: FileKind,
) -> Result<Vec<PathBuf>, StoreError> {
    let written = in_parallel(files, |f| write_hidden(f, batch, kind));
    // A write that failed (a full disk) leaves none of its files behind,
    // written or half written: they would hold the space.
    let written = written.inspect_err(|_| {
        for file in files {
            let _ = std::fs::remove_file(hidden_path(&file.dir, batch));
        }
    })?;
    let (last, first): (Vec<_>, Vec<_>) = (files.iter().zip(&written)).partition(|(f, _)| f.last);
    publish(first.into_iter().map(|(_, w)| w))?;
    crate::pause::at(crate::pause::Point::BeforeSamples);
    publish(last.into_iter().map(|(_, w)| w))?;
    Ok(written.into_iter().map(|(_, target)| target).collect())
}

/// Writes `records` as `dir/<batch>.parquet`, durably.
pub(crate) fn write_file(
    dir: &Path,
    batch: &str,
    records: &RecordBatch,
    kind: FileKind,
) -> Result<PathBuf, StoreError> {
    let file = NewFile {
        dir: dir.to_path_buf(),
        records,
        last: false,
    };
    let mut written = write_files(&[file], batch, kind)?;
    Ok(written.remove(0))
}

/// `file` written under a hidden name in its directory and synced: the
/// hidden path and the path it is to have.
fn write_hidden(
    file: &NewFile,
    batch: &str,
    kind: FileKind,
) -> Result<(PathBuf, PathBuf), StoreError> {
    let dir = &file.dir;
    std::fs::create_dir_all(dir).map_err(io_at(dir))?;
    let hidden = hidden_path(dir, batch);
    let target = dir.join(format!("{batch}.parquet"));
    let bytes = parquet_bytes(file.records, &target.display().to_string(), kind)?;
    let mut out = File::create(&hidden).map_err(io_at(&hidden))?;
    std::io::Write::write_all(&mut out, &bytes).map_err(io_at(&hidden))?;
    out.sync_all().map_err(io_at(&hidden))?;
    Ok((hidden, target))
}

/// The hidden name a file of `batch` is written under in `dir`.
fn hidden_path(dir: &Path, batch: &str) -> PathBuf {
    dir.join(format!(".{batch}.parquet.tmp"))
}

/// Renames each hidden file into place, then syncs their directories.
fn publish<'m>(moves: impl Iterator<Item = &'m (PathBuf, PathBuf)>) -> Result<(), StoreError> {
    let mut dirs = BTreeSet::new();
    for (hidden, target) in moves {
        std::fs::rename(hidden, target).map_err(io_at(target))?;
        dirs.extend(target.parent());
    }
    let dirs: Vec<&Path> = dirs.into_iter().collect();
    in_parallel(&dirs, |dir| sync_dir(dir))?;
    Ok(())
}

/// Syncs the directory `dir`: what was renamed into it stays there.
pub(crate) fn sync_dir(dir: &Path) -> Result<(), StoreError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io_at(dir))
}

/// `work` done on each of `items`, on up to [`MOST_THREADS`] threads;
/// the results in order, or the first item's error.
fn in_parallel<T: Sync, R: Send>(
    items: &[T],
    work: impl Fn(&T) -> Result<R, StoreError> + Sync,
) -> Result<Vec<R>, StoreError> {
    protoprof_model_meta::threads::map_in_order(items, MOST_THREADS, work)
        .into_iter()
        .collect()
}

/// What a Parquet file is written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileKind {
    /// A flush, which a request waits for: zstd's fastest level, and
    /// statistics per column chunk.
    Flush,
    /// A compaction's merged file, read for good: a higher zstd level, and
    /// statistics per page too, so that an engine skips pages.
    Compacted,
}

/// Columns written as deltas (Parquet's leaf paths; a list's items are
/// `NAME.list.item`).
const DELTA_COLUMNS: [&str; 2] = ["timestamps_unix_nano.list.item", "event_values.list.item"];

/// `records` as a Parquet file: zstd, dictionary encoding (deltas for
/// [`DELTA_COLUMNS`]), statistics.
pub(crate) fn parquet_bytes(
    records: &RecordBatch,
    name: &str,
    kind: FileKind,
) -> Result<Vec<u8>, StoreError> {
    use parquet::file::properties::EnabledStatistics;
    let (level, statistics) = match kind {
        FileKind::Flush => (1, EnabledStatistics::Chunk),
        FileKind::Compacted => (3, EnabledStatistics::Page),
    };
    let mut properties = WriterProperties::builder()
        .set_compression(Compression::ZSTD(
            ZstdLevel::try_new(level).expect("a zstd level"),
        ))
        .set_statistics_enabled(statistics)
        .set_created_by("protoprof".into());
    // Events' times and values are nearly all distinct (times close
    // together): deltas, not a dictionary that would hash each value only
    // to be abandoned.
    for column in DELTA_COLUMNS {
        let path = ColumnPath::from(column.split('.').map(String::from).collect::<Vec<_>>());
        properties = properties
            .set_column_dictionary_enabled(path.clone(), false)
            .set_column_encoding(path, Encoding::DELTA_BINARY_PACKED);
    }
    let properties = properties.build();
    let failed = |e: parquet::errors::ParquetError| StoreError::Engine(format!("{name}: {e}"));
    let mut bytes = Vec::new();
    let mut writer = ArrowWriter::try_new(
        &mut bytes,
        Arc::clone(records.schema_ref()),
        Some(properties),
    )
    .map_err(failed)?;
    writer.write(records).map_err(failed)?;
    writer.close().map_err(failed)?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{ArrayRef, Int64Array};

    fn rows(n: i64) -> RecordBatch {
        let column: ArrayRef = Arc::new(Int64Array::from_iter_values(0..n));
        RecordBatch::try_from_iter([("n", column)]).unwrap()
    }

    /// Every file is in place, under its own name, in the order given,
    /// and nothing hidden is left behind.
    #[test]
    fn files_written_at_once_are_each_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let batches: Vec<RecordBatch> = (1..=10).map(rows).collect();
        let files: Vec<NewFile> = (batches.iter().enumerate())
            .map(|(i, records)| NewFile {
                dir: dir
                    .path()
                    .join(format!("table{}", i % 3))
                    .join(format!("p{i}")),
                records,
                last: i % 3 == 0,
            })
            .collect();
        let written = write_files(&files, "batch", FileKind::Flush).unwrap();
        assert_eq!(written.len(), 10);
        for (i, path) in written.iter().enumerate() {
            assert_eq!(path, &files[i].dir.join("batch.parquet"));
            let bytes = bytes::Bytes::from(std::fs::read(path).unwrap());
            let reader = parquet::file::serialized_reader::SerializedFileReader::new(bytes);
            let rows = parquet::file::reader::FileReader::metadata(&reader.unwrap())
                .file_metadata()
                .num_rows();
            assert_eq!(rows, i as i64 + 1);
        }
        for file in &files {
            let names: Vec<_> = (std::fs::read_dir(&file.dir).unwrap())
                .map(|e| e.unwrap().file_name())
                .collect();
            assert_eq!(names, ["batch.parquet"], "nothing hidden left");
        }
    }

    /// Results come back in the items' order; an error is an error.
    #[test]
    fn work_in_parallel_keeps_order_and_fails_whole() {
        let items: Vec<usize> = (0..50).collect();
        let doubled = in_parallel(&items, |&i| Ok(i * 2)).unwrap();
        assert_eq!(doubled, (0..50).map(|i| i * 2).collect::<Vec<_>>());
        let failed = in_parallel(&items, |&i| match i {
            7 => Err(StoreError::Io("seven".into())),
            i => Ok(i),
        });
        assert!(failed.unwrap_err().to_string().contains("seven"));
    }
}
