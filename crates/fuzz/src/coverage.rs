//! Edge coverage from LLVM's SanitizerCoverage, on stable Rust.
//!
//! `cargo xtask fuzz` builds this crate with `-Cpasses=sancov-module` and
//! `-sanitizer-coverage-inline-8bit-counters`: every instrumented edge then
//! bumps a byte counter, and each object file's constructor hands its counter
//! array to [`__sanitizer_cov_8bit_counters_init`] below. Without those flags
//! nothing registers, [`instrumented`] is false, and the fuzzer mutates
//! blindly (as the test suite's smoke run does).

use std::sync::Mutex;

/// Counter arrays registered by instrumented object files, as (start, len).
static REGIONS: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());

/// Called by LLVM's module constructors, once per instrumented object file.
///
/// # Safety
/// `start..stop` is a counter array that lives as long as the program.
#[no_mangle]
pub unsafe extern "C" fn __sanitizer_cov_8bit_counters_init(start: *mut u8, stop: *mut u8) {
    let len = (stop as usize).saturating_sub(start as usize);
    if len > 0 {
        let mut regions = REGIONS.lock().unwrap_or_else(|e| e.into_inner());
        if !regions.iter().any(|&(s, _)| s == start as usize) {
            regions.push((start as usize, len));
        }
    }
}

/// Whether any counters were registered (the build was instrumented).
pub fn instrumented() -> bool {
    edge_count() > 0
}

/// How many edges are instrumented in all.
pub fn edge_count() -> usize {
    regions().iter().map(|&(_, len)| len).sum()
}

fn regions() -> Vec<(usize, usize)> {
    REGIONS.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Every counter's hit-count bucket seen so far, as in AFL: a feature is an
/// edge taken 1, 2, 3, 4–7, 8–15, 16–31, 32–127 or 128+ times in one run.
#[derive(Default)]
pub struct CoverageMap {
    regions: Vec<(usize, usize)>,
    seen: Vec<u8>,
}

impl CoverageMap {
    /// A map over the counters registered so far (call after `main` starts:
    /// the constructors have run by then).
    pub fn new() -> Self {
        let regions = regions();
        let total = regions.iter().map(|&(_, len)| len).sum();
        CoverageMap {
            regions,
            seen: vec![0; total],
        }
    }

    /// Zeroes every counter before a run.
    pub fn reset_counters(&self) {
        for &(start, len) in &self.regions {
            // SAFETY: the region was registered by LLVM's constructor as a
            // counter array of `len` bytes that lives for the whole program;
            // the fuzzer is single-threaded.
            unsafe { std::ptr::write_bytes(start as *mut u8, 0, len) };
        }
    }

    /// Folds the counters of the run just made into the map; returns how
    /// many features it had that no earlier run had.
    pub fn absorb(&mut self) -> usize {
        let mut new = 0;
        let mut at = 0;
        for &(start, len) in &self.regions {
            let counters = start as *const u8;
            let seen = &mut self.seen[at..at + len];
            // Most counters stay 0 in a run: skip them 64 at a time (this
            // loop is instrumented too, so it is kept short).
            let mut i = 0;
            while i < len {
                let n = (len - i).min(64);
                if n < 64 || block_is_hit(counters, i) {
                    for (j, seen) in seen[i..i + n].iter_mut().enumerate() {
                        // SAFETY: as in `reset_counters`; `i + j < len`.
                        let bit = bucket(unsafe { *counters.add(i + j) });
                        if *seen & bit != bit {
                            *seen |= bit;
                            new += 1;
                        }
                    }
                }
                i += n;
            }
            at += len;
        }
        new
    }

    /// Edges taken at least once so far.
    pub fn edges_covered(&self) -> usize {
        self.seen.iter().filter(|&&s| s != 0).count()
    }

    /// Features (edge, hit-count bucket) seen so far.
    pub fn features(&self) -> usize {
        self.seen.iter().map(|s| s.count_ones() as usize).sum()
    }

    /// Edges instrumented in all.
    pub fn edges_total(&self) -> usize {
        self.seen.len()
    }
}

/// Whether any of the 64 counters from `counters + i` is non-zero.
fn block_is_hit(counters: *const u8, i: usize) -> bool {
    // SAFETY: the caller checked that 64 counters follow `i` in the region.
    let words: [u64; 8] = unsafe { std::ptr::read_unaligned(counters.add(i) as *const [u64; 8]) };
    words.iter().fold(0, |any, w| any | w) != 0
}

/// AFL's hit-count bucket of a counter, as one bit.
fn bucket(count: u8) -> u8 {
    match count {
        0 => 0,
        1 => 1,
        2 => 2,
        3 => 4,
        4..=7 => 8,
        8..=15 => 16,
        16..=31 => 32,
        32..=127 => 64,
        128..=255 => 128,
    }
}

#[cfg(test)]
mod tests {
    use super::bucket;

    #[test]
    fn buckets_are_single_bits_that_grow_with_the_count() {
        let mut last = 0;
        for count in 1..=255u8 {
            let bit = bucket(count);
            assert_eq!(bit.count_ones(), 1, "{count}");
            assert!(bit >= last);
            last = bit;
        }
    }
}
