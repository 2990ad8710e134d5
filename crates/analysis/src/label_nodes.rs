//! pprof's `-tagroot` and `-tagleaf`: pseudo frames made of a sample's
//! label values, added at the root or the leaf of its stack before any
//! filter, so every report (and the filters) see them as functions. A frame
//! is named by the sample's values for the key (string values, then
//! numeric ones scaled to `unit`, joined with `,`; empty when the sample
//! has none) and has the key as its file name.

use std::collections::HashMap;

use protoprof_model_meta::StringTable;
use protoprof_model_pprof::perftools::profiles::{Function, Line, Location, Profile, Sample};

use crate::report::scaled_label;

/// Adds the frames for `root_keys` (the first key at the new root) and
/// `leaf_keys` (the last key at the new leaf) to every sample of `p`, as
/// `go tool pprof -tagroot=… -tagleaf=…` does. Whether any sample has a
/// label of the root keys, and of the leaf keys.
pub fn add_label_nodes(
    p: &mut Profile,
    root_keys: &[String],
    leaf_keys: &[String],
    unit: &str,
) -> (bool, bool) {
    let mut adder = Adder {
        next_location: p.location.iter().map(|l| l.id).max().unwrap_or(0) + 1,
        next_function: p.function.iter().map(|f| f.id).max().unwrap_or(0) + 1,
        strings: p
            .string_table
            .iter()
            .enumerate()
            .map(|(i, s)| (s.clone(), i as i64))
            .collect(),
        locations: HashMap::new(),
    };
    let (mut root_matched, mut leaf_matched) = (false, false);
    let mut samples = std::mem::take(&mut p.sample);
    for sample in &mut samples {
        let (roots, root_match) = adder.label_locations(p, sample, root_keys, unit);
        let (leaves, leaf_match) = adder.label_locations(p, sample, leaf_keys, unit);
        root_matched |= root_match;
        leaf_matched |= leaf_match;
        if roots.is_empty() && leaves.is_empty() {
            continue;
        }
        // Leaf first, as a sample's stack is kept.
        let mut stack = leaves;
        stack.extend_from_slice(&sample.location_id);
        stack.extend(roots);
        sample.location_id = stack;
    }
    p.sample = samples;
    (root_matched, leaf_matched)
}

struct Adder {
    next_location: u64,
    next_function: u64,
    strings: HashMap<String, i64>,
    /// Locations made so far, by (function name, file name).
    locations: HashMap<(String, String), u64>,
}

impl Adder {
    /// The frames of `keys` for `sample`, leaf-most first: the last key
    /// nearest the leaf. Whether the sample has a value for any key.
    fn label_locations(
        &mut self,
        p: &mut Profile,
        sample: &Sample,
        keys: &[String],
        unit: &str,
    ) -> (Vec<u64>, bool) {
        let mut matched = false;
        let mut ids = Vec::with_capacity(keys.len());
        for key in keys.iter().rev() {
            let values = label_values(p, sample, key, unit);
            matched |= !values.is_empty();
            ids.push(self.location(p, values.join(","), key.clone()));
        }
        (ids, matched)
    }

    fn location(&mut self, p: &mut Profile, name: String, file: String) -> u64 {
        if let Some(&id) = self.locations.get(&(name.clone(), file.clone())) {
            return id;
        }
        let function = Function {
            id: self.next_function,
            name: self.string(p, &name),
            filename: self.string(p, &file),
            ..Function::default()
        };
        let location = Location {
            id: self.next_location,
            line: vec![Line {
                function_id: function.id,
                ..Line::default()
            }],
            ..Location::default()
        };
        self.next_function += 1;
        self.next_location += 1;
        p.function.push(function);
        p.location.push(location);
        self.locations.insert((name, file), self.next_location - 1);
        self.next_location - 1
    }

    fn string(&mut self, p: &mut Profile, text: &str) -> i64 {
        if let Some(&i) = self.strings.get(text) {
            return i;
        }
        p.string_table.push(text.to_string());
        let i = p.string_table.len() as i64 - 1;
        self.strings.insert(text.to_string(), i);
        i
    }
}

/// pprof's `formatLabelValues`: the sample's string values for `key`, then
/// its numeric ones scaled to `unit` (all of them only when each has its
/// unit, or none has).
fn label_values(p: &Profile, sample: &Sample, key: &str, unit: &str) -> Vec<String> {
    let of_key = |l: &&protoprof_model_pprof::perftools::profiles::Label| p.string(l.key) == key;
    let mut values: Vec<String> = sample
        .label
        .iter()
        .filter(of_key)
        .filter(|l| l.str != 0)
        .map(|l| p.string(l.str).to_string())
        .collect();
    // A label with neither a string, a number nor a unit is no label (pprof's decode).
    let numbers: Vec<_> = sample
        .label
        .iter()
        .filter(of_key)
        .filter(|l| l.str == 0 && !crate::selection::is_empty_label(l))
        .collect();
    let with_units = numbers.iter().filter(|l| l.num_unit != 0).count();
    if with_units != 0 && with_units != numbers.len() {
        return values;
    }
    for label in numbers {
        values.push(match with_units {
            0 => scaled_label(label.num, "", ""),
            _ => scaled_label(label.num, p.string(label.num_unit), unit),
        });
    }
    values
}
