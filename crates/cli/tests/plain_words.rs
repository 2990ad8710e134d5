//! What the commands print for people never shows Rust's names: no
//! `Some(…)`, no enum variants, no tuples or debug forms of generated
//! messages, on every file of the corpus that reads as a profile, through
//! the commands a user runs first.

mod common;

use std::path::Path;

use common::run;
use protoprof_tests::{corpus_dir, files_under};

/// Rust's debug forms as they show in text meant for people.
fn rust_names() -> regex::Regex {
    regex::Regex::new(concat!(
        r"\bSome\(|\bNone\b|\bOk\(|\bErr\(|special_fields|MessageField|SpecialFields",
        r#"|\b(String|Int|Double|Bool|Bytes|Array|Kvlist)Value\(|\[\("|\("[^"]*", ""#,
    ))
    .unwrap()
}

/// Each line of `output` that shows a Rust name.
fn offending(output: &str) -> Vec<String> {
    let names = rust_names();
    output
        .lines()
        .filter(|l| names.is_match(l))
        .map(str::to_string)
        .collect()
}

#[test]
fn the_pattern_finds_what_it_looks_for() {
    for rust in [
        "pprof.scope.sample_type_order: ArrayValue(ArrayValue { values: [AnyValue { value: Some(IntValue(0)) } ] })",
        r#"has sample types [("samples", "count")] (period ("cpu", "nanoseconds"))"#,
    ] {
        assert!(!offending(rust).is_empty(), "{rust}");
    }
    assert!(offending("main.burn 510ms (inline); none of them").is_empty());
}

#[test]
fn no_command_shows_rust_names_on_the_corpus() {
    let Some(corpus) = corpus_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut files: Vec<_> = ["pprof", "otlp"]
        .iter()
        .flat_map(|kind| files_under(&corpus.join(kind)))
        .filter(|f| !f.to_string_lossy().ends_with(".md"))
        .collect();
    files.sort();
    let mut failures = Vec::new();
    let mut check = |what: String, (status, stdout, stderr): (i32, String, String)| {
        let lines: Vec<String> = offending(&stdout)
            .into_iter()
            .chain(offending(&stderr))
            .collect();
        if !lines.is_empty() || status > 2 {
            failures.push(format!("{what} (exit {status}):\n  {}", lines.join("\n  ")));
        }
    };
    for (n, file) in files.iter().enumerate() {
        let f = file.to_str().unwrap();
        for command in [
            &["inspect", f][..],
            &["validate", f],
            &["top", "-n", "5", f],
            &["tags", f],
        ] {
            check(format!("{command:?}"), run(d, command));
        }
        let store = format!("store-{n}");
        check(
            format!("store add {f}"),
            run(d, &["store", "add", &store, f]),
        );
        if Path::new(d).join(&store).exists() {
            for command in [
                &["top", "-n", "5", "--store", &store][..],
                &["query", "--store", &store, "SELECT * FROM profiles"],
            ] {
                check(format!("{command:?} of {f}"), run(d, command));
            }
        }
    }
    // All together: profiles of other sample types in one selection.
    for file in &files {
        let _ = run(d, &["store", "add", "all", file.to_str().unwrap()]);
    }
    check("top --store all".into(), run(d, &["top", "--store", "all"]));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
