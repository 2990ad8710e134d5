//! Numbering byte keys in the order first seen, without keeping a copy of
//! every key.
//!
//! pprof → v1development numbers each sample's stack and label list: the
//! stack table and the label sets. A key is read from the sample (its
//! bytes in the input when the source holds them so), so the first holder
//! of a number can always give its key again. Keys are hashed; a hash seen
//! before is compared with the first holder's key read again, so no key is
//! ever taken for another on its hash alone. A key is copied the first time
//! it repeats, and its later repeats compare with the copy: keys that
//! repeat are usually few and short (a thread label, a hot stack), and keys
//! that never repeat (every stack of some profiles) are never copied.

use rustc_hash::FxHashMap;

/// How keys are hashed (a parameter so that tests can make every key
/// collide).
pub(crate) type KeyHash = fn(&[u8]) -> u64;

/// The hash every numbering uses outside tests.
pub(crate) fn fx_hash(key: &[u8]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = rustc_hash::FxHasher::default();
    key.hash(&mut hasher);
    hasher.finish()
}

/// A number not given yet: the key is new.
pub(crate) enum Numbered {
    Seen(u32),
    New(u32),
}

/// A number's key is not in `KeyNumbering::copies` (not repeated yet).
const NOT_COPIED: u32 = u32::MAX;

/// Keys numbered 0, 1, 2, … in the order first seen.
pub(crate) struct KeyNumbering {
    hash: KeyHash,
    /// Hash -> the first number with that hash and where its key is
    /// copied in `copies`; further numbers with the same hash (rare) in
    /// `collisions`.
    first: FxHashMap<u64, (u32, u32)>,
    collisions: FxHashMap<u64, Vec<u32>>,
    /// The keys of repeated numbers, each after its length (4 bytes, little
    /// endian).
    copies: Vec<u8>,
    count: u32,
}

impl KeyNumbering {
    pub fn new(hash: KeyHash) -> Self {
        KeyNumbering {
            hash,
            first: FxHashMap::default(),
            collisions: FxHashMap::default(),
            copies: Vec::new(),
            count: 0,
        }
    }

    /// The number of `key`: one seen before (`same(n, key)` says whether
    /// number `n`'s first holder has `key`), or the next one.
    pub fn number(&mut self, key: &[u8], same: impl FnMut(u32, &[u8]) -> bool) -> Numbered {
        self.number_hashed(key, self.hash(key), same)
    }

    /// The hash [`Self::number`] looks `key` up by.
    pub fn hash(&self, key: &[u8]) -> u64 {
        (self.hash)(key)
    }

    /// [`Self::number`] with the key's hash already made ([`Self::hash`]).
    pub fn number_hashed(
        &mut self,
        key: &[u8],
        hash: u64,
        mut same: impl FnMut(u32, &[u8]) -> bool,
    ) -> Numbered {
        if let Some(&(n, copy)) = self.first.get(&hash) {
            if copy != NOT_COPIED {
                if self.copy(copy) == key {
                    return Numbered::Seen(n);
                }
            } else if same(n, key) {
                self.copy_key(hash, n, key);
                return Numbered::Seen(n);
            }
            for &n in self.collisions.get(&hash).map_or(&[][..], Vec::as_slice) {
                if same(n, key) {
                    return Numbered::Seen(n);
                }
            }
        }
        let n = self.count;
        self.count += 1;
        match self.first.entry(hash) {
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert((n, NOT_COPIED));
            }
            std::collections::hash_map::Entry::Occupied(_) => {
                self.collisions.entry(hash).or_default().push(n)
            }
        }
        Numbered::New(n)
    }

    /// Reads what numbering the keys with these hashes will read, side by
    /// side: each lookup misses the cache (the map is large and keys come
    /// in no order), and independent misses overlap where numbering's, one
    /// key after the other, do not.
    pub fn prefetch(&self, hashes: impl Iterator<Item = u64>) {
        let mut touched = 0u8;
        for hash in hashes {
            if let Some(&(_, copy)) = self.first.get(&hash) {
                touched ^= self.copies.get(copy as usize + 4).copied().unwrap_or(0);
            }
        }
        std::hint::black_box(touched);
    }

    /// The copy of a key at `at` in `copies`.
    fn copy(&self, at: u32) -> &[u8] {
        let at = at as usize;
        let len = u32::from_le_bytes(self.copies[at..at + 4].try_into().expect("4 bytes"));
        &self.copies[at + 4..at + 4 + len as usize]
    }

    /// Copies number `n`'s key, the first with hash `hash`.
    fn copy_key(&mut self, hash: u64, n: u32, key: &[u8]) {
        // Messages are under 4 GiB, and so is every key copied.
        let at = self.copies.len() as u32;
        (self.copies).extend_from_slice(&(key.len() as u32).to_le_bytes());
        self.copies.extend_from_slice(key);
        self.first.insert(hash, (n, at));
    }
}

/// Samples whose keys are looked up together before they are numbered.
pub(crate) const BATCH: usize = 16;

/// Samples `0..count` in runs of [`BATCH`].
pub(crate) fn batches(count: usize) -> impl Iterator<Item = std::ops::Range<usize>> {
    (0..count)
        .step_by(BATCH)
        .map(move |start| start..(start + BATCH).min(count))
}

/// The keys of a run of samples that the input holds as they are, each
/// with its hash, looked up together ([`KeyNumbering::prefetch`]) so that
/// numbering them one by one then finds the map in cache.
pub(crate) struct KeyBatch<'k> {
    samples: std::ops::Range<usize>,
    found: [Option<(&'k [u8], u64)>; BATCH],
}

impl<'k> KeyBatch<'k> {
    /// The keys `input_key` gives for `samples` (at most [`BATCH`]),
    /// hashed and looked up in `numbering`.
    pub fn read(
        numbering: &KeyNumbering,
        samples: std::ops::Range<usize>,
        input_key: impl Fn(usize) -> Option<&'k [u8]>,
    ) -> Self {
        let mut found = [None; BATCH];
        for (slot, i) in found.iter_mut().zip(samples.clone()) {
            *slot = input_key(i).map(|key| (key, numbering.hash(key)));
        }
        numbering.prefetch(found.iter().flatten().map(|&(_, hash)| hash));
        KeyBatch { samples, found }
    }

    /// Each sample with its key and hash, `None` where the input does not
    /// hold the key.
    pub fn iter(&self) -> impl Iterator<Item = (usize, Option<(&'k [u8], u64)>)> + '_ {
        self.samples.clone().zip(self.found.iter().copied())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbers(keys: &[&[u8]], hash: KeyHash) -> Vec<String> {
        let mut numbering = KeyNumbering::new(hash);
        let mut first: Vec<&[u8]> = Vec::new();
        let mut out = Vec::new();
        for key in keys {
            match numbering.number(key, |n, key| first[n as usize] == key) {
                Numbered::Seen(n) => out.push(format!("{n}")),
                Numbered::New(n) => {
                    assert_eq!(n as usize, first.len());
                    first.push(key);
                    out.push(format!("{n}*"));
                }
            }
        }
        out
    }

    #[test]
    fn keys_are_numbered_in_the_order_first_seen_even_when_every_hash_collides() {
        let keys: [&[u8]; 8] = [b"ab", b"c", b"ab", b"ab", b"", b"ba", b"c", b""];
        for hash in [fx_hash as KeyHash, |_: &[u8]| 7] {
            let expected = ["0*", "1*", "0", "0", "2*", "3*", "1", "2"];
            assert_eq!(numbers(&keys, hash), expected);
        }
    }
}
