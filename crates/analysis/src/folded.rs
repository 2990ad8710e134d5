//! Collapsed stacks for flame graphs.

use std::collections::HashMap;

use protoprof_model_pprof::perftools::profiles::Sample;
use protoprof_model_pprof::samples::ProfileSamples;

use crate::saturate;
use crate::selection::Selection;

/// Collapsed stacks, root first (`main;work;leaf`), with their summed
/// value; stacks whose value is 0 are left out. Sorted by stack.
pub fn folded<S: ProfileSamples>(source: &S, index: usize) -> Vec<(String, i64)> {
    folded_selected(source, index, &Selection::default())
}

/// [`folded`] of the samples `selection` keeps, frames named at its
/// granularity.
pub fn folded_selected<S: ProfileSamples>(
    source: &S,
    index: usize,
    selection: &Selection,
) -> Vec<(String, i64)> {
    let p = source.profile();
    let frames = crate::frames_for(source, selection);
    let fields = crate::sample_fields(selection);
    let mut stacks: HashMap<Vec<u32>, i128> = HashMap::new();
    let (mut stack, mut buffer) = (Vec::new(), Sample::new());
    for n in 0..source.sample_count() {
        let s = source.sample_fields(n, fields, &mut buffer);
        let Some(&v) = s.value.get(index) else {
            continue;
        };
        if !frames.select(p, &s.location_id, &s.label, &mut stack) {
            continue;
        }
        stack.reverse();
        for at in stack.iter_mut() {
            *at = frames.node(*at);
        }
        match stacks.get_mut(&stack) {
            Some(total) => *total += i128::from(v),
            None => {
                stacks.insert(stack.clone(), i128::from(v));
            }
        }
    }
    // ';' separates frames and ' ' the value: keep names from breaking that.
    let names: Vec<String> = frames.names.iter().map(|n| n.replace(';', ":")).collect();
    let mut out: Vec<(String, i64)> = stacks
        .into_iter()
        .filter(|(_, v)| *v != 0)
        .map(|(stack, v)| {
            let text: Vec<&str> = stack.iter().map(|&i| names[i as usize].as_str()).collect();
            (text.join(";"), saturate(v))
        })
        .collect();
    out.sort();
    out
}
