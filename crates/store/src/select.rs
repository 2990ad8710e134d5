//! Reading: a selection's samples filtered, grouped by stack and label set
//! and summed by Apache DataFusion over the store's Parquet files; then
//! the headers of the profiles they came from and the dictionary rows
//! their stacks use, fetched by semi-joins on the ids.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use datafusion::arrow::array::{ArrayRef, RecordBatch};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::common::{JoinType, ScalarValue};
use datafusion::dataframe::DataFrame;
use datafusion::datasource::file_format::parquet::ParquetFormat;
use datafusion::datasource::listing::{ListingOptions, ListingTable, ListingTableConfig};
use datafusion::functions::expr_fn::concat;
use datafusion::logical_expr::{col, lit, Expr, LogicalPlanBuilder};
use datafusion::prelude::SessionContext;

use crate::bounds::partition_range;
use crate::engine::Engine;
use crate::error::{engine_error, StoreError};
use crate::explain::{Reads, TableRead};
use crate::ids::Id;
use crate::layout::{escape, partition_columns};
use crate::location::Location;
use crate::query::Query;
use crate::rollup_read::RollupPlan;
use crate::schema::{schema_of, FUNCTIONS, LOCATIONS, MAPPINGS, PROFILES, SAMPLES, STACKS, TABLES};
use crate::selector::{is_service_key, matcher_expr, MatchOp};
use crate::skipping::{FileSet, Skipping};
use crate::sums::{aggregates, keyed, summed};

/// A store opened for reading.
pub struct Store {
    root: PathBuf,
    location: Location,
    /// A directory, not object storage: its files can be looked into.
    local: bool,
    /// Queries run on a cluster: what they need must travel in the plan.
    on_cluster: bool,
    ctx: SessionContext,
    runtime: tokio::runtime::Runtime,
    /// Files that do not read, which reports read without (`skipping.rs`).
    skipped: FileSet,
    /// Rollup files SQL does not read: none of its days' rollups as their
    /// files are now (`rollup_sql.rs`).
    stale: FileSet,
    /// A file that does not read fails the read instead.
    strict: bool,
    /// A line for each file skipped, not yet taken.
    warnings: Mutex<Vec<String>>,
    /// Selections read rollups where they give the same answer.
    rollups: bool,
}

/// The batches of one query's answer.
pub(crate) type Batches = Vec<RecordBatch>;

/// What a selection read, before it becomes a profile.
pub(crate) struct Selected {
    /// stack_id, label_set_id, sample_type, sample_unit, value, and where
    /// each group first appears.
    pub samples: Batches,
    /// label_set_id, labels, repeated_labels, numeric_labels: one row per
    /// label set of the selection.
    pub label_sets: Batches,
    pub profiles: Batches,
    pub stacks: Batches,
    pub locations: Batches,
    pub functions: Batches,
    pub mappings: Batches,
    /// profile_id, sample_index, timestamps_unix_nano, event_values: the
    /// events of each sample that has them, when each sample is kept.
    pub events: Batches,
    /// What each table read.
    pub reads: Vec<TableRead>,
}

/// How many times a read is made while files vanish under it: a
/// compaction swaps one partition at a time, so a reader can meet a few.
const READ_ATTEMPTS: u64 = 5;

impl Store {
    /// Opens the store at `root`; its tables are listed at each query, so
    /// files written since are read.
    pub fn open(root: &Path) -> Result<Store, StoreError> {
        Store::open_on(root, &Engine::Local)
    }

    /// Opens the store at `root` with its queries run by `engine`.
    pub fn open_on(root: &Path, engine: &Engine) -> Result<Store, StoreError> {
        Store::open_at(root, Location::of(root)?, engine)
    }

    /// Opens the store `root` names, at `location`, with its queries run
    /// by `engine`.
    pub(crate) fn open_at(
        root: &Path,
        location: Location,
        engine: &Engine,
    ) -> Result<Store, StoreError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| StoreError::Io(format!("starting the engine: {e}")))?;
        for table in TABLES {
            if !runtime.block_on(location.has_table(table)) {
                return Err(StoreError::NotAStore(root.display().to_string()));
            }
        }
        let ctx = runtime.block_on(engine.session())?;
        let skipped = FileSet::default();
        let stale = FileSet::default();
        let local = matches!(location, Location::Local(_));
        if local && matches!(engine, Engine::Local) {
            let files = Arc::new(Skipping::new(skipped.clone(), stale.clone()));
            let url = url::Url::parse("file://").map_err(|e| StoreError::Engine(e.to_string()))?;
            ctx.register_object_store(&url, files);
        }
        for table in TABLES {
            let options = ListingOptions::new(Arc::new(ParquetFormat::default()))
                .with_file_extension(".parquet")
                .with_table_partition_cols(partition_columns());
            let config = ListingTableConfig::new(location.table_url(&ctx, table)?)
                .with_listing_options(options)
                .with_schema(schema_of(table));
            let provider = ListingTable::try_new(config)?;
            ctx.register_table(table, Arc::new(provider))?;
        }
        let store = Store {
            root: root.to_path_buf(),
            local,
            location,
            on_cluster: matches!(engine, Engine::Cluster(_)),
            ctx,
            runtime,
            skipped,
            stale,
            strict: true,
            warnings: Mutex::new(Vec::new()),
            rollups: true,
        };
        store.register_views()?;
        Ok(store)
    }

    /// Whether a file that does not read fails a read (`strict`, as a
    /// store opens), or is read without, with a warning
    /// ([`Store::take_warnings`]): reports read so unless `--strict`.
    /// Files are skipped only in a directory read here, not on a cluster.
    pub fn strict(mut self, strict: bool) -> Store {
        self.strict = strict;
        self
    }

    /// Whether selections read the rollups `store compact` writes where
    /// they give the same answer as the raw rows (as a store opens), or
    /// raw rows only (`--no-rollups`).
    pub fn rollups(mut self, rollups: bool) -> Store {
        self.rollups = rollups;
        self
    }

    /// A line for each file the reads so far have skipped, each given
    /// once: what it is and why it does not read.
    pub fn take_warnings(&self) -> Vec<String> {
        std::mem::take(&mut *self.warnings.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Sets aside the files of the store that do not read, after a read
    /// failed; whether any was.
    fn skip_unreadable_files(&self) -> bool {
        if self.strict || !self.local || self.on_cluster {
            return false;
        }
        let found = crate::skipping::unreadable_files(&self.root, &self.skipped);
        let mut warnings = self.warnings.lock().unwrap_or_else(|e| e.into_inner());
        let mut skipped = self.skipped.write().unwrap_or_else(|e| e.into_inner());
        for (file, object, problem) in &found {
            warnings.push(format!("{}: {problem}", file.display()));
            skipped.insert(object.clone());
        }
        !found.is_empty()
    }

    /// Registers the rollup tables as their files are now, for SQL
    /// (`rollup_sql.rs`): in a directory read here.
    pub(crate) fn register_rollup_tables(&self) -> Result<(), StoreError> {
        if !self.local || self.on_cluster {
            return Ok(());
        }
        crate::rollup_sql::register_rollup_tables(&self.ctx, &self.root, &self.stale)
    }

    /// The store's directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The engine, with the tables registered by name: for SQL.
    pub fn context(&self) -> &SessionContext {
        &self.ctx
    }

    /// Runs `future` on the store's engine.
    pub fn block_on<T>(&self, future: impl std::future::Future<Output = T>) -> T {
        self.runtime.block_on(future)
    }

    /// The rows `query` selects, aggregated, with what they refer to.
    pub(crate) fn read(&self, query: &Query) -> Result<Selected, StoreError> {
        self.retried(|| self.runtime.block_on(self.read_async(query)))
            .map_err(|e| self.named(e))
    }

    /// `read`'s answer, read again while a file it listed vanished under
    /// it (a compaction swapped its partition meanwhile; the files are
    /// listed afresh each time), or a compaction swapped a day's directory
    /// while it read (`swaps.rs`), [`READ_ATTEMPTS`] times in all.
    pub(crate) fn retried<T>(
        &self,
        mut read: impl FnMut() -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut attempt = 1;
        // A directory's swap count (`swaps.rs`): a read across a day's
        // swap may have missed its rows without an error.
        let swaps = || self.local.then(|| crate::swaps::settled(&self.root));
        loop {
            let before = swaps();
            let answer = read();
            let swapped = answer.is_ok() && swaps() != before;
            match answer {
                Err(StoreError::Vanished(_)) if attempt < READ_ATTEMPTS => {}
                _ if swapped && attempt < READ_ATTEMPTS => {}
                // Each time at least one file fewer: read again at once.
                Err(StoreError::Engine(_)) if self.skip_unreadable_files() => continue,
                answer => return answer,
            }
            std::thread::sleep(std::time::Duration::from_millis(10 * attempt));
            attempt += 1;
        }
    }

    /// An engine error with the file at fault named, when one is.
    fn named(&self, error: StoreError) -> StoreError {
        match error {
            StoreError::Engine(message) if !self.local => StoreError::Engine(message),
            StoreError::Engine(message) => match crate::diagnose::first_bad_file(&self.root) {
                Some(bad) => StoreError::Engine(format!("{bad}; the engine said: {message}")),
                None => StoreError::Engine(message),
            },
            other => other,
        }
    }

    /// The filter of `query`'s `samples` rows, with the partitions they
    /// can be in (`bounds.rs`).
    pub(crate) async fn selection(&self, query: &Query) -> Expr {
        let marked = crate::bounds::is_marked(&self.location).await;
        filter(query).and(partition_range(query.from, query.to, marked))
    }

    async fn read_async(&self, query: &Query) -> Result<Selected, StoreError> {
        let selection = self.selection(query).await;
        let rollups = self.rollup_plan(query, true).await;
        let mut rows = self.ctx.table(SAMPLES).await?.filter(selection)?;
        if let Some(rollups) = &rollups {
            rows = rows.filter(rollups.raw_filter())?;
        }
        let mut reads = Reads::default();
        let grouped = match &rollups {
            None => rows.clone().aggregate(grouping(query), aggregates()?)?,
            Some(rollups) => keyed(rows.clone())?
                .union(rollups.samples(&self.ctx, query).await?)?
                .aggregate(grouping(query), summed())?,
        };
        let samples = reads.collect(grouped).await?;
        let label_rows = match &rollups {
            None => rows.clone(),
            Some(rollups) => (rows.clone().select_columns(&LABEL_COLUMNS)?)
                .union(rollups.label_sets(&self.ctx).await?)?,
        };
        let label_sets = label_sets(label_rows, &mut reads).await?;
        let events = match query.each_sample {
            true => events(rows.clone(), &mut reads).await?,
            false => Vec::new(),
        };
        // A profile's rows, and the dictionary rows its samples use, are in
        // the partitions of its samples: only those are read.
        let (mut places, profile_ids) = places(rows, &mut reads).await?;
        let mut profiles = self
            .rows_of(PROFILES, "profile_id", profile_ids, &places, &mut reads)
            .await?;
        if let Some(rollups) = &rollups {
            places.0.extend(rollups.partitions());
            profiles.extend(
                reads
                    .collect(rollups.profiles(&self.ctx, query).await?)
                    .await?,
            );
        }
        let stack_ids = column_ids(&samples, "stack_id");
        let mapping_ids = column_ids(&profiles, "main_mapping_id");
        let dictionaries = self
            .dictionaries(
                stack_ids,
                mapping_ids,
                &places,
                rollups.as_ref(),
                &mut reads,
            )
            .await?;
        Ok(Selected {
            reads: reads.into_tables(),
            samples,
            label_sets,
            profiles,
            stacks: dictionaries.stacks,
            locations: dictionaries.locations,
            functions: dictionaries.functions,
            mappings: dictionaries.mappings,
            events,
        })
    }

    /// The dictionary rows of stacks `stack_ids` and what they refer to,
    /// and of mappings `mapping_ids`: from the spans `rollups` reads, then
    /// from `places`.
    pub(crate) async fn dictionaries(
        &self,
        stack_ids: Vec<Id>,
        mut mapping_ids: Vec<Id>,
        places: &Places,
        rollups: Option<&RollupPlan>,
        reads: &mut Reads,
    ) -> Result<Dictionaries, StoreError> {
        let stacks = self
            .dictionary_rows(STACKS, "stack_id", stack_ids, places, rollups, reads)
            .await?;
        let location_ids = list_ids(&stacks, "location_ids");
        let locations = self
            .dictionary_rows(
                LOCATIONS,
                "location_id",
                location_ids,
                places,
                rollups,
                reads,
            )
            .await?;
        let function_ids = line_function_ids(&locations);
        let functions = self
            .dictionary_rows(
                FUNCTIONS,
                "function_id",
                function_ids,
                places,
                rollups,
                reads,
            )
            .await?;
        mapping_ids.extend(column_ids(&locations, "mapping_id"));
        let mappings = self
            .dictionary_rows(MAPPINGS, "mapping_id", mapping_ids, places, rollups, reads)
            .await?;
        Ok(Dictionaries {
            stacks,
            locations,
            functions,
            mappings,
        })
    }

    /// The rows of dictionary table `table` whose `id_column` is one of
    /// `wanted`: those the spans `rollups` reads keep, the rest as
    /// [`Store::rows_of`] finds them.
    async fn dictionary_rows(
        &self,
        table: &str,
        id_column: &str,
        wanted: Vec<Id>,
        places: &Places,
        rollups: Option<&RollupPlan>,
        reads: &mut Reads,
    ) -> Result<Batches, StoreError> {
        let spans = match rollups {
            Some(rollups) => rollups.span_dictionary(&self.ctx, table).await?,
            None => None,
        };
        let sources = (table, id_column, spans);
        self.rows_first_in(sources, wanted, places, reads).await
    }

    /// The services' days `query` reads from rollups (`rollup_read.rs`):
    /// only in a marked directory read here.
    pub(crate) async fn rollup_plan(&self, query: &Query, with_spans: bool) -> Option<RollupPlan> {
        if !self.rollups || !self.local || self.on_cluster {
            return None;
        }
        if !crate::bounds::is_marked(&self.location).await {
            return None;
        }
        let readable = |file: &Path| !self.is_skipped(file);
        crate::rollup_read::rollup_plan(&self.root, query, &readable, with_spans)
    }

    /// Whether `file` was set aside as damaged (`skipping.rs`).
    fn is_skipped(&self, file: &Path) -> bool {
        let Some(object) = crate::skipping::object_of(file.to_path_buf()) else {
            return false;
        };
        let skipped = self.skipped.read().unwrap_or_else(|e| e.into_inner());
        skipped.contains(&object)
    }

    /// The rows of `table` whose `id_column` is one of `wanted`, read from
    /// `places`; any not there (a writer that kept them elsewhere) from
    /// the whole table.
    pub(crate) async fn rows_of(
        &self,
        table: &str,
        id_column: &str,
        wanted: Vec<Id>,
        places: &Places,
        reads: &mut Reads,
    ) -> Result<Batches, StoreError> {
        let sources = (table, id_column, None);
        self.rows_first_in(sources, wanted, places, reads).await
    }

    /// [`Store::rows_of`], looking first in `first` when given (rows of
    /// `table` kept elsewhere: a span's): each id's first row, each
    /// source asked only for the ids the ones before it did not have.
    async fn rows_first_in(
        &self,
        (table, id_column, first): (&str, &str, Option<DataFrame>),
        mut wanted: Vec<Id>,
        places: &Places,
        reads: &mut Reads,
    ) -> Result<Batches, StoreError> {
        wanted.sort_unstable();
        wanted.dedup();
        // No ids, no rows: nothing to ask the engine.
        if wanted.is_empty() {
            return Ok(Vec::new());
        }
        let mut sources = Vec::from_iter(first);
        sources.push(self.ctx.table(table).await?.filter(places.filter())?);
        sources.push(self.ctx.table(table).await?);
        let (mut found, mut have) = (Vec::new(), HashSet::new());
        for source in sources {
            // Every id found: the later sources are not asked.
            if wanted.is_empty() {
                break;
            }
            let rows = semi_join(source, id_column, self.wanted(&wanted)?, reads).await?;
            found.extend(first_of_each(rows, id_column, &mut have)?);
            wanted.retain(|id| !have.contains(id));
        }
        Ok(found)
    }

    /// `ids` as a one-column table, `wanted`, for a semi-join.
    fn wanted(&self, ids: &[Id]) -> Result<DataFrame, StoreError> {
        match self.on_cluster {
            false => Ok(self.ctx.read_batch(wanted_batch(ids)?)?),
            true => wanted_values(&self.ctx, ids),
        }
    }
}

/// The dictionary rows a selection's samples and profiles use.
pub(crate) struct Dictionaries {
    pub stacks: Batches,
    pub locations: Batches,
    pub functions: Batches,
    pub mappings: Batches,
}

/// The partitions (`dt`, `hour`, `service` as the engine reads them) some
/// selected rows are in.
pub(crate) struct Places(pub(crate) Vec<[String; 3]>);

impl Places {
    /// Rows in these partitions. Where they share a day (and an hour),
    /// it is named by an equality, so that the engine lists that
    /// directory alone. (Not the service: how an engine encodes a name in
    /// the directory it lists is its own.)
    fn filter(&self) -> Expr {
        let key = concat(vec![
            col("dt"),
            lit("/"),
            col("hour"),
            lit("/"),
            col("service"),
        ]);
        let keys = self
            .0
            .iter()
            .map(|[dt, hour, service]| format!("{dt}/{hour}/{service}"));
        let mut all = key.in_list(keys.map(lit).collect(), false);
        for (at, column) in ["dt", "hour"].into_iter().enumerate() {
            let mut values: Vec<&String> = self.0.iter().map(|p| &p[at]).collect();
            values.sort();
            values.dedup();
            match values[..] {
                [one] => all = all.and(col(column).eq(lit(one.clone()))),
                _ => break,
            }
        }
        all
    }
}

/// The partitions `rows` are in, and the ids of their profiles.
async fn places(rows: DataFrame, reads: &mut Reads) -> Result<(Places, Vec<Id>), StoreError> {
    let by = vec![col("dt"), col("hour"), col("service"), col("profile_id")];
    let batches = reads.collect(rows.aggregate(by, vec![])?).await?;
    let mut places = std::collections::BTreeSet::new();
    for batch in &batches {
        let column = |n: usize| crate::read::string_values(batch.column(n));
        let (dt, hour, service) = (column(0), column(1), column(2));
        for ((dt, hour), service) in dt.into_iter().zip(hour).zip(service) {
            places.insert([dt, hour, service]);
        }
    }
    let ids = column_ids(&batches, "profile_id");
    Ok((Places(places.into_iter().collect()), ids))
}

/// The rows of `batches` whose `id_column` is not in `seen`, each id's
/// first: a dictionary row is in every partition that uses it (a stack
/// seen every day of a month, thirty times), and what is read of it next
/// (its locations, their functions) needs it once.
pub(crate) fn first_of_each(
    batches: Batches,
    id_column: &str,
    seen: &mut HashSet<Id>,
) -> Result<Batches, StoreError> {
    let mut out = Vec::with_capacity(batches.len());
    for batch in batches {
        out.extend(first_seen(batch, id_column, seen)?);
    }
    Ok(out)
}

/// The rows of `batch` whose `id_column` is not in `seen` yet (`None`
/// when there is none), their ids now in it.
fn first_seen(
    batch: RecordBatch,
    id_column: &str,
    seen: &mut HashSet<Id>,
) -> Result<Option<RecordBatch>, StoreError> {
    let ids = crate::read::column_of(&batch, id_column, crate::read::id_values);
    let first: Vec<u32> = (0..ids.len() as u32)
        .filter(|&i| ids[i as usize].is_some_and(|id| seen.insert(id)))
        .collect();
    if first.len() == batch.num_rows() || first.is_empty() {
        return Ok((!first.is_empty()).then_some(batch));
    }
    let indices = datafusion::arrow::array::UInt32Array::from(first);
    let taken = datafusion::arrow::compute::take_record_batch(&batch, &indices);
    Ok(Some(taken.map_err(engine_error)?))
}

/// `ids` as a one-column batch, `wanted`: the engine joins it in memory.
fn wanted_batch(ids: &[Id]) -> Result<RecordBatch, StoreError> {
    let schema = Arc::new(Schema::new(vec![Field::new(
        "wanted",
        DataType::FixedSizeBinary(16),
        false,
    )]));
    RecordBatch::try_new(schema, vec![crate::arrays::ids(ids.iter().map(Some))])
        .map_err(|e| StoreError::Engine(e.to_string()))
}

/// `ids` as a VALUES plan, `wanted`: a cluster takes it as part of the
/// plan (an in-memory table would not travel). Slower to plan than a
/// batch, so only there.
fn wanted_values(ctx: &SessionContext, ids: &[Id]) -> Result<DataFrame, StoreError> {
    let rows = ids
        .iter()
        .map(|id| vec![lit(ScalarValue::FixedSizeBinary(16, Some(id.to_vec())))])
        .collect();
    let values = LogicalPlanBuilder::values(rows)?
        .project(vec![col("column1").alias("wanted")])?
        .build()?;
    Ok(DataFrame::new(ctx.state(), values))
}

/// The rows of `table` whose `id_column` equals some `wanted` of `ids`.
async fn semi_join(
    table: DataFrame,
    id_column: &str,
    ids: DataFrame,
    reads: &mut Reads,
) -> Result<Batches, StoreError> {
    let joined = table.join(ids, JoinType::LeftSemi, &[id_column], &["wanted"], None)?;
    reads.collect(joined).await
}

/// What the samples are grouped by: stack, label set and sample type, and
/// each sample's place when each is kept.
fn grouping(query: &Query) -> Vec<Expr> {
    let mut by = vec![
        col("stack_id"),
        col("label_set_id"),
        col("sample_type"),
        col("sample_unit"),
    ];
    if query.each_sample {
        by.extend([col("profile_id"), col("sample_index")]);
    }
    by
}

/// The events of each of `rows` that has them.
async fn events(rows: DataFrame, reads: &mut Reads) -> Result<Batches, StoreError> {
    let columns = [
        "profile_id",
        "sample_index",
        "timestamps_unix_nano",
        "event_values",
    ];
    let timed = rows.filter(col("timestamps_unix_nano").is_not_null())?;
    reads.collect(timed.select_columns(&columns)?).await
}

/// The labels of each label set `rows` hold, one row per set. A label
/// set's id is the hash of its labels, so any row of a set has them: the
/// first met is kept as the rows stream by. (The engine's `first_value`
/// over map and list columns goes row by row, sizing each value; over a
/// fleet's millions of rows it took minutes.)
pub(crate) async fn label_sets(rows: DataFrame, reads: &mut Reads) -> Result<Batches, StoreError> {
    let frame = rows.select_columns(&LABEL_COLUMNS)?;
    let task = Arc::new(frame.task_ctx());
    let plan = frame.create_physical_plan().await?;
    let mut stream = datafusion::physical_plan::execute_stream(plan.clone(), task)?;
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    while let Some(batch) = futures::StreamExt::next(&mut stream).await {
        out.extend(first_seen(batch?, "label_set_id", &mut seen)?);
    }
    reads.count(&plan);
    Ok(out)
}

/// The label columns of a `samples` row.
pub(crate) const LABEL_COLUMNS: [&str; 4] = [
    "label_set_id",
    "labels",
    "repeated_labels",
    "numeric_labels",
];

/// The filter of a query: its matchers, time range, sample types and
/// profile, and the partitions that can hold such rows.
pub(crate) fn filter(query: &Query) -> Expr {
    let mut all = vec![lit(true)];
    all.extend(query.matchers.iter().map(matcher_expr));
    // A service named exactly is one directory: the engine lists only it.
    // (The engine percent-decodes directory names; the encoded form is
    // matched too, as engines differ in this.)
    for m in &query.matchers {
        if m.op == MatchOp::Equal && is_service_key(&m.key) {
            let names = vec![lit(m.value.clone()), lit(escape(&m.value))];
            all.push(col("service").in_list(names, false));
        }
    }
    if let Some(from) = query.from {
        all.push(col("time_unix_nano").gt_eq(lit(from)));
    }
    if let Some(to) = query.to {
        all.push(col("time_unix_nano").lt(lit(to)));
    }
    if !query.sample_types.is_empty() {
        let types = query.sample_types.iter().map(|t| lit(t.clone())).collect();
        all.push(col("sample_type").in_list(types, false));
    }
    if let Some(id) = query.profile_id {
        all.push(col("profile_id").eq(lit(ScalarValue::FixedSizeBinary(16, Some(id.to_vec())))));
    }
    all.into_iter().reduce(Expr::and).unwrap_or(lit(true))
}

/// The ids in `column` of `batches` (nulls skipped).
pub(crate) fn column_ids(batches: &Batches, column: &str) -> Vec<Id> {
    let mut out = Vec::new();
    for batch in batches {
        if let Some(array) = batch.column_by_name(column) {
            out.extend(crate::read::id_values(array).into_iter().flatten());
        }
    }
    out
}

/// The ids in the list column `column` of `batches`.
fn list_ids(batches: &Batches, column: &str) -> Vec<Id> {
    let mut out = Vec::new();
    for batch in batches {
        if let Some(array) = batch.column_by_name(column) {
            for items in crate::read::list_values(array).into_iter().flatten() {
                out.extend(crate::read::id_values(&items).into_iter().flatten());
            }
        }
    }
    out
}

/// The function ids of the lines of `locations`.
fn line_function_ids(locations: &Batches) -> Vec<Id> {
    let mut out = Vec::new();
    for batch in locations {
        let Some(lines) = batch.column_by_name("lines") else {
            continue;
        };
        for items in crate::read::list_values(lines).into_iter().flatten() {
            let functions: Option<ArrayRef> = crate::read::struct_field(&items, "function_id");
            if let Some(functions) = functions {
                out.extend(crate::read::id_values(&functions).into_iter().flatten());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A read during which a compaction swapped a day's directory (the
    /// swap count moved) is read again; one during which none did is not.
    #[test]
    fn a_read_across_a_swap_is_read_again() {
        let dir = tempfile::tempdir().unwrap();
        let mut writer = crate::StoreWriter::new(dir.path());
        let p = crate::test_profiles::profile(1);
        writer.add(&p, &crate::ProfileContext::default()).unwrap();
        writer.flush().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let mut reads = 0;
        let answer = store.retried(|| {
            reads += 1;
            if reads == 1 {
                crate::swaps::begin(dir.path())?.end()?;
            }
            Ok(reads)
        });
        assert_eq!(answer.unwrap(), 2);
        let mut reads = 0;
        let answer = store.retried(|| {
            reads += 1;
            Ok(reads)
        });
        assert_eq!(answer.unwrap(), 1);
    }
}
