//! Interning every sample's stack, on up to two threads.
//!
//! Interning is the longest part of converting a large profile (a hash
//! lookup and an exact comparison per sample, mostly cache misses). A second
//! thread starts on it from the first sample while the main thread converts
//! labels; when the main thread is done with those, it takes blocks of
//! samples from the other end. The two tables are then merged in sample
//! order, which gives exactly the table and slots interning all samples in
//! order on one thread gives: the same `location_indices`, in the order
//! stacks first occur.

use std::sync::Mutex;

use protoprof_model_meta::threads::both;
use protoprof_model_meta::{Fields, IdIndex};
use protoprof_model_pprof::fields::perftools::profiles::sample;
use protoprof_model_pprof::perftools::profiles as pprof;
use protoprof_model_pprof::samples::ProfileSamples;
use rustc_hash::FxHashMap;

use crate::error::{unresolved, BridgeError};
use crate::tables::StackTable;

/// Location id -> position in the location table.
type LocationPositions = IdIndex<u32>;

/// From this many samples on, stacks are interned on a second thread.
const PARALLEL_SAMPLES: usize = protoprof_model_meta::threads::PARALLEL_ITEMS;

/// Samples claimed at a time.
const BLOCK: usize = 4096;
const LOCATIONS: Fields = Fields::only(&[sample::LOCATION_ID]);

/// Each sample's stack as a (start, length) slice of the table's indices.
pub(crate) type Slots = Vec<(u64, u64)>;

/// Every sample's stack interned in order, on this thread.
fn intern_all<S: ProfileSamples>(
    source: &S,
    location_pos: &LocationPositions,
) -> Result<(Slots, StackTable), BridgeError> {
    let count = source.sample_count();
    let mut part = Part::new(count);
    part.intern(source, location_pos, 0..count)?;
    Ok((part.slots, part.table))
}

/// Every sample's stack interned, as [`intern_all`] interns them, while
/// `work` runs on this thread: on a second thread (this one joining in
/// when `work` is done) for large profiles, after `work` otherwise.
pub(crate) fn intern_beside<S: ProfileSamples, T>(
    source: &S,
    location_pos: &LocationPositions,
    work: impl FnOnce() -> T,
) -> (T, Result<(Slots, StackTable), BridgeError>) {
    if source.sample_count() < PARALLEL_SAMPLES {
        return (work(), intern_all(source, location_pos));
    }
    let two_ended = TwoEnded::new(source, location_pos);
    let ((done, back), front) = both(
        true,
        || (work(), two_ended.run(false)),
        || two_ended.run(true),
    );
    (done, two_ended.merge(front, back))
}

/// The blocks of samples not yet claimed, from both ends.
struct TwoEnded<'a, S> {
    source: &'a S,
    location_pos: &'a LocationPositions,
    /// Unclaimed blocks: `front..back`.
    unclaimed: Mutex<(usize, usize)>,
}

/// What one thread interned: its table, and its samples' slots in it, in
/// the order it interned them.
struct Part {
    table: StackTable,
    slots: Slots,
    /// Blocks interned, in the order interned.
    blocks: Vec<usize>,
    stack: Vec<u32>,
    buffer: pprof::Sample,
}

impl Part {
    fn new(samples: usize) -> Part {
        Part {
            table: StackTable::with_capacity(samples / 4),
            slots: Vec::with_capacity(samples),
            blocks: Vec::new(),
            stack: Vec::new(),
            buffer: pprof::Sample::new(),
        }
    }

    fn intern<S: ProfileSamples>(
        &mut self,
        source: &S,
        location_pos: &LocationPositions,
        samples: std::ops::Range<usize>,
    ) -> Result<(), BridgeError> {
        for i in samples {
            let s = source.sample_fields(i, LOCATIONS, &mut self.buffer);
            self.stack.clear();
            for (j, id) in s.location_id.iter().enumerate() {
                // Location positions fit in u32 (messages are under 2 GiB).
                let pos = location_pos.get(*id).ok_or_else(|| {
                    unresolved(format!("sample[{i}].location_id[{j}]"), "location", *id)
                })?;
                self.stack.push(pos);
            }
            self.slots.push(self.table.intern(&self.stack));
        }
        Ok(())
    }
}

impl<'a, S: ProfileSamples> TwoEnded<'a, S> {
    pub fn new(source: &'a S, location_pos: &'a LocationPositions) -> Self {
        let blocks = source.sample_count().div_ceil(BLOCK);
        TwoEnded {
            source,
            location_pos,
            unclaimed: Mutex::new((0, blocks)),
        }
    }

    fn claim(&self, from_front: bool) -> Option<usize> {
        let mut unclaimed = self.unclaimed.lock().unwrap_or_else(|e| e.into_inner());
        let (front, back) = &mut *unclaimed;
        if front == back {
            return None;
        }
        Some(if from_front {
            *front += 1;
            *front - 1
        } else {
            *back -= 1;
            *back
        })
    }

    /// The samples of block `block`.
    fn block_samples(&self, block: usize) -> std::ops::Range<usize> {
        block * BLOCK..((block + 1) * BLOCK).min(self.source.sample_count())
    }

    /// Interns blocks from one end until the two ends meet.
    pub fn run(&self, from_front: bool) -> Result<Part, BridgeError> {
        let count = self.source.sample_count();
        let mut part = Part::new(if from_front { count } else { count / 2 });
        while let Some(block) = self.claim(from_front) {
            part.intern(self.source, self.location_pos, self.block_samples(block))?;
            part.blocks.push(block);
        }
        Ok(part)
    }

    /// The slots of every sample and the table, as [`intern_all`] gives
    /// them: the back part's stacks are added to the front part's table in
    /// sample order.
    pub fn merge(
        &self,
        front: Result<Part, BridgeError>,
        back: Result<Part, BridgeError>,
    ) -> Result<(Slots, StackTable), BridgeError> {
        let (mut front, back) = match (front, back) {
            (Ok(front), Ok(back)) => (front, back),
            // Which sample fails first is what one thread would report.
            _ => return intern_all(self.source, self.location_pos),
        };
        // The back part interned its blocks last to first; visit them first
        // to last, each sample's slot in the back table mapped to the
        // merged one when first seen.
        // (block, where its slots start in `back.slots`, how many).
        let mut runs: Vec<(usize, usize, usize)> = Vec::with_capacity(back.blocks.len());
        let mut offset = 0;
        for &block in &back.blocks {
            let len = self.block_samples(block).len();
            runs.push((block, offset, len));
            offset += len;
        }
        runs.sort_unstable();
        let mut merged: FxHashMap<(u64, u64), (u64, u64)> = FxHashMap::default();
        let mut slots = front.slots;
        for (_, offset, len) in runs {
            for &slot in &back.slots[offset..offset + len] {
                let final_slot = *merged
                    .entry(slot)
                    .or_insert_with(|| front.table.intern(back.table.stack(slot)));
                slots.push(final_slot);
            }
        }
        Ok((slots, front.table))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Samples with stacks drawn from a few shapes, so stacks repeat, some
    /// first seen in the back half only, and an empty one.
    fn profile(samples: usize) -> pprof::Profile {
        let mut p = pprof::Profile::new();
        for id in 1..=40u64 {
            p.location.push(pprof::Location {
                id,
                ..Default::default()
            });
        }
        let mut rng = protoprof_synth::Rng::new(7);
        for i in 0..samples {
            let depth = if i % 997 == 0 { 0 } else { 1 + rng.below(6) };
            let late = if i > samples * 2 / 3 { 20 } else { 0 };
            let location_id = (0..depth)
                .map(|_| 1 + late + rng.below(if late > 0 { 20 } else { 8 }) as u64)
                .collect();
            p.sample.push(pprof::Sample {
                location_id,
                ..Default::default()
            });
        }
        p
    }

    fn positions(p: &pprof::Profile) -> LocationPositions {
        crate::tables::id_positions(p.location.iter().map(|l| l.id), "location").unwrap()
    }

    fn indices(table: StackTable) -> Vec<i64> {
        table.into_indices()
    }

    /// Whatever the meeting point of the two ends, the merged result is the
    /// one-thread result.
    #[test]
    fn two_ends_merge_into_what_one_thread_interns() {
        let p = profile(5 * BLOCK + 123);
        let pos = positions(&p);
        let (slots, table) = intern_all(&p, &pos).unwrap();
        let expected = (slots, indices(table));
        let blocks = p.sample.len().div_ceil(BLOCK);
        for front_blocks in 0..=blocks {
            let work = TwoEnded::new(&p, &pos);
            *work.unclaimed.lock().unwrap() = (0, blocks);
            // The front thread takes `front_blocks`, the back the rest.
            let mut front = Part::new(0);
            for block in 0..front_blocks {
                assert_eq!(work.claim(true), Some(block));
                front.intern(&p, &pos, work.block_samples(block)).unwrap();
                front.blocks.push(block);
            }
            let back = work.run(false).unwrap();
            let (slots, table) = work.merge(Ok(front), Ok(back)).unwrap();
            assert_eq!((slots, indices(table)), expected, "front {front_blocks}");
        }
    }

    #[test]
    fn both_ends_on_threads_give_the_one_thread_result() {
        let p = profile(9 * BLOCK + 5);
        let pos = positions(&p);
        let (slots, table) = intern_all(&p, &pos).unwrap();
        let work = TwoEnded::new(&p, &pos);
        let (back, front) = both(true, || work.run(false), || work.run(true));
        let (merged_slots, merged_table) = work.merge(front, back).unwrap();
        assert_eq!(merged_slots, slots);
        assert_eq!(indices(merged_table), indices(table));
    }

    #[test]
    fn an_unresolved_location_is_reported_at_the_first_sample_that_has_it() {
        let mut p = profile(4 * BLOCK);
        p.sample[3 * BLOCK + 1].location_id = vec![999];
        p.sample[BLOCK + 2].location_id = vec![998];
        let pos = positions(&p);
        let work = TwoEnded::new(&p, &pos);
        let back = work.run(false);
        let front = work.run(true);
        let Err(error) = work.merge(front, back) else {
            panic!("a missing location is an error");
        };
        let error = error.to_string();
        assert!(error.contains(&format!("sample[{}]", BLOCK + 2)), "{error}");
    }
}
