//! What a selection read: for each table, the files its queries opened
//! (those left once partitions were pruned), their size, and the bytes
//! read from them, counted from the engine's plans and metrics. A query
//! run on a cluster reads where its executors are: nothing is counted
//! here then.

use std::collections::BTreeMap;
use std::sync::Arc;

use datafusion::arrow::array::RecordBatch;
use datafusion::dataframe::DataFrame;
use datafusion::datasource::physical_plan::FileScanConfig;
use datafusion::datasource::source::DataSourceExec;
use datafusion::physical_plan::{collect, ExecutionPlan};

use crate::error::StoreError;

/// What a selection read from one table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TableRead {
    /// The table (`samples`, `stacks`, ...).
    pub table: String,
    /// The queries that read it.
    pub queries: usize,
    /// The files they opened (a file opened by two queries counts twice).
    pub files: usize,
    /// Those files' size in bytes.
    pub file_bytes: u64,
    /// The bytes read from them.
    pub bytes_read: u64,
}

/// What each table read, by table.
#[derive(Debug, Default)]
pub(crate) struct Reads(BTreeMap<String, TableRead>);

impl Reads {
    /// The tables read, in the order of the layout's [`crate::TABLES`].
    pub(crate) fn into_tables(self) -> Vec<TableRead> {
        let mut reads: Vec<TableRead> = self.0.into_values().collect();
        let at = |t: &TableRead| crate::TABLES.iter().position(|n| *n == t.table);
        reads.sort_by_key(|t| at(t).unwrap_or(usize::MAX));
        reads
    }

    /// Runs `frame`, counting what it read.
    pub(crate) async fn collect(
        &mut self,
        frame: DataFrame,
    ) -> Result<Vec<RecordBatch>, StoreError> {
        let task = Arc::new(frame.task_ctx());
        let plan = frame.create_physical_plan().await?;
        let batches = collect(plan.clone(), task).await?;
        self.count(&plan);
        Ok(batches)
    }

    /// Counts the file scans of `plan` and its inputs.
    pub(crate) fn count(&mut self, plan: &Arc<dyn ExecutionPlan>) {
        for child in plan.children() {
            self.count(child);
        }
        let Some(source) = plan.downcast_ref::<DataSourceExec>() else {
            return;
        };
        let Some(scan) = source.data_source().downcast_ref::<FileScanConfig>() else {
            return;
        };
        let files: Vec<_> = scan.file_groups.iter().flat_map(|g| g.files()).collect();
        let Some(table) = files
            .first()
            .and_then(|f| table_of(f.object_meta.location.as_ref()))
        else {
            return;
        };
        let read = self.0.entry(table.clone()).or_insert_with(|| TableRead {
            table,
            ..Default::default()
        });
        read.queries += 1;
        read.files += files.len();
        read.file_bytes += files.iter().map(|f| f.object_meta.size).sum::<u64>();
        let scanned = plan.metrics().and_then(|m| m.sum_by_name("bytes_scanned"));
        read.bytes_read += scanned.map_or(0, |v| v.as_usize() as u64);
    }
}

/// The table a file of the layout is in: the directory above its
/// partition's (`<table>/dt=…/hour=…/service=…/<batch>.parquet`).
fn table_of(path: &str) -> Option<String> {
    let parts: Vec<&str> = path.split('/').collect();
    let dt = parts.iter().rposition(|p| p.starts_with("dt="))?;
    let table = parts.get(dt.checked_sub(1)?)?;
    Some(table.to_string())
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_file_s_table_is_the_directory_above_its_partition() {
        let path = "tmp/fleet/stacks/dt=2026-11-27/hour=05/service=a/1.parquet";
        assert_eq!(super::table_of(path).as_deref(), Some("stacks"));
        assert_eq!(super::table_of("tmp/x.parquet"), None);
    }
}
