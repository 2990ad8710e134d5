//! Reading rollups (`rollups.rs`). A selection reads a service's day from
//! its rollup when the rollup gives the same answer as the day's raw
//! rows:
//! - the range covers the day whole (a partial day is read raw), and
//!   wholly covered spans of days are read from the spans' rollups
//!   (`spans.rs`), longest first;
//! - the rollup is that of the service's day's files as they are now;
//! - the selection keeps nothing the rollup dropped: no matcher on a
//!   label or on an attribute without a column (a rollup sums over
//!   them), no single profile, no sample kept as stored;
//! - the store is a directory read here, marked (every row in its own
//!   time's day), and opened to read rollups (not `--no-rollups`).
//!
//! The raw rows of the days read so are left out, and the rollup's rows
//! are summed with the raw rows of the rest, as the engine sums raw rows:
//! the answer is the same, to the byte.

use datafusion::dataframe::DataFrame;
use datafusion::functions::expr_fn::concat;
use datafusion::functions_nested::expr_fn::{array_has_any, make_array};
use datafusion::logical_expr::{col, lit, Expr};
use datafusion::prelude::{ParquetReadOptions, SessionContext};

use crate::error::StoreError;
use crate::layout::DAY;
use crate::query::Query;
use crate::rollups::{rollup_schema, Level, ServiceDay, DAY_LABEL_SETS, HOUR_COLUMN};
use crate::selector::{has_column, is_service_key, key_expr, matcher_expr, MatchOp};
use crate::spans::{pieces, services_days, span_table, Piece, Readable};
use crate::sums::{first_key_of_parts, KEYED};

/// The services' days a selection reads from their rollups: each day's
/// own, or a span's (`spans.rs`).
pub(crate) struct RollupPlan {
    root: std::path::PathBuf,
    /// How finely the selection needs rows summed.
    level: Level,
    pieces: Vec<Piece>,
}

/// The service's days of the store at `root` that `query` can read from
/// rollups; `None` when it reads none.
///
/// A rollup with a file not `readable` (set aside as damaged) is not
/// read: its days are read from shorter spans, their own rollups, or raw.
/// Spans are read only `with_spans` (a series reads days: spans keep no
/// values per hour).
pub(crate) fn rollup_plan(
    root: &std::path::Path,
    query: &Query,
    readable: Readable,
    with_spans: bool,
) -> Option<RollupPlan> {
    if !rollups_answer(query) {
        return None;
    }
    let covers = |day: i64| {
        let Some(start) = day.checked_mul(DAY) else {
            return false;
        };
        let after_from = query.from.is_none_or(|from| from <= start);
        after_from && query.to.is_none_or(|to| start.saturating_add(DAY) <= to)
    };
    let by_service = services_days(root, covers, |day| named(query, day));
    let pieces: Vec<Piece> = (by_service.values())
        .flat_map(|days| {
            let wanted: Vec<i64> = days.keys().copied().collect();
            let longest = if with_spans { i64::MAX } else { 1 };
            pieces(root, (days, &wanted), covers, longest, readable)
        })
        .collect();
    let plan = RollupPlan::of(root, level_of(query), pieces);
    (!plan.pieces.is_empty()).then_some(plan)
}

/// Whether `day` is of a service `query` can select: a service named
/// exactly is its days alone, as its directory is (`select::filter`).
fn named(query: &Query, day: &ServiceDay) -> bool {
    let service = day.service_name();
    (query.matchers.iter())
        .filter(|m| m.op == MatchOp::Equal)
        .filter(|m| is_service_key(&m.key))
        .all(|m| m.value == service)
}

/// Whether `query` keeps nothing a rollup drops.
fn rollups_answer(query: &Query) -> bool {
    let matchers = query.matchers.iter().all(|m| has_column(&m.key));
    matchers && query.profile_id.is_none() && !query.each_sample
}

/// The coarsest rollup `query` can read: summed over the resources
/// unless it names one.
fn level_of(query: &Query) -> Level {
    match query.matchers.iter().all(|m| is_service_key(&m.key)) {
        true => Level::Service,
        false => Level::Resource,
    }
}

impl RollupPlan {
    /// A plan reading `pieces` at `level`.
    pub(crate) fn of(root: &std::path::Path, level: Level, pieces: Vec<Piece>) -> RollupPlan {
        let root = root.to_path_buf();
        RollupPlan {
            root,
            level,
            pieces,
        }
    }

    /// The same pieces read at `level`.
    pub(crate) fn at_level(self, level: Level) -> RollupPlan {
        RollupPlan { level, ..self }
    }

    /// The service's days read from rollups.
    fn days(&self) -> impl Iterator<Item = &ServiceDay> {
        self.pieces.iter().flat_map(Piece::days)
    }

    /// The raw rows left: those of no service's day read from a rollup.
    /// (Its service as the engine reads the directory's name, and as the
    /// name is, as engines differ.)
    pub(crate) fn raw_filter(&self) -> Expr {
        let key = concat(vec![col("dt"), lit("/"), col("service")]);
        let mut keys = Vec::new();
        for day in self.days() {
            keys.push(lit(format!("{}/{}", day.dt, day.service_name())));
            keys.push(lit(format!("{}/{}", day.dt, day.service)));
        }
        key.in_list(keys, true)
    }

    /// The partitions of the raw files the days' own rollups sum: where
    /// the dictionary rows their stacks use are (a span keeps its own).
    pub(crate) fn partitions(&self) -> Vec<[String; 3]> {
        let days = self.pieces.iter().filter_map(|piece| match piece {
            Piece::Day(day) => Some(day),
            Piece::Span(_) => None,
        });
        days.flat_map(ServiceDay::partitions).collect()
    }

    /// The rows of dictionary table `table` (`stacks`, …) the spans read
    /// keep; `None` when none is read.
    pub(crate) async fn span_dictionary(
        &self,
        ctx: &SessionContext,
        table: &str,
    ) -> Result<Option<DataFrame>, StoreError> {
        let files: Vec<String> = (self.pieces.iter())
            .filter_map(|piece| match piece {
                Piece::Span(span) => Some(span.file(&self.root, &span_table(table))),
                Piece::Day(_) => None,
            })
            .map(|path| path.display().to_string())
            .collect();
        if files.is_empty() {
            return Ok(None);
        }
        let schema = crate::schema::schema_of(table);
        let options = ParquetReadOptions::default().schema(&schema);
        Ok(Some(ctx.read_parquet(files, options).await?))
    }

    /// The rollups' sample rows `query` selects, as the raw rows are
    /// keyed before they are summed: `stack_id`, `label_set_id`,
    /// `sample_type`, `sample_unit`, `value`, `first_key`.
    pub(crate) async fn samples(
        &self,
        ctx: &SessionContext,
        query: &Query,
    ) -> Result<DataFrame, StoreError> {
        let mut rows = self.read(ctx, self.level.samples(), query).await?;
        if let Some(types) = type_literals(query) {
            rows = rows.filter(col("sample_type").in_list(types, false))?;
        }
        let mut columns: Vec<Expr> = KEYED.iter().map(|c| col(*c)).collect();
        columns.push(col("first_key"));
        Ok(with_first_key(rows)?.select(columns)?)
    }

    /// Every rollup sample row read, with its `first_key` made of its
    /// parts, as a span sums them.
    pub(crate) async fn keyed_samples(
        &self,
        ctx: &SessionContext,
    ) -> Result<DataFrame, StoreError> {
        with_first_key(self.rows(ctx, self.level.samples()).await?)
    }

    /// The rollups' label sets: `label_set_id`, `labels`,
    /// `repeated_labels`, `numeric_labels`.
    pub(crate) async fn label_sets(&self, ctx: &SessionContext) -> Result<DataFrame, StoreError> {
        self.rows(ctx, DAY_LABEL_SETS).await
    }

    /// The rollups' profile headers `query` selects.
    pub(crate) async fn profiles(
        &self,
        ctx: &SessionContext,
        query: &Query,
    ) -> Result<DataFrame, StoreError> {
        let mut rows = self.read(ctx, self.level.profiles(), query).await?;
        if let Some(types) = type_literals(query) {
            rows = rows.filter(array_has_any(col("row_types"), make_array(types)))?;
        }
        Ok(rows)
    }

    /// The rollups' values per hour `query` selects, as a series counts
    /// raw rows (`series::counted_at`): `at` (the hour), `value`,
    /// `sample_type`, `sample_unit`, and the key grouped by, if any.
    pub(crate) async fn hour_totals(
        &self,
        ctx: &SessionContext,
        query: &Query,
        group_by: Option<&str>,
    ) -> Result<DataFrame, StoreError> {
        let mut rows = self.read(ctx, self.level.hour_totals(), query).await?;
        if let Some(types) = type_literals(query) {
            rows = rows.filter(col("sample_type").in_list(types, false))?;
        }
        let mut columns = vec![col(HOUR_COLUMN).alias("at"), col("value")];
        columns.extend([col("sample_type"), col("sample_unit")]);
        columns.extend(group_by.map(|key| key_expr(key).alias(key)));
        Ok(rows.select(columns)?)
    }

    /// The rows of rollup table `table` `query`'s matchers select.
    async fn read(
        &self,
        ctx: &SessionContext,
        table: &str,
        query: &Query,
    ) -> Result<DataFrame, StoreError> {
        let rows = self.rows(ctx, table).await?;
        let matchers = query.matchers.iter().map(matcher_expr);
        let filter = matchers.reduce(Expr::and).unwrap_or(lit(true));
        Ok(rows.filter(filter)?)
    }

    /// The rows of rollup table `table`'s files read: the days' and the
    /// spans', each read apart (so that each is counted as its table's).
    pub(crate) async fn rows(
        &self,
        ctx: &SessionContext,
        table: &str,
    ) -> Result<DataFrame, StoreError> {
        let schema = rollup_schema(table);
        let (days, spans): (Vec<&Piece>, Vec<&Piece>) =
            self.pieces.iter().partition(|p| matches!(p, Piece::Day(_)));
        let mut all: Option<DataFrame> = None;
        for pieces in [days, spans].into_iter().filter(|p| !p.is_empty()) {
            let files = pieces
                .iter()
                .map(|p| p.file(&self.root, table).display().to_string());
            let options = ParquetReadOptions::default().schema(&schema);
            let rows = ctx.read_parquet(files.collect::<Vec<_>>(), options).await?;
            all = Some(match all {
                Some(all) => all.union(rows)?,
                None => rows,
            });
        }
        all.ok_or_else(|| StoreError::Engine(format!("{table}: no rollup to read")))
    }
}

/// Rollup sample rows with their `first_key` (`sums.rs`), made of the
/// parts they keep.
fn with_first_key(rows: DataFrame) -> Result<DataFrame, StoreError> {
    let parts = [
        "first_zero",
        "first_time",
        "first_profile_id",
        "first_sample_index",
    ];
    let first = first_key_of_parts(parts.map(col).to_vec());
    Ok(rows.with_column("first_key", first)?)
}

/// The sample types `query` names, as literals; `None` for all.
fn type_literals(query: &Query) -> Option<Vec<Expr>> {
    let types = query.sample_types.iter().map(|t| lit(t.clone()));
    (!query.sample_types.is_empty()).then(|| types.collect())
}
