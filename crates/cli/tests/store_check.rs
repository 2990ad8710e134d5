//! `store check` on a store whose files were damaged: a truncated file
//! and a file of another table are listed, `--repair` moves them aside,
//! and the references rows make to files that are gone are named.

mod common;

use std::path::{Path, PathBuf};

use common::{ok, run};
use protoprof_tests::corpus_dir;

/// The `.parquet` files of `table` in the store `dir/fleet`.
fn files_of(d: &Path, table: &str) -> Vec<PathBuf> {
    let mut files = protoprof_tests::files_under(&d.join("fleet").join(table));
    files.retain(|f| f.extension().is_some_and(|e| e == "parquet"));
    files.sort();
    files
}

#[test]
fn check_lists_damaged_files_repair_moves_them_and_dangling_references_are_named() {
    let Some(corpus) = corpus_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (service, file) in [
        ("a", "pprof/real/go-cpu.pb.gz"),
        ("b", "pprof/real/go-heap.pb.gz"),
    ] {
        let path = corpus.join(file);
        ok(
            d,
            &[
                "store",
                "add",
                "fleet",
                "--service",
                service,
                path.to_str().unwrap(),
            ],
        );
    }
    let clean = ok(d, &["store", "check", "fleet"]);
    assert!(
        clean.ends_with("12 files read, 0 unreadable, 0 moved aside; every reference found\n"),
        "{clean}"
    );
    // A samples file cut in half, a profiles file put among the stacks.
    let samples = &files_of(d, "samples")[0];
    let bytes = std::fs::read(samples).unwrap();
    std::fs::write(samples, &bytes[..bytes.len() / 2]).unwrap();
    let stacks = files_of(d, "stacks");
    let stranger = stacks[1].with_file_name("stranger.parquet");
    std::fs::copy(&files_of(d, "profiles")[1], &stranger).unwrap();
    let (status, out, err) = run(d, &["store", "check", "fleet"]);
    assert_eq!(status, 1, "{out}{err}");
    let shown = |f: &Path| f.strip_prefix(d).unwrap().display().to_string();
    let cut = format!("{}: not a readable Parquet file", shown(samples));
    assert!(out.contains(&cut), "{out}");
    let wrong = format!("{}: not a file of the stacks table", shown(&stranger));
    assert!(out.contains(&wrong), "{out}");
    assert!(
        out.contains("13 files read, 2 unreadable, 0 moved aside; references not looked up"),
        "{out}"
    );
    // The other service's stacks gone too: its samples name stacks no file holds.
    std::fs::remove_file(&stacks[1]).unwrap();
    let (status, out, err) = run(d, &["store", "check", "fleet", "--repair"]);
    assert_eq!(status, 1, "{out}{err}");
    assert!(out.contains("; moved to "), "{out}");
    assert!(d.join("fleet/.quarantine/stacks").exists(), "{out}");
    assert!(
        out.contains("samples whose stack is not in stacks (one: "),
        "{out}"
    );
    assert!(!samples.exists() && !stranger.exists());
    // Checked again: nothing unreadable is left, the dangling stacks are.
    let (status, out, err) = run(d, &["store", "check", "fleet"]);
    assert_eq!(status, 1, "{out}{err}");
    assert!(out.contains("10 files read, 0 unreadable"), "{out}");
}
