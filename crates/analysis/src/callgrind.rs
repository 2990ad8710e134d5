//! `go tool pprof -callgrind`: the call graph in callgrind's format, for
//! KCachegrind and qcachegrind. pprof's `printCallgrind`: every node at
//! address granularity (nothing trimmed), in pprof's node order, with its
//! object file, file and function (names compressed to `(N)` after their
//! first use), address (relative to the previous node's when shorter),
//! line and flat value, then its calls with the value on each edge.

use std::collections::HashMap;
use std::fmt::Write as _;

use protoprof_model_pprof::samples::ProfileSamples;

use crate::frames::NodeParts;
use crate::peek::{call_edges, sorted_ids};
use crate::report::{top_report, TopOptions};
use crate::selection::{Granularity, Selection};
use crate::top::Order;
use crate::units::scale;

/// The callgrind file of sample type `index` of the samples `selection`
/// keeps (its granularity is taken as addresses, inlined frames kept, as
/// pprof forces them).
pub fn callgrind<S: ProfileSamples>(source: &S, index: usize, selection: &Selection) -> String {
    let selection = Selection {
        granularity: Granularity::Addresses,
        noinlines: false,
        object_names: true,
        ..selection.clone()
    };
    let options = TopOptions {
        order: Order::Flat,
        node_count: 0,
        node_fraction: 0.0,
        unit: "minimum".into(),
    };
    let report = top_report(source, index, &selection, &options);
    let graph = call_edges(source, index, &selection, None);
    let (sample_type, sample_unit) = &report.sample_type;
    let unit = smallest_unit(&report, sample_unit);
    let mut out = format!("positions: instr line\nevents: {sample_type}({unit})\n");
    let called_as = disambiguated_names(&report.rows, &graph.parts);
    let mut names = Compressed::default();
    let mut previous: Option<&NodeParts> = None;
    for row in &report.rows {
        let node = &graph.parts[row.node as usize];
        let same_place = previous.is_some_and(|p| {
            p.objfile == node.objfile && p.file == node.file && p.function == node.function
        });
        if !same_place {
            out.push('\n');
            writeln!(out, "ob={}", names.objfiles.name(node.objfile.as_deref())).unwrap();
            writeln!(out, "fl={}", names.files.name(node.file.as_deref())).unwrap();
            writeln!(out, "fn={}", names.functions.name(node.function.as_deref())).unwrap();
        }
        let flat = scale(row.flat, sample_unit, &unit).0 as i64;
        let line = node.line.unwrap_or(0);
        writeln!(
            out,
            "{} {line} {flat}",
            address(previous, node.address_value)
        )
        .unwrap();
        let pick = |&(from, to): &(u32, u32)| (from == row.node).then_some(to);
        for (callee_id, edge) in sorted_ids(&graph.edges, pick, &graph.names) {
            let callee = &graph.parts[callee_id as usize];
            writeln!(out, "cfl={}", names.files.name(callee.file.as_deref())).unwrap();
            let callee_name = called_as.get(&callee_id).map(String::as_str);
            writeln!(out, "cfn={}", names.functions.name(callee_name)).unwrap();
            let line = callee.line.unwrap_or(0);
            writeln!(
                out,
                "calls=0 {} {line}",
                address(previous, callee.address_value)
            )
            .unwrap();
            let value = scale(crate::saturate(edge.weight), sample_unit, &unit).0 as i64;
            writeln!(out, "* * {value}").unwrap();
        }
        previous = Some(node);
    }
    out
}

/// pprof's `getDisambiguatedNames`: a node's function name, with ` [i/n]`
/// when nodes of one file and name belong to n functions (other object
/// files or start lines), i numbering them in node order.
fn disambiguated_names(
    rows: &[crate::FunctionTotals],
    parts: &[NodeParts],
) -> HashMap<u32, String> {
    let mut functions: HashMap<(Option<&str>, Option<&str>), Vec<&str>> = HashMap::new();
    for row in rows {
        let node = &parts[row.node as usize];
        let seen = functions
            .entry((node.file.as_deref(), node.function.as_deref()))
            .or_default();
        if !seen.contains(&node.function_key.as_str()) {
            seen.push(&node.function_key);
        }
    }
    rows.iter()
        .map(|row| {
            let node = &parts[row.node as usize];
            let mut name = node.function.clone().unwrap_or_default();
            let of_name = &functions[&(node.file.as_deref(), node.function.as_deref())];
            if of_name.len() > 1 {
                let i = of_name
                    .iter()
                    .position(|k| *k == node.function_key)
                    .expect("recorded");
                name.push_str(&format!(" [{}/{}]", i + 1, of_name.len()));
            }
            (row.node, name)
        })
        .collect()
}

/// pprof's `selectOutputUnit` for callgrind, which holds only integers:
/// the unit of the smallest nonzero value (flat, else cum), without the
/// step up the other reports take when the total is a hundred times larger.
fn smallest_unit(report: &crate::TopReport, sample_unit: &str) -> String {
    // pprof leaves the unit unchosen, as "minimum", for an empty graph.
    if report.rows.is_empty() {
        return "minimum".into();
    }
    let smallest = report
        .rows
        .iter()
        .map(|r| if r.flat != 0 { r.flat } else { r.cum })
        .map(i64::unsigned_abs)
        .filter(|v| *v > 0)
        .min()
        .map_or(report.total, |v| v as i64);
    let unit = scale(smallest, sample_unit, "minimum").1;
    if unit.is_empty() {
        sample_unit.to_string()
    } else {
        unit
    }
}

/// pprof's `callgrindAddress`: `*` for the previous node's address, a
/// signed offset from it when shorter than the address, else the address.
fn address(previous: Option<&NodeParts>, current: u64) -> String {
    let absolute = format!("{current:#x}");
    let Some(previous) = previous else {
        return absolute;
    };
    if previous.address_value == current {
        return "*".into();
    }
    let relative = format!("{:+}", current.wrapping_sub(previous.address_value) as i64);
    if relative.len() < absolute.len() {
        relative
    } else {
        absolute
    }
}

/// The three name tables of callgrind's compression.
#[derive(Default)]
struct Compressed {
    objfiles: NameTable,
    files: NameTable,
    functions: NameTable,
}

/// pprof's `callgrindName`: `(N) name` the first time, `(N)` after; an
/// empty name stays empty.
#[derive(Default)]
struct NameTable(HashMap<String, usize>);

impl NameTable {
    fn name(&mut self, name: Option<&str>) -> String {
        let Some(name) = name.filter(|n| !n.is_empty()) else {
            return String::new();
        };
        if let Some(id) = self.0.get(name) {
            return format!("({id})");
        }
        let id = self.0.len() + 1;
        self.0.insert(name.to_string(), id);
        format!("({id}) {name}")
    }
}
