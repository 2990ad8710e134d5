//! The call graph in Graphviz's DOT language, as `go tool pprof -dot`
//! writes it: the nodes and edges of the trimmed graph ([`crate::tree()`]),
//! each node labelled with its name split at package separators, its flat
//! and cum values, sized by flat and coloured by cum; each edge weighted,
//! widened and coloured by its value; a legend of the report's header.

use std::fmt::Write;

use protoprof_model_pprof::perftools::profiles::Profile;

use crate::demangle::shortened_name;
use crate::peek::Peek;
use crate::report::percentage;

/// The DOT text of `graph` (a [`crate::tree()`] report of `p`), with the
/// active `filters` in its legend.
pub fn call_graph_dot(p: &Profile, graph: &Peek, filters: &[String]) -> String {
    let report = &graph.report;
    let total = report.total;
    let mut out =
        String::from("digraph \"unnamed\" {\nnode [style=filled fillcolor=\"#f8f8f8\"]\n");
    let legend: Vec<String> = report
        .header(p, filters)
        .iter()
        .map(|l| escape(l))
        .collect();
    if let Some(title) = legend.first() {
        let _ = writeln!(
            out,
            "subgraph cluster_L {{ \"{title}\" [shape=box fontsize=16 label=\"{}\\l\"] }}",
            legend.join("\\l")
        );
    }
    let max_flat = graph
        .nodes
        .iter()
        .map(|n| n.flat.unsigned_abs())
        .max()
        .unwrap_or(0) as f64;
    let id_of = |name: &str| graph.nodes.iter().position(|n| n.function == name);
    for (at, node) in graph.nodes.iter().enumerate() {
        let flat = report.format_value(node.flat);
        let mut label = multiline_name(&node.function);
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
        let share = node.cum as f64 / total.unsigned_abs().max(1) as f64;
        let _ = writeln!(
            out,
            "N{id} [label=\"{label}\" id=\"node{id}\" fontsize={font_size} shape=box tooltip=\"{} ({cum})\" color=\"{}\" fillcolor=\"{}\"]",
            escape(&node.function),
            dot_color(share, false),
            dot_color(share, true),
            id = at + 1,
        );
    }
    for (from, node) in graph.nodes.iter().enumerate() {
        for callee in &node.callees {
            let Some(to) = id_of(&callee.function) else {
                continue;
            };
            out.push_str(&edge(
                from + 1,
                to + 1,
                node.function.as_str(),
                callee,
                graph,
            ));
        }
    }
    out.push_str("}\n");
    out
}

fn edge(from: usize, to: usize, caller: &str, callee: &crate::PeekEdge, graph: &Peek) -> String {
    let report = &graph.report;
    let total = report.total;
    let value = report.format_value(callee.value);
    let inline = if callee.inline { "\\n (inline)" } else { "" };
    let mut attributes = format!("label=\" {value}{inline}\"");
    if total != 0 {
        let share = |scale: i64, cap: u64| {
            1 + (callee.value.saturating_mul(scale) / total)
                .unsigned_abs()
                .min(cap)
        };
        if let weight @ 2.. = share(100, 100) {
            let _ = write!(attributes, " weight={weight}");
        }
        if let width @ 2.. = share(5, 5) {
            let _ = write!(attributes, " penwidth={width}");
        }
        let score = callee.value as f64 / total.unsigned_abs() as f64;
        let _ = write!(attributes, " color=\"{}\"", dot_color(score, false));
    }
    let tooltip = format!(
        "\"{} -> {} ({value})\"",
        escape(caller),
        escape(&callee.function)
    );
    format!("N{from} -> N{to} [{attributes} tooltip={tooltip} labeltooltip={tooltip}]\n")
}

/// A name as pprof's `multilinePrintableName` writes it in a node's label:
/// shortened, split at `::` and `.` (keeping Go's `[...]`), one line each.
fn multiline_name(name: &str) -> String {
    let name = escape(&shortened_name(name))
        .replace("::", "\\n")
        .replace("[...]", "[…]")
        .replace('.', "\\n");
    name + "\\n"
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
        assert_eq!(multiline_name("main.(*T).run"), "main\\n(*T)\\nrun\\n");
        assert_eq!(multiline_name("a::b\"c"), "a\\nb\\\"c\\n");
        assert_eq!(
            multiline_name("github.com/x/y/v2/pkg.(*T).F"),
            "pkg\\n(*T)\\nF\\n"
        );
        assert_eq!(
            multiline_name("java.lang.String.valueOf(int)"),
            "String\\nvalueOf\\n"
        );
    }
}
