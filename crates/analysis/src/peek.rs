//! `go tool pprof -peek REGEX`: each matching node with the nodes that call
//! it and those it calls, and the value on each edge (pprof's `printTree`
//! over its untrimmed graph: edges weighted once per sample, inline only
//! when every occurrence is).

use std::collections::HashMap;

use protoprof_model_pprof::perftools::profiles::{Profile, Sample};
use protoprof_model_pprof::samples::ProfileSamples;
use regex::Regex;
use serde::Serialize;

use crate::report::{percentage, TopOptions, TopReport};
use crate::selection::Selection;
use crate::top::Order;

/// One edge of the call graph.
#[derive(Debug, Clone, Default)]
pub(crate) struct Edge {
    /// The value it carries, summed as is even with `--mean` (pprof's
    /// `-peek` and `-tree` print it so, and order and trim by it).
    pub(crate) weight: i128,
    /// Its `--mean` divisor, summed alike: only the DOT's labels divide.
    pub(crate) divisor: i128,
    pub(crate) inline: bool,
    /// Whether some sample reaches it over frames left out of the graph
    /// (pprof's residual edge, drawn dotted).
    pub(crate) residual: bool,
}

/// Edges by (caller, callee) node id.
#[derive(Default)]
pub(crate) struct Edges(HashMap<(u32, u32), Edge>);

impl Edges {
    fn add(&mut self, from: u32, to: u32, (v, d): (i128, i128), (inline, residual): (bool, bool)) {
        let e = self.0.entry((from, to)).or_insert(Edge {
            weight: 0,
            divisor: 0,
            inline,
            residual,
        });
        e.weight += v;
        e.divisor += d;
        e.inline &= inline;
        e.residual |= residual;
    }

    /// Every edge by (caller, callee).
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&(u32, u32), &Edge)> {
        self.0.iter()
    }
}

/// A caller or callee of a peeked node, and the value on the edge.
#[derive(Debug, Clone, Serialize)]
pub struct PeekEdge {
    /// The other node's name.
    pub function: String,
    /// The value the edge carries (once per sample).
    pub value: i64,
    /// Whether every call along it is inlined.
    pub inline: bool,
}

/// A node `peek` shows, with its callers and callees in pprof's order.
#[derive(Debug, Clone, Serialize)]
pub struct PeekNode {
    /// The node's name.
    pub function: String,
    /// Its flat value.
    pub flat: i64,
    /// Its cumulative value.
    pub cum: i64,
    /// Who calls it.
    pub callers: Vec<PeekEdge>,
    /// Whom it calls.
    pub callees: Vec<PeekEdge>,
}

/// The peek report: the whole (untrimmed) report it prints from, and the
/// nodes matching the regex.
pub struct Peek {
    /// The report, for its header and units.
    pub report: TopReport,
    /// The matching nodes, in pprof's order.
    pub nodes: Vec<PeekNode>,
}

/// The nodes matching `rx`, with their callers and callees, by flat value.
pub fn peek<S: ProfileSamples>(
    source: &S,
    index: usize,
    selection: &Selection,
    rx: &Regex,
) -> Peek {
    peek_in_order(source, index, selection, rx, Order::Flat)
}

/// [`peek`], the nodes in `order` (pprof's `-peek` with `-cum`: by cum).
pub fn peek_in_order<S: ProfileSamples>(
    source: &S,
    index: usize,
    selection: &Selection,
    rx: &Regex,
    order: Order,
) -> Peek {
    // pprof trims nothing for peek.
    let options = TopOptions {
        order,
        node_count: 0,
        node_fraction: 0.0,
        unit: "minimum".into(),
    };
    let report = crate::report::top_report(source, index, selection, &options);
    let graph = call_edges(source, index, selection, None);
    let nodes = nodes_with_edges(
        &report,
        &graph.names,
        &graph.edges,
        |row| rx.is_match(&row.function),
        0,
    );
    Peek { report, nodes }
}

/// The rows of `report` that `show` picks, each with its callers and
/// callees whose edges weigh at least `edge_cutoff` (in absolute value).
pub(crate) fn nodes_with_edges(
    report: &TopReport,
    names: &[String],
    edges: &Edges,
    show: impl Fn(&crate::FunctionTotals) -> bool,
    edge_cutoff: i64,
) -> Vec<PeekNode> {
    let heavy = |e: &&Edge| e.weight.unsigned_abs() >= u128::from(edge_cutoff.unsigned_abs());
    let edge = |(function, e): (String, &Edge)| PeekEdge {
        function,
        value: crate::saturate(e.weight),
        inline: e.inline,
    };
    report
        .rows
        .iter()
        .filter(|row| show(row))
        .map(|row| {
            let id = row.node;
            let callers = sorted(edges, |&(from, to)| (to == id).then_some(from), names);
            let callees = sorted(edges, |&(from, to)| (from == id).then_some(to), names);
            PeekNode {
                function: row.function.clone(),
                flat: row.flat,
                cum: row.cum,
                callers: callers
                    .into_iter()
                    .filter(|(_, e)| heavy(e))
                    .map(edge)
                    .collect(),
                callees: callees
                    .into_iter()
                    .filter(|(_, e)| heavy(e))
                    .map(edge)
                    .collect(),
            }
        })
        .collect()
}

/// The peek report of the nodes matching `rx`, as `go tool pprof -peek`
/// prints it; `None` when nothing matches.
pub fn peek_text<S: ProfileSamples>(
    source: &S,
    index: usize,
    selection: &Selection,
    rx: &Regex,
) -> Option<String> {
    let peek = peek(source, index, selection, rx);
    (!peek.nodes.is_empty()).then(|| peek.text(source.profile(), &selection.active_filters()))
}

impl Peek {
    /// As `go tool pprof -peek` prints it.
    pub fn text(&self, p: &Profile, filters: &[String]) -> String {
        const SEPARATOR: &str =
            "----------------------------------------------------------+-------------";
        let report = &self.report;
        let mut out = report.header(p, filters).join("\n") + "\n";
        out.push_str(SEPARATOR);
        out.push('\n');
        out.push_str(
            "      flat  flat%   sum%        cum   cum%   calls calls% + context \t \t \n",
        );
        // pprof sums flat over the matching nodes only.
        let mut flat_sum = 0i64;
        for node in &self.nodes {
            flat_sum = flat_sum.saturating_add(node.flat);
            out.push_str(SEPARATOR);
            out.push('\n');
            let edge_line = |e: &PeekEdge| {
                let inline = if e.inline { " (inline)" } else { "" };
                format!(
                    "{:>50} {} |   {}{inline}\n",
                    report.format_value(e.value),
                    percentage(e.value, node.cum),
                    e.function
                )
            };
            out.extend(node.callers.iter().map(edge_line));
            out.push_str(&format!(
                "{:>10} {} {} {:>10} {}                | {}\n",
                report.format_value(node.flat),
                percentage(node.flat, report.total),
                percentage(flat_sum, report.total),
                report.format_value(node.cum),
                percentage(node.cum, report.total),
                node.function
            ));
            out.extend(node.callees.iter().map(edge_line));
        }
        if !report.rows.is_empty() {
            out.push_str(SEPARATOR);
            out.push('\n');
        }
        out
    }
}

/// The edges `pick` selects (returning the other end's id), heaviest first,
/// then by caller name and callee name (pprof's `EdgeMap.Sort`).
pub(crate) fn sorted<'e>(
    edges: &'e Edges,
    pick: impl Fn(&(u32, u32)) -> Option<u32>,
    names: &[String],
) -> Vec<(String, &'e Edge)> {
    sorted_ids(edges, pick, names)
        .into_iter()
        .map(|(id, e)| (names[id as usize].clone(), e))
        .collect()
}

/// [`sorted`], each edge with the id of its other end.
pub(crate) fn sorted_ids<'e>(
    edges: &'e Edges,
    pick: impl Fn(&(u32, u32)) -> Option<u32>,
    names: &[String],
) -> Vec<(u32, &'e Edge)> {
    let by_id = |i: &u32| names[*i as usize].as_str();
    let mut picked: Vec<(&(u32, u32), &Edge)> =
        edges.0.iter().filter(|(k, _)| pick(k).is_some()).collect();
    picked.sort_by(|(ka, a), (kb, b)| {
        b.weight
            .unsigned_abs()
            .cmp(&a.weight.unsigned_abs())
            .then_with(|| by_id(&ka.0).cmp(by_id(&kb.0)))
            .then_with(|| by_id(&ka.1).cmp(by_id(&kb.1)))
    });
    picked
        .into_iter()
        .map(|(k, e)| (pick(k).expect("picked"), e))
        .collect()
}

/// Node names by id, and every caller -> callee edge with its weight: of
/// the whole graph, or (`kept`) of the graph of those nodes alone, where an
/// edge joins two kept nodes across the ones left out between them (pprof's
/// residual edges, which its graph rebuilt from the kept nodes has).
pub(crate) fn call_edges<S: ProfileSamples>(
    source: &S,
    index: usize,
    selection: &Selection,
    kept: Option<&std::collections::HashSet<u32>>,
) -> CallGraph {
    let p: &Profile = source.profile();
    let frames = crate::frames_for(source, selection);
    let fields = crate::sample_fields(selection);
    let mut edges = Edges::default();
    let (mut buffer, mut stack) = (Sample::new(), Vec::new());
    let mut seen: std::collections::HashSet<(u32, u32)> = Default::default();
    for n in 0..source.sample_count() {
        let s = source.sample_fields(n, fields, &mut buffer);
        let Some(&v) = s.value.get(index) else {
            continue;
        };
        // As pprof's graph: a sample counts when it has a value or a
        // `--mean` divisor.
        let d = crate::mean_divisor(selection, &s.value);
        if (v == 0 && d == 0) || !frames.select(p, &s.location_id, &s.label, &mut stack) {
            continue;
        }
        seen.clear();
        // Root to leaf: each kept frame is called by the kept one before it,
        // over the frames left out between them (a residual edge).
        // In a call tree, pprof joins the edges over the nodes it leaves
        // out, and such an edge is inline only if each of them was.
        let (mut caller, mut residual): (Option<u32>, bool) = (None, false);
        let mut skipped_inline = true;
        for &frame in stack.iter().rev() {
            let node = frames.node(frame);
            if kept.is_some_and(|kept| !kept.contains(&node)) {
                residual = true;
                skipped_inline &= frames.inlined(frame) || !selection.call_tree;
                continue;
            }
            // pprof draws no edge from a node to itself (recursion).
            if let Some(from) = caller.filter(|from| *from != node) {
                if seen.insert((from, node)) {
                    let how = (frames.inlined(frame) && skipped_inline, residual);
                    edges.add(from, node, (i128::from(v), d), how);
                }
            }
            caller = Some(node);
            residual = false;
            skipped_inline = true;
        }
    }
    CallGraph {
        names: frames.names,
        parts: frames.parts,
        edges,
    }
}

/// Every node's name and parts by id, and the edges between them.
pub(crate) struct CallGraph {
    pub names: Vec<String>,
    pub parts: Vec<crate::frames::NodeParts>,
    pub edges: Edges,
}
