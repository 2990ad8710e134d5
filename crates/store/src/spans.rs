//! Spans: a service's day rollups (`rollups.rs`) summed again over 4, 16
//! and 64 days, so that a month reads a few spans' rows where its days
//! are thirty times the rows, and each span's dictionary rows (stacks,
//! locations, functions, mappings) once, where each day's block has its
//! own copy.
//!
//! A span starts on a day whose number since 1970-01-01 its length
//! divides: spans of one length never overlap, and each lies within one
//! of every longer length, so a range's days are covered by a few spans,
//! longest first ([`pieces`]), and the days left over by their own
//! rollups.
//!
//! A span's tables are the day rollup tables' (`span_samples`,
//! `span_service_samples`, `span_profiles`, `span_service_profiles`,
//! `span_label_sets`; not the values per hour, whose rows a span would
//! not sum) and the dictionary rows its stacks need
//! (`span_stacks`, `span_locations`, `span_functions`, `span_mappings`),
//! under `DIR/rollups/<table>/dt=<first day>/days=<length>/service=<s>/`.
//! A span is named after its days' rollup names, so it is fresh exactly
//! while each of its days' rollups is; its profiles are its days'
//! `day_profiles` rows as they are, so that it reads as its days read.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use datafusion::arrow::datatypes::SchemaRef;

use crate::blocks::day_start;
use crate::ids::{hex, RowHasher};
use crate::layout::DAY;
use crate::rollups::{
    rollup_directory, rollup_schema, service_days, stored_days, ServiceDay, HOUR_TOTAL_TABLES,
    ROLLUP_TABLES,
};
use crate::schema::{schema_of, FUNCTIONS, LOCATIONS, MAPPINGS, STACKS};

/// The lengths of spans, in days, longest first: each divides the one
/// before.
pub(crate) const SPAN_DAYS: [i64; 3] = [64, 16, 4];

/// The dictionary tables a span keeps its rows of.
pub(crate) const DICTIONARY_TABLES: [&str; 4] = [STACKS, LOCATIONS, FUNCTIONS, MAPPINGS];

/// The table of a span that holds what day rollup table (or dictionary
/// table) `table` holds for a day: `day_samples` is `span_samples`,
/// `stacks` is `span_stacks`.
pub(crate) fn span_table(table: &str) -> String {
    format!("span_{}", table.strip_prefix("day_").unwrap_or(table))
}

/// Every table of a span, in the order its files are put in place (the
/// samples last, as for a day).
pub(crate) fn span_tables() -> Vec<String> {
    let dictionaries = DICTIONARY_TABLES.iter();
    let summed = ROLLUP_TABLES
        .iter()
        .filter(|t| !HOUR_TOTAL_TABLES.contains(t));
    dictionaries.chain(summed).map(|t| span_table(t)).collect()
}

/// The schema of rollup table `table`, a day's or a span's; `None` for a
/// name that is neither.
pub(crate) fn rollup_table_schema(table: &str) -> Option<SchemaRef> {
    if ROLLUP_TABLES.contains(&table) {
        return Some(rollup_schema(table));
    }
    let rest = table.strip_prefix("span_")?;
    if DICTIONARY_TABLES.contains(&rest) {
        return Some(schema_of(rest));
    }
    let day = format!("day_{rest}");
    let summed =
        ROLLUP_TABLES.contains(&day.as_str()) && !HOUR_TOTAL_TABLES.contains(&day.as_str());
    summed.then(|| rollup_schema(&day))
}

/// Whether a file reads: not one the reader set aside.
pub(crate) type Readable<'r> = &'r dyn Fn(&Path) -> bool;

/// Whether each of `files` is there and `readable`.
fn all_read(files: Vec<PathBuf>, readable: Readable) -> bool {
    files.iter().all(|file| file.is_file() && readable(file))
}

/// A service's span of days: the days of it that have files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Span {
    /// Its first day, in days since 1970-01-01.
    pub first: i64,
    /// Its length in days, one of [`SPAN_DAYS`].
    pub days: i64,
    /// The service as its directory names it (escaped).
    pub service: String,
    /// Its days that have files, in order.
    pub parts: Vec<ServiceDay>,
}

impl Span {
    /// The name of a span of exactly its days' rollups.
    pub(crate) fn name(&self) -> String {
        let mut hasher = RowHasher::new("rollup span");
        hasher.int(self.first).int(self.days).text(&self.service);
        for day in &self.parts {
            hasher.text(&day.name());
        }
        hex(&hasher.finish())
    }

    /// The file of this span in span table `table`.
    pub(crate) fn file(&self, root: &Path, table: &str) -> PathBuf {
        let directory = (rollup_directory(root, table))
            .join(format!("dt={}", day_name(self.first)))
            .join(format!("days={}", self.days))
            .join(format!("service={}", self.service));
        directory.join(format!("{}.parquet", self.name()))
    }

    /// The files of this span, one per span table.
    pub(crate) fn files(&self, root: &Path) -> Vec<PathBuf> {
        span_tables().iter().map(|t| self.file(root, t)).collect()
    }

    /// Whether every span table holds this span.
    pub(crate) fn is_rolled_up(&self, root: &Path) -> bool {
        self.is_read(root, &|_| true)
    }

    /// Whether every span table holds this span, in files that read.
    fn is_read(&self, root: &Path, readable: Readable) -> bool {
        all_read(self.files(root), readable)
    }

    /// Whether every one of its days has its rollup.
    fn days_rolled_up(&self, root: &Path) -> bool {
        self.parts.iter().all(|day| day.is_rolled_up(root))
    }
}

/// What a range reads a service's days from: a day's rollup, or a span's.
#[derive(Debug, Clone)]
pub(crate) enum Piece {
    Day(ServiceDay),
    Span(Span),
}

impl Piece {
    /// Its file holding what day rollup table `table` holds for a day.
    pub(crate) fn file(&self, root: &Path, table: &str) -> PathBuf {
        match self {
            Piece::Day(day) => day.file(root, table),
            Piece::Span(span) => span.file(root, &span_table(table)),
        }
    }

    /// The service's days it sums.
    pub(crate) fn days(&self) -> &[ServiceDay] {
        match self {
            Piece::Day(day) => std::slice::from_ref(day),
            Piece::Span(span) => &span.parts,
        }
    }
}

/// `YYYY-MM-DD` of a day since 1970-01-01.
pub(crate) fn day_name(day: i64) -> String {
    let (y, m, d) = protoprof_model_meta::dates::civil_from_days(day);
    format!("{y:04}-{m:02}-{d:02}")
}

/// The day since 1970-01-01 of a `YYYY-MM-DD`.
pub(crate) fn day_number(dt: &str) -> Option<i64> {
    day_start(dt).map(|start| start / DAY)
}

/// One service's days that have files, by day number.
pub(crate) type ServiceDays = BTreeMap<i64, ServiceDay>;

/// Each service's days of the store at `root` that have files, by
/// service: of the days `keeps_day` keeps (by number), the services'
/// days `keeps` keeps.
pub(crate) fn services_days(
    root: &Path,
    keeps_day: impl Fn(i64) -> bool,
    keeps: impl Fn(&ServiceDay) -> bool,
) -> BTreeMap<String, ServiceDays> {
    let mut services = BTreeMap::<String, ServiceDays>::new();
    for dt in stored_days(root) {
        let Some(number) = day_number(&dt).filter(|n| keeps_day(*n)) else {
            continue;
        };
        for day in service_days(root, &dt).into_iter().filter(&keeps) {
            let days = services.entry(day.service.clone()).or_default();
            days.insert(number, day);
        }
    }
    services
}

/// The span of `days` (one service's) of length `length` from `first`.
pub(crate) fn span_of(days: &ServiceDays, first: i64, length: i64) -> Span {
    let parts = days.range(first..first + length).map(|(_, d)| d.clone());
    let parts: Vec<ServiceDay> = parts.collect();
    let service = parts.first().map(|d| d.service.clone()).unwrap_or_default();
    Span {
        first,
        days: length,
        service,
        parts,
    }
}

/// The pieces to read the `wanted` days of one service from (`days` is
/// every day of the service that has files): spans shorter than
/// `shorter_than` days, longest first, that `covers` wholly (every day
/// of them, with files or not) and whose every day is wanted and read
/// from its rollup, then those days' own rollups. A wanted day without a
/// rollup, or with a file of it not `readable`, is in no piece; nor is
/// such a span.
pub(crate) fn pieces(
    root: &Path,
    (days, wanted): (&ServiceDays, &[i64]),
    covers: impl Fn(i64) -> bool,
    shorter_than: i64,
    readable: Readable,
) -> Vec<Piece> {
    let day_read = |day: &ServiceDay| all_read(day.files(root), readable);
    let mut left: BTreeMap<i64, &ServiceDay> = (wanted.iter())
        .filter_map(|n| days.get(n).map(|day| (*n, day)))
        .filter(|(_, day)| day_read(day))
        .collect();
    let mut pieces = Vec::new();
    for length in SPAN_DAYS.into_iter().filter(|l| *l < shorter_than) {
        let mut starts: Vec<i64> = left.keys().map(|n| n.div_euclid(length) * length).collect();
        starts.dedup();
        for first in starts {
            let span = span_of(days, first, length);
            let all_left = (span.parts.iter())
                .all(|d| day_number(&d.dt).is_some_and(|n| left.contains_key(&n)));
            if !all_left || !(first..first + length).all(&covers) || !span.is_read(root, readable) {
                continue;
            }
            for day in &span.parts {
                day_number(&day.dt).map(|n| left.remove(&n));
            }
            pieces.push(Piece::Span(span));
        }
    }
    pieces.extend(left.into_values().map(|day| Piece::Day(day.clone())));
    pieces
}

/// Every span of `days` (one service's) whose days all have their
/// rollups: the spans there should be.
pub(crate) fn due_spans(root: &Path, days: &ServiceDays) -> Vec<Span> {
    let mut spans = Vec::new();
    for length in SPAN_DAYS.into_iter().rev() {
        let mut starts: Vec<i64> = days.keys().map(|n| n.div_euclid(length) * length).collect();
        starts.dedup();
        let all = starts.into_iter().map(|first| span_of(days, first, length));
        spans.extend(all.filter(|span| span.days_rolled_up(root)));
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(n: i64) -> ServiceDay {
        ServiceDay {
            dt: day_name(n),
            service: "s".into(),
            files: vec![("all".into(), format!("{n}-c1.parquet"))],
        }
    }

    /// Spans are aligned on their length, named after their days'
    /// rollups, and kept where the day rollup tables are.
    #[test]
    fn a_span_is_aligned_and_named_after_its_days() {
        assert_eq!(day_number("2026-11-01"), Some(20_758));
        assert_eq!(day_name(20_758), "2026-11-01");
        let days: ServiceDays = [20_757, 20_758, 20_761].map(|n| (n, day(n))).into();
        let span = span_of(&days, 20_756, 4);
        assert_eq!(span.parts.len(), 2);
        let mut late = days.clone();
        late.get_mut(&20_758)
            .unwrap()
            .files
            .push(("05".into(), "x.parquet".into()));
        assert_ne!(span.name(), span_of(&late, 20_756, 4).name());
        let file = span.file(Path::new("/s"), &span_table("day_samples"));
        let below = "/s/rollups/span_samples/dt=2026-10-30/days=4/service=s";
        assert_eq!(file.parent().unwrap(), Path::new(below));
        assert_eq!(span_table("stacks"), "span_stacks");
        assert_eq!(span_tables().len(), 9);
        // Days with no rollup yet: no span is due, nothing is read.
        let root = Path::new("/nowhere");
        assert!(due_spans(root, &days).is_empty());
        let wanted = [20_757];
        assert!(pieces(root, (&days, &wanted), |_| true, i64::MAX, &|_| true).is_empty());
    }
}
