//! A deterministic fuzz smoke test: thousands of mutations of corpus files
//! through every decoder, none of which may panic. (Longer runs:
//! `cargo run --release -p protoprof-fuzz -- --seconds 600 ../shared/corpus`.)

use protoprof_fuzz::{mutate, run_all, Rng};
use protoprof_tests::{corpus_dir, files_under};

const MUTATIONS: usize = 3000;

#[test]
fn mutated_corpus_files_never_panic_a_decoder() {
    let Some(corpus) = corpus_dir() else { return };
    // Small seeds keep the run quick; they cover every form and schema.
    let seeds: Vec<Vec<u8>> = files_under(&corpus)
        .into_iter()
        .filter(|p| std::fs::metadata(p).unwrap().len() <= 64 << 10)
        .map(|p| std::fs::read(p).unwrap())
        .collect();
    assert!(seeds.len() >= 40, "{} seeds", seeds.len());
    let mut rng = Rng::new(0x5eed);
    std::panic::set_hook(Box::new(|_| {}));
    let mut failure = None;
    for _ in 0..MUTATIONS {
        let input = mutate(&seeds[rng.below(seeds.len())], &mut rng);
        if let Some(target) = run_all(&input) {
            failure = Some((target, input));
            break;
        }
    }
    let _ = std::panic::take_hook();
    if let Some((target, input)) = failure {
        let hex: String = input.iter().map(|b| format!("{b:02x}")).collect();
        panic!("target `{target}` panicked on input {hex}");
    }
}
