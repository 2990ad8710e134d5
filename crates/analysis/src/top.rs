//! Flat and cumulative value per function, as `go tool pprof -top`.

use protoprof_model_pprof::perftools::profiles::Sample;
use protoprof_model_pprof::samples::ProfileSamples;
use serde::Serialize;

use crate::base::{is_diff_base, DIFF_BASE_LABEL};
use crate::frames::Frames;
use crate::saturate;
use crate::selection::Selection;

/// One function's totals (one node: a function, file, line or address at
/// the selection's granularity).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FunctionTotals {
    /// The node's name as pprof prints it (the function name by default;
    /// the address of a location without lines).
    pub function: String,
    /// Value of the samples whose leaf frame is this function.
    pub flat: i64,
    /// Value of the samples whose stack holds this function.
    pub cum: i64,
    /// The node's file, when the granularity keeps files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Its line, when the granularity keeps lines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<i64>,
    /// Its address (hex), at address granularity.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// Whether it is reached inlined into its callers: pprof's
    /// `(inline)` / `(partial-inline)` marks.
    #[serde(skip)]
    pub inline: Inlined,
    /// The node's id within its analysis (nodes may share a name).
    #[serde(skip)]
    pub(crate) node: u32,
    /// Its cum and flat before `--mean` divides them: what pprof's node
    /// fraction and entropy order read.
    #[serde(skip)]
    pub(crate) cum_undivided: i64,
    #[serde(skip)]
    pub(crate) flat_undivided: i64,
}

/// How a node is reached from its callers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Inlined {
    /// Only by calls (or it is a root).
    #[default]
    No,
    /// Only inlined into its callers.
    Always,
    /// Both.
    Partly,
}

impl Inlined {
    /// pprof's mark: `(inline)`, `(partial-inline)` or nothing.
    pub fn label(self) -> &'static str {
        match self {
            Inlined::No => "",
            Inlined::Always => "(inline)",
            Inlined::Partly => "(partial-inline)",
        }
    }
}

/// How [`top`] orders its rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// By flat value, then name (pprof's order).
    Flat,
    /// By cum value, then name.
    Cum,
}

/// Flat and cumulative value of `index` per function, largest first (by
/// flat or cum, then name, as pprof orders), and the profile's total.
/// `source` is the decoded model or the codec's `PprofView`.
pub fn top<S: ProfileSamples>(
    source: &S,
    index: usize,
    order: Order,
) -> (Vec<FunctionTotals>, i64) {
    top_selected(source, index, order, &Selection::default())
}

/// [`top`] of the samples `selection` keeps, their frames named at its
/// granularity. The total is that of every sample (of their magnitudes,
/// or of the base's samples in a `-diff_base` profile: see [`crate::base`]),
/// as pprof computes its percentages against the whole profile; with
/// [`Selection::relative_percentages`], of the samples kept.
pub fn top_selected<S: ProfileSamples>(
    source: &S,
    index: usize,
    order: Order,
    selection: &Selection,
) -> (Vec<FunctionTotals>, i64) {
    let (mut rows, total) = totals_selected(source, index, order, selection);
    mark_rows(source, index, selection, &mut rows);
    (rows, total)
}

/// Sets the inline mark of each of `rows`, as pprof draws them when those
/// rows are the nodes shown ([`marks_among`]).
pub(crate) fn mark_rows<S: ProfileSamples>(
    source: &S,
    index: usize,
    selection: &Selection,
    rows: &mut [FunctionTotals],
) {
    let kept: std::collections::HashSet<&str> = rows.iter().map(|r| r.function.as_str()).collect();
    let marks = marks_among(source, index, selection, &kept);
    for row in rows {
        row.inline = marks.get(&row.function).copied().unwrap_or_default();
    }
}

/// [`top_selected`] without the inline marks, which take a pass of their
/// own over the samples: [`marks_among`] gives them for the rows shown.
pub(crate) fn totals_selected<S: ProfileSamples>(
    source: &S,
    index: usize,
    order: Order,
    selection: &Selection,
) -> (Vec<FunctionTotals>, i64) {
    let p = source.profile();
    let frames = crate::frames_for(source, selection);
    // A -diff_base profile: its base samples are labelled, and their
    // total is the one percentages are of.
    let diff_base = p.string_table.iter().any(|s| s == DIFF_BASE_LABEL);
    let fields = match diff_base {
        true => crate::VALUES_STACK_AND_LABELS,
        false => crate::sample_fields(selection),
    };
    let mut sums = Sums::new(frames.names.len());
    let (mut buffer, mut stack) = (Sample::new(), Vec::new());
    // (value, divisor) of every sample, and of the base's.
    let (mut total, mut base_total) = ((0i128, 0i128), (0i128, 0i128));
    for n in 0..source.sample_count() {
        let s = source.sample_fields(n, fields, &mut buffer);
        let Some(&v) = s.value.get(index) else {
            continue;
        };
        // Samples with no value here (and no `--mean` divisor) add nothing,
        // and pprof leaves them out: their functions would show as
        // all-zero rows. With a divisor they count, as in pprof's graph.
        let d = crate::mean_divisor(selection, &s.value);
        if v == 0 && d == 0 {
            continue;
        }
        let selected = frames.select(p, &s.location_id, &s.label, &mut stack);
        // pprof's computeTotal: magnitudes, of every sample unless the
        // percentages are relative to those the filters keep.
        if selected || !selection.relative_percentages {
            total = (total.0 + i128::from(v).abs(), total.1 + d);
            if diff_base && is_diff_base(p, &s.label) {
                base_total = (base_total.0 + i128::from(v).abs(), base_total.1 + d);
            }
        }
        if selected {
            sums.add_sample(n, (i128::from(v), d), &stack, &frames);
        }
    }
    let mut rows = sums.rows(&frames.names, &frames.parts);
    sort(&mut rows, order, &frames.infos);
    let (total, divisor) = if base_total.0 > 0 { base_total } else { total };
    (rows, saturate(crate::divided(total, divisor)))
}

/// The inline marks of the nodes named in `kept` when only those are shown:
/// pprof draws an edge into a node only from a shown ancestor, so a node
/// whose callers were all left out has no mark. A pass over the samples of
/// its own, keeping the edges into shown nodes that some frame names as an
/// inlined line (no other can have a mark).
fn marks_among<S: ProfileSamples>(
    source: &S,
    index: usize,
    selection: &Selection,
    kept: &std::collections::HashSet<&str>,
) -> std::collections::HashMap<String, Inlined> {
    let p = source.profile();
    let frames = crate::frames_for(source, selection);
    let shown: Vec<bool> = frames
        .names
        .iter()
        .map(|n| kept.contains(n.as_str()))
        .collect();
    let mut edges = Edges::of(&frames);
    for (tracked, shown) in edges.tracked.iter_mut().zip(&shown) {
        *tracked &= shown;
    }
    // pprof's edge cutoff comes from the whole graph's total, made before
    // nodes were left out: every selected sample's value.
    let mut graph_total = 0i128;
    let (mut buffer, mut stack) = (Sample::new(), Vec::new());
    let fields = crate::sample_fields(selection);
    for n in 0..source.sample_count() {
        let s = source.sample_fields(n, fields, &mut buffer);
        let Some(&v) = s.value.get(index).filter(|v| **v != 0) else {
            continue;
        };
        if !frames.select(p, &s.location_id, &s.label, &mut stack) {
            continue;
        }
        let v = i128::from(v);
        graph_total += v;
        // Root to leaf: a node gets an edge from the nearest shown node
        // above it, unless that is itself.
        let mut above: Option<usize> = None;
        for &at in stack.iter().rev() {
            let name = frames.node(at) as usize;
            if !shown[name] {
                continue;
            }
            if let Some(caller) = above.filter(|&a| a != name) {
                edges.take(n, v, (caller, name), frames.inlined(at));
            }
            above = Some(name);
        }
    }
    let marks = edges.marks(frames.names.len(), graph_total);
    (0..frames.names.len())
        .filter(|&i| shown[i])
        .map(|i| (frames.names[i].clone(), marks[i]))
        .collect()
}

/// pprof's `FlatNameOrder` / `CumNameOrder`: by the magnitude of flat (or
/// cum), then name, then the other magnitude, then identity (`infos`, by
/// node id).
pub(crate) fn sort(rows: &mut [FunctionTotals], order: Order, infos: &[String]) {
    rows.sort_by(|a, b| {
        // pprof orders by the values as summed, before `--mean` divides.
        let flat = |r: &FunctionTotals| r.flat_undivided.unsigned_abs();
        let cum = |r: &FunctionTotals| r.cum_undivided.unsigned_abs();
        let key = |r: &FunctionTotals| match order {
            Order::Flat => (flat(r), cum(r)),
            Order::Cum => (cum(r), flat(r)),
        };
        let (a1, a2) = key(a);
        let (b1, b2) = key(b);
        b1.cmp(&a1)
            .then_with(|| a.function.cmp(&b.function))
            .then_with(|| b2.cmp(&a2))
            .then_with(|| infos[a.node as usize].cmp(&infos[b.node as usize]))
    });
}

/// Running totals per interned name.
struct Sums {
    flat: Vec<i128>,
    cum: Vec<i128>,
    /// The mean divisors summed alike (zero without `--mean`).
    flat_divisor: Vec<i128>,
    cum_divisor: Vec<i128>,
    /// The last sample each function was counted in, for "once per sample".
    counted_in: Vec<usize>,
    reached: Vec<bool>,
}

/// The edges of pprof's graph, caller to callee (interned names), as far
/// as its inline marks need them: an edge is inline when every sample
/// that takes it does so through an inlined line, and it counts toward
/// its callee's mark only if its weight reaches pprof's edge cutoff
/// (`-edgefraction`, 0.001 of the graph's total), as pprof trims lighter
/// edges before it prints the marks. Kept per callee, as a short list of
/// its callers (a node has few): no hashing on the path every frame of
/// every sample takes.
struct Edges {
    into: Vec<Vec<Edge>>,
    /// The nodes some frame names as an inlined line ([`Frames::reached_inlined`]):
    /// no other has an inline edge, so no other needs its edges kept.
    tracked: Vec<bool>,
}

struct Edge {
    caller: u32,
    inline: bool,
    weight: i64,
    /// The last sample that took it: pprof counts an edge once a sample.
    last_sample: usize,
}

/// pprof's default `-edgefraction`.
const EDGE_FRACTION: f64 = 0.001;

impl Edges {
    /// No edges yet, of the nodes `frames` can reach inlined.
    fn of(frames: &Frames) -> Edges {
        Edges {
            into: Vec::new(),
            tracked: frames.reached_inlined(),
        }
    }

    /// Sample `n`, of value `v`, takes the edge from `caller` to `callee`,
    /// inlined or not.
    #[inline]
    fn take(&mut self, n: usize, v: i128, (caller, callee): (usize, usize), inline: bool) {
        if !self.tracked.get(callee).copied().unwrap_or(false) {
            return;
        }
        if self.into.len() <= callee {
            self.into.resize_with(callee + 1, Vec::new);
        }
        let callers = &mut self.into[callee];
        let caller = caller as u32;
        let edge = match callers.iter().position(|e| e.caller == caller) {
            Some(at) => &mut callers[at],
            None => {
                callers.push(Edge {
                    caller,
                    inline: true,
                    weight: 0,
                    last_sample: usize::MAX,
                });
                callers.last_mut().expect("just pushed")
            }
        };
        if edge.last_sample != n {
            edge.last_sample = n;
            edge.weight = edge.weight.saturating_add(saturate(v));
            edge.inline &= inline;
        }
    }

    /// Each node's mark, the edges below the cutoff for `graph_total` left
    /// out, as pprof's `printText` reads them.
    fn marks(&self, nodes: usize, graph_total: i128) -> Vec<Inlined> {
        let cutoff = (((graph_total as f64) * EDGE_FRACTION) as i64).saturating_abs();
        (0..nodes)
            .map(|callee| {
                let callers = self.into.get(callee).map_or(&[][..], Vec::as_slice);
                let kept = callers
                    .iter()
                    .filter(|e| e.weight.saturating_abs() >= cutoff);
                let (mut inline, mut called) = (false, false);
                for edge in kept {
                    inline |= edge.inline;
                    called |= !edge.inline;
                }
                match (inline, called) {
                    (true, true) => Inlined::Partly,
                    (true, false) => Inlined::Always,
                    _ => Inlined::No,
                }
            })
            .collect()
    }
}

impl Sums {
    fn new(names: usize) -> Sums {
        Sums {
            flat: vec![0; names],
            cum: vec![0; names],
            flat_divisor: vec![0; names],
            cum_divisor: vec![0; names],
            counted_in: vec![usize::MAX; names],
            reached: vec![false; names],
        }
    }

    /// One sample's value and mean divisor: flat to its leaf node, cum
    /// once to each node.
    #[inline]
    fn add_sample(&mut self, n: usize, (v, d): (i128, i128), stack: &[u32], frames: &Frames) {
        for (i, &at) in stack.iter().enumerate() {
            let name = frames.node(at) as usize;
            self.reached[name] = true;
            if i == 0 {
                self.flat[name] += v;
                self.flat_divisor[name] += d;
            }
            if self.counted_in[name] != n {
                self.counted_in[name] = n;
                self.cum[name] += v;
                self.cum_divisor[name] += d;
            }
        }
    }

    /// The rows, without inline marks (see [`marks_among`]).
    fn rows(&self, names: &[String], parts: &[crate::frames::NodeParts]) -> Vec<FunctionTotals> {
        // Nodes whose values cancel out (a base subtracted) are not in
        // pprof's graph at all.
        (0..names.len())
            .filter(|&i| self.reached[i] && (self.flat[i] != 0 || self.cum[i] != 0))
            .map(|i| FunctionTotals {
                function: names[i].clone(),
                flat: saturate(crate::divided(self.flat[i], self.flat_divisor[i])),
                cum: saturate(crate::divided(self.cum[i], self.cum_divisor[i])),
                cum_undivided: saturate(self.cum[i]),
                flat_undivided: saturate(self.flat[i]),
                file: parts[i].file.clone(),
                line: parts[i].line,
                address: parts[i].address.clone(),
                inline: Inlined::No,
                node: i as u32,
            })
            .collect()
    }
}
