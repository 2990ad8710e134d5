//! Analyses of pprof profiles: what `go tool pprof` reports.
//!
//! - [`top`]: flat and cumulative value per function, as `-top` does: flat
//!   goes to the first line of a sample's leaf location (its innermost,
//!   possibly inlined, function); a function appearing several times in one
//!   stack (inlined or recursive) counts once in cum; samples whose value is
//!   0 are left out, so functions only they reach do not appear.
//! - [`folded`]: collapsed stacks (`root;...;leaf value`) for flame graphs;
//!   [`flame_graph`]: the same stacks as a tree of call paths.
//! - [`diff`]: per-function differences between two profiles.
//! - [`source_listing`]: `-list`, each matching function's source with its
//!   values.
//! - [`web_listing`]: `-weblist`, each matching function's source with the
//!   instructions compiled from each line, and [`web_list_page`], the
//!   listing as pprof's HTML page.
//! - [`filtered_profile`]: the profile the filters leave, as `-proto`
//!   writes it.
//! - [`call_graph_dot`]: the call graph as `go tool pprof -dot` writes it.
//! - [`top_report`], [`traces()`], [`tags`], [`peek_text`], [`tree()`]: `go tool
//!   pprof`'s `-top`, `-traces`, `-tags`, `-peek` and `-tree`, printed as pprof
//!   prints them.
//! - [`Selection`]: pprof's sample filters and granularities, which every
//!   `*_selected` analysis takes; [`base`]: base profiles; [`units`]:
//!   pprof's units.
//!
//! Every analysis takes a [`ProfileSamples`]:
//! the decoded model, or the codec's view that leaves samples in the input
//! bytes. Sums saturate, so extreme values cannot overflow.
//!
//! ```
//! use protoprof_analysis::{sample_index, top, Order};
//! use protoprof_model_pprof::perftools::profiles::{
//!     Function, Line, Location, Profile, Sample, ValueType,
//! };
//!
//! let profile = Profile {
//!     sample_type: vec![ValueType { type_: 1, unit: 2, ..Default::default() }],
//!     sample: vec![Sample { location_id: vec![1], value: vec![7], ..Default::default() }],
//!     location: vec![Location {
//!         id: 1,
//!         line: vec![Line { function_id: 1, ..Default::default() }],
//!         ..Default::default()
//!     }],
//!     function: vec![Function { id: 1, name: 3, ..Default::default() }],
//!     string_table: ["", "samples", "count", "main"].map(String::from).to_vec(),
//!     ..Default::default()
//! };
//! let index = sample_index(&profile, Some("samples"))?;
//! let (rows, total) = top(&profile, index, Order::Flat);
//! assert_eq!((rows[0].function.as_str(), rows[0].flat, total), ("main", 7, 7));
//! # Ok::<(), protoprof_analysis::AnalysisError>(())
//! ```

#![warn(missing_docs)]

pub mod base;
mod callgrind;
mod demangle;
mod diff;
mod disasm;
mod dot;
mod dot_tags;
mod filtered;
mod flame;
mod folded;
mod frames;
mod go_path;
mod label_nodes;
mod list;
mod local_time;
mod matches;
mod peek;
mod raw;
pub mod report;
pub mod selection;
mod stack_set;
mod top;
mod top_proto;
pub mod traces;
mod tree;
pub mod units;
mod weblist;

use protoprof_model_meta::{Fields, StringTable};
use protoprof_model_pprof::fields::perftools::profiles::sample;
use protoprof_model_pprof::perftools::profiles::Profile;
use protoprof_model_pprof::samples::ProfileSamples;

pub use callgrind::callgrind;
pub use demangle::{force_demangled_names, ForcedDemangling};
pub use diff::{diff, diff_report, diff_selected, DiffReport, FunctionDiff};
pub use disasm::{
    disassembly, InlineFrame, Instruction, MappedObject, ObjectFiles, ObjectSymbol, OpenedObject,
};
pub use dot::call_graph_dot;
pub use filtered::filtered_profile;
pub use flame::{
    callers_graph, flame_graph, flame_graph_at_least, FlameGraph, FlameNode, NO_PARENT,
};
pub use folded::{folded, folded_selected, folded_stacks, FoldedStacks};
pub use label_nodes::add_label_nodes;
pub use list::{source_listing, source_listing_with, DiskSources, MissingSource, SourceFiles};
pub use matches::filters_matching_nothing;
pub use peek::{peek, peek_in_order, peek_text, Peek, PeekEdge, PeekNode};
pub use raw::raw_text;
pub use report::{top_report, TopOptions, TopReport};
pub use selection::{Granularity, Selection, SelectionError, TagFilter};
pub use top::{top, top_selected, FunctionTotals, Inlined, Order};
pub use top_proto::top_proto;
pub use traces::{tags, tags_text, traces, traces_text, TagValues, Trace};
pub use tree::{tree, TreeOptions};
pub use weblist::page::web_list_page;
pub use weblist::{
    web_listing, WebList, WebListCall, WebListFunction, WebListInstruction, WebListLine,
};

/// Why an analysis cannot run as asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnalysisError {
    /// The profile declares no sample type, so there is no value to read.
    #[error("the profile has no sample types")]
    NoSampleTypes,
    /// A sample index past the profile's sample types.
    #[error("sample index {index} out of range: the profile has {count} sample types")]
    IndexOutOfRange {
        /// The index asked for.
        index: usize,
        /// How many sample types the profile has.
        count: usize,
    },
    /// A sample type name the profile does not have.
    #[error("no sample type {name:?}; the profile has {available}")]
    NoSuchSampleType {
        /// The name asked for.
        name: String,
        /// The profile's sample type names, comma-separated.
        available: String,
    },
}

/// Which sample value to use: a sample type name, or its position.
/// `None` picks `default_sample_type`, or the last sample type (pprof's rule).
pub fn sample_index(p: &Profile, selector: Option<&str>) -> Result<usize, AnalysisError> {
    let names: Vec<&str> = p.sample_type.iter().map(|t| p.string(t.type_)).collect();
    if names.is_empty() {
        return Err(AnalysisError::NoSampleTypes);
    }
    match selector {
        None => {
            let default = p.string(p.default_sample_type);
            Ok(names
                .iter()
                .position(|n| !default.is_empty() && *n == default)
                .unwrap_or(names.len() - 1))
        }
        Some(s) => {
            match s.parse::<usize>() {
                Ok(i) if i < names.len() => Ok(i),
                Ok(index) => Err(AnalysisError::IndexOutOfRange {
                    index,
                    count: names.len(),
                }),
                Err(_) => names.iter().position(|n| *n == s).ok_or_else(|| {
                    AnalysisError::NoSuchSampleType {
                        name: s.to_string(),
                        available: names.join(", "),
                    }
                }),
            }
        }
    }
}

/// The part of a sample the analyses read: values and stack.
const VALUES_AND_STACK: Fields = Fields::only(&[sample::LOCATION_ID, sample::VALUE]);
/// With labels, for tag filters.
const VALUES_STACK_AND_LABELS: Fields =
    Fields::only(&[sample::LOCATION_ID, sample::VALUE, sample::LABEL]);

fn sample_fields(selection: &Selection) -> Fields {
    match selection.tag_focus.is_some() || selection.tag_ignore.is_some() {
        true => VALUES_STACK_AND_LABELS,
        false => VALUES_AND_STACK,
    }
}

/// The frames of `source` under `selection`; tag filters read every
/// label's unit first (one pass over the samples' labels).
fn frames_for<'s, S: ProfileSamples>(source: &S, selection: &'s Selection) -> frames::Frames<'s> {
    let p = source.profile();
    let tag_filters = selection.tag_focus.is_some() || selection.tag_ignore.is_some();
    let units = tag_filters.then(|| selection::LabelUnits::read(source));
    let mut frames = frames::Frames::new(p, selection, units);
    if selection.call_tree {
        frames.grow_call_tree(source);
    }
    frames
}

/// A sample's `--mean` divisor: its first value, or 0 without `--mean`.
fn mean_divisor(selection: &Selection, values: &[i64]) -> i128 {
    match selection.mean {
        true => values.first().map_or(0, |&d| i128::from(d)),
        false => 0,
    }
}

/// `value / divisor`, as pprof's `FlatValue` divides (a zero divisor
/// leaves the value as it is).
fn divided(value: i128, divisor: i128) -> i128 {
    match divisor {
        0 => value,
        d => value / d,
    }
}

fn saturate(v: i128) -> i64 {
    v.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

#[cfg(test)]
mod tests {
    use super::*;
    use protoprof_model_pprof::perftools::profiles::{Function, Line, Location, Sample, ValueType};

    /// main -> work -> leaf, with work inlining helper into its location,
    /// and a recursive sample main -> work -> work.
    fn profile() -> Profile {
        let strings = ["", "samples", "count", "main", "work", "leaf", "helper"];
        let function = (1..=4)
            .map(|i| Function {
                id: i,
                name: i as i64 + 2,
                ..Default::default()
            })
            .collect();
        let loc = |id: u64, functions: &[u64]| Location {
            id,
            line: functions
                .iter()
                .map(|&f| Line {
                    function_id: f,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        };
        Profile {
            sample_type: vec![ValueType {
                type_: 1,
                unit: 2,
                ..Default::default()
            }],
            sample: vec![
                Sample {
                    location_id: vec![3, 2, 1],
                    value: vec![10],
                    ..Default::default()
                },
                Sample {
                    location_id: vec![2, 2, 1],
                    value: vec![5],
                    ..Default::default()
                },
            ],
            location: vec![loc(1, &[1]), loc(2, &[4, 2]), loc(3, &[3])],
            function,
            string_table: strings.map(String::from).to_vec(),
            ..Default::default()
        }
    }

    #[test]
    fn flat_goes_to_the_leaf_and_cum_counts_once() {
        let (rows, total) = top(&profile(), 0, Order::Flat);
        assert_eq!(total, 15);
        let get = |name: &str| rows.iter().find(|r| r.function == name).unwrap().clone();
        assert_eq!((get("leaf").flat, get("leaf").cum), (10, 10));
        // The second sample's leaf location inlines helper into work: flat to helper.
        assert_eq!((get("helper").flat, get("helper").cum), (5, 15));
        assert_eq!((get("work").flat, get("work").cum), (0, 15));
        assert_eq!((get("main").flat, get("main").cum), (0, 15));
        assert_eq!(rows[0].function, "leaf");
    }

    #[test]
    fn folded_stacks_are_root_first_and_inline_expanded() {
        let stacks = folded(&profile(), 0);
        assert_eq!(
            stacks,
            vec![
                ("main;work;helper;leaf".to_string(), 10),
                ("main;work;helper;work;helper".to_string(), 5)
            ]
        );
    }

    #[test]
    fn sample_index_by_name_number_and_default() {
        let mut p = profile();
        assert_eq!(sample_index(&p, None), Ok(0));
        assert_eq!(sample_index(&p, Some("samples")), Ok(0));
        assert!(sample_index(&p, Some("cpu"))
            .unwrap_err()
            .to_string()
            .contains("no sample type \"cpu\""));
        assert!(sample_index(&p, Some("3")).is_err());
        p.sample_type.clear();
        assert!(sample_index(&p, None).is_err());
    }

    #[test]
    fn diff_orders_by_change() {
        let base = profile();
        let mut new = profile();
        new.sample[0].value[0] = 30;
        let rows = diff(&base, 0, &new, 0);
        assert_eq!(rows[0].function, "leaf");
        assert_eq!(rows[0].flat_delta(), 20);
        assert!(rows.iter().all(|r| r.function != "nothing"));
    }

    #[test]
    fn extreme_values_saturate() {
        let mut p = profile();
        p.sample[0].value[0] = i64::MAX;
        p.sample[1].value[0] = i64::MAX;
        let (_, total) = top(&p, 0, Order::Flat);
        assert_eq!(total, i64::MAX);
    }
}
