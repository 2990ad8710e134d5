//! How many label boxes pprof's DOT would draw beside each node: pprof
//! counts them against `-nodecount` when it chooses the nodes of its
//! visual graph (`selectTopNodes`), so the same nodes are chosen here
//! though protoprof draws no such box.
//!
//! A node's tags are its samples' string labels, each sample's set as one
//! tag, and the values of their `bytes` numeric labels (the only numeric
//! label pprof's graph keeps); a tag counts when its flat value is not 0,
//! after tags under the node cutoff in both flat and cum are dropped, at
//! most four per node.

use std::collections::{HashMap, HashSet};

use protoprof_model_meta::{Fields, StringTable};
use protoprof_model_pprof::fields::perftools::profiles::sample;
use protoprof_model_pprof::perftools::profiles::{Label, Profile, Sample};
use protoprof_model_pprof::samples::ProfileSamples;

use crate::report::scaled_label;
use crate::selection::{is_empty_label, Selection};
use crate::top::FunctionTotals;

/// pprof's `maxNodelets`: the boxes drawn beside one node at most.
const MAX_NODELETS: usize = 4;

/// A tag's flat and cum sums.
type Sums = (i128, i128);

/// The node count pprof's visual mode keeps of `rows` (in entropy order)
/// for `node_count`, each node counting one plus its label boxes.
pub(crate) fn visual_node_limit<S: ProfileSamples>(
    source: &S,
    (index, selection): (usize, &Selection),
    rows: &[FunctionTotals],
    (node_count, cutoff): (usize, i64),
) -> usize {
    let kept: HashSet<u32> = rows.iter().map(|r| r.node).collect();
    let tags = tag_counts(source, (index, selection), &kept, cutoff);
    let mut count = 0;
    for (i, row) in rows.iter().enumerate() {
        count += tags.get(&row.node).copied().unwrap_or(0).min(MAX_NODELETS) + 1;
        if count >= node_count {
            return i + 1;
        }
    }
    rows.len()
}

/// Per node, the tags whose flat value is not 0 once those under `cutoff`
/// (in both flat and cum) are left out.
fn tag_counts<S: ProfileSamples>(
    source: &S,
    (index, selection): (usize, &Selection),
    kept: &HashSet<u32>,
    cutoff: i64,
) -> HashMap<u32, usize> {
    let p = source.profile();
    let frames = crate::frames_for(source, selection);
    // (node, label set, numeric value or "") -> sums
    let mut tags: HashMap<(u32, String, String), Sums> = HashMap::new();
    let fields = Fields::only(&[sample::LOCATION_ID, sample::VALUE, sample::LABEL]);
    let (mut buffer, mut stack) = (Sample::new(), Vec::new());
    for n in 0..source.sample_count() {
        let s = source.sample_fields(n, fields, &mut buffer);
        let Some(&v) = s.value.get(index) else {
            continue;
        };
        if !frames.select(p, &s.location_id, &s.label, &mut stack) {
            continue;
        }
        let (set, bytes) = label_set(p, &s.label);
        let mut add = |node: u32, flat: bool| {
            let values = (!set.is_empty()).then_some("").into_iter();
            for value in values.chain(bytes.iter().map(String::as_str)) {
                let sums = tags
                    .entry((node, set.clone(), value.to_string()))
                    .or_default();
                match flat {
                    true => sums.0 += i128::from(v),
                    false => sums.1 += i128::from(v),
                }
            }
        };
        // Cum once per node of the stack; flat to the leaf, when kept.
        let mut seen = HashSet::new();
        for &at in &stack {
            let node = frames.node(at);
            if kept.contains(&node) && seen.insert(node) {
                add(node, false);
            }
        }
        if let Some(leaf) = stack.first().map(|&at| frames.node(at)) {
            if kept.contains(&leaf) {
                add(leaf, true);
            }
        }
    }
    let cut = i128::from(cutoff).abs();
    let mut counts: HashMap<u32, usize> = HashMap::new();
    for ((node, _, _), (flat, cum)) in tags {
        if (flat.abs() >= cut || cum.abs() >= cut) && flat != 0 {
            *counts.entry(node).or_default() += 1;
        }
    }
    counts
}

/// A sample's string labels as pprof's `joinLabels` sets them (sorted
/// `key:value`), and its `bytes` values as pprof's graph formats them.
fn label_set(p: &Profile, labels: &[Label]) -> (String, Vec<String>) {
    let mut strings: Vec<String> = Vec::new();
    let mut bytes = Vec::new();
    for l in labels.iter().filter(|l| !is_empty_label(l)) {
        let key = p.string(l.key);
        if l.str != 0 {
            strings.push(format!("{key}:{}", p.string(l.str)));
        } else if key == "bytes" {
            let unit = match p.string(l.num_unit) {
                "" => "bytes",
                unit => unit,
            };
            bytes.push(scaled_label(l.num, unit, "minimum"));
        }
    }
    strings.sort();
    (strings.join("\\n"), bytes)
}
