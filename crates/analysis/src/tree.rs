//! `go tool pprof -tree`: every node of the trimmed call graph with its
//! callers and callees and the value on each edge. pprof's `printTree`,
//! which `-peek` also prints, over the graph `-tree` trims: nodes whose
//! cum is under the node fraction dropped, at most `node_count` nodes (the
//! heaviest by flat), edges rebuilt among the nodes kept (an edge may pass
//! over nodes left out) and those under the edge fraction dropped.

use std::collections::HashSet;

use protoprof_model_pprof::samples::ProfileSamples;

use crate::peek::{call_edges, nodes_with_edges, Peek};
use crate::report::{top_report, TopOptions};
use crate::selection::Selection;
use crate::top::Order;

/// How `tree` trims, with pprof's defaults.
#[derive(Debug, Clone)]
pub struct TreeOptions {
    /// At most this many nodes (0: all), pprof's `-nodecount` (default 80
    /// for `-tree`).
    pub node_count: usize,
    /// Nodes whose cum is below this share of the total are dropped,
    /// pprof's `-nodefraction` (default 0.005).
    pub node_fraction: f64,
    /// Edges whose value is below this share of the total are dropped,
    /// pprof's `-edgefraction` (default 0.001).
    pub edge_fraction: f64,
    /// The unit values are printed in (see [`TopOptions::unit`]).
    pub unit: String,
}

impl Default for TreeOptions {
    fn default() -> Self {
        TreeOptions {
            node_count: 80,
            node_fraction: 0.005,
            edge_fraction: 0.001,
            unit: "minimum".into(),
        }
    }
}

/// The tree report of sample type `index` of the samples `selection` keeps:
/// printed by [`Peek::text`] as `go tool pprof -tree` prints it.
pub fn tree<S: ProfileSamples>(
    source: &S,
    index: usize,
    selection: &Selection,
    options: &TreeOptions,
) -> Peek {
    let top = TopOptions {
        order: Order::Flat,
        node_count: options.node_count,
        node_fraction: options.node_fraction,
        unit: options.unit.clone(),
    };
    let report = top_report(source, index, selection, &top);
    let kept: HashSet<u32> = report.rows.iter().map(|row| row.node).collect();
    let graph = call_edges(source, index, selection, Some(&kept));
    let edge_cutoff = (report.graph_total as f64 * options.edge_fraction).abs() as i64;
    let nodes = nodes_with_edges(&report, &graph.names, &graph.edges, |_| true, edge_cutoff);
    Peek { report, nodes }
}
