//! Collapsed stacks for flame graphs.

use std::cmp::Ordering;
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
    let FrameStacks { names, mut stacks } = stacks_by_frames(source, index, selection);
    // ';' separates frames and ' ' the value: keep names from breaking that.
    let names: Vec<String> = names.iter().map(|n| n.replace(';', ":")).collect();
    // In the order of the lines' text, as the lines themselves sort.
    stacks.sort_unstable_by(|a, b| text_order(&names, &a.0, &b.0).then(a.1.cmp(&b.1)));
    FoldedStacks { names, stacks }
}

/// Distinct stacks, root first, as frame numbers into `names`, with their
/// summed nonzero values; in no particular order.
pub(crate) struct FrameStacks {
    pub(crate) names: Vec<String>,
    pub(crate) stacks: Vec<(Vec<u32>, i64)>,
}

/// The stacks of sample type `index` of the samples `selection` keeps.
pub(crate) fn stacks_by_frames<S: ProfileSamples>(
    source: &S,
    index: usize,
    selection: &Selection,
) -> FrameStacks {
    let mut stacks: HashMap<Vec<u32>, i128> = HashMap::new();
    let names = for_each_stack(source, index, selection, |stack, v| {
        match stacks.get_mut(stack) {
            Some(total) => *total += i128::from(v),
            None => {
                stacks.insert(stack.to_vec(), i128::from(v));
            }
        }
    });
    let stacks = stacks
        .into_iter()
        .filter(|(_, v)| *v != 0)
        .map(|(stack, v)| (stack, saturate(v)))
        .collect();
    FrameStacks { names, stacks }
}

/// Calls `f` with each selected sample's stack, root first, as frame
/// numbers, and its value of sample type `index`; the frames' names.
pub(crate) fn for_each_stack<S: ProfileSamples>(
    source: &S,
    index: usize,
    selection: &Selection,
    mut f: impl FnMut(&[u32], i64),
) -> Vec<String> {
    let p = source.profile();
    let frames = crate::frames_for(source, selection);
    let fields = crate::sample_fields(selection);
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
        f(&stack, v);
    }
    frames.names
}

/// How the line texts (`root;...;leaf`) of stacks `a` and `b` compare,
/// without building them: frame by frame, each name compared whole. Names
/// hold no `;` (replaced before), so where one name is a prefix of the
/// other, the text goes on with `;` after it when its stack has more frames
/// and ends when it has not; frames with the same name (several nodes may
/// share one) compare equal and the next frames decide.
fn text_order(names: &[String], a: &[u32], b: &[u32]) -> Ordering {
    for (k, (&x, &y)) in a.iter().zip(b).enumerate() {
        if x == y {
            continue;
        }
        let (x_name, y_name) = (names[x as usize].as_bytes(), names[y as usize].as_bytes());
        let common = x_name.len().min(y_name.len());
        match x_name[..common].cmp(&y_name[..common]) {
            Ordering::Equal => {}
            unequal => return unequal,
        }
        // One name is a prefix of the other (or they are equal).
        let after = |name: &[u8], stack: &[u32]| match name.get(common) {
            Some(&byte) => Some(byte),
            None if k + 1 < stack.len() => Some(b';'),
            None => None,
        };
        match after(x_name, a).cmp(&after(y_name, b)) {
            Ordering::Equal => {}
            unequal => return unequal,
        }
    }
    // One stack is the other's first frames: the shorter text is a prefix
    // of the longer, which goes on with `;`; unless the shorter is empty and
    // the longer is one empty name.
    let empty_text = |s: &[u32]| s.is_empty() || (s.len() == 1 && names[s[0] as usize].is_empty());
    if empty_text(a) && empty_text(b) {
        return Ordering::Equal;
    }
    a.len().cmp(&b.len())
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every pair of stacks up to three frames deep, over names that are
    /// empty, prefixes of each other, followed by bytes below and above
    /// `;`, and one name shared by two frames: the order is the order of
    /// the line texts.
    #[test]
    fn text_order_is_the_order_of_the_joined_names() {
        let names: Vec<String> = ["", "a", "a:", "a<", "ab", "a", "b"]
            .map(String::from)
            .to_vec();
        let ids = 0..names.len() as u32;
        let mut stacks: Vec<Vec<u32>> = vec![vec![]];
        for depth in 1..=3 {
            let longer: Vec<Vec<u32>> = (stacks.iter())
                .filter(|s| s.len() == depth - 1)
                .flat_map(|s| ids.clone().map(move |i| [s.clone(), vec![i]].concat()))
                .collect();
            stacks.extend(longer);
        }
        assert_eq!(stacks.len(), 1 + 7 + 49 + 343);
        let text = |stack: &[u32]| -> String {
            let frames: Vec<&str> = stack.iter().map(|&i| names[i as usize].as_str()).collect();
            frames.join(";")
        };
        for a in &stacks {
            for b in &stacks {
                assert_eq!(
                    text_order(&names, a, b),
                    text(a).cmp(&text(b)),
                    "{a:?} {b:?}"
                );
            }
        }
    }
}
