//! Base profiles, as `go tool pprof -base` and `-diff_base` use them: the
//! base's values negated and merged into the profile, so each node shows
//! its change. With `-diff_base` the base's samples carry the label
//! `pprof::base=true`: they stay apart from the new ones, and percentages
//! are of the base's total. `-normalize` first scales the profile so each
//! sample type's total is the base's. (pprof's `driver/fetch.go`,
//! `profile.Scale`, `ScaleN`, `Normalize`, `report.computeTotal`.)
//!
//! Merging the two is the bridge's Go-compatible merge; these are the
//! steps around it.

use protoprof_model_meta::StringTable;
use protoprof_model_pprof::perftools::profiles::{Label, Profile};

/// The label key that marks a `-diff_base` sample.
pub const DIFF_BASE_LABEL: &str = "pprof::base";

/// Multiplies each sample type's values by its ratio (rounded), keeping
/// only samples left with a nonzero value among the scaled types; ratios of
/// all 1 change nothing (pprof's `ScaleN`).
pub fn scale(p: &mut Profile, ratios: &[f64]) {
    if ratios.iter().all(|r| *r == 1.0) {
        return;
    }
    p.sample.retain_mut(|s| {
        let mut keep = false;
        for (v, &r) in s.value.iter_mut().zip(ratios) {
            if r != 1.0 {
                *v = (*v as f64 * r).round() as i64;
                keep |= *v != 0;
            }
        }
        keep
    });
}

/// Scales `p` so each sample type's total is `base`'s (pprof's
/// `Normalize`; a type `p` has none of becomes 0).
pub fn normalize(p: &mut Profile, base: &Profile) {
    let totals = |q: &Profile| {
        let mut sums = vec![0i64; p.sample_type.len()];
        for s in &q.sample {
            for (sum, v) in sums.iter_mut().zip(&s.value) {
                *sum = sum.wrapping_add(*v);
            }
        }
        sums
    };
    let (base_totals, totals) = (totals(base), totals(p));
    let ratios: Vec<f64> = base_totals
        .iter()
        .zip(&totals)
        .map(|(&b, &t)| if t == 0 { 0.0 } else { b as f64 / t as f64 })
        .collect();
    scale(p, &ratios);
}

/// A base profile made ready to merge into the profile: labelled
/// `pprof::base=true` when `diff` (replacing any such label), then negated.
pub fn as_base(mut base: Profile, diff: bool) -> Profile {
    if diff {
        let key = intern(&mut base, DIFF_BASE_LABEL);
        let value = intern(&mut base, "true");
        for s in &mut base.sample {
            s.label.retain(|l| l.key != key);
            s.label.push(Label {
                key,
                str: value,
                ..Default::default()
            });
        }
    }
    let ratios = vec![-1.0; base.sample_type.len()];
    scale(&mut base, &ratios);
    base
}

/// The index of `s` in `p`'s string table, appended when missing.
pub(crate) fn intern(p: &mut Profile, s: &str) -> i64 {
    match p.string_table.iter().position(|t| t == s) {
        Some(i) => i as i64,
        None => {
            p.string_table.push(s.to_string());
            p.string_table.len() as i64 - 1
        }
    }
}

/// Whether a sample carries the `-diff_base` mark.
pub(crate) fn is_diff_base(p: &Profile, labels: &[Label]) -> bool {
    labels
        .iter()
        .any(|l| p.string(l.key) == DIFF_BASE_LABEL && p.string(l.str) == "true")
}
