//! A flame graph as a tree of call paths: what a flame graph draws, each
//! node one frame reached by one path from a root, its value the samples
//! whose stack passes through it.
//!
//! The tree is built from the same stacks as [`crate::folded_stacks`], so
//! its widths and the collapsed lines agree; a web page draws it, and
//! [`FlameGraph::pruned`] leaves out what is too narrow to see.

use std::collections::HashMap;

use protoprof_model_pprof::samples::ProfileSamples;
use regex::Regex;
use serde::Serialize;

use crate::saturate;
use crate::selection::Selection;

/// One node of a [`FlameGraph`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct FlameNode {
    /// The parent node's position, or `u32::MAX` for a root.
    pub parent: u32,
    /// The frame's name, a position in [`FlameGraph::names`].
    pub name: u32,
    /// The samples whose stack passes through this node (pprof's cum).
    pub value: i64,
    /// The samples whose stack ends here (pprof's flat).
    pub self_value: i64,
}

/// Call paths with their values, nodes in depth-first order (a parent
/// before its children), children by decreasing value, then by name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FlameGraph {
    /// Frame names, each once.
    pub names: Vec<String>,
    /// The nodes.
    pub nodes: Vec<FlameNode>,
    /// Every selected sample's value summed: the width of the whole graph.
    pub total: i64,
}

/// Marks a root's parent.
pub const NO_PARENT: u32 = u32::MAX;

/// The flame graph of sample type `index` of the samples `selection` keeps.
pub fn flame_graph<S: ProfileSamples>(
    source: &S,
    index: usize,
    selection: &Selection,
) -> FlameGraph {
    let crate::folded::FrameStacks { names, stacks } =
        crate::folded::stacks_by_frames(source, index, selection);
    graph_at_least(stacks, names, 0).0
}

/// The callers of the frames whose name `rx` matches, as a flame graph
/// turned over: each stack holding one is cut at its innermost match and
/// read leaf to root, so the matching frame is the root and its callers
/// grow from it (a flame graph "pivoted" on a function).
pub fn callers_graph<S: ProfileSamples>(
    source: &S,
    index: usize,
    selection: &Selection,
    rx: &Regex,
) -> FlameGraph {
    let stacks = crate::folded::stacks_by_frames(source, index, selection);
    let matches: Vec<bool> = stacks.names.iter().map(|n| rx.is_match(n)).collect();
    let turned: Vec<(Vec<u32>, i64)> = stacks
        .stacks
        .iter()
        .filter_map(|(stack, v)| {
            let innermost = stack.iter().rposition(|&f| matches[f as usize])?;
            Some((stack[..=innermost].iter().rev().copied().collect(), *v))
        })
        .collect();
    graph_at_least(turned, stacks.names, 0).0
}

/// The graph of `stacks` (root first; each once) without the nodes whose
/// value's magnitude is under `min_value` (nor their descendants), and how
/// many nodes that leaves out. The tree is never written whole.
fn graph_at_least(
    mut stacks: Vec<(Vec<u32>, i64)>,
    names: Vec<String>,
    min_value: u64,
) -> (FlameGraph, usize) {
    stacks.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    graph_of_sorted(stacks.iter().map(|(s, v)| (&s[..], *v)), names, min_value)
}

/// [`graph_at_least`] of stacks already sorted by their frames.
fn graph_of_sorted<'s>(
    stacks: impl Iterator<Item = (&'s [u32], i64)>,
    names: Vec<String>,
    min_value: u64,
) -> (FlameGraph, usize) {
    let (tree, total, dropped) = Tree::of(stacks, min_value);
    let mut graph = FlameGraph {
        names,
        nodes: Vec::new(),
        total: saturate(total),
    };
    tree.write_preorder(&mut graph);
    (graph, dropped)
}

/// [`flame_graph`] without the nodes narrower than `min_share` of the
/// total (`pruned` of the whole graph, without making it first: a large
/// profile's tree has millions of nodes, and a page draws thousands), and
/// how many nodes were left out.
pub fn flame_graph_at_least<S: ProfileSamples>(
    source: &S,
    index: usize,
    selection: &Selection,
    min_share: f64,
) -> (FlameGraph, usize) {
    let mut distinct = crate::stack_set::StackSet::default();
    let names = crate::folded::for_each_stack(source, index, selection, |stack, value| {
        distinct.add(stack, value)
    });
    let sorted = distinct.sorted();
    let total: i128 = sorted.iter().map(|(_, v)| v).sum();
    let min_value = ((saturate(total).unsigned_abs() as f64 * min_share) as u64).max(1);
    let stacks = sorted.iter().map(|(stack, v)| (stack, saturate(v)));
    let (graph, left_out) = graph_of_sorted(stacks, names, min_value);
    // Drops the names no kept node uses.
    (graph.pruned(min_value as i64), left_out)
}

impl FlameGraph {
    /// The graph without the nodes whose value's magnitude is under
    /// `min_value` (and so without their descendants); names no node uses
    /// are dropped too.
    pub fn pruned(&self, min_value: i64) -> FlameGraph {
        let mut kept: Vec<u32> = vec![NO_PARENT; self.nodes.len()];
        let mut name_of: HashMap<u32, u32> = HashMap::new();
        let mut out = FlameGraph {
            total: self.total,
            ..FlameGraph::default()
        };
        for (at, node) in self.nodes.iter().enumerate() {
            let parent = match node.parent {
                NO_PARENT => NO_PARENT,
                p => match kept[p as usize] {
                    NO_PARENT => continue,
                    p => p,
                },
            };
            if node.value.unsigned_abs() < min_value.unsigned_abs() {
                continue;
            }
            let next = name_of.len() as u32;
            let name = *name_of.entry(node.name).or_insert_with(|| {
                out.names.push(self.names[node.name as usize].clone());
                next
            });
            kept[at] = out.nodes.len() as u32;
            out.nodes.push(FlameNode {
                parent,
                name,
                ..*node
            });
        }
        out
    }

    /// For each node, the value of the node of `base` at the same call path
    /// (the same names from the root), or 0 where `base` has no such path.
    pub fn values_in(&self, base: &FlameGraph) -> Vec<i64> {
        let mut base_at: HashMap<(u32, &str), usize> = HashMap::new();
        for (at, node) in base.nodes.iter().enumerate() {
            base_at.insert((node.parent, base.names[node.name as usize].as_str()), at);
        }
        let mut matched: Vec<u32> = vec![NO_PARENT; self.nodes.len()];
        let mut values = vec![0; self.nodes.len()];
        for (at, node) in self.nodes.iter().enumerate() {
            let parent = match node.parent {
                NO_PARENT => Some(NO_PARENT),
                p => Some(matched[p as usize]).filter(|&m| m != NO_PARENT),
            };
            let Some(parent) = parent else { continue };
            let name = self.names[node.name as usize].as_str();
            if let Some(&b) = base_at.get(&(parent, name)) {
                matched[at] = b as u32;
                values[at] = base.nodes[b].value;
            }
        }
        values
    }
}

/// Every call path's node, made from the stacks in sorted order: stacks
/// that share a path from the root are neighbours then, so each node is
/// made once, when the first stack through it comes, with no map from
/// (parent, frame) to node, and is complete once a stack goes elsewhere.
/// Sums saturate at the range of `i64`.
struct Tree {
    /// Nodes in the order made (a parent before its children).
    nodes: Vec<TreeNode>,
}

struct TreeNode {
    parent: u32,
    frame: u32,
    value: i64,
    self_value: i64,
}

impl Tree {
    /// The tree of `stacks` (sorted by their frames, each once), their
    /// values summed, and how many nodes were
    /// under `min_value`: each is dropped with everything below it as
    /// soon as no stack left can reach it (as [`FlameGraph::pruned`] drops
    /// them), so a large profile's narrow paths are never all held.
    fn of<'s>(
        stacks: impl Iterator<Item = (&'s [u32], i64)>,
        min_value: u64,
    ) -> (Tree, i128, usize) {
        let mut tree = Tree { nodes: Vec::new() };
        let (mut path, mut previous): (Vec<u32>, &[u32]) = (Vec::new(), &[]);
        let (mut total, mut dropped) = (0i128, 0usize);
        for (stack, value) in stacks {
            total += i128::from(value);
            let common = stack
                .iter()
                .zip(previous)
                .take_while(|(a, b)| a == b)
                .count();
            dropped += tree.close(&mut path, common, min_value);
            for &frame in &stack[common..] {
                let parent = path.last().copied().unwrap_or(NO_PARENT);
                path.push(tree.nodes.len() as u32);
                tree.nodes.push(TreeNode {
                    parent,
                    frame,
                    value: 0,
                    self_value: 0,
                });
            }
            for &at in &path {
                let node = &mut tree.nodes[at as usize];
                node.value = node.value.saturating_add(value);
            }
            if let Some(&leaf) = path.last() {
                let node = &mut tree.nodes[leaf as usize];
                node.self_value = node.self_value.saturating_add(value);
            }
            previous = stack;
        }
        dropped += tree.close(&mut path, 0, min_value);
        (tree, total, dropped)
    }

    /// Closes the nodes of `path` past its first `keep`, deepest first:
    /// no later stack passes through them. A closed node under
    /// `min_value` goes with its subtree, which is every node made after
    /// it. How many nodes went.
    fn close(&mut self, path: &mut Vec<u32>, keep: usize, min_value: u64) -> usize {
        let mut dropped = 0;
        while path.len() > keep {
            let at = path.pop().expect("longer than keep") as usize;
            if self.nodes[at].value.unsigned_abs() < min_value {
                dropped += self.nodes.len() - at;
                self.nodes.truncate(at);
            }
        }
        dropped
    }

    /// Appends the nodes to `graph` parent first, siblings by decreasing
    /// value, then by name.
    fn write_preorder(self, graph: &mut FlameGraph) {
        let nodes = self.nodes;
        // Each parent's children together, heaviest first: (parent + 1 or
        // 0 for a root, node).
        let mut edges: Vec<(u32, u32)> = (0..nodes.len() as u32)
            .map(|at| (nodes[at as usize].parent.wrapping_add(1), at))
            .collect();
        let names = &graph.names;
        edges.sort_unstable_by(|a, b| {
            let (x, y) = (&nodes[a.1 as usize], &nodes[b.1 as usize]);
            a.0.cmp(&b.0)
                .then_with(|| y.value.cmp(&x.value))
                .then_with(|| names[x.frame as usize].cmp(&names[y.frame as usize]))
        });
        let children = |parent: u32| {
            let from = edges.partition_point(|e| e.0 < parent);
            let to = from + edges[from..].partition_point(|e| e.0 == parent);
            from..to
        };
        // (edge, parent in the graph), last pushed first out.
        let mut pending: Vec<(usize, u32)> = children(0).rev().map(|e| (e, NO_PARENT)).collect();
        while let Some((edge, parent)) = pending.pop() {
            let node = edges[edge].1;
            let n = &nodes[node as usize];
            let at = graph.nodes.len() as u32;
            graph.nodes.push(FlameNode {
                parent,
                name: n.frame,
                value: n.value,
                self_value: n.self_value,
            });
            pending.extend(children(node + 1).rev().map(|e| (e, at)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(stacks: &[(&[u32], i64)], names: &[&str]) -> FlameGraph {
        let names = names.iter().map(|s| s.to_string()).collect();
        let stacks = stacks.iter().map(|(s, v)| (s.to_vec(), *v)).collect();
        graph_at_least(stacks, names, 0).0
    }

    fn paths(g: &FlameGraph) -> Vec<(String, i64, i64)> {
        let mut path_of: Vec<String> = Vec::new();
        g.nodes
            .iter()
            .map(|n| {
                let name = &g.names[n.name as usize];
                let path = match n.parent {
                    NO_PARENT => name.clone(),
                    p => format!("{};{name}", path_of[p as usize]),
                };
                path_of.push(path.clone());
                (path, n.value, n.self_value)
            })
            .collect()
    }

    #[test]
    fn a_graph_made_at_least_a_width_is_the_whole_graph_pruned() {
        let stacks: &[(&[u32], i64)] = &[
            (&[0, 1, 2], 5),
            (&[0, 1], 2),
            (&[0, 3], 9),
            (&[3], 1),
            (&[0, 3, 2], -4),
            (&[1, 2, 3], 3),
        ];
        let names: Vec<String> = ["main", "a", "b", "c"].map(String::from).to_vec();
        let full = graph(stacks, &["main", "a", "b", "c"]);
        for min in [1u64, 2, 3, 4, 5, 9, 20] {
            let owned = stacks.iter().map(|(s, v)| (s.to_vec(), *v)).collect();
            let (made, left_out) = graph_at_least(owned, names.clone(), min);
            let expected = full.pruned(min as i64);
            assert_eq!(made.pruned(min as i64), expected, "at least {min}");
            assert_eq!(
                left_out,
                full.nodes.len() - expected.nodes.len(),
                "at least {min}"
            );
        }
    }

    /// A profile of `stacks` (function numbers, leaf first) and values.
    fn profile(stacks: &[(&[u64], i64)]) -> protoprof_model_pprof::perftools::profiles::Profile {
        use protoprof_model_pprof::perftools::profiles::{
            Function, Line, Location, Profile, Sample, ValueType,
        };
        let mut p = Profile::new();
        p.string_table = ["", "cpu", "ns", "main", "a", "b", "c"]
            .map(String::from)
            .to_vec();
        let mut t = ValueType::new();
        (t.type_, t.unit) = (1, 2);
        p.sample_type.push(t);
        for id in 1..=4u64 {
            let mut f = Function::new();
            (f.id, f.name) = (id, id as i64 + 2);
            p.function.push(f);
            let mut l = Location::new();
            let mut line = Line::new();
            line.function_id = id;
            (l.id, l.line) = (id, vec![line]);
            p.location.push(l);
        }
        for (stack, value) in stacks {
            let mut s = Sample::new();
            (s.location_id, s.value) = (stack.to_vec(), vec![*value]);
            p.sample.push(s);
        }
        p
    }

    #[test]
    fn a_profiles_graph_at_least_a_share_is_its_whole_graph_pruned() {
        let p = profile(&[
            (&[3, 2, 1], 50),
            (&[2, 1], 20),
            (&[4, 1], 90),
            (&[4], 10),
            (&[3, 4, 1], -40),
            (&[3, 4, 1], 40),
            (&[4, 3, 2], 30),
            (&[3, 2, 1], 1),
        ]);
        let selection = Selection::default();
        let full = flame_graph(&p, 0, &selection);
        for share in [0.0, 0.01, 0.05, 0.2, 0.5] {
            let (made, left_out) = flame_graph_at_least(&p, 0, &selection, share);
            let min = ((full.total.unsigned_abs() as f64 * share) as i64).max(1);
            let expected = full.pruned(min);
            assert_eq!(made, expected, "share {share}");
            assert_eq!(
                left_out,
                full.nodes.len() - expected.nodes.len(),
                "share {share}"
            );
        }
    }

    #[test]
    fn nodes_sum_their_paths_parent_first_heaviest_first() {
        let g = graph(
            &[(&[0, 1, 2], 5), (&[0, 1], 2), (&[0, 3], 9), (&[3], 1)],
            &["main", "a", "b", "c"],
        );
        let expect = [
            ("main", 16, 0),
            ("main;c", 9, 9),
            ("main;a", 7, 2),
            ("main;a;b", 5, 5),
            ("c", 1, 1),
        ];
        let got = paths(&g);
        let got: Vec<(&str, i64, i64)> = got.iter().map(|(p, v, s)| (p.as_str(), *v, *s)).collect();
        assert_eq!(got, expect);
        assert_eq!(g.total, 17);
    }

    #[test]
    fn pruning_drops_narrow_nodes_with_their_children_and_unused_names() {
        let g = graph(&[(&[0, 1, 2], 5), (&[0, 3], 90)], &["main", "a", "b", "c"]);
        let pruned = g.pruned(10);
        assert_eq!(pruned.names, ["main", "c"]);
        assert_eq!(paths(&pruned).len(), 2);
        assert_eq!(pruned.total, 95);
    }

    #[test]
    fn base_values_follow_the_call_path_not_the_name() {
        let new = graph(&[(&[0, 1], 5), (&[2, 1], 3)], &["main", "a", "other"]);
        let base = graph(&[(&[0, 1], 4), (&[1], 7)], &["main", "a"]);
        // main 4, main;a 4, other 0, other;a 0 (base's root "a" is another path).
        let by_path: Vec<(String, i64)> = paths(&new)
            .into_iter()
            .zip(new.values_in(&base))
            .map(|((p, _, _), b)| (p, b))
            .collect();
        assert_eq!(
            by_path,
            [
                ("main".to_string(), 4),
                ("main;a".to_string(), 4),
                ("other".to_string(), 0),
                ("other;a".to_string(), 0)
            ]
        );
    }
}
