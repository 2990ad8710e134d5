//! The call graph in Graphviz's DOT language, as `go tool pprof -dot`
//! writes it. The graph is pprof's visual one (`newTrimmedGraph` for DOT):
//! nodes under the node fraction dropped; the rest ordered by pprof's
//! entropy score (entry and leaf nodes, and nodes whose edges spread their
//! value, first), the first `node_count` kept; edges rebuilt among them
//! (residual where they pass over nodes left out), those under the edge
//! fraction dropped, and residual edges removed where another path joins
//! the same nodes. Each node is labelled with its name split at package
//! separators and its flat and cum values, sized by flat and coloured by
//! cum; each edge weighted, widened and coloured by its value.
//!
//! Beside each node go pprof's label boxes (its "nodelets", `dot_tags`):
//! a box per label set and per allocation size, which also count against
//! the node count.

use std::collections::{HashMap, HashSet};
use std::fmt::Write;

use protoprof_model_meta::StringTable;
use protoprof_model_pprof::samples::ProfileSamples;

use crate::demangle::shortened_name;
use crate::dot_tags::{self, NodeTags};
use crate::frames::NodeParts;
use crate::peek::{call_edges, CallGraph, Edge};
use crate::report::{output_unit, percentage, top_report, TopOptions, TopReport};
use crate::selection::Selection;
use crate::top::{FunctionTotals, Order};
use crate::tree::TreeOptions;

/// The DOT text of the call graph of sample type `index` of the samples
/// `selection` keeps, trimmed as `options` say.
pub fn call_graph_dot<S: ProfileSamples>(
    source: &S,
    index: usize,
    selection: &Selection,
    options: &TreeOptions,
) -> String {
    let p = source.profile();
    let graph = visual_graph(source, index, selection, options);
    let report = &graph.report;
    // pprof's title: the main mapping's file name.
    let title = p
        .mapping
        .first()
        .map(|m| p.string(m.filename))
        .filter(|file| !file.is_empty())
        .map(|file| file.rsplit('/').next().unwrap_or(file).to_string());
    let mut out = format!(
        "digraph \"{}\" {{\nnode [style=filled fillcolor=\"#f8f8f8\"]\n",
        title.as_deref().unwrap_or("unnamed")
    );
    out.push_str(&legend(
        &graph,
        &selection.active_filters(),
        title.as_deref(),
        p,
    ));
    let max_flat = report
        .rows
        .iter()
        .map(|n| n.flat.unsigned_abs())
        .max()
        .unwrap_or(0) as f64;
    let callers: HashSet<u32> = graph.edges.iter().map(|(from, _, _)| *from).collect();
    let mut boxed = HashSet::new();
    for (at, node) in report.rows.iter().enumerate() {
        let label = multiline_name(&graph.parts[node.node as usize]);
        out.push_str(&node_line(at + 1, (node, label), report, max_flat));
        if let Some(tags) = graph.tags.get(&node.node) {
            // Internal nodes show their tags' flat values, leaves their cum.
            let flat_tags = callers.contains(&node.node);
            let boxes = dot_tags::nodelets(at + 1, tags, flat_tags, report);
            if !boxes.is_empty() {
                boxed.insert(node.node);
            }
            out.push_str(&boxes);
        }
    }
    let at: HashMap<u32, usize> = report
        .rows
        .iter()
        .enumerate()
        .map(|(at, r)| (r.node, at))
        .collect();
    for (from, to, e) in &graph.edges {
        let names = (
            report.rows[at[from]].function.as_str(),
            report.rows[at[to]].function.as_str(),
        );
        let mut line = edge_line((at[from] + 1, at[to] + 1), e, names, report);
        if boxed.contains(from) {
            // pprof sets a node's callees further off when it has boxes.
            line.insert_str(line.len() - 2, " minlen=2");
        }
        out.push_str(&line);
    }
    out.push_str("}\n");
    out
}

/// pprof's visual graph: its nodes in order (as a report's rows) and its
/// edges, heaviest first.
struct VisualGraph {
    report: TopReport,
    edges: Vec<(u32, u32, Edge)>,
    /// Each node's label boxes, by node id.
    tags: HashMap<u32, NodeTags>,
    /// Each node's parts, by node id.
    parts: Vec<NodeParts>,
    dropped_edges: usize,
    /// The edge fraction's share of the total, as the legend states it.
    edge_cut: i64,
}

fn visual_graph<S: ProfileSamples>(
    source: &S,
    index: usize,
    selection: &Selection,
    options: &TreeOptions,
) -> VisualGraph {
    let top = TopOptions {
        order: Order::Flat,
        node_count: 0,
        node_fraction: options.node_fraction,
        unit: options.unit.clone(),
    };
    let mut report = top_report(source, index, selection, &top);
    let edge_cutoff = (report.graph_total as f64 * options.edge_fraction).abs() as i64;
    let kept = |rows: &[FunctionTotals]| rows.iter().map(|r| r.node).collect::<HashSet<u32>>();
    let mut graph = call_edges(source, index, selection, Some(&kept(&report.rows)));
    entropy_order(&mut report.rows, &graph);
    // With a node count, edges under the cut go before the nodes are
    // chosen; if every node stays, none is left for the count below.
    let node_cutoff = (report.graph_total as f64 * options.node_fraction).abs() as i64;
    let tags_of = |rows: &[FunctionTotals]| {
        let cut = (node_cutoff, options.unit.as_str());
        dot_tags::node_tags(source, (index, selection), rows, cut)
    };
    let mut tags = tags_of(&report.rows);
    let mut edges_trimmed_before = false;
    if options.node_count > 0 {
        edges_trimmed_before = true;
        // pprof counts each node's label boxes against the node count.
        let limit = dot_tags::visual_node_limit(&report.rows, &tags, options.node_count);
        if limit < report.rows.len() {
            report.rows.truncate(limit);
            graph = call_edges(source, index, selection, Some(&kept(&report.rows)));
            entropy_order(&mut report.rows, &graph);
            tags = tags_of(&report.rows);
            edges_trimmed_before = false;
        }
    }
    let sample_unit = report.sample_type.1.clone();
    report.output_unit = output_unit(
        &report.rows,
        report.total,
        &sample_unit,
        (&options.unit, report.ratio),
    );
    let mut edges: Vec<(u32, u32, Edge)> = graph
        .edges
        .iter()
        .map(|(&(from, to), e)| (from, to, e.clone()))
        .collect();
    let before = edges.len();
    edges.retain(|(_, _, e)| e.weight.unsigned_abs() >= u128::from(edge_cutoff.unsigned_abs()));
    let dropped_edges = if edges_trimmed_before {
        0
    } else {
        before - edges.len()
    };
    sort_edges(&mut edges, &graph.names);
    // pprof keeps a call tree's edges as they are.
    if !selection.call_tree {
        remove_redundant_edges(&mut edges, &report.rows);
    }
    let edge_cut = (report.total as f64 * options.edge_fraction).abs() as i64;
    VisualGraph {
        report,
        edges,
        tags,
        parts: graph.parts,
        dropped_edges,
        edge_cut,
    }
}

/// pprof's `EntropyOrder`: by `entropyScore`'s absolute value, highest
/// first, then by name.
fn entropy_order(rows: &mut [FunctionTotals], graph: &CallGraph) {
    let mut incoming: HashMap<u32, Vec<i128>> = HashMap::new();
    let mut outgoing: HashMap<u32, Vec<i128>> = HashMap::new();
    for (&(from, to), e) in graph.edges.iter() {
        outgoing.entry(from).or_default().push(e.weight);
        incoming.entry(to).or_default().push(e.weight);
    }
    // pprof's score reads the values as summed, before `--mean` divides.
    let score = |r: &FunctionTotals| -> i64 {
        let (flat, cum) = (r.flat_undivided, r.cum_undivided);
        let mut score = 0.0;
        score += match incoming.get(&r.node) {
            None => 1.0,
            Some(weights) => edge_entropy(weights, 0),
        };
        score += match outgoing.get(&r.node) {
            None => 1.0,
            Some(weights) => edge_entropy(weights, flat),
        };
        // As Go computes it on amd64: a NaN score (an edge of weight 0
        // gives 0 × log2 0) or one out of range becomes i64::MIN, and the
        // sum wraps.
        go_int64(score * cum as f64).wrapping_add(flat)
    };
    // pprof orders by the score's absolute value, as Go takes it: the
    // negation of i64::MIN is itself, so such a node goes last.
    let go_abs = |v: i64| if v < 0 { v.wrapping_neg() } else { v };
    let scores: HashMap<u32, i64> = rows.iter().map(|r| (r.node, go_abs(score(r)))).collect();
    rows.sort_by(|a, b| {
        scores[&b.node]
            .cmp(&scores[&a.node])
            .then_with(|| a.function.cmp(&b.function))
    });
}

/// Go's conversion of a float to int64 on amd64 (`CVTTSD2SQ`): truncated
/// toward zero, and `i64::MIN` for NaN or a value out of range (Rust's
/// `as` saturates instead, and gives 0 for NaN).
fn go_int64(v: f64) -> i64 {
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    match v.is_nan() || !(-LIMIT..LIMIT).contains(&v) {
        true => i64::MIN,
        false => v as i64,
    }
}

/// pprof's `edgeEntropyScore`: the entropy of the shares of a node's edges
/// (and of its own value, `self_value`).
fn edge_entropy(weights: &[i128], self_value: i64) -> f64 {
    let total: i128 = i128::from(self_value)
        + weights
            .iter()
            .filter(|w| **w > 0)
            .map(|w| w.abs())
            .sum::<i128>();
    if total == 0 {
        return 0.0;
    }
    let term = |v: i128| {
        let share = v.abs() as f64 / total as f64;
        -share * share.log2()
    };
    let mut score: f64 = weights.iter().map(|&w| term(w)).sum();
    if self_value > 0 {
        score += term(i128::from(self_value));
    }
    score
}

/// pprof's edge order: heaviest first, then by caller and callee name.
fn sort_edges(edges: &mut [(u32, u32, Edge)], names: &[String]) {
    edges.sort_by(|a, b| {
        b.2.weight
            .abs()
            .cmp(&a.2.weight.abs())
            .then_with(|| names[a.0 as usize].cmp(&names[b.0 as usize]))
            .then_with(|| names[a.1 as usize].cmp(&names[b.1 as usize]))
    });
}

/// pprof's `RemoveRedundantEdges`: walking the nodes from the last, a
/// node's lightest incoming edges, while they are residual, go when their
/// caller reaches the node another way.
fn remove_redundant_edges(edges: &mut Vec<(u32, u32, Edge)>, rows: &[FunctionTotals]) {
    let mut removed: HashSet<(u32, u32)> = HashSet::new();
    for row in rows.iter().rev() {
        // `edges` is in pprof's order, so a node's incoming edges are too.
        let incoming: Vec<(u32, u32, bool)> = edges
            .iter()
            .filter(|(_, to, _)| *to == row.node)
            .map(|(from, to, e)| (*from, *to, e.residual))
            .collect();
        for &(from, to, residual) in incoming.iter().rev() {
            if !residual {
                break;
            }
            if reached_otherwise(edges, &removed, (from, to)) {
                removed.insert((from, to));
            }
        }
    }
    edges.retain(|(from, to, _)| !removed.contains(&(*from, *to)));
}

/// Whether `edge`'s caller reaches its callee by other edges (pprof's
/// `isRedundantEdge`: a search back from the callee).
fn reached_otherwise(
    edges: &[(u32, u32, Edge)],
    removed: &HashSet<(u32, u32)>,
    (source, target): (u32, u32),
) -> bool {
    let mut seen: HashSet<u32> = HashSet::from([target]);
    let mut queue = vec![target];
    while let Some(node) = queue.pop() {
        for &(from, to, _) in edges {
            if to != node || (from, to) == (source, target) || removed.contains(&(from, to)) {
                continue;
            }
            if seen.contains(&from) {
                continue;
            }
            if from == source {
                return true;
            }
            seen.insert(from);
            queue.push(from);
        }
    }
    false
}

/// The legend box: the report's header lines, the edges dropped, and
/// pprof's pointer to how to read the graph.
fn legend(
    graph: &VisualGraph,
    filters: &[String],
    title: Option<&str>,
    p: &protoprof_model_pprof::perftools::profiles::Profile,
) -> String {
    let report = &graph.report;
    let mut lines = report.header(p, filters);
    if graph.dropped_edges > 0 && report.total != 0 {
        let edges = if graph.dropped_edges > 1 {
            "edges"
        } else {
            "edge"
        };
        let at = lines
            .iter()
            .position(|l| l.starts_with("Showing top "))
            .unwrap_or(lines.len());
        lines.insert(
            at,
            format!(
                "Dropped {} {edges} (freq <= {})",
                graph.dropped_edges,
                report.format_value(graph.edge_cut)
            ),
        );
    }
    lines.push("\nSee https://git.io/JfYMW for how to read the graph".into());
    let lines: Vec<String> = lines.iter().map(|l| escape(l)).collect();
    let Some(first) = lines.first() else {
        return String::new();
    };
    let tooltip = title
        .map(|t| format!(" tooltip=\"{t}\""))
        .unwrap_or_default();
    format!(
        "subgraph cluster_L {{ \"{first}\" [shape=box fontsize=16 label=\"{}\\l\"{tooltip}] }}\n",
        lines.join("\\l")
    )
}

fn node_line(
    id: usize,
    (node, mut label): (&FunctionTotals, String),
    report: &TopReport,
    max_flat: f64,
) -> String {
    let total = report.total;
    let flat = report.format_value(node.flat);
    match node.flat {
        0 => label.push('0'),
        v => label.push_str(&format!("{flat} ({})", percentage(v, total).trim())),
    }
    let mut cum = flat.clone();
    if node.cum != node.flat {
        label.push_str(if node.flat != 0 { "\\n" } else { " " });
        cum = report.format_value(node.cum);
        label.push_str(&format!(
            "of {cum} ({})",
            percentage(node.cum, total).trim()
        ));
    }
    let mut font_size = 8;
    if max_flat != 0.0 && node.flat != 0 && node.flat.unsigned_abs() as f64 <= max_flat {
        font_size += (16.0 * (node.flat.unsigned_abs() as f64 / max_flat).sqrt()).ceil() as i32;
    }
    let share = node.cum as f64 / total.unsigned_abs() as f64;
    format!(
        "N{id} [label=\"{label}\" id=\"node{id}\" fontsize={font_size} shape=box tooltip=\"{} ({cum})\" color=\"{}\" fillcolor=\"{}\"]\n",
        escape(&node.function),
        dot_color(share, false),
        dot_color(share, true),
    )
}

fn edge_line(
    (from, to): (usize, usize),
    e: &Edge,
    (caller, callee): (&str, &str),
    report: &TopReport,
) -> String {
    let total = report.total;
    // pprof's `WeightValue`: the mean, with `--mean`.
    let weight = crate::saturate(crate::divided(e.weight, e.divisor));
    let value = report.format_value(weight);
    let inline = if e.inline { "\\n (inline)" } else { "" };
    let mut attributes = format!("label=\" {value}{inline}\"");
    if total != 0 {
        let share = |scale: i64, cap: u64| {
            1 + (weight.saturating_mul(scale) / total)
                .unsigned_abs()
                .min(cap)
        };
        if let weight @ 2.. = share(100, 100) {
            let _ = write!(attributes, " weight={weight}");
        }
        if let width @ 2.. = share(5, 5) {
            let _ = write!(attributes, " penwidth={width}");
        }
        let score = weight as f64 / total.unsigned_abs() as f64;
        let _ = write!(attributes, " color=\"{}\"", dot_color(score, false));
    }
    let arrow = if e.residual { "..." } else { "->" };
    let tooltip = format!(
        "\"{} {arrow} {} ({value})\"",
        escape(caller),
        escape(callee)
    );
    let _ = write!(attributes, " tooltip={tooltip} labeltooltip={tooltip}");
    if e.residual {
        attributes.push_str(" style=\"dotted\"");
    }
    format!("N{from} -> N{to} [{attributes}]\n")
}

/// A node's name as pprof's `multilinePrintableName` writes it in a
/// label, one part per line: the address, the function's name shortened
/// and split at `::` and `.` (keeping Go's `[...]`), the file's base name
/// with the line, or the object file.
fn multiline_name(parts: &NodeParts) -> String {
    let mut lines = Vec::new();
    if parts.address_value != 0 {
        lines.push(format!("{:016x}", parts.address_value));
    }
    let name = parts.function.as_deref().unwrap_or("");
    if !name.is_empty() {
        let name = escape(&shortened_name(name))
            .replace("::", "\\n")
            .replace("[...]", "[…]")
            .replace('.', "\\n");
        lines.push(name);
    }
    let file = parts
        .file
        .as_deref()
        .map(|f| f.rsplit('/').next().unwrap_or(f));
    match (parts.line, file) {
        (Some(line), file) => lines.push(format!("{}:{line}", file.unwrap_or(""))),
        (None, Some(file)) => lines.push(file.to_string()),
        (None, None) if !name.is_empty() => {}
        (None, None) => lines.push(match parts.objfile.as_deref() {
            Some(objfile) => format!("[{}]", objfile.rsplit('/').next().unwrap_or(objfile)),
            None => "<unknown>".to_string(),
        }),
    }
    lines.join("\\n") + "\\n"
}

/// pprof's `escapeForDot`: backslashes and quotes escaped, newlines as
/// left-justified line breaks.
fn escape(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\l")
}

/// pprof's `dotColor`: red for a positive share, green for a negative one,
/// grey near zero; light for backgrounds.
fn dot_color(score: f64, background: bool) -> String {
    const SHIFT: f64 = 0.7;
    let (mut saturation, value) = match background {
        true => (0.1, 0.93),
        false => (1.0, 0.7),
    };
    let mut score = score.clamp(-1.0, 1.0);
    if score.abs() < 0.2 {
        saturation *= score.abs() / 0.2;
    }
    score = score.signum() * score.abs().powf(1.0 - SHIFT);
    let (r, g) = match score < 0.0 {
        true => (value * (1.0 + saturation * score), value),
        false => (value, value * (1.0 - saturation * score)),
    };
    let b = value * (1.0 - saturation);
    let byte = |c: f64| (c * 255.0) as u8;
    format!("#{:02x}{:02x}{:02x}", byte(r), byte(g), byte(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_are_pprofs() {
        // Printed by pprof's dotColor, run on these scores.
        let expect = [
            (1.0, "#b20000", "#edd5d5"),
            (0.0, "#b2b2b2", "#ededed"),
            (-0.5, "#21b200", "#d9edd5"),
            (0.1, "#b28559", "#ede7e1"),
            (0.33, "#b23200", "#eddcd5"),
        ];
        for (score, fg, bg) in expect {
            assert_eq!(
                (
                    dot_color(score, false).as_str(),
                    dot_color(score, true).as_str()
                ),
                (fg, bg)
            );
        }
    }

    #[test]
    fn names_split_at_package_separators() {
        let named = |name: &str| NodeParts {
            function: Some(name.to_string()),
            ..Default::default()
        };
        assert_eq!(
            multiline_name(&named("main.(*T).run")),
            "main\\n(*T)\\nrun\\n"
        );
        assert_eq!(multiline_name(&named("a::b\"c")), "a\\nb\\\"c\\n");
        assert_eq!(
            multiline_name(&named("github.com/x/y/v2/pkg.(*T).F")),
            "pkg\\n(*T)\\nF\\n"
        );
        let java = named("java.lang.String.valueOf(int)");
        assert_eq!(multiline_name(&java), "String\\nvalueOf\\n");
        let at_line = NodeParts {
            file: Some("/src/pkg/main.go".into()),
            line: Some(7),
            address_value: 0x401000,
            ..named("main.f")
        };
        assert_eq!(
            multiline_name(&at_line),
            "0000000000401000\\nmain\\nf\\nmain.go:7\\n"
        );
    }
}
