//! The label boxes pprof's DOT draws beside each node (its "nodelets"),
//! and their count, which pprof's visual mode counts against `-nodecount`
//! when it chooses the nodes of its graph (`selectTopNodes`).
//!
//! A node's tags are its samples' string labels, each sample's set as one
//! tag (pprof's `joinLabels`), and the values of their `bytes` numeric
//! labels (the only numeric label pprof's graph keeps), under the label set
//! of their sample. Cum goes to each node of a stack once, flat to its
//! leaf when the leaf is a node of the graph. Tags under the node cutoff in
//! both flat and cum are dropped. A node draws at most four label-set
//! boxes, and under each (or under the node, for samples without string
//! labels) at most four boxes of sizes, grouped into ranges (`80B..40kB`)
//! when there are more.

use std::collections::{HashMap, HashSet};

use protoprof_model_meta::{Fields, StringTable};
use protoprof_model_pprof::fields::perftools::profiles::sample;
use protoprof_model_pprof::perftools::profiles::{Label, Profile, Sample};
use protoprof_model_pprof::samples::ProfileSamples;

use crate::report::{scaled_label, TopReport};
use crate::selection::{is_empty_label, Selection};
use crate::top::FunctionTotals;

/// pprof's `maxNodelets`: the boxes drawn beside one node at most.
const MAX_NODELETS: usize = 4;

/// One tag of a node: a label set, or a `bytes` value.
#[derive(Clone, Default)]
struct Tag {
    name: String,
    /// The `bytes` value (0 for a label set).
    value: i64,
    flat: i128,
    flat_divisor: i128,
    cum: i128,
    cum_divisor: i128,
}

impl Tag {
    fn add(&mut self, (value, divisor): (i128, i128), flat: bool) {
        if flat {
            self.flat += value;
            self.flat_divisor += divisor;
        } else {
            self.cum += value;
            self.cum_divisor += divisor;
        }
    }

    /// pprof's `FlatValue`: the mean, with `--mean`.
    fn flat_value(&self) -> i64 {
        crate::saturate(crate::divided(self.flat, self.flat_divisor))
    }

    fn cum_value(&self) -> i64 {
        crate::saturate(crate::divided(self.cum, self.cum_divisor))
    }
}

/// A node's tags: its label sets, and per label set ("" for samples
/// without string labels) its `bytes` values.
#[derive(Default)]
pub(crate) struct NodeTags {
    labels: Vec<Tag>,
    sizes: HashMap<String, Vec<Tag>>,
    /// The unit of the `bytes` label, which size ranges are named in.
    bytes_unit: String,
}

impl NodeTags {
    /// pprof's `countTags`: the tags with a flat value.
    fn count(&self) -> usize {
        let sizes = self.sizes.values().flatten();
        self.labels
            .iter()
            .chain(sizes)
            .filter(|t| t.flat != 0)
            .count()
    }
}

/// The node count pprof's visual mode keeps of `rows` (in entropy order)
/// for `node_count`, each node counting one plus its label boxes (`tags`).
pub(crate) fn visual_node_limit(
    rows: &[FunctionTotals],
    tags: &HashMap<u32, NodeTags>,
    node_count: usize,
) -> usize {
    let mut count = 0;
    for (i, row) in rows.iter().enumerate() {
        let boxes = tags.get(&row.node).map_or(0, NodeTags::count);
        count += boxes.min(MAX_NODELETS) + 1;
        if count >= node_count {
            return i + 1;
        }
    }
    rows.len()
}

/// The tags of the nodes of `rows`, as the graph of just those nodes
/// gives them, less those under `cutoff`; sizes named in `unit`.
pub(crate) fn node_tags<S: ProfileSamples>(
    source: &S,
    (index, selection): (usize, &Selection),
    rows: &[FunctionTotals],
    (cutoff, unit): (i64, &str),
) -> HashMap<u32, NodeTags> {
    let kept: HashSet<u32> = rows.iter().map(|r| r.node).collect();
    let sums = TagSums::read(source, (index, selection), &kept);
    let cut = i128::from(cutoff).abs();
    let above = |t: &Tag| t.flat.abs() >= cut || t.cum.abs() >= cut;
    let mut nodes = HashMap::new();
    for (node, (labels, sizes)) in sums.nodes {
        let mut tags = NodeTags {
            bytes_unit: sums.bytes_unit.unit().to_string(),
            ..NodeTags::default()
        };
        tags.labels = labels.into_values().filter(above).collect();
        for (set, values) in sizes {
            let named = sums.bytes_unit.named(values, unit);
            tags.sizes
                .insert(set, named.into_iter().filter(above).collect());
        }
        nodes.insert(node, tags);
    }
    nodes
}

/// A `bytes` value's tag as summed, with the first sample that gave it.
type SizeSums = (usize, Tag);

/// Per node, its label-set tags and its sizes under each label set.
type NodeSums = (
    HashMap<String, Tag>,
    HashMap<String, HashMap<i64, SizeSums>>,
);

/// The tags of the kept nodes as the samples sum them, sizes by value.
struct TagSums {
    nodes: HashMap<u32, NodeSums>,
    bytes_unit: BytesUnit,
}

impl TagSums {
    fn read<S: ProfileSamples>(
        source: &S,
        (index, selection): (usize, &Selection),
        kept: &HashSet<u32>,
    ) -> Self {
        let p = source.profile();
        let frames = crate::frames_for(source, selection);
        let mut sums = TagSums {
            nodes: HashMap::new(),
            bytes_unit: BytesUnit::default(),
        };
        let fields = Fields::only(&[sample::LOCATION_ID, sample::VALUE, sample::LABEL]);
        let (mut buffer, mut stack, mut seen) = (Sample::new(), Vec::new(), HashSet::new());
        for n in 0..source.sample_count() {
            let s = source.sample_fields(n, fields, &mut buffer);
            let Some(&v) = s.value.get(index) else {
                continue;
            };
            let weight = (i128::from(v), crate::mean_divisor(selection, &s.value));
            if weight == (0, 0) || !frames.select(p, &s.location_id, &s.label, &mut stack) {
                continue;
            }
            let labels = SampleLabels::of(p, &s.label, &mut sums.bytes_unit);
            // Cum once per node of the stack; flat to the leaf, when kept.
            seen.clear();
            for &at in &stack {
                let node = frames.node(at);
                if kept.contains(&node) && seen.insert(node) {
                    sums.add(node, (n, &labels), weight, false);
                }
            }
            if let Some(leaf) = stack.first().map(|&at| frames.node(at)) {
                if kept.contains(&leaf) {
                    sums.add(leaf, (n, &labels), weight, true);
                }
            }
        }
        sums
    }

    /// pprof's `addSample`, for the tags.
    fn add(
        &mut self,
        node: u32,
        (n, labels): (usize, &SampleLabels),
        weight: (i128, i128),
        flat: bool,
    ) {
        let (sets, sizes) = self.nodes.entry(node).or_default();
        if !labels.set.is_empty() {
            let tag = sets.entry(labels.set.clone()).or_insert_with(|| Tag {
                name: labels.set.clone(),
                ..Tag::default()
            });
            tag.add(weight, flat);
        }
        let sizes = sizes.entry(labels.set.clone()).or_default();
        for &value in &labels.bytes {
            let (_, tag) = sizes.entry(value).or_insert_with(|| {
                let tag = Tag {
                    value,
                    ..Tag::default()
                };
                (n, tag)
            });
            tag.add(weight, flat);
        }
    }
}

/// A sample's string labels as pprof's `joinLabels` sets them (sorted
/// `key:value`, joined by `\n`), and its `bytes` values.
struct SampleLabels {
    set: String,
    bytes: Vec<i64>,
}

impl SampleLabels {
    fn of(p: &Profile, labels: &[Label], unit: &mut BytesUnit) -> Self {
        let mut strings: Vec<String> = Vec::new();
        let mut bytes = Vec::new();
        for l in labels.iter().filter(|l| !is_empty_label(l)) {
            let key = p.string(l.key);
            // pprof removes the label marking a diff base's samples before
            // it builds its graph, so it draws no box of it.
            if key == crate::base::DIFF_BASE_LABEL {
                continue;
            }
            if l.str != 0 {
                strings.push(format!("{key}:{}", p.string(l.str)));
            } else if key == "bytes" {
                bytes.push(l.num);
                if l.num_unit != 0 && unit.0.is_none() {
                    unit.0 = Some(p.string(l.num_unit).to_string());
                }
            }
        }
        strings.sort();
        SampleLabels {
            set: strings.join("\\n"),
            bytes,
        }
    }
}

/// The unit of the `bytes` label (pprof's `NumLabelUnits`): the first a
/// label states, else `bytes`.
#[derive(Default)]
struct BytesUnit(Option<String>);

impl BytesUnit {
    fn unit(&self) -> &str {
        self.0.as_deref().unwrap_or("bytes")
    }

    /// The tags of `values` as pprof keys them: by their value's label in
    /// `unit` (values whose labels are equal are one tag, valued as the
    /// first sample to give it).
    fn named(&self, values: HashMap<i64, SizeSums>, unit: &str) -> Vec<Tag> {
        let mut values: Vec<SizeSums> = values.into_values().collect();
        values.sort_by_key(|(first, tag)| (*first, tag.value));
        let mut named: Vec<Tag> = Vec::new();
        let mut at: HashMap<String, usize> = HashMap::new();
        for (_, tag) in values {
            let name = scaled_label(tag.value, self.unit(), unit);
            match at.get(&name) {
                Some(&i) => {
                    let into = &mut named[i];
                    into.flat += tag.flat;
                    into.flat_divisor += tag.flat_divisor;
                    into.cum += tag.cum;
                    into.cum_divisor += tag.cum_divisor;
                }
                None => {
                    at.insert(name.clone(), named.len());
                    named.push(Tag { name, ..tag });
                }
            }
        }
        named
    }
}

/// pprof's `addNodelets`: the DOT of node `id`'s label boxes (none when it
/// has no tags). `flat_tags` (the node has callees) weighs boxes by flat
/// value, else by cum.
pub(crate) fn nodelets(id: usize, tags: &NodeTags, flat_tags: bool, report: &TopReport) -> String {
    let unit = tags.bytes_unit.as_str();
    let mut out = String::new();
    let mut labels = tags.labels.clone();
    sort_tags(&mut labels, flat_tags);
    for (i, tag) in labels.iter().take(MAX_NODELETS).enumerate() {
        let weight = if flat_tags {
            tag.flat_value()
        } else {
            tag.cum_value()
        };
        if weight == 0 {
            continue;
        }
        let weight = report.format_value(weight);
        out.push_str(&format!(
            "N{id}_{i} [label = \"{}\" id=\"N{id}_{i}\" fontsize=8 shape=box3d tooltip=\"{weight}\"]\n\
             N{id} -> N{id}_{i} [label=\" {weight}\" weight=100 tooltip=\"{weight}\" labeltooltip=\"{weight}\"]\n",
            tag.name
        ));
        if let Some(sizes) = tags.sizes.get(&tag.name) {
            out.push_str(&size_nodelets(
                sizes,
                (flat_tags, unit),
                &format!("N{id}_{i}"),
                report,
            ));
        }
    }
    if let Some(sizes) = tags.sizes.get("") {
        out.push_str(&size_nodelets(
            sizes,
            (flat_tags, unit),
            &format!("N{id}"),
            report,
        ));
    }
    out
}

/// pprof's `numericNodelets`: the boxes of `sizes` under `source`, at most
/// four, grouped into ranges when there are more.
fn size_nodelets(
    sizes: &[Tag],
    (flat_tags, unit): (bool, &str),
    source: &str,
    report: &TopReport,
) -> String {
    let mut out = String::new();
    for (j, tag) in collapsed(sizes, flat_tags, unit).iter().enumerate() {
        let (weight, style) = match flat_tags || tag.flat_value() == tag.cum_value() {
            true => (tag.flat_value(), ""),
            false => (tag.cum_value(), " style=\"dotted\""),
        };
        if weight == 0 {
            continue;
        }
        let weight = report.format_value(weight);
        // pprof's box ids repeat the source's `N`: `NN3_0`.
        out.push_str(&format!(
            "N{source}_{j} [label = \"{}\" id=\"N{source}_{j}\" fontsize=8 shape=box3d tooltip=\"{weight}\"]\n\
             {source} -> N{source}_{j} [label=\" {weight}\" weight=100 tooltip=\"{weight}\" labeltooltip=\"{weight}\"{style}]\n",
            tag.name
        ));
    }
    out
}

/// pprof's `collapsedTags`: the tags sorted, or, when there are more than
/// four, each joined to the closest in size of the four heaviest, and each
/// group labelled with its range.
fn collapsed(sizes: &[Tag], flat_tags: bool, unit: &str) -> Vec<Tag> {
    let mut sorted = sizes.to_vec();
    sort_tags(&mut sorted, flat_tags);
    if sorted.len() <= MAX_NODELETS {
        return sorted;
    }
    let mut groups: Vec<Vec<&Tag>> = sorted[..MAX_NODELETS].iter().map(|t| vec![t]).collect();
    for tag in &sorted[MAX_NODELETS..] {
        let distance = |g: &Vec<&Tag>| (g[0].value as f64 - tag.value as f64).abs();
        let mut closest = 0;
        for (i, group) in groups.iter().enumerate().skip(1) {
            if distance(group) < distance(&groups[closest]) {
                closest = i;
            }
        }
        groups[closest].push(tag);
    }
    let mut tags: Vec<Tag> = groups.iter().map(|g| group_tag(g, unit)).collect();
    sort_tags(&mut tags, flat_tags);
    tags
}

/// pprof's `tagGroupLabel`: a group's range in automatic units (sizes are
/// often far below the report's unit) and its summed values.
fn group_tag(group: &[&Tag], unit: &str) -> Tag {
    let label = |t: &Tag| scaled_label(t.value, unit, "auto");
    let mut tag = Tag {
        value: group[0].value,
        ..Tag::default()
    };
    let (mut min, mut max) = (group[0], group[0]);
    for t in group {
        (min, max) = (
            if t.value < min.value { t } else { min },
            if t.value > max.value { t } else { max },
        );
        tag.add((t.flat, t.flat_divisor), true);
        tag.add((t.cum, t.cum_divisor), false);
    }
    tag.name = match group.len() {
        1 => label(group[0]),
        _ => format!("{}..{}", label(min), label(max)),
    };
    // pprof keeps a group's sums divided once, as its values.
    tag.flat = i128::from(tag.flat_value());
    tag.cum = i128::from(tag.cum_value());
    (tag.flat_divisor, tag.cum_divisor) = (0, 0);
    tag
}

/// pprof's `SortTags`: by cum (unless `flat`), then flat, heaviest first,
/// then by name.
fn sort_tags(tags: &mut [Tag], flat: bool) {
    tags.sort_by(|a, b| {
        let by = |x: i128, y: i128| match x == y {
            true => None,
            false => Some(y.abs().cmp(&x.abs())),
        };
        let cum = if flat { None } else { by(a.cum, b.cum) };
        cum.or_else(|| by(a.flat, b.flat))
            .unwrap_or_else(|| a.name.cmp(&b.name))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn size(value: i64, flat: i128) -> Tag {
        Tag {
            name: scaled_label(value, "bytes", "minimum"),
            value,
            flat,
            cum: flat,
            ..Tag::default()
        }
    }

    #[test]
    fn more_than_four_sizes_join_the_closest_of_the_heaviest() {
        let sizes = [
            size(80, 50),
            size(1024, 40),
            size(40960, 30),
            size(8192, 20),
            size(96, 5),
            size(32768, 4),
        ];
        let names: Vec<(String, i128)> = collapsed(&sizes, true, "bytes")
            .into_iter()
            .map(|t| (t.name, t.flat))
            .collect();
        let expected = [
            ("80B..96B", 55),
            ("1kB", 40),
            ("32kB..40kB", 34),
            ("8kB", 20),
        ];
        let expected: Vec<(String, i128)> =
            expected.iter().map(|(n, v)| (n.to_string(), *v)).collect();
        assert_eq!(names, expected);
    }

    #[test]
    fn tags_sort_by_cum_unless_flat_then_by_name() {
        let tag = |name: &str, flat, cum| Tag {
            name: name.into(),
            flat,
            cum,
            ..Tag::default()
        };
        let mut tags = [tag("b", 1, 5), tag("a", 1, 5), tag("c", 9, -7)];
        sort_tags(&mut tags, false);
        let names: Vec<&str> = tags.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["c", "a", "b"]);
        sort_tags(&mut tags, true);
        let names: Vec<&str> = tags.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["c", "a", "b"]);
    }
}
