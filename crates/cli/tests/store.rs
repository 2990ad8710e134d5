//! The profile store on corpus profiles: reports over a selection equal
//! the reports of `merge` of the files it selects; what is stored comes
//! back equal in reports; DuckDB, which no one here wrote, reads the
//! layout to the same totals and top functions; bad input gets one line.

mod common;

use std::path::Path;

use common::{ok, run};
use protoprof_tests::corpus_dir;

/// (service, corpus files) added in one `store add` each; each service's
/// files in order of time, the order a selection merges profiles in.
const SERVICES: [(&str, &[&str]); 3] = [
    (
        "checkout",
        &["pprof/real/go-cpu.pb.gz", "pprof/go/go-cpu.pb.gz"],
    ),
    ("search", &["pprof/real/go-cpu-span-id-labels.pb.gz"]),
    (
        "heap one",
        &["pprof/real/go-heap.pb.gz", "pprof/go/go-heap.pb.gz"],
    ),
];

/// A store of the [`SERVICES`] in `dir/fleet`; the ids `store add` printed,
/// by file.
fn fleet(corpus: &Path, dir: &Path) -> Vec<(String, String)> {
    let mut ids = Vec::new();
    for (service, files) in SERVICES {
        let paths: Vec<String> = files
            .iter()
            .map(|f| corpus.join(f).to_str().unwrap().to_string())
            .collect();
        let mut args = vec!["store", "add", "fleet", "--service", service];
        args.extend(paths.iter().map(String::as_str));
        let out = ok(dir, &args);
        for line in out.lines() {
            let fields: Vec<&str> = line.split('\t').collect();
            assert_eq!(fields.len(), 4, "{line}");
            assert_eq!(fields[2], service, "{line}");
            ids.push((fields[1].to_string(), fields[0].to_string()));
        }
    }
    assert_eq!(ids.len(), 5);
    ids
}

/// `merge` of `files` (or the one file) as `dir/name`.
fn merged(corpus: &Path, dir: &Path, files: &[&str], name: &str) -> String {
    let paths: Vec<String> = files
        .iter()
        .map(|f| corpus.join(f).to_str().unwrap().to_string())
        .collect();
    match &paths[..] {
        [one] => one.clone(),
        _ => {
            let mut args = vec!["merge", "-o", name];
            args.extend(paths.iter().map(String::as_str));
            ok(dir, &args);
            name.to_string()
        }
    }
}

#[test]
fn reports_over_a_selection_equal_reports_of_the_merged_files() {
    let Some(corpus) = corpus_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fleet(&corpus, d);
    let reports: [&[&str]; 7] = [
        &["top"],
        &["top", "--cum", "-n", "15"],
        &["traces"],
        &["tags"],
        &["tree"],
        &["peek", "main"],
        &["callgraph"],
    ];
    // (selector, files it selects, extra options on both sides)
    let cases: [(&str, &[&str], &[&str]); 4] = [
        (r#"service.name="checkout""#, SERVICES[0].1, &[]),
        (
            r#"{service.name=~"check.*|sea.*"}"#,
            &[SERVICES[0].1[0], SERVICES[1].1[0], SERVICES[0].1[1]],
            &[],
        ),
        (
            r#"service.name="search", function!="nothing""#,
            SERVICES[1].1,
            &[],
        ),
        (
            r#"service.name="heap one""#,
            SERVICES[2].1,
            &["--sample-index", "alloc_space"],
        ),
    ];
    let mut compared = 0;
    for (n, (selector, files, extra)) in cases.iter().enumerate() {
        let file = merged(&corpus, d, files, &format!("merged-{n}.pb"));
        for report in reports {
            let mut theirs: Vec<&str> = report.to_vec();
            theirs.extend_from_slice(extra);
            let mut ours = theirs.clone();
            theirs.push(&file);
            ours.extend_from_slice(&["--store", "fleet", "--select", selector]);
            let expected = ok(d, &theirs);
            assert!(!expected.is_empty());
            assert!(
                ok(d, &ours) == expected,
                "{selector} {report:?}: differs from {file}"
            );
            compared += 1;
        }
    }
    assert_eq!(compared, 28);
}

#[test]
fn a_stored_profile_comes_back_equal_in_reports_and_times_select() {
    let Some(corpus) = corpus_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (file, id) in fleet(&corpus, d) {
        ok(
            d,
            &[
                "store",
                "get",
                "fleet",
                "--profile-id",
                &id,
                "-o",
                "back.pb.gz",
            ],
        );
        for report in [&["top"][..], &["traces"], &["tags"]] {
            let expected = ok(d, &[report, &[file.as_str()]].concat());
            let back = ok(d, &[report, &["back.pb.gz"]].concat());
            assert!(back == expected, "{file} {report:?}");
        }
    }
    // go-cpu.pb.gz starts before 2024 and real/go-cpu.pb.gz after it.
    let selected = |from: &str, to: &str| {
        let args = [
            "top",
            "--store",
            "fleet",
            "--select",
            r#"service.name="checkout""#,
        ];
        ok(
            d,
            &[&args[..], &["--from", from, "--to", to, "--format", "json"]].concat(),
        )
    };
    let one_file = |f: &str| {
        ok(
            d,
            &["top", "--format", "json", corpus.join(f).to_str().unwrap()],
        )
    };
    let (old, new) = (
        one_file("pprof/go/go-cpu.pb.gz"),
        one_file("pprof/real/go-cpu.pb.gz"),
    );
    assert_ne!(old, new);
    let split = "2024-01-01T00:00:00Z";
    let (before, after) = (selected("1970-01-01", split), selected(split, "now"));
    assert!(
        (before == old && after == new) || (before == new && after == old),
        "{before}\n{after}"
    );
}

#[test]
fn duckdb_reads_the_layout_to_the_same_totals_and_top_functions() {
    let Some(corpus) = corpus_dir() else { return };
    let Some(python) = protoprof_tests::python_duckdb() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fleet(&corpus, d);
    let script = protoprof_tests::workspace_root().join("tools/python-store/store_totals.py");
    let duckdb = |sample_type: &str| -> serde_json::Value {
        let out = std::process::Command::new(&python)
            .arg(&script)
            .args([d.join("fleet").to_str().unwrap(), sample_type, "20"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    for (sample_type, per) in [("cpu", "cpu"), ("alloc_space", "alloc_space")] {
        let theirs = duckdb(sample_type);
        let ours: serde_json::Value = serde_json::from_str(&ok(
            d,
            &[
                "top",
                "--store",
                "fleet",
                "--sample-type",
                per,
                "--format",
                "json",
                "--nodefraction",
                "0",
            ],
        ))
        .unwrap();
        assert_eq!(
            theirs["totals"][sample_type], ours["total"],
            "{sample_type}"
        );
        let mut rows: Vec<(String, i64)> = ours["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["function"].as_str().unwrap().to_string(),
                    r["flat"].as_i64().unwrap(),
                )
            })
            .collect();
        rows.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        rows.truncate(20);
        let top: Vec<(String, i64)> = theirs["top"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| (r[0].as_str().unwrap().to_string(), r[1].as_i64().unwrap()))
            .collect();
        assert_eq!(top, rows, "{sample_type}");
    }
}

#[test]
fn bad_input_gets_one_clear_line_and_the_store_stays_readable() {
    let Some(corpus) = corpus_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fleet(&corpus, d);
    let one_line = |args: &[&str], needle: &str| {
        let (status, stdout, stderr) = run(d, args);
        assert_eq!(status, 2, "{args:?}: {stdout}{stderr}");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
    };
    let top = ["top", "--store", "fleet"];
    one_line(
        &[&top[..], &["--select", "service.name=checkout"]].concat(),
        "selector",
    );
    one_line(&[&top[..], &["--select", r#"a=~"(""#]].concat(), "regex");
    one_line(
        &[&top[..], &["--from", "-1h", "--to", "-2h"]].concat(),
        "is not before",
    );
    one_line(&[&top[..], &["--from", "yesterday"]].concat(), "--from");
    one_line(
        &[&top[..], &["--from", "2100-01-01"]].concat(),
        "matches no profile",
    );
    one_line(&["top", "--store", "."], "not a profile store");
    one_line(
        &["store", "get", "fleet", "--profile-id", "12", "-o", "x.pb"],
        "32 hex digits",
    );
    let missing = "0123456789abcdef0123456789abcdef";
    one_line(
        &[
            "store",
            "get",
            "fleet",
            "--profile-id",
            missing,
            "-o",
            "x.pb",
        ],
        "no profile",
    );
    // A truncated file and one of another schema, in one service's
    // partition: that service's reports fail naming the file; the rest
    // read as before.
    let before = ok(
        d,
        &[&top[..], &["--select", r#"service.name="checkout""#]].concat(),
    );
    let partition = std::fs::read_dir(d.join("fleet/samples"))
        .unwrap()
        .flat_map(|day| std::fs::read_dir(day.unwrap().path()).unwrap())
        .flat_map(|hour| std::fs::read_dir(hour.unwrap().path()).unwrap())
        .map(|service| service.unwrap().path())
        .find(|p| p.to_str().unwrap().ends_with("service=search"))
        .expect("the search service's partition");
    let sample_file = std::fs::read_dir(&partition)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let bytes = std::fs::read(&sample_file).unwrap();
    std::fs::write(
        partition.join("truncated.parquet"),
        &bytes[..bytes.len() / 2],
    )
    .unwrap();
    let (status, _, stderr) = run(
        d,
        &[&top[..], &["--select", r#"service.name="search""#]].concat(),
    );
    assert_eq!(status, 2, "{stderr}");
    assert!(stderr.contains("truncated.parquet"), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    std::fs::remove_file(partition.join("truncated.parquet")).unwrap();
    let stacks = d
        .join("fleet/stacks")
        .join(partition.strip_prefix(d.join("fleet/samples")).unwrap());
    let stack_file = std::fs::read_dir(&stacks)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::fs::copy(stack_file, partition.join("other-schema.parquet")).unwrap();
    let (status, _, stderr) = run(
        d,
        &[&top[..], &["--select", r#"service.name="search""#]].concat(),
    );
    assert_eq!(status, 2, "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    let after = ok(
        d,
        &[&top[..], &["--select", r#"service.name="checkout""#]].concat(),
    );
    assert_eq!(before, after);
}
