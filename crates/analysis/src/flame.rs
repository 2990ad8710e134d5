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
    graph_of(stacks.iter().map(|(stack, v)| (&stack[..], *v)), names)
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
    graph_of(
        turned.iter().map(|(stack, v)| (&stack[..], *v)),
        stacks.names,
    )
}

fn graph_of<'s>(paths: impl Iterator<Item = (&'s [u32], i64)>, names: Vec<String>) -> FlameGraph {
    let mut trie = Trie::default();
    let mut total: i128 = 0;
    for (stack, value) in paths {
        total += i128::from(value);
        trie.add(stack, value);
    }
    let mut graph = FlameGraph {
        names,
        nodes: Vec::with_capacity(trie.nodes.len()),
        total: saturate(total),
    };
    trie.write_preorder(&mut graph);
    graph
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

/// Call paths as they are added: children by frame.
#[derive(Default)]
struct Trie {
    /// (value, self value, children by frame).
    nodes: Vec<(i128, i128, HashMap<u32, u32>)>,
    roots: HashMap<u32, u32>,
}

impl Trie {
    fn add(&mut self, stack: &[u32], value: i64) {
        let mut parent: Option<u32> = None;
        for &frame in stack {
            let next = self.nodes.len() as u32;
            let children = match parent {
                None => &mut self.roots,
                Some(p) => &mut self.nodes[p as usize].2,
            };
            let at = *children.entry(frame).or_insert(next);
            if at == next {
                self.nodes.push((0, 0, HashMap::new()));
            }
            self.nodes[at as usize].0 += i128::from(value);
            parent = Some(at);
        }
        if let Some(leaf) = parent {
            self.nodes[leaf as usize].1 += i128::from(value);
        }
    }

    /// Appends the nodes to `graph` parent first, siblings by decreasing
    /// value, then by name.
    fn write_preorder(&self, graph: &mut FlameGraph) {
        let by_weight = |children: &HashMap<u32, u32>| {
            let mut sorted: Vec<(u32, u32)> = children.iter().map(|(&f, &n)| (f, n)).collect();
            sorted.sort_unstable_by(|a, b| {
                let (va, vb) = (self.nodes[a.1 as usize].0, self.nodes[b.1 as usize].0);
                vb.cmp(&va)
                    .then_with(|| graph.names[a.0 as usize].cmp(&graph.names[b.0 as usize]))
            });
            sorted
        };
        // (frame, trie node, parent in the graph), last pushed first out.
        let mut pending: Vec<(u32, u32, u32)> = by_weight(&self.roots)
            .into_iter()
            .rev()
            .map(|(f, n)| (f, n, NO_PARENT))
            .collect();
        while let Some((frame, node, parent)) = pending.pop() {
            let (value, self_value, children) = &self.nodes[node as usize];
            let at = graph.nodes.len() as u32;
            graph.nodes.push(FlameNode {
                parent,
                name: frame,
                value: saturate(*value),
                self_value: saturate(*self_value),
            });
            pending.extend(
                by_weight(children)
                    .into_iter()
                    .rev()
                    .map(|(f, n)| (f, n, at)),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(stacks: &[(&[u32], i64)], names: &[&str]) -> FlameGraph {
        let names = names.iter().map(|s| s.to_string()).collect();
        graph_of(stacks.iter().copied(), names)
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
