//! Per-function differences between two profiles.

use std::collections::HashMap;

use protoprof_model_meta::StringTable;
use protoprof_model_pprof::samples::ProfileSamples;
use serde::Serialize;

use crate::report::{minimum_unit, percentage, scaled_label};
use crate::selection::Selection;
use crate::top::{totals_selected, Order};

/// One function's totals in two profiles.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FunctionDiff {
    /// Function name.
    pub function: String,
    /// Flat value in the base profile.
    pub flat_base: i64,
    /// Flat value in the new profile.
    pub flat: i64,
    /// Cumulative value in the base profile.
    pub cum_base: i64,
    /// Cumulative value in the new profile.
    pub cum: i64,
}

impl FunctionDiff {
    /// New flat minus base flat (saturating).
    pub fn flat_delta(&self) -> i64 {
        self.flat.saturating_sub(self.flat_base)
    }

    /// New cum minus base cum (saturating).
    pub fn cum_delta(&self) -> i64 {
        self.cum.saturating_sub(self.cum_base)
    }
}

/// Per-function differences of `new` against `base` (like pprof's
/// `-diff_base`), largest change of flat first, then of cum. Functions whose
/// values did not change are left out. Either side is the decoded model or
/// the codec's `PprofView`.
pub fn diff<B: ProfileSamples, N: ProfileSamples>(
    base: &B,
    base_index: usize,
    new: &N,
    new_index: usize,
) -> Vec<FunctionDiff> {
    diff_selected(base, base_index, new, new_index, &Selection::default())
}

/// [`diff`] of the samples `selection` keeps in either profile, frames
/// named at its granularity.
pub fn diff_selected<B: ProfileSamples, N: ProfileSamples>(
    base: &B,
    base_index: usize,
    new: &N,
    new_index: usize,
    selection: &Selection,
) -> Vec<FunctionDiff> {
    diff_with_totals(base, base_index, new, new_index, selection).0
}

/// The rows of [`diff_selected`] with the base's and the new profile's
/// totals of the samples kept.
fn diff_with_totals<B: ProfileSamples, N: ProfileSamples>(
    base: &B,
    base_index: usize,
    new: &N,
    new_index: usize,
    selection: &Selection,
) -> (Vec<FunctionDiff>, i64, i64) {
    let (before, base_total) = totals_selected(base, base_index, Order::Flat, selection);
    let (after, new_total) = totals_selected(new, new_index, Order::Flat, selection);
    let mut rows: HashMap<String, FunctionDiff> = HashMap::new();
    for r in before {
        let row = FunctionDiff {
            function: r.function.clone(),
            flat_base: r.flat,
            flat: 0,
            cum_base: r.cum,
            cum: 0,
        };
        rows.insert(r.function, row);
    }
    for r in after {
        let row = rows.entry(r.function.clone()).or_insert(FunctionDiff {
            function: r.function,
            flat_base: 0,
            flat: 0,
            cum_base: 0,
            cum: 0,
        });
        row.flat = r.flat;
        row.cum = r.cum;
    }
    let mut out: Vec<FunctionDiff> = rows
        .into_values()
        .filter(|r| r.flat_delta() != 0 || r.cum_delta() != 0)
        .collect();
    out.sort_by(|a, b| {
        (b.flat_delta().unsigned_abs(), b.cum_delta().unsigned_abs())
            .cmp(&(a.flat_delta().unsigned_abs(), a.cum_delta().unsigned_abs()))
            .then_with(|| a.function.cmp(&b.function))
    });
    (out, base_total, new_total)
}

/// A diff as `protoprof diff` shows it: the rows, the totals they are
/// shares of, and the unit values are printed in.
#[derive(Debug, Clone, Serialize)]
pub struct DiffReport {
    /// The sample type compared.
    pub sample_type: String,
    /// Its unit (values are exact integers in it).
    pub unit: String,
    /// The base profile's total (percentages are of it, as pprof's
    /// `-diff_base` gives them).
    pub base_total: i64,
    /// The new profile's total.
    pub new_total: i64,
    /// The rows shown, largest change first.
    pub rows: Vec<FunctionDiff>,
    /// Changed rows before `node_count` cut them.
    #[serde(skip)]
    pub changed: usize,
    /// The unit text values are printed in (pprof's `minimum`).
    #[serde(skip)]
    pub output_unit: String,
}

/// The [`DiffReport`] of sample type `base_index` of `base` against
/// `new_index` of `new` (their types must be comparable: see
/// `units::common_units`), at most `node_count` rows (0: all).
pub fn diff_report<B: ProfileSamples, N: ProfileSamples>(
    (base, base_index): (&B, usize),
    (new, new_index): (&N, usize),
    selection: &Selection,
    node_count: usize,
) -> DiffReport {
    let (mut rows, base_total, new_total) =
        diff_with_totals(base, base_index, new, new_index, selection);
    let changed = rows.len();
    if node_count > 0 {
        rows.truncate(node_count);
    }
    let p = new.profile();
    let t = &p.sample_type[new_index];
    let unit = p.string(t.unit).to_string();
    let shown = rows.iter().flat_map(|r| [r.flat_delta(), r.cum_delta()]);
    let output_unit = minimum_unit(shown, base_total.max(new_total), (&unit, None));
    DiffReport {
        sample_type: p.string(t.type_).to_string(),
        unit,
        base_total,
        new_total,
        rows,
        changed,
        output_unit,
    }
}

impl DiffReport {
    fn value(&self, v: i64) -> String {
        scaled_label(v, &self.unit, &self.output_unit)
    }

    fn change(&self, v: i64) -> String {
        match v > 0 {
            true => format!("+{}", self.value(v)),
            false => self.value(v),
        }
    }

    /// The lines before the table: the type, each side's name and total,
    /// the active filters, and how many rows are shown.
    pub fn header(&self, (base_name, new_name): (&str, &str), filters: &[String]) -> Vec<String> {
        let mut lines = vec![
            format!("Type: {}", self.sample_type),
            format!("Base: {base_name}, total {}", self.value(self.base_total)),
            format!(
                "New: {new_name}, total {} ({} {})",
                self.value(self.new_total),
                self.change(self.new_total.saturating_sub(self.base_total)),
                signed_percentage(
                    self.new_total.saturating_sub(self.base_total),
                    self.base_total
                )
            ),
        ];
        if !filters.is_empty() {
            lines.push("Active filters:".into());
            lines.extend(filters.iter().map(|f| format!("   {f}")));
        }
        lines.push(match self.rows.len() < self.changed {
            true => format!(
                "Showing {} of {} changed nodes",
                self.rows.len(),
                self.changed
            ),
            false => format!("Showing {} changed nodes", self.changed),
        });
        lines
    }

    /// The table: each side's flat and cum, and the change with its share
    /// of the base's total.
    pub fn table(&self) -> String {
        let mut out = format!(
            "{:>10} {:>10} {:>8} {:>10} {:>10} {:>8}  function\n",
            "flat", "Δflat", "Δflat%", "cum", "Δcum", "Δcum%"
        );
        for r in &self.rows {
            out.push_str(&format!(
                "{:>10} {:>10} {:>8} {:>10} {:>10} {:>8}  {}\n",
                self.value(r.flat),
                self.change(r.flat_delta()),
                signed_percentage(r.flat_delta(), self.base_total),
                self.value(r.cum),
                self.change(r.cum_delta()),
                signed_percentage(r.cum_delta(), self.base_total),
                r.function
            ));
        }
        out
    }
}

/// A change as a share of `total`, signed: `+12.50%`, `-0.31%`.
fn signed_percentage(value: i64, total: i64) -> String {
    let share = percentage(value, total);
    let share = share.trim();
    match value.signum() {
        1 => format!("+{share}"),
        -1 => format!("-{share}"),
        _ => share.to_string(),
    }
}
