//! Each location's frames, as interned node names at the selection's
//! granularity, and what the selection's filters say about the location:
//! what every analysis walks per stack entry, so built once per profile and
//! kept flat.
//!
//! pprof changes a location's lines for every sample at once (hide, show,
//! show_from and prune_from cut them, `-noinlines` keeps the outermost), and
//! judges focus/ignore on the lines as they were; so does this.

use protoprof_model_meta::{IdIndex, StringTable};
use protoprof_model_pprof::perftools::profiles::{Label, Line, Location, Profile, Sample};
use protoprof_model_pprof::samples::ProfileSamples;
use regex::Regex;

use crate::demangle::reported_name;
use crate::selection::{simplify_function, Granularity, LabelUnits, Selection};

/// What the filters decided about one location.
#[derive(Clone, Default)]
struct LocationState {
    /// The location's id.
    id: u64,
    /// `frames[start..end]`, leaf first.
    span: (u32, u32),
    /// The lines left after hide, show, show_from and prune_from, where
    /// they are fewer than the location's.
    kept_lines: Option<Vec<Line>>,
    /// `Some(true)`: focused; `Some(false)`: ignored; `None`: neither.
    focus: Option<bool>,
    /// Hide/show left no line: the location leaves every stack.
    hidden: bool,
    /// show_from matched: stacks end here (rootward).
    shows_from: bool,
    /// prune_from matched: stacks start here (leafward).
    prunes: bool,
}

/// Function names interned once, and each location's frames as name ids.
pub(crate) struct Frames<'s> {
    /// Interned names; a frame is an index into this list.
    pub(crate) names: Vec<String>,
    /// Each node's identity as pprof prints its `NodeInfo`: the last
    /// tie-break of pprof's orders.
    pub(crate) infos: Vec<String>,
    /// Each node's file, line and address, where the granularity keeps them.
    pub(crate) parts: Vec<NodeParts>,
    /// Every location's frames laid end to end.
    frames: Vec<u32>,
    /// Per frame: an inlined line (not its location's last).
    inlined: Vec<bool>,
    states: Vec<LocationState>,
    /// Location id -> its state. As with a map built from the list, the
    /// last location of a repeated id wins.
    by_location: IdIndex<u32>,
    selection: &'s Selection,
    /// Whether any filter is set (else every sample is kept whole).
    filtering: bool,
    label_units: Option<LabelUnits>,
    /// pprof's `-call_tree`, once grown: a node per call path.
    tree: Option<CallTree>,
}

/// pprof's call tree (`newTree`): each node reached by another path is a
/// node of its own, copied from the node it is an instance of. Grown once
/// from every sample, then read by [`Frames::select`], which gives each
/// frame the position of its instance on the sample's path.
#[derive(Default)]
struct CallTree {
    /// (the caller's tree node, or `ROOT`; the node) -> its tree node.
    nodes: std::collections::HashMap<(u32, u32), u32>,
    /// (tree node, reached inlined) -> its frame position.
    positions: std::collections::HashMap<(u32, bool), u32>,
}

/// The caller of a path's first frame.
const ROOT: u32 = u32::MAX;

impl<'s> Frames<'s> {
    /// The frames of `p` as `selection` names and filters them.
    /// `label_units` is needed when the selection filters by tag.
    pub(crate) fn new(
        p: &Profile,
        selection: &'s Selection,
        label_units: Option<LabelUnits>,
    ) -> Frames<'s> {
        let mut builder = Builder {
            p,
            selection,
            functions: IdIndex::positions(p.function.iter().map(|f| f.id)).0,
            mappings: IdIndex::positions(p.mapping.iter().map(|m| m.id)).0,
            names: Names::default(),
            frames: Vec::new(),
            inlined: Vec::new(),
        };
        let mut states = Vec::with_capacity(p.location.len());
        let mut ids = Vec::with_capacity(p.location.len());
        for location in &p.location {
            states.push(builder.location(location));
            ids.push((location.id, states.len() as u32 - 1));
        }
        let (by_location, _) = IdIndex::new(&ids);
        Frames {
            names: builder.names.list,
            infos: builder.names.infos,
            parts: builder.names.parts,
            frames: builder.frames,
            inlined: builder.inlined,
            states,
            by_location,
            selection,
            filtering: selection.filters(),
            label_units,
            tree: None,
        }
    }

    /// Makes every node a node per call path (pprof's `-call_tree`), over
    /// the paths of `source`'s samples as the selection keeps them.
    pub(crate) fn grow_call_tree<S: ProfileSamples>(&mut self, source: &S) {
        let p = source.profile();
        let fields = crate::sample_fields(self.selection);
        let (mut buffer, mut stack) = (Sample::new(), Vec::new());
        let mut tree = CallTree::default();
        for n in 0..source.sample_count() {
            let s = source.sample_fields(n, fields, &mut buffer);
            if !self.select(p, &s.location_id, &s.label, &mut stack) {
                continue;
            }
            let mut caller = ROOT;
            for &at in stack.iter().rev() {
                let node = self.frames[at as usize];
                let next = self.names.len() as u32;
                let instance = *tree.nodes.entry((caller, node)).or_insert(next);
                if instance == next {
                    let i = node as usize;
                    self.names.push(self.names[i].clone());
                    self.infos.push(self.infos[i].clone());
                    // An instance's function is its own too (pprof's
                    // `Node.Function`, looked up in its caller's nodes).
                    let mut part = self.parts[i].clone();
                    part.function_key = format!("{caller}/{}", part.function_key);
                    self.parts.push(part);
                }
                let inlined = self.inlined[at as usize];
                let position = self.frames.len() as u32;
                if *tree
                    .positions
                    .entry((instance, inlined))
                    .or_insert(position)
                    == position
                {
                    self.frames.push(instance);
                    self.inlined.push(inlined);
                }
                caller = instance;
            }
        }
        self.tree = Some(tree);
    }

    /// A location's frames, leaf first, as positions in `frames`.
    #[inline]
    fn of_state(&self, state: &LocationState) -> std::ops::Range<u32> {
        state.span.0..state.span.1
    }

    /// The node (name id) of frame position `at`.
    #[inline]
    pub(crate) fn node(&self, at: u32) -> u32 {
        self.frames[at as usize]
    }

    /// Per node: whether some frame names it as an inlined line. Only
    /// such nodes can carry pprof's inline marks.
    pub(crate) fn reached_inlined(&self) -> Vec<bool> {
        let mut reached = vec![false; self.names.len()];
        for (&node, _) in self.frames.iter().zip(&self.inlined).filter(|(_, &i)| i) {
            reached[node as usize] = true;
        }
        reached
    }

    /// Whether frame position `at` is an inlined line.
    #[inline]
    pub(crate) fn inlined(&self, at: u32) -> bool {
        self.inlined[at as usize]
    }

    fn state(&self, id: u64) -> Option<&LocationState> {
        self.by_location.get(id).map(|i| &self.states[i as usize])
    }

    /// A sample's frames after the selection (leaf first, into `out`, as
    /// positions: see [`Frames::node`]), or `false` when the selection
    /// drops the sample. Unknown location ids are skipped.
    pub(crate) fn select(
        &self,
        p: &Profile,
        stack: &[u64],
        labels: &[Label],
        out: &mut Vec<u32>,
    ) -> bool {
        out.clear();
        let kept = self.select_with(p, stack, labels, |s| out.extend(self.of_state(s)));
        if let Some(tree) = &self.tree {
            // Root to leaf, each frame becomes its instance under its caller.
            let mut caller = ROOT;
            for at in out.iter_mut().rev() {
                let instance = tree.nodes[&(caller, self.frames[*at as usize])];
                *at = tree.positions[&(instance, self.inlined[*at as usize])];
                caller = instance;
            }
        }
        kept
    }

    /// The ids of a sample's locations after the selection, leaf first
    /// (into `out`), or `false` when the selection drops the sample.
    pub(crate) fn select_locations(
        &self,
        p: &Profile,
        stack: &[u64],
        labels: &[Label],
        out: &mut Vec<u64>,
    ) -> bool {
        out.clear();
        self.select_with(p, stack, labels, |s| out.push(s.id))
    }

    /// The lines each location keeps after the selection (in the order of
    /// `p.location`), `None` where it keeps them all.
    pub(crate) fn kept_lines(&self) -> impl Iterator<Item = Option<&[Line]>> {
        self.states.iter().map(|s| s.kept_lines.as_deref())
    }

    /// Calls `keep` with each location the selection keeps in a sample,
    /// leaf first; `false` when it drops the sample.
    fn select_with(
        &self,
        p: &Profile,
        stack: &[u64],
        labels: &[Label],
        mut keep: impl FnMut(&LocationState),
    ) -> bool {
        let sel = self.selection;
        if !self.filtering {
            stack.iter().filter_map(|&id| self.state(id)).for_each(keep);
            return true;
        }
        let states: Vec<&LocationState> = stack.iter().filter_map(|&id| self.state(id)).collect();
        if !focused_and_not_ignored(&states) {
            return false;
        }
        let mut kept: Vec<&LocationState> = states.into_iter().filter(|s| !s.hidden).collect();
        if kept.is_empty() {
            return false;
        }
        if sel.show_from.is_some() {
            match kept.iter().rposition(|s| s.shows_from) {
                Some(i) => kept.truncate(i + 1),
                None => return false,
            }
        }
        if !self.tags_match(p, labels) {
            return false;
        }
        let from = kept.iter().position(|s| s.prunes).unwrap_or(0);
        kept[from..].iter().for_each(|s| keep(s));
        true
    }

    fn tags_match(&self, p: &Profile, labels: &[Label]) -> bool {
        let Some(units) = &self.label_units else {
            return true;
        };
        let sel = self.selection;
        let focused = sel
            .tag_focus
            .as_ref()
            .is_none_or(|f| f.matches(p, labels, units));
        let ignored = sel
            .tag_ignore
            .as_ref()
            .is_some_and(|f| f.matches(p, labels, units));
        focused && !ignored
    }
}

/// pprof's `focusedAndNotIgnored`: some location focused, none ignored.
/// Without focus every location is focused, so only an empty stack fails.
fn focused_and_not_ignored(states: &[&LocationState]) -> bool {
    let mut focused = false;
    for s in states {
        match s.focus {
            Some(true) => focused = true,
            Some(false) => return false,
            None => {}
        }
    }
    focused
}

/// What building the frames reads.
struct Builder<'p, 's> {
    p: &'p Profile,
    selection: &'s Selection,
    functions: IdIndex<u32>,
    mappings: IdIndex<u32>,
    names: Names,
    frames: Vec<u32>,
    inlined: Vec<bool>,
}

impl Builder<'_, '_> {
    fn function_name(&self, line: &Line) -> Option<std::borrow::Cow<'_, str>> {
        let f = self.functions.get(line.function_id)?;
        Some(reported_name(
            self.p,
            &self.p.function[f as usize],
            self.selection.names_as_given,
        ))
    }

    fn function_file(&self, line: &Line) -> Option<&str> {
        let f = self.functions.get(line.function_id)?;
        Some(self.p.string(self.p.function[f as usize].filename))
    }

    fn mapping_file(&self, location: &Location) -> Option<&str> {
        let m = self.mappings.get(location.mapping_id)?;
        Some(self.p.string(self.p.mapping[m as usize].filename)).filter(|f| !f.is_empty())
    }

    /// pprof's `matchesName` for one line: function name or file.
    fn line_matches(&self, line: &Line, rx: &Regex) -> bool {
        self.function_name(line).is_some_and(|n| rx.is_match(&n))
            || self.function_file(line).is_some_and(|f| rx.is_match(f))
    }

    fn mapping_matches(&self, location: &Location, rx: &Regex) -> bool {
        self.mapping_file(location).is_some_and(|f| rx.is_match(f))
    }

    fn location(&mut self, location: &Location) -> LocationState {
        let sel = self.selection;
        let matches = |rx: &Regex| {
            location.line.iter().any(|l| self.line_matches(l, rx))
                || self.mapping_matches(location, rx)
        };
        let focus = match (&sel.ignore, &sel.focus) {
            (Some(ignore), _) if matches(ignore) => Some(false),
            (_, None) => Some(true),
            (_, Some(focus)) => matches(focus).then_some(true),
        };
        let mut lines: Vec<&Line> = location.line.iter().collect();
        let mut hidden = false;
        if let Some(hide) = sel.hide.as_ref().filter(|rx| matches(rx)) {
            lines = match self.mapping_matches(location, hide) {
                true => Vec::new(),
                false => lines
                    .into_iter()
                    .filter(|l| !self.line_matches(l, hide))
                    .collect(),
            };
            hidden = lines.is_empty();
        }
        if let Some(show) = &sel.show {
            if !self.mapping_matches(location, show) {
                lines.retain(|l| self.function_name(l).is_none() || self.line_matches(l, show));
            }
            hidden |= lines.is_empty();
        }
        let shows_from = sel.show_from.as_ref().is_some_and(|rx| {
            if self.mapping_matches(location, rx) {
                return true;
            }
            let last = lines.iter().rposition(|l| self.line_matches(l, rx));
            last.inspect(|&i| lines.truncate(i + 1)).is_some()
        });
        let prunes = sel.prune_from.as_ref().is_some_and(|rx| {
            let first = lines.iter().position(|l| {
                self.function_name(l)
                    .is_some_and(|n| !n.is_empty() && rx.is_match(simplify_function(&n)))
            });
            first.inspect(|&i| drop(lines.drain(..i))).is_some()
        });
        if sel.noinlines && lines.len() > 1 {
            lines.drain(..lines.len() - 1);
        }
        let start = self.frames.len() as u32;
        self.push_frames(location, &lines);
        // Lines are only ever removed: as many means the same.
        let kept_lines = (lines.len() != location.line.len())
            .then(|| lines.iter().map(|&l| l.clone()).collect());
        LocationState {
            id: location.id,
            span: (start, self.frames.len() as u32),
            kept_lines,
            focus,
            hidden,
            shows_from,
            prunes,
        }
    }

    /// One node per line (one for the location when it has none), named
    /// as pprof's `NodeInfo.NameComponents` at the granularity.
    fn push_frames(&mut self, location: &Location, lines: &[&Line]) {
        let names: Vec<NodeKey> = match lines {
            [] => vec![self.node_name(location, None)],
            lines => lines
                .iter()
                .map(|l| self.node_name(location, Some(l)))
                .collect(),
        };
        let count = names.len();
        for (i, key) in names.into_iter().enumerate() {
            let id = self.names.intern(key);
            self.frames.push(id);
            self.inlined.push(i + 1 < count);
        }
    }

    /// The node's printed name and identity (see [`NodeKey`]).
    fn node_name(&self, location: &Location, line: Option<&Line>) -> NodeKey {
        let g = self.selection.granularity;
        let keep_function = g != Granularity::Files;
        let keep_file = g != Granularity::Functions;
        let keep_line = matches!(g, Granularity::Lines | Granularity::Addresses);
        let address = match g {
            Granularity::Addresses => location.address,
            _ => 0,
        };
        let objfile = self.mapping_file(location).unwrap_or("");
        let function = line.and_then(|l| self.functions.get(l.function_id).map(|f| (l, f)));
        let mut parts = Vec::new();
        if address != 0 {
            parts.push(format!("{address:016x}"));
        }
        let located = NodeParts {
            address: (address != 0).then(|| format!("{address:#x}")),
            objfile: (!objfile.is_empty()).then(|| objfile.to_string()),
            address_value: address,
            ..Default::default()
        };
        let Some((line, f)) = function else {
            parts.push(objfile_or_unknown(objfile));
            let info = go_info("", address, "", 0, 0, objfile);
            let located = NodeParts {
                function_key: go_info("", 0, "", 0, 0, objfile),
                ..located
            };
            return (parts.join(" "), info, located);
        };
        let f = &self.p.function[f as usize];
        let reported = reported_name(self.p, f, self.selection.names_as_given);
        let name: &str = if keep_function { &reported } else { "" };
        let file = if keep_file {
            clean_path(self.p.string(f.filename))
        } else {
            String::new()
        };
        let lineno = if keep_line { line.line } else { 0 };
        if !name.is_empty() {
            parts.push(name.to_string());
        }
        if lineno != 0 {
            parts.push(format!("{file}:{lineno}"));
        } else if !file.is_empty() {
            parts.push(file.clone());
        } else if name.is_empty() {
            parts.push(objfile_or_unknown(objfile));
        }
        // pprof keeps the object file and start line of a named function
        // only with ObjNames.
        let (start_line, named_objfile) = match name.is_empty() || self.selection.object_names {
            true => (f.start_line, objfile),
            false => (0, ""),
        };
        let info = go_info(name, address, &file, start_line, lineno, named_objfile);
        let node = NodeParts {
            function_key: go_info(name, 0, &file, start_line, 0, named_objfile),
            function: (!name.is_empty()).then(|| name.to_string()),
            start_line,
            file: (!file.is_empty()).then_some(file),
            line: (lineno != 0).then_some(lineno),
            ..located
        };
        (parts.join(" "), info, node)
    }
}

/// A node's `NodeInfo` as Go's `fmt.Sprint` writes it: what identifies the
/// node in pprof's graph, and what pprof orders otherwise equal nodes by.
fn go_info(
    name: &str,
    address: u64,
    file: &str,
    start_line: i64,
    lineno: i64,
    objfile: &str,
) -> String {
    format!("{{{name}  {address} {file} {start_line} {lineno} {objfile}}}")
}

/// `[base of the mapping's file]`, or `<unknown>` without one.
fn objfile_or_unknown(objfile: &str) -> String {
    match objfile {
        "" => "<unknown>".into(),
        file => format!("[{}]", file.rsplit('/').next().unwrap_or(file)),
    }
}

/// A path as Go's `filepath.Clean` gives it, empty when it is empty.
fn clean_path(path: &str) -> String {
    match path.is_empty() {
        true => String::new(),
        false => crate::go_path::clean(path),
    }
}

/// A node: its printed name, its identity (Go's `NodeInfo`, printed:
/// without a function name the mapping file and start line tell nodes
/// apart, so at file granularity two functions of one file are two nodes
/// with one name, as in pprof), and its parts.
type NodeKey = (String, String, NodeParts);

/// What a node is, part by part, where its granularity keeps the part.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct NodeParts {
    pub file: Option<String>,
    pub line: Option<i64>,
    pub address: Option<String>,
    /// The function's name, where the granularity keeps it.
    pub function: Option<String>,
    /// The function's first line, where pprof keeps it (with `ObjNames`,
    /// or for a node without a name), else 0.
    pub start_line: i64,
    /// The mapping's file (pprof's `Objfile`).
    pub objfile: Option<String>,
    /// The location's address at address granularity, else 0.
    pub address_value: u64,
    /// What identifies the node's function: its `NodeInfo` without address
    /// and line (pprof's `Node.Function`).
    pub function_key: String,
}

/// Nodes in first-seen order, each once: names (which may repeat) and
/// identities.
#[derive(Default)]
struct Names {
    list: Vec<String>,
    infos: Vec<String>,
    parts: Vec<NodeParts>,
    ids: std::collections::HashMap<String, u32>,
}

impl Names {
    fn intern(&mut self, (name, info, parts): NodeKey) -> u32 {
        if let Some(&id) = self.ids.get(&info) {
            return id;
        }
        self.list.push(name);
        self.parts.push(parts);
        self.infos.push(info.clone());
        let id = self.list.len() as u32 - 1;
        self.ids.insert(info, id);
        id
    }
}

#[cfg(test)]
mod tests {
    use super::clean_path;

    #[test]
    fn paths_clean_as_go_cleans_them() {
        for (path, clean) in [
            ("/a//b/./c/", "/a/b/c"),
            ("a/../../b", "../b"),
            ("/../x", "/x"),
            ("./", "."),
            ("src/main.go", "src/main.go"),
        ] {
            assert_eq!(clean_path(path), clean, "{path}");
        }
    }
}
