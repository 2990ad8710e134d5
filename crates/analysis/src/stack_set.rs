//! A profile's distinct stacks with their summed values, all their frames
//! in one arena: a large profile has hundreds of thousands of distinct
//! stacks, and one allocation each (with a map entry of its own) would
//! cost more than the frames.

use std::hash::{Hash, Hasher};

use rustc_hash::{FxHashMap, FxHasher};

/// Marks the end of a chain of stacks that share a hash.
const END: u32 = u32::MAX;

/// Distinct stacks (frame numbers) and each one's value summed.
#[derive(Default)]
pub(crate) struct StackSet {
    frames: Vec<u32>,
    stacks: Vec<Stack>,
    /// A hash to the last stack added with it; the others follow `next`.
    by_hash: FxHashMap<u64, u32>,
}

struct Stack {
    start: usize,
    len: u32,
    /// The previous stack with the same hash, or [`END`].
    next: u32,
    total: i128,
}

impl StackSet {
    /// Adds `value` to `stack`'s total.
    pub(crate) fn add(&mut self, stack: &[u32], value: i64) {
        let mut hasher = FxHasher::default();
        stack.hash(&mut hasher);
        let hash = hasher.finish();
        let first = self.by_hash.get(&hash).copied().unwrap_or(END);
        let mut at = first;
        while at != END {
            if self.frames_of(at) == stack {
                self.stacks[at as usize].total += i128::from(value);
                return;
            }
            at = self.stacks[at as usize].next;
        }
        let added = self.stacks.len() as u32;
        self.stacks.push(Stack {
            start: self.frames.len(),
            len: stack.len() as u32,
            next: first,
            total: i128::from(value),
        });
        self.frames.extend_from_slice(stack);
        self.by_hash.insert(hash, added);
    }

    fn frames_of(&self, at: u32) -> &[u32] {
        let s = &self.stacks[at as usize];
        &self.frames[s.start..s.start + s.len as usize]
    }

    /// Every stack whose total is not zero, with its total, in the order
    /// of their frames (so stacks with a common beginning are together).
    pub(crate) fn sorted(mut self) -> SortedStacks {
        self.by_hash = FxHashMap::default();
        let mut order: Vec<u32> = (0..self.stacks.len() as u32)
            .filter(|&at| self.stacks[at as usize].total != 0)
            .collect();
        order.sort_unstable_by(|&a, &b| self.frames_of(a).cmp(self.frames_of(b)));
        SortedStacks { set: self, order }
    }
}

/// [`StackSet::sorted`]'s stacks.
pub(crate) struct SortedStacks {
    set: StackSet,
    order: Vec<u32>,
}

impl SortedStacks {
    /// Each stack and its total, in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&[u32], i128)> + '_ {
        self.order
            .iter()
            .map(|&at| (self.set.frames_of(at), self.set.stacks[at as usize].total))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stacks_are_summed_once_each_and_sorted_by_their_frames() {
        let mut set = StackSet::default();
        for (stack, value) in [
            (&[2, 1][..], 5),
            (&[1, 2, 3], 1),
            (&[2, 1], 2),
            (&[1], 4),
            (&[1, 2], -3),
            (&[1, 2], 3),
            (&[], 9),
        ] {
            set.add(stack, value);
        }
        let sorted = set.sorted();
        let stacks: Vec<(Vec<u32>, i128)> = sorted.iter().map(|(s, v)| (s.to_vec(), v)).collect();
        let expected = [
            (vec![], 9),
            (vec![1], 4),
            (vec![1, 2, 3], 1),
            (vec![2, 1], 7),
        ];
        assert_eq!(stacks, expected.map(|(s, v)| (s, v as i128)));
    }
}
