//! The rollups in SQL (`query`): each rollup table, a day's
//! (`day_samples`, …) or a span's (`span_samples`, …), is a table of its
//! own, partitioned as its directories are (`dt` and `service`; a span's
//! `dt`, `days` and `service`), holding only the rollups a report reads:
//! those of each service's day, or span, as its files are now, with all
//! their files there. A stale rollup (its day given a late profile since)
//! is left out, until `store compact` sums the day again and removes it.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use datafusion::arrow::datatypes::DataType;
use datafusion::datasource::file_format::parquet::ParquetFormat;
use datafusion::datasource::listing::{
    ListingOptions, ListingTable, ListingTableConfig, ListingTableUrl,
};
use datafusion::prelude::SessionContext;

use crate::error::StoreError;
use crate::rollups::{files_below, rollup_directory, ROLLUP_TABLES};
use crate::skipping::{object_of, FileSet};
use crate::spans::{due_spans, rollup_table_schema, services_days, span_tables};

/// Registers in `ctx` each rollup table the store at `root` has, as its
/// files are now, and puts in `stale` the files of them no report reads.
pub(crate) fn register_rollup_tables(
    ctx: &SessionContext,
    root: &Path,
    stale: &FileSet,
) -> Result<(), StoreError> {
    let current = current_files(root);
    let mut left_out = HashSet::new();
    let days = ROLLUP_TABLES.iter().map(|t| t.to_string());
    for table in days.chain(span_tables()) {
        let directory = rollup_directory(root, &table);
        if !directory.is_dir() {
            continue;
        }
        let files = files_below(&directory).into_iter();
        left_out.extend(files.filter(|f| !current.contains(f)).filter_map(object_of));
        ctx.deregister_table(table.as_str())?;
        ctx.register_table(table.as_str(), Arc::new(listing(&directory, &table)?))?;
    }
    *stale.write().unwrap_or_else(|e| e.into_inner()) = left_out;
    Ok(())
}

/// Rollup table `table` at `directory`, partitioned as it is.
fn listing(directory: &Path, table: &str) -> Result<ListingTable, StoreError> {
    let partitions = match table.starts_with("span_") {
        true => &["dt", "days", "service"][..],
        false => &["dt", "service"][..],
    };
    let columns = partitions.iter().map(|c| (c.to_string(), DataType::Utf8));
    let options = ListingOptions::new(Arc::new(ParquetFormat::default()))
        .with_file_extension(".parquet")
        .with_table_partition_cols(columns.collect());
    let text = format!("{}/", directory.display());
    let url = ListingTableUrl::parse(&text).map_err(|e| StoreError::Io(format!("{text}: {e}")))?;
    let schema = rollup_table_schema(table)
        .ok_or_else(|| StoreError::Engine(format!("no rollup table {table}")))?;
    let config = ListingTableConfig::new(url)
        .with_listing_options(options)
        .with_schema(schema);
    Ok(ListingTable::try_new(config)?)
}

/// The files of every rollup a report would read: each service's day's
/// and span's, as its files are now, all of them there.
fn current_files(root: &Path) -> HashSet<PathBuf> {
    let mut current = HashSet::new();
    for days in services_days(root, |_| true, |_| true).values() {
        for day in days.values().filter(|day| day.is_rolled_up(root)) {
            current.extend(day.files(root));
        }
        for span in due_spans(root, days)
            .iter()
            .filter(|s| s.is_rolled_up(root))
        {
            current.extend(span.files(root));
        }
    }
    current
}
