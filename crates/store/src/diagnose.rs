//! When the engine fails on a store, which file is at fault: the engine's
//! own message often names none. Walks the tables' Parquet files, reading
//! each footer and comparing its schema with the table's.

use std::fs::File;
use std::path::{Path, PathBuf};

use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::parquet_to_arrow_schema;
use parquet::file::reader::{FileReader, SerializedFileReader};

use crate::layout::table_directory;
use crate::schema::{schema_of, TABLES};
use crate::spans::rollup_table_schema;

/// The first file of the store at `root` that does not read as its
/// table, and why.
pub(crate) fn first_bad_file(root: &Path) -> Option<String> {
    for (file, table) in store_files(root) {
        if let Some(problem) = problem_of(&file, &table) {
            return Some(format!("{}: {problem}", file.display()));
        }
    }
    None
}

/// Every Parquet file of the store at `root`, with the table it is of:
/// the tables' files, then the rollups' (`rollups.rs`, `spans.rs`).
pub(crate) fn store_files(root: &Path) -> Vec<(PathBuf, String)> {
    let mut files = Vec::new();
    for table in TABLES {
        let found = parquet_files(&table_directory(root, table)).into_iter();
        files.extend(found.map(|file| (file, table.to_string())));
    }
    let rollups = root.join(crate::rollups::ROLLUPS);
    for table in crate::blocks::visible_names(&rollups) {
        if rollup_table_schema(&table).is_some() {
            let found = parquet_files(&rollups.join(&table)).into_iter();
            files.extend(found.map(|file| (file, table.clone())));
        }
    }
    files
}

/// The `.parquet` files under `dir`, at any depth, sorted. Entries are
/// told apart by the directory's own listing (no `stat` each): a
/// partition a busy receiver writes to holds a file per flush.
pub(crate) fn parquet_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let is_dir = match entry.file_type() {
                Ok(t) if t.is_symlink() => path.is_dir(),
                Ok(t) => t.is_dir(),
                Err(_) => path.is_dir(),
            };
            if is_dir {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "parquet") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// Why `file` is not a file of `table`, if it is not.
pub(crate) fn problem_of(file: &Path, table: &str) -> Option<String> {
    let opened = File::open(file).map_err(|e| e.to_string());
    let reader = match opened.and_then(|f| SerializedFileReader::new(f).map_err(|e| e.to_string()))
    {
        Ok(reader) => reader,
        Err(e) => return Some(format!("not a readable Parquet file ({e})")),
    };
    let meta = reader.metadata().file_metadata();
    let schema = match parquet_to_arrow_schema(meta.schema_descr(), meta.key_value_metadata()) {
        Ok(schema) => schema,
        Err(e) => return Some(format!("a schema Arrow cannot read ({e})")),
    };
    let expected = rollup_table_schema(table).unwrap_or_else(|| schema_of(table));
    for field in expected.fields() {
        match schema.field_with_name(field.name()) {
            Ok(found) if found.data_type().equals_datatype(field.data_type()) => {}
            Ok(found) => {
                return Some(format!(
                    "column {} is {}, the {table} table's is {}",
                    field.name(),
                    found.data_type(),
                    field.data_type()
                ))
            }
            Err(_) => {
                return Some(format!(
                    "not a file of the {table} table (no column {})",
                    field.name()
                ))
            }
        }
    }
    None
}

/// Why `file`'s rows do not read, if they do not: every page decoded.
pub(crate) fn unreadable(file: &Path) -> Option<String> {
    let opened = std::fs::File::open(file).map_err(|e| e.to_string());
    let reader = opened.and_then(|f| {
        let builder = ParquetRecordBatchReaderBuilder::try_new(f).map_err(|e| e.to_string())?;
        builder.build().map_err(|e| e.to_string())
    });
    match reader {
        Err(e) => Some(format!("not a readable Parquet file ({e})")),
        Ok(batches) => batches
            .into_iter()
            .find_map(|b| b.err())
            .map(|e| format!("rows that do not decode ({e})")),
    }
}
