//! SQL over a store: its tables as DataFusion registers them, and views
//! that make profile SQL short (`stack_leaf`, `stack_frames`,
//! `location_functions`); answers as a table, CSV, JSON lines or Parquet.

use std::io::Write;
use std::sync::Arc;

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::util::pretty::pretty_format_batches;
use parquet::arrow::ArrowWriter;

use crate::error::StoreError;
use crate::select::Store;

/// The views every store has, over its tables with repeated dictionary
/// rows (one per file) taken once.
const VIEWS: [(&str, &str); 3] = [
    (
        "location_functions",
        "SELECT location_id, line['function_id'] AS function_id, f.name AS function_name, \
                f.filename, line['line'] AS line
         FROM (SELECT location_id, unnest(lines) AS line
               FROM (SELECT location_id, first_value(lines) AS lines FROM locations GROUP BY location_id))
         JOIN (SELECT function_id, first_value(name) AS name, first_value(filename) AS filename
               FROM functions GROUP BY function_id) f
           ON f.function_id = line['function_id']",
    ),
    (
        "stack_leaf",
        "SELECT st.stack_id, f.name AS function_name, f.filename
         FROM (SELECT stack_id, first_value(location_ids) AS location_ids FROM stacks GROUP BY stack_id) st
         JOIN (SELECT location_id, first_value(lines) AS lines FROM locations GROUP BY location_id) l
           ON l.location_id = st.location_ids[1]
         JOIN (SELECT function_id, first_value(name) AS name, first_value(filename) AS filename
               FROM functions GROUP BY function_id) f
           ON f.function_id = l.lines[1]['function_id']",
    ),
    (
        "stack_frames",
        "SELECT DISTINCT s.stack_id, lf.function_name, lf.filename
         FROM (SELECT stack_id, unnest(location_ids) AS location_id
               FROM (SELECT stack_id, first_value(location_ids) AS location_ids FROM stacks GROUP BY stack_id)) s
         JOIN location_functions lf ON lf.location_id = s.location_id",
    ),
];

/// How `query` writes its answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SqlOutput {
    /// An aligned text table.
    Table,
    /// CSV with a header line.
    Csv,
    /// One JSON object per row.
    Json,
    /// A Parquet file.
    Parquet,
}

impl Store {
    /// Registers the views (once per opened store).
    pub(crate) fn register_views(&self) -> Result<(), StoreError> {
        for (name, body) in VIEWS {
            let statement = format!("CREATE VIEW {name} AS {body}");
            self.block_on(async { self.context().sql(&statement).await?.collect().await })?;
        }
        Ok(())
    }

    /// The answer to `statement`, one SQL statement over the tables, the
    /// rollup tables as their files are now, and the views.
    pub fn sql(&self, statement: &str) -> Result<Vec<RecordBatch>, StoreError> {
        let run = || {
            self.register_rollup_tables()?;
            self.block_on(async {
                let frame = self.context().sql(statement).await?;
                Ok(frame.collect().await?)
            })
        };
        self.retried(run).map_err(|e| match e {
            StoreError::Engine(text) | StoreError::Vanished(text) => {
                StoreError::Query(format!("SQL: {text}"))
            }
            other => other,
        })
    }
}

/// Writes `batches` to `out` as `format` asks.
pub fn write_answer(
    batches: &[RecordBatch],
    format: SqlOutput,
    out: &mut dyn Write,
) -> Result<(), StoreError> {
    let failed = |e: &dyn std::fmt::Display| StoreError::Io(format!("writing the answer: {e}"));
    match format {
        SqlOutput::Table => {
            let table = pretty_format_batches(batches).map_err(|e| failed(&e))?;
            writeln!(out, "{table}").map_err(|e| failed(&e))
        }
        SqlOutput::Csv => {
            let mut writer = datafusion::arrow::csv::Writer::new(out);
            for b in batches {
                let flat = nested_as_json(b).map_err(|e| failed(&e))?;
                writer.write(&flat).map_err(|e| failed(&e))?;
            }
            Ok(())
        }
        SqlOutput::Json => {
            let mut writer = datafusion::arrow::json::LineDelimitedWriter::new(out);
            for b in batches {
                writer.write(b).map_err(|e| failed(&e))?;
            }
            writer.finish().map_err(|e| failed(&e))
        }
        SqlOutput::Parquet => {
            let Some(schema) = batches.first().map(|b| Arc::clone(b.schema_ref())) else {
                return Err(StoreError::Query(
                    "the answer has no rows to write as Parquet".into(),
                ));
            };
            let mut buffer = Vec::new();
            let mut writer =
                ArrowWriter::try_new(&mut buffer, schema, None).map_err(|e| failed(&e))?;
            for b in batches {
                writer.write(b).map_err(|e| failed(&e))?;
            }
            writer.close().map_err(|e| failed(&e))?;
            out.write_all(&buffer).map_err(|e| failed(&e))
        }
    }
}

/// `batch` with its nested columns (maps, lists, structs), which CSV has
/// no form for, as JSON text: `{"region":"eu"}`, `[1,2]`; nulls stay empty.
fn nested_as_json(
    batch: &RecordBatch,
) -> Result<RecordBatch, datafusion::arrow::error::ArrowError> {
    use datafusion::arrow::array::{ArrayRef, StringArray};
    use datafusion::arrow::datatypes::{DataType, Field, Schema};
    let schema = batch.schema();
    let mut fields = Vec::with_capacity(schema.fields().len());
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(fields.capacity());
    for (field, column) in schema.fields().iter().zip(batch.columns()) {
        if !field.data_type().is_nested() {
            fields.push(Arc::clone(field));
            columns.push(Arc::clone(column));
            continue;
        }
        let texts = json_cells(column)?;
        fields.push(Arc::new(Field::new(field.name(), DataType::Utf8, true)));
        columns.push(Arc::new(StringArray::from(texts)));
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
}

/// Each cell of `column` as JSON text, `None` for a null one.
fn json_cells(
    column: &datafusion::arrow::array::ArrayRef,
) -> Result<Vec<Option<String>>, datafusion::arrow::error::ArrowError> {
    use datafusion::arrow::datatypes::{Field, Schema};
    use datafusion::arrow::error::ArrowError;
    let field = Field::new("v", column.data_type().clone(), true);
    let one = RecordBatch::try_new(Arc::new(Schema::new(vec![field])), vec![Arc::clone(column)])?;
    let mut lines = Vec::new();
    let mut writer = datafusion::arrow::json::LineDelimitedWriter::new(&mut lines);
    writer.write(&one)?;
    writer.finish()?;
    drop(writer);
    let text = String::from_utf8(lines).map_err(|e| ArrowError::JsonError(e.to_string()))?;
    text.lines()
        .map(|line| {
            let row: serde_json::Value =
                serde_json::from_str(line).map_err(|e| ArrowError::JsonError(e.to_string()))?;
            Ok(row.get("v").filter(|v| !v.is_null()).map(|v| v.to_string()))
        })
        .collect()
}
