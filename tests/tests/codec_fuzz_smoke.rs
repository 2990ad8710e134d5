//! The fuzz targets in the test suite: a deterministic smoke run of
//! thousands of mutations of corpus files, and every input a campaign ever
//! saved (`tests/fuzz-regressions/<target>/`), replayed on its target. (The
//! campaign itself: `cargo xtask fuzz`; docs/codec.md, "Fuzzing".)

use protoprof_fuzz::campaign::{capture_panics, read_inputs, run_once};
use protoprof_fuzz::{mutate, run_all, target, Rng};
use protoprof_tests::{corpus_dir, files_under};

const MUTATIONS: usize = 3000;

#[test]
fn mutated_corpus_files_never_panic_a_target() {
    let Some(corpus) = corpus_dir() else { return };
    // Small seeds keep the run quick; they cover every form and schema.
    let seeds: Vec<Vec<u8>> = files_under(&corpus)
        .into_iter()
        .filter(|p| std::fs::metadata(p).unwrap().len() <= 64 << 10)
        .map(|p| std::fs::read(p).unwrap())
        .collect();
    assert!(seeds.len() >= 40, "{} seeds", seeds.len());
    let mut rng = Rng::new(0x5eed);
    capture_panics();
    let mut failure = None;
    for _ in 0..MUTATIONS {
        let input = mutate(&seeds[rng.below(seeds.len())], &mut rng);
        if let Some((target, message)) = run_all(&input) {
            failure = Some((target, message, input));
            break;
        }
    }
    if let Some((target, message, input)) = failure {
        let hex: String = input.iter().map(|b| format!("{b:02x}")).collect();
        panic!("target `{target}` panicked ({message}) on input {hex}");
    }
}

#[test]
fn every_saved_fuzz_finding_stays_fixed() {
    let root = protoprof_tests::workspace_root().join("tests/fuzz-regressions");
    let mut replayed = 0;
    let mut failures = Vec::new();
    capture_panics();
    for entry in std::fs::read_dir(&root).unwrap() {
        let dir = entry.unwrap().path();
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let target = target(&name).unwrap_or_else(|| panic!("{}: no such target", dir.display()));
        for input in read_inputs(&dir).unwrap() {
            replayed += 1;
            // Its own target, and every other: a fix must not move the panic.
            if let Some(message) = run_once(target, &input) {
                failures.push(format!("{name}: {message}"));
            }
            if let Some((other, message)) = run_all(&input) {
                failures.push(format!("{name} input on {other}: {message}"));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
    assert!(replayed > 0, "no saved inputs under {}", root.display());
}
