//! Per-function differences between two profiles.

use std::collections::HashMap;

use protoprof_model_pprof::samples::ProfileSamples;
use serde::Serialize;

use crate::selection::Selection;
use crate::top::{top_selected, Order};

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
    let (before, _) = top_selected(base, base_index, Order::Flat, selection);
    let (after, _) = top_selected(new, new_index, Order::Flat, selection);
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
    out
}
