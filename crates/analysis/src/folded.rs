//! Collapsed stacks for flame graphs.

use std::collections::HashMap;
use std::io::Write;

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
    folded_stacks(source, index, selection).into_lines()
}

/// [`folded_selected`] with the stacks kept as frame numbers: a profile of
/// a million distinct stacks is written line by line
/// ([`FoldedStacks::write_to`]) without a string per line.
pub fn folded_stacks<S: ProfileSamples>(
    source: &S,
    index: usize,
    selection: &Selection,
) -> FoldedStacks {
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
    let mut stacks: Vec<(Vec<u32>, i64)> = stacks
        .into_iter()
        .filter(|(_, v)| *v != 0)
        .map(|(stack, v)| (stack, saturate(v)))
        .collect();
    // In the order of the lines' text, as the lines themselves sort.
    stacks.sort_by(|a, b| text_order(&names, &a.0, &b.0).then(a.1.cmp(&b.1)));
    FoldedStacks { names, stacks }
}

/// How the line texts of stacks `a` and `b` compare, without building them.
/// Frames they share are the same bytes, so the comparison starts at the
/// first frame that differs: stacks that share their callers (most do)
/// are not compared byte by byte from the root.
fn text_order(names: &[String], a: &[u32], b: &[u32]) -> std::cmp::Ordering {
    let shared = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    text(names, &a[shared..]).cmp(text(names, &b[shared..]))
}

/// The bytes of a stack's line text (`root;...;leaf`), without building it.
fn text<'n>(names: &'n [String], stack: &'n [u32]) -> impl Iterator<Item = u8> + 'n {
    stack.iter().enumerate().flat_map(move |(k, &i)| {
        let separator: &[u8] = if k == 0 { b"" } else { b";" };
        separator
            .iter()
            .chain(names[i as usize].as_bytes())
            .copied()
    })
}

/// Collapsed stacks, sorted, as frame numbers into their names.
#[derive(Debug, Clone)]
pub struct FoldedStacks {
    names: Vec<String>,
    stacks: Vec<(Vec<u32>, i64)>,
}

impl FoldedStacks {
    /// Writes one `root;...;leaf value` line per stack.
    pub fn write_to(&self, out: &mut dyn Write) -> std::io::Result<()> {
        for (stack, value) in &self.stacks {
            for (k, &i) in stack.iter().enumerate() {
                if k > 0 {
                    out.write_all(b";")?;
                }
                out.write_all(self.names[i as usize].as_bytes())?;
            }
            writeln!(out, " {value}")?;
        }
        Ok(())
    }

    /// The stacks as text with their values.
    pub fn into_lines(self) -> Vec<(String, i64)> {
        let names = self.names;
        self.stacks
            .into_iter()
            .map(|(stack, v)| {
                let frames: Vec<&str> = stack.iter().map(|&i| names[i as usize].as_str()).collect();
                (frames.join(";"), v)
            })
            .collect()
    }
}
