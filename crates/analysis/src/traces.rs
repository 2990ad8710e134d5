//! `go tool pprof -traces` and `-tags`: every sample with its labels and
//! frames, and every label value with the share of the total it carries
//! (pprof's `report.printTraces` and `printTags`).

use std::collections::BTreeMap;

use protoprof_model_meta::StringTable;
use protoprof_model_pprof::perftools::profiles::{Label, Profile, Sample};
use protoprof_model_pprof::samples::ProfileSamples;
use serde::Serialize;

use crate::report::{percentage, profile_labels, scaled_label, TopReport};
use crate::selection::{is_empty_label, LabelUnits, Selection};

/// One sample as `-traces` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct Trace {
    /// Its value of the sample type asked for.
    pub value: i64,
    /// String labels: key -> values, in label order.
    pub labels: BTreeMap<String, Vec<String>>,
    /// Numeric labels: key -> values, and the key's unit.
    pub num_labels: BTreeMap<String, (Vec<i64>, String)>,
    /// Frames, leaf first, at the selection's granularity, and whether
    /// each is inlined into the next.
    pub frames: Vec<(String, bool)>,
}

/// Every sample the selection keeps, in profile order, that has a frame,
/// as pprof prints one profile: samples are not merged (pprof merges only
/// several inputs, and protoprof's merge of them does the same).
pub fn traces<S: ProfileSamples>(source: &S, index: usize, selection: &Selection) -> Vec<Trace> {
    let p = source.profile();
    let frames = crate::frames_for(source, selection);
    let units = LabelUnits::read(source);
    let (mut buffer, mut stack) = (Sample::new(), Vec::new());
    let mut out = Vec::new();
    for n in 0..source.sample_count() {
        let s = source.sample_fields(n, crate::VALUES_STACK_AND_LABELS, &mut buffer);
        if !frames.select(p, &s.location_id, &s.label, &mut stack) || stack.is_empty() {
            continue;
        }
        let (labels, num_labels) = grouped_labels(p, &s.label, &units, selection);
        out.push(Trace {
            // With `--mean`, the sample's own mean, as pprof prints it.
            value: crate::saturate(crate::divided(
                i128::from(s.value.get(index).copied().unwrap_or(0)),
                crate::mean_divisor(selection, &s.value),
            )),
            labels,
            num_labels,
            frames: stack
                .iter()
                .map(|&at| {
                    (
                        frames.names[frames.node(at) as usize].clone(),
                        frames.inlined(at),
                    )
                })
                .collect(),
        });
    }
    out
}

type Grouped = (
    BTreeMap<String, Vec<String>>,
    BTreeMap<String, (Vec<i64>, String)>,
);

/// A sample's labels by key, as pprof's `Label` and `NumLabel` maps.
fn grouped_labels(
    p: &Profile,
    labels: &[Label],
    units: &LabelUnits,
    selection: &Selection,
) -> Grouped {
    let (mut strings, mut numbers): Grouped = Default::default();
    for l in labels.iter().filter(|l| !is_empty_label(l)) {
        let key = p.string(l.key).to_string();
        if !selection.shows_tag(&key) {
            continue;
        }
        if l.str != 0 {
            strings
                .entry(key)
                .or_default()
                .push(p.string(l.str).to_string());
        } else {
            let unit = units.of(&key).to_string();
            numbers
                .entry(key)
                .or_insert((Vec::new(), unit))
                .0
                .push(l.num);
        }
    }
    (strings, numbers)
}

/// `-traces` as pprof prints it: the profile labels, then each trace
/// between separators, its labels sorted, its value on the leaf frame.
pub fn traces_text(p: &Profile, report: &TopReport, traces: &[Trace]) -> String {
    const SEPARATOR: &str = "-----------+-------------------------------------------------------";
    let mut out = profile_labels(p, report).join("\n") + "\n";
    for t in traces {
        out.push_str(SEPARATOR);
        out.push('\n');
        let mut lines: Vec<String> = t
            .labels
            .iter()
            .map(|(k, vs)| format!("{k:>10}:  {}\n", vs.join(" ")))
            .collect();
        lines.sort();
        out.extend(lines);
        let mut lines: Vec<String> = t
            .num_labels
            .iter()
            .map(|(k, (vs, unit))| {
                let values: Vec<String> =
                    vs.iter().map(|v| scaled_label(*v, unit, "auto")).collect();
                format!("{k:>10}:  {}\n", values.join(" "))
            })
            .collect();
        lines.sort();
        out.extend(lines);
        for (i, (name, inline)) in t.frames.iter().enumerate() {
            let value = match i {
                0 => report.format_value(t.value),
                _ => String::new(),
            };
            let inline = if *inline { " (inline)" } else { "" };
            out.push_str(&format!("{value:>10}   {name}{inline}\n"));
        }
    }
    out.push_str(SEPARATOR);
    out.push('\n');
    out
}

/// One label key's values and the value each carries (`-tags`).
#[derive(Debug, Clone, Serialize)]
pub struct TagValues {
    /// The label key.
    pub key: String,
    /// The sum over its values.
    pub total: i64,
    /// Each value (numbers formatted in their unit, as pprof keys them)
    /// and its sum, largest first.
    pub values: Vec<(String, i64)>,
}

/// Every label key with its values' sums, keys by name (pprof's `-tags`),
/// over every sample the selection keeps.
pub fn tags<S: ProfileSamples>(source: &S, index: usize, selection: &Selection) -> Vec<TagValues> {
    let p = source.profile();
    let frames = crate::frames_for(source, selection);
    let units = LabelUnits::read(source);
    let (mut buffer, mut stack) = (Sample::new(), Vec::new());
    let mut sums: BTreeMap<String, BTreeMap<String, i64>> = BTreeMap::new();
    let mut add = |key: &String, value: String, v: i64| {
        let sum = sums
            .entry(key.clone())
            .or_default()
            .entry(value)
            .or_default();
        *sum = sum.saturating_add(v);
    };
    for n in 0..source.sample_count() {
        let s = source.sample_fields(n, crate::VALUES_STACK_AND_LABELS, &mut buffer);
        if !frames.select(p, &s.location_id, &s.label, &mut stack) {
            continue;
        }
        let value = s.value.get(index).copied().unwrap_or(0);
        let (labels, num_labels) = grouped_labels(p, &s.label, &units, selection);
        for (key, values) in labels {
            values.into_iter().for_each(|v| add(&key, v, value));
        }
        for (key, (values, unit)) in num_labels {
            for v in values {
                add(&key, scaled_label(v, &unit, "minimum"), value);
            }
        }
    }
    sums.into_iter()
        .map(|(key, values)| {
            let total = values.values().fold(0i64, |a, v| a.saturating_add(*v));
            let mut values: Vec<(String, i64)> = values.into_iter().collect();
            values.sort_by(|a, b| {
                b.1.unsigned_abs()
                    .cmp(&a.1.unsigned_abs())
                    .then(a.0.cmp(&b.0))
            });
            TagValues { key, total, values }
        })
        .collect()
}

/// `-tags` as pprof prints it (its tabwriter: cells right-aligned, one
/// space of padding, a column as wide as its widest cell in each block of
/// lines that have it).
/// Values are multiplied by `ratio` (pprof's `-divide_by`) when given.
pub fn tags_text(
    tags: &[TagValues],
    (sample_unit, ratio): (&str, Option<f64>),
    profile_total: i64,
) -> String {
    let amount = |v: i64| {
        scaled_label(
            crate::report::ratio_scaled(v, ratio),
            sample_unit,
            "minimum",
        )
    };
    let mut out = String::new();
    for tag in tags {
        let total = match profile_total > 0 {
            true => format!(
                " Total {} of {} ({})",
                amount(tag.total),
                amount(profile_total),
                percentage(tag.total, profile_total)
            ),
            false => format!(" Total {} of {}", amount(tag.total), amount(profile_total)),
        };
        let mut rows: Vec<(Vec<String>, String)> = vec![(vec![format!("{}:", tag.key)], total)];
        for (name, v) in &tag.values {
            let share = match profile_total > 0 {
                true => format!("{} ({}):", amount(*v), percentage(*v, profile_total)),
                false => format!("{}:", amount(*v)),
            };
            rows.push((vec![" ".into(), share], format!(" {name}")));
        }
        out.push_str(&align_right(&rows));
        out.push('\n');
    }
    out
}

/// Rows of cells and trailing text, aligned as Go's tabwriter with
/// `AlignRight` and padding 1 aligns one block of lines.
fn align_right(rows: &[(Vec<String>, String)]) -> String {
    let columns = rows.iter().map(|(cells, _)| cells.len()).max().unwrap_or(0);
    let mut out = String::new();
    let widths: Vec<Vec<usize>> = (0..columns).map(|c| block_widths(rows, c)).collect();
    for (r, (cells, rest)) in rows.iter().enumerate() {
        for (c, cell) in cells.iter().enumerate() {
            let width = widths[c][r];
            out.push_str(&format!("{cell:>width$}"));
        }
        out.push_str(rest);
        out.push('\n');
    }
    out
}

/// For each row, the width of column `c` in the block (consecutive rows
/// having that column) it belongs to: the widest cell plus one.
fn block_widths(rows: &[(Vec<String>, String)], c: usize) -> Vec<usize> {
    let mut widths = vec![0; rows.len()];
    let mut start = 0;
    while start < rows.len() {
        if rows[start].0.len() <= c {
            start += 1;
            continue;
        }
        let end = (start..rows.len())
            .find(|&r| rows[r].0.len() <= c)
            .unwrap_or(rows.len());
        let widest = rows[start..end]
            .iter()
            .map(|(cells, _)| cells[c].chars().count())
            .max()
            .unwrap_or(0);
        widths[start..end].iter_mut().for_each(|w| *w = widest + 1);
        start = end;
    }
    widths
}
