//! Finding table entries by id. pprof refers to mappings, locations and
//! functions by an `id` field, usually 1..=n but free to be anything; every
//! layer that resolves ids uses [`IdIndex`].

use std::collections::HashMap;

/// Ids up to this many times the table length (plus [`DENSE_SLACK`]) are
/// looked up in a vector indexed by id; sparser ids go in a hash map.
const DENSE_FACTOR: u64 = 4;
const DENSE_SLACK: u64 = 1024;

/// A value per id: a vector indexed by id when the ids are dense (the usual
/// 1..=n, a lookup without hashing), a hash map otherwise.
#[derive(Debug, Clone)]
pub struct IdIndex<V> {
    storage: Storage<V>,
}

#[derive(Debug, Clone)]
enum Storage<V> {
    Dense(Vec<Option<V>>),
    Sparse(HashMap<u64, V>),
}

/// An index of no ids.
impl<V> Default for IdIndex<V> {
    fn default() -> Self {
        IdIndex {
            storage: Storage::Dense(Vec::new()),
        }
    }
}

/// The first id of a table given twice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DuplicateId {
    /// Position of the second entry with the id.
    pub position: usize,
    /// The id.
    pub id: u64,
}

impl<V: Copy> IdIndex<V> {
    /// Indexes `entries` (id, value). When an id repeats, the last entry
    /// wins, as in a map built from the list, and the first repetition is
    /// returned beside the index.
    pub fn new(entries: &[(u64, V)]) -> (IdIndex<V>, Option<DuplicateId>) {
        let max = entries.iter().map(|(id, _)| *id).max().unwrap_or(0);
        let dense = max <= DENSE_FACTOR * entries.len() as u64 + DENSE_SLACK;
        let mut duplicate = None;
        let mut note = |position, id, replaced: bool| {
            if replaced && duplicate.is_none() {
                duplicate = Some(DuplicateId { position, id });
            }
        };
        let storage = if dense {
            let mut slots = vec![None; max as usize + 1];
            for (position, &(id, value)) in entries.iter().enumerate() {
                note(position, id, slots[id as usize].replace(value).is_some());
            }
            Storage::Dense(slots)
        } else {
            let mut map = HashMap::with_capacity(entries.len());
            for (position, &(id, value)) in entries.iter().enumerate() {
                note(position, id, map.insert(id, value).is_some());
            }
            Storage::Sparse(map)
        };
        (IdIndex { storage }, duplicate)
    }

    /// The value of `id`, if some entry has it.
    #[inline]
    pub fn get(&self, id: u64) -> Option<V> {
        match &self.storage {
            Storage::Dense(slots) => usize::try_from(id)
                .ok()
                .and_then(|i| slots.get(i))
                .copied()
                .flatten(),
            Storage::Sparse(map) => map.get(&id).copied(),
        }
    }

    /// Whether some entry has `id`.
    #[inline]
    pub fn contains(&self, id: u64) -> bool {
        match &self.storage {
            Storage::Dense(slots) => usize::try_from(id)
                .ok()
                .and_then(|i| slots.get(i))
                .is_some_and(Option::is_some),
            Storage::Sparse(map) => map.contains_key(&id),
        }
    }
}

impl<V> IdIndex<V> {
    /// Whether some entry has each id of `ids` (true for an empty range).
    pub fn contains_all(&self, ids: std::ops::RangeInclusive<u64>) -> bool {
        if ids.is_empty() {
            return true;
        }
        let (first, last) = (*ids.start(), *ids.end());
        match &self.storage {
            Storage::Dense(slots) => usize::try_from(last)
                .ok()
                .and_then(|last| slots.get(first as usize..=last))
                .is_some_and(|slots| slots.iter().all(Option::is_some)),
            Storage::Sparse(map) => {
                last - first < map.len() as u64 && ids.into_iter().all(|id| map.contains_key(&id))
            }
        }
    }
}

impl IdIndex<()> {
    /// Which ids are present (repeats are not an error here).
    pub fn set(ids: impl Iterator<Item = u64>) -> IdIndex<()> {
        let entries: Vec<(u64, ())> = ids.map(|id| (id, ())).collect();
        IdIndex::new(&entries).0
    }
}

impl IdIndex<u32> {
    /// The position of each id in `ids`.
    pub fn positions(ids: impl Iterator<Item = u64>) -> (IdIndex<u32>, Option<DuplicateId>) {
        let entries: Vec<(u64, u32)> = ids.enumerate().map(|(i, id)| (id, i as u32)).collect();
        IdIndex::new(&entries)
    }
}

#[cfg(test)]
mod tests {
    use std::ops::RangeInclusive;

    use super::*;

    #[test]
    fn dense_and_sparse_ids_resolve_alike() {
        for ids in [vec![1u64, 2, 3], vec![7, u64::MAX, 1 << 40]] {
            let (index, duplicate) = IdIndex::positions(ids.iter().copied());
            assert_eq!(duplicate, None);
            for (i, &id) in ids.iter().enumerate() {
                assert_eq!(index.get(id), Some(i as u32));
            }
            assert!(!index.contains(0));
            assert!(!index.contains(5));
        }
    }

    #[test]
    fn contains_all_of_a_range_only_when_every_id_is_there() {
        let dense = IdIndex::set([1u64, 2, 3, 5].into_iter());
        let sparse = IdIndex::set([1u64, 2, 3, 5, 1 << 40].into_iter());
        for index in [&dense, &sparse] {
            assert!(index.contains_all(1..=3));
            assert!(index.contains_all(5..=5));
            assert!(
                index.contains_all(RangeInclusive::new(u64::MAX, 0)),
                "an empty range"
            );
            assert!(!index.contains_all(0..=3));
            assert!(!index.contains_all(1..=5));
            assert!(!index.contains_all(3..=6));
            assert!(!index.contains_all(6..=u64::MAX));
        }
        assert!(sparse.contains_all((1 << 40)..=(1 << 40)));
    }

    #[test]
    fn the_last_entry_of_a_repeated_id_wins_and_the_first_repeat_is_named() {
        let (index, duplicate) = IdIndex::positions([4u64, 9, 4, 9].into_iter());
        assert_eq!(duplicate, Some(DuplicateId { position: 2, id: 4 }));
        assert_eq!(index.get(4), Some(2));
        assert_eq!(index.get(9), Some(3));
    }
}
