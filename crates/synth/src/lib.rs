//! Realistic pprof profiles of any size, generated deterministically from a
//! seed, for benchmarks and scaling tests (generated files stay out of git).
//!
//! Shape: `functions` functions spread over 97 packages, `locations`
//! locations (one in eight with an inlined caller), stacks drawn from a set
//! of call paths whose popularity falls off like real profiles (a few hot
//! paths, a long tail) so stacks share prefixes, two sample types
//! (`samples/count`, `cpu/nanoseconds`), a string label `thread` and a
//! numeric label `bytes` with unit `bytes`. [`Stacks::Distinct`] is the
//! shape that is hardest on interning: every sample's stack its own.

#![warn(missing_docs)]

use std::collections::HashSet;

use protobuf::{Message, MessageField};
use protoprof_model_pprof::perftools::profiles::{
    Function, Label, Line, Location, Mapping, Profile, Sample, ValueType,
};

/// How samples' stacks are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Stacks {
    /// From call paths that share roots, a few hot and a long tail.
    #[default]
    SharedPaths,
    /// Each sample its own stack: 10 to 49 locations drawn at random.
    Distinct,
}

/// What to generate.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    /// Samples in the profile.
    pub samples: usize,
    /// Entries of the location table.
    pub locations: usize,
    /// Entries of the function table.
    pub functions: usize,
    /// Distinct call paths samples are drawn from ([`Stacks::SharedPaths`]).
    pub paths: usize,
    /// Mean stack depth (depths spread from half to one and a half of it).
    pub mean_depth: usize,
    /// How samples' stacks are drawn.
    pub stacks: Stacks,
    /// The seed: one seed, one profile.
    pub seed: u64,
}

impl Shape {
    /// About `bytes` of encoded profile whose stacks are all distinct: a
    /// million samples (about 110 MB) over 200,000 locations and 50,000
    /// functions, tables in proportion at other sizes.
    pub fn distinct_of_size(bytes: usize, seed: u64) -> Shape {
        let with = |samples: usize| {
            let samples = samples.max(10);
            Shape {
                samples,
                locations: (samples / 5).max(50),
                functions: (samples / 20).max(20),
                paths: 0,
                mean_depth: 30,
                stacks: Stacks::Distinct,
                seed,
            }
        };
        let guess = with(bytes / 110);
        let measured = profile(&guess).compute_size() as usize;
        with((guess.samples as f64 * bytes as f64 / measured.max(1) as f64) as usize)
    }

    /// About `bytes` of encoded profile (within a few percent), in the
    /// proportions of a large service's CPU profile. Calibrated by
    /// generating once at a guessed sample count and rescaling.
    pub fn of_size(bytes: usize, seed: u64) -> Shape {
        let guess = Shape::with_samples(bytes / 80, seed);
        let measured = profile(&guess).compute_size() as usize;
        Shape::with_samples(
            (guess.samples as f64 * bytes as f64 / measured.max(1) as f64) as usize,
            seed,
        )
    }

    /// `samples` samples and tables in proportion to them.
    pub fn with_samples(samples: usize, seed: u64) -> Shape {
        let samples = samples.max(10);
        Shape {
            samples,
            locations: (samples / 10).clamp(50, 200_000),
            functions: (samples / 25).clamp(20, 80_000),
            paths: (samples / 4).clamp(10, 250_000),
            mean_depth: 24,
            stacks: Stacks::SharedPaths,
            seed,
        }
    }
}

/// A small deterministic generator (xorshift64*), shared by protoprof's
/// generators, fuzzer and property tests so that one seed means one input.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator started from `seed` (any value, 0 included).
    pub fn new(seed: u64) -> Rng {
        Rng(seed | 1) // xorshift never leaves 0
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    /// True once in `one_in` draws.
    pub fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }

    /// Skewed towards 0: the square of a uniform draw.
    pub fn skewed(&mut self, n: usize) -> usize {
        let u = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        ((u * u) * n as f64) as usize % n.max(1)
    }
}

/// Generates the profile `shape` describes.
pub fn profile(shape: &Shape) -> Profile {
    profile_drawn(shape, None)
}

/// One profile of a synthetic fleet, as a service's hosts send them: the
/// code of a service version is `shape` (its locations and call paths
/// drawn from `shape.seed`), and each profile's samples are drawn from
/// `samples_seed`, so profiles of one version share their tables and
/// differ in their samples. Taken at `time_nanos`, 10 s long.
pub fn fleet_profile(shape: &Shape, samples_seed: u64, time_nanos: i64) -> Profile {
    let mut p = Profile {
        time_nanos,
        ..profile_drawn(shape, Some(Rng::new(samples_seed)))
    };
    // As a runtime writes it: the locations its samples reach and their
    // functions, not the whole binary's.
    let reached: HashSet<u64> = p
        .sample
        .iter()
        .flat_map(|s| s.location_id.clone())
        .collect();
    p.location.retain(|l| reached.contains(&l.id));
    let called: HashSet<u64> = p
        .location
        .iter()
        .flat_map(|l| &l.line)
        .map(|l| l.function_id)
        .collect();
    p.function.retain(|f| called.contains(&f.id));
    label_sizes_by_site(&mut p);
    keep_used_strings(&mut p);
    p
}

/// Object sizes as Go's runtime writes them in its allocation profiles:
/// one of the allocator's size classes.
const SIZE_CLASSES: [i64; 12] = [8, 16, 24, 32, 48, 64, 96, 128, 256, 512, 1024, 4096];

/// Each sample's `bytes` label made its call path's object size, as a
/// runtime labels a site's allocations (the same size wherever the
/// site is met), where the generator draws a fresh number per sample: a
/// fleet's profiles then repeat their label sets as real ones do.
fn label_sizes_by_site(p: &mut Profile) {
    for sample in &mut p.sample {
        let site = (sample.location_id.iter()).fold(0xcbf2_9ce4_8422_2325u64, |h, id| {
            (h ^ id).wrapping_mul(0x100_0000_01b3)
        });
        let size = SIZE_CLASSES[(site % SIZE_CLASSES.len() as u64) as usize];
        for label in sample
            .label
            .iter_mut()
            .filter(|l| l.num != 0 || l.num_unit != 0)
        {
            label.num = size;
        }
    }
}

/// Drops the strings nothing refers to (the functions left out), keeping
/// the others' order.
fn keep_used_strings(p: &mut Profile) {
    let mut used = vec![false; p.string_table.len()];
    used[0] = true;
    for_each_string(p, &mut |i| used[*i as usize] = true);
    let mut new_index = vec![0i64; used.len()];
    let mut next = 0;
    for (i, keep) in used.iter().enumerate() {
        new_index[i] = next;
        next += i64::from(*keep);
    }
    for_each_string(p, &mut |i| *i = new_index[*i as usize]);
    let mut at = 0;
    p.string_table.retain(|_| (used[at], at += 1).0);
}

/// Calls `f` on every string index the generator writes.
fn for_each_string(p: &mut Profile, f: &mut dyn FnMut(&mut i64)) {
    for t in p.sample_type.iter_mut().chain(p.period_type.as_mut()) {
        f(&mut t.type_);
        f(&mut t.unit);
    }
    for l in p.sample.iter_mut().flat_map(|s| &mut s.label) {
        f(&mut l.key);
        f(&mut l.str);
        f(&mut l.num_unit);
    }
    for m in &mut p.mapping {
        f(&mut m.filename);
    }
    for func in &mut p.function {
        f(&mut func.name);
        f(&mut func.filename);
    }
    f(&mut p.default_sample_type);
}

/// The profile of `shape`, its samples drawn from `samples_rng` when given
/// (else from the shape's own generator, after the tables).
fn profile_drawn(shape: &Shape, samples_rng: Option<Rng>) -> Profile {
    let mut rng = Rng::new(shape.seed);
    let mut strings: Vec<String> = [
        "",
        "samples",
        "count",
        "cpu",
        "nanoseconds",
        "thread",
        "bytes",
        "/usr/bin/service",
    ]
    .map(String::from)
    .to_vec();
    let threads: Vec<i64> = (0..16)
        .map(|i| intern(format!("worker-{i}"), &mut strings))
        .collect();
    let functions = functions(shape, &mut strings);
    let mapping = Mapping {
        id: 1,
        memory_start: 0x400000,
        memory_limit: 0x400000 + 0x1000 * shape.locations as u64 + 0x1000,
        filename: 7,
        has_functions: true,
        has_filenames: true,
        has_line_numbers: true,
        ..Default::default()
    };
    // The generator's draws come in this order: locations, paths, samples.
    let locations = locations(shape, &mut rng);
    let paths = match shape.stacks {
        Stacks::SharedPaths => call_paths(shape, &mut rng),
        Stacks::Distinct => Vec::new(),
    };
    let mut rng = samples_rng.unwrap_or(rng);
    let samples = samples(shape, &mut rng, &paths, &threads);
    let value_type = |type_, unit| ValueType {
        type_,
        unit,
        ..Default::default()
    };
    Profile {
        sample_type: vec![value_type(1, 2), value_type(3, 4)],
        sample: samples,
        mapping: vec![mapping],
        location: locations,
        function: functions,
        string_table: strings,
        time_nanos: 1_700_000_000_000_000_000,
        duration_nanos: 10_000_000_000,
        period_type: MessageField::some(value_type(3, 4)),
        period: 10_000_000,
        default_sample_type: 3,
        ..Default::default()
    }
}

fn intern(s: String, strings: &mut Vec<String>) -> i64 {
    strings.push(s);
    (strings.len() - 1) as i64
}

fn functions(shape: &Shape, strings: &mut Vec<String>) -> Vec<Function> {
    (0..shape.functions)
        .map(|i| {
            let package = i % 97;
            let name = format!("example.com/svc/pkg{package}.Handler{i}.Serve");
            Function {
                id: i as u64 + 1,
                name: intern(name, strings),
                system_name: 0,
                filename: intern(format!("pkg{package}/handler{}.go", i % 31), strings),
                start_line: (i % 500) as i64 + 1,
                ..Default::default()
            }
        })
        .collect()
}

/// Locations in one mapping, one in eight with an inlined caller.
fn locations(shape: &Shape, rng: &mut Rng) -> Vec<Location> {
    (0..shape.locations)
        .map(|i| {
            let mut line = vec![Line {
                function_id: rng.below(shape.functions) as u64 + 1,
                line: rng.below(2000) as i64 + 1,
                ..Default::default()
            }];
            if i % 8 == 0 {
                line.push(Line {
                    function_id: rng.below(shape.functions) as u64 + 1,
                    line: rng.below(2000) as i64 + 1,
                    ..Default::default()
                });
            }
            Location {
                id: i as u64 + 1,
                mapping_id: 1,
                address: 0x401000 + 0x10 * i as u64,
                line,
                ..Default::default()
            }
        })
        .collect()
}

/// Call paths: each extends a shorter, earlier path, so stacks share roots.
fn call_paths(shape: &Shape, rng: &mut Rng) -> Vec<Vec<u64>> {
    let mut paths: Vec<Vec<u64>> = Vec::with_capacity(shape.paths);
    for _ in 0..shape.paths {
        let depth = shape.mean_depth / 2 + rng.below(shape.mean_depth + 1);
        let mut path: Vec<u64> = match paths.len() {
            0 => Vec::new(),
            n => paths[rng.skewed(n)]
                .iter()
                .rev()
                .take(depth.saturating_sub(3))
                .rev()
                .copied()
                .collect(),
        };
        while path.len() < depth {
            path.insert(0, rng.below(shape.locations) as u64 + 1);
        }
        paths.push(path);
    }
    paths
}

/// Samples on skewed paths, each with a thread label and, one in four, a
/// `bytes` label.
fn samples(shape: &Shape, rng: &mut Rng, paths: &[Vec<u64>], threads: &[i64]) -> Vec<Sample> {
    (0..shape.samples)
        .map(|_| {
            let count = 1 + rng.skewed(20) as i64;
            let mut label = vec![Label {
                key: 5,
                str: threads[rng.below(threads.len())],
                ..Default::default()
            }];
            if rng.below(4) == 0 {
                label.push(Label {
                    key: 6,
                    num: rng.below(1 << 20) as i64,
                    num_unit: 6,
                    ..Default::default()
                });
            }
            let location_id = match shape.stacks {
                Stacks::SharedPaths => paths[rng.skewed(paths.len())].clone(),
                Stacks::Distinct => (0..10 + rng.below(40))
                    .map(|_| rng.below(shape.locations) as u64 + 1)
                    .collect(),
            };
            Sample {
                location_id,
                value: vec![count, count * 10_000_000],
                label,
                ..Default::default()
            }
        })
        .collect()
}

/// The pprof inputs the criterion benches share, as (name, bytes): a 10 MB
/// profile generated here, and `target/synth/synth-100MB.pb` under
/// `workspace_root` when `cargo xtask gen-profiles` has written it.
pub fn bench_inputs(workspace_root: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut inputs = vec![(
        "synth-10MB".to_string(),
        profile(&Shape::of_size(10 << 20, 1))
            .write_to_bytes()
            .expect("a generated profile encodes"),
    )];
    let big = workspace_root.join("target/synth/synth-100MB.pb");
    if let Ok(bytes) = std::fs::read(big) {
        inputs.push(("synth-100MB".into(), bytes));
    }
    inputs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_close_to_the_asked_size() {
        let shape = Shape::of_size(2 << 20, 42);
        let a = profile(&shape).write_to_bytes().unwrap();
        let b = profile(&shape).write_to_bytes().unwrap();
        assert_eq!(a, b);
        let ratio = a.len() as f64 / f64::from(2u32 << 20);
        assert!(
            (0.9..1.1).contains(&ratio),
            "{} bytes for 2 MiB asked",
            a.len()
        );
    }

    #[test]
    fn distinct_stacks_are_distinct() {
        let p = profile(&Shape::distinct_of_size(500_000, 3));
        let stacks: std::collections::HashSet<&Vec<u64>> =
            p.sample.iter().map(|s| &s.location_id).collect();
        assert_eq!(stacks.len(), p.sample.len());
        assert!(p
            .sample
            .iter()
            .all(|s| (10..50).contains(&s.location_id.len())));
        let size = p.compute_size() as f64;
        assert!((0.9..1.1).contains(&(size / 500_000.0)), "{size}");
    }

    #[test]
    fn references_resolve() {
        let p = profile(&Shape::of_size(200_000, 1));
        let max_location = p.location.len() as u64;
        assert!(p
            .sample
            .iter()
            .flat_map(|s| &s.location_id)
            .all(|&id| (1..=max_location).contains(&id)));
        assert!(p
            .sample
            .iter()
            .all(|s| s.value.len() == p.sample_type.len()));
        let max_function = p.function.len() as u64;
        assert!(p
            .location
            .iter()
            .flat_map(|l| &l.line)
            .all(|l| (1..=max_function).contains(&l.function_id)));
        assert_eq!(p.string_table[0], "");
    }
}
