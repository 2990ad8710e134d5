//! The profile store on corpus profiles: reports over a selection equal
//! the reports of `merge` of the files it selects; what is stored comes
//! back equal in reports; DuckDB, which no one here wrote, reads the
//! layout to the same totals and top functions; bad input gets one line.

mod common;

use std::path::Path;

use common::{ok, run, Receiving};
use protobuf::Message;
use protoprof_model_otlp::opentelemetry::proto::collector::profiles::v1development::ExportProfilesServiceRequest;
use protoprof_model_otlp::opentelemetry::proto::profiles::v1development as dev;
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

/// "What changed": a base selection of the same store is subtracted as
/// `--diff-base` subtracts the files it selects; a time window of the
/// same selection as base leaves nothing changed.
#[test]
fn a_base_selection_is_the_diff_base_of_the_files_it_selects() {
    let Some(corpus) = corpus_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fleet(&corpus, d);
    let checkout = merged(&corpus, d, SERVICES[0].1, "checkout.pb");
    let search = corpus.join(SERVICES[1].1[0]);
    let search = search.to_str().unwrap();
    let store = ["--store", "fleet", "--select", r#"service.name="checkout""#];
    for report in ["top", "traces"] {
        let expected = ok(d, &[report, "--diff-base", search, &checkout]);
        let base = ["--base-select", r#"service.name="search""#];
        assert_eq!(
            ok(d, &[&[report][..], &store, &base].concat()),
            expected,
            "{report}"
        );
    }
    // The same selection over all time as its own base: no change.
    let itself = ["--base-from", "1970-01-01", "-n", "3"];
    let top = ok(d, &[&["top"][..], &store, &itself].concat());
    assert!(
        top.contains("Showing nodes accounting for 0, 0% of"),
        "{top}"
    );
    assert!(top.trim_end().ends_with("cum%"), "no rows: {top}");
    let both = ["--base-select", "x=\"y\"", "--diff-base", search];
    let (status, _, stderr) = run(d, &[&["top"][..], &store, &both].concat());
    assert_eq!(status, 2, "{stderr}");
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
        let get_otlp = ["store", "get", "fleet", "--profile-id", &id, "--to", "otlp"];
        ok(d, &[&get_otlp[..], &["-o", "back.otlp.pb"]].concat());
        for report in [&["top"][..], &["traces"], &["tags"]] {
            let expected = ok(d, &[report, &[file.as_str()]].concat());
            let back = ok(d, &[report, &["back.pb.gz"]].concat());
            assert!(back == expected, "{file} {report:?}");
            // The bridge keeps OTLP's resource and scope as `otlp:` comments.
            let back_otlp = ok(d, &[report, &["back.otlp.pb"]].concat());
            let without_comments: Vec<&str> = back_otlp
                .lines()
                .filter(|l| !l.starts_with("otlp:"))
                .collect();
            let expected_lines: Vec<&str> = expected.lines().collect();
            assert!(
                without_comments == expected_lines,
                "{file} {report:?} as OTLP"
            );
        }
        // As OTLP: valid, with the stored id and the service it was stored under.
        ok(d, &["validate", "back.otlp.pb"]);
        let json = ok(
            d,
            &[&get_otlp[..], &["--format", "json", "-o", "-"]].concat(),
        );
        let json: serde_json::Value = serde_json::from_str(&json).unwrap();
        let resource = &json["resourceProfiles"][0]["resource"]["attributes"][0];
        assert_eq!(resource["key"], "service.name", "{json}");
        let service = SERVICES
            .iter()
            .find(|(_, fs)| fs.iter().any(|f| file.ends_with(f)));
        assert_eq!(
            resource["value"]["stringValue"],
            service.unwrap().0,
            "{file}"
        );
        let profile = &json["resourceProfiles"][0]["scopeProfiles"][0]["profiles"][0];
        let profile_id = profile["profileId"].as_str().unwrap().to_lowercase();
        assert_eq!(profile_id, id, "OTLP/JSON's ids are hex");
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

/// DuckDB and Spark, which no one here wrote, read the layout as it is to
/// the same totals per sample type and the same top 20 functions by flat
/// value as `top --store`.
#[test]
fn duckdb_and_spark_read_the_layout_to_the_same_totals_and_top_functions() {
    let Some(corpus) = corpus_dir() else { return };
    let Some(python) = protoprof_tests::python_store() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fleet(&corpus, d);
    // And an eBPF export, whose samples carry events (list columns).
    let (capture, _) = ebpf_export(&corpus);
    ok(d, &["store", "add", "fleet", capture.to_str().unwrap()]);
    let events_sql = "SELECT (SELECT count(*) FROM (SELECT unnest(timestamps_unix_nano) AS t FROM samples)) AS n, \
         (SELECT min(t) FROM (SELECT unnest(timestamps_unix_nano) AS t FROM samples)) AS lo, \
         (SELECT max(t) FROM (SELECT unnest(timestamps_unix_nano) AS t FROM samples)) AS hi, \
         (SELECT sum(v) FROM (SELECT unnest(event_values) AS v FROM samples)) AS sum";
    let events = ok(
        d,
        &["query", "--store", "fleet", "--format", "json", events_sql],
    );
    let events: serde_json::Value = serde_json::from_str(&events).unwrap();
    let events = serde_json::json!([events["n"], events["lo"], events["hi"], events["sum"]]);
    assert!(events[0].as_i64().unwrap() > 5000, "{events}");
    let types = ["cpu", "alloc_space"];
    let script = protoprof_tests::workspace_root().join("tools/python-store/store_totals.py");
    let ours: Vec<(serde_json::Value, Vec<(String, i64)>)> = types
        .iter()
        .map(|t| {
            let args = [
                "top",
                "--store",
                "fleet",
                "--sample-type",
                t,
                "--format",
                "json",
            ];
            let report: serde_json::Value =
                serde_json::from_str(&ok(d, &[&args[..], &["--nodefraction", "0"]].concat()))
                    .unwrap();
            let mut rows: Vec<(String, i64)> = report["rows"]
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
            (report["total"].clone(), rows)
        })
        .collect();
    for engine in ["duckdb", "spark"] {
        let out = std::process::Command::new(&python)
            .arg(&script)
            .args([engine, d.join("fleet").to_str().unwrap(), "20"])
            .args(types)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{engine}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let theirs: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        for (t, (total, rows)) in types.iter().zip(&ours) {
            assert_eq!(&theirs["totals"][t], total, "{engine} {t}");
            let top: Vec<(String, i64)> = theirs["top"][t]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| (r[0].as_str().unwrap().to_string(), r[1].as_i64().unwrap()))
                .collect();
            assert_eq!(&top, rows, "{engine} {t}");
        }
        assert_eq!(theirs["events"], events, "{engine}");
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
    // partition: that service's reports warn once naming the file and
    // read the rest (with --strict they fail naming it); the other
    // service's read as before.
    let before = ok(
        d,
        &[&top[..], &["--select", r#"service.name="checkout""#]].concat(),
    );
    let search = [&top[..], &["--select", r#"service.name="search""#]].concat();
    let search_before = ok(d, &search);
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
    let stacks = d
        .join("fleet/stacks")
        .join(partition.strip_prefix(d.join("fleet/samples")).unwrap());
    let stack_file = std::fs::read_dir(&stacks)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let damaged = [
        ("truncated.parquet", bytes[..bytes.len() / 2].to_vec()),
        ("other-schema.parquet", std::fs::read(&stack_file).unwrap()),
    ];
    for (name, content) in damaged {
        std::fs::write(partition.join(name), content).unwrap();
        let (status, out, stderr) = run(d, &search);
        assert_eq!(status, 0, "{stderr}");
        assert_eq!(out, search_before, "the rest read as before");
        assert!(stderr.contains(name), "{stderr}");
        assert!(stderr.contains("protoprof: warning: "), "{stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
        let (status, _, stderr) = run(d, &[&search[..], &["--strict"]].concat());
        assert_eq!(status, 2, "{stderr}");
        assert!(stderr.contains(name), "{stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
        std::fs::remove_file(partition.join(name)).unwrap();
    }
    let after = ok(
        d,
        &[&top[..], &["--select", r#"service.name="checkout""#]].concat(),
    );
    assert_eq!(before, after);
}

/// `query` answers SQL over the same rows the reports read: totals per
/// sample type, flat per leaf function (`stack_leaf`), and cum of a
/// function through `stack_frames`, as `top --store` gives them; bad SQL
/// is one line.
#[test]
fn sql_answers_as_the_reports_count() {
    let Some(corpus) = corpus_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fleet(&corpus, d);
    let query =
        |format: &str, sql: &str| ok(d, &["query", "--store", "fleet", "--format", format, sql]);
    let json_lines = |text: String| -> Vec<serde_json::Value> {
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let top = |sample_type: &str| -> serde_json::Value {
        let args = [
            "top",
            "--store",
            "fleet",
            "--sample-type",
            sample_type,
            "--format",
            "json",
        ];
        serde_json::from_str(&ok(d, &[&args[..], &["--nodefraction", "0"]].concat())).unwrap()
    };
    let (cpu, space) = (top("cpu"), top("alloc_space"));
    let totals = json_lines(query(
        "json",
        "SELECT sample_type, sum(value) AS total FROM samples GROUP BY sample_type ORDER BY sample_type",
    ));
    let total_of =
        |t: &str| totals.iter().find(|r| r["sample_type"] == t).unwrap()["total"].clone();
    assert_eq!(total_of("cpu"), cpu["total"]);
    assert_eq!(total_of("alloc_space"), space["total"]);
    let leaf = json_lines(query(
        "json",
        "SELECT function_name, sum(value) AS flat FROM samples JOIN stack_leaf USING (stack_id) \
         WHERE sample_type = 'cpu' GROUP BY function_name ORDER BY flat DESC, function_name LIMIT 5",
    ));
    let row = |report: &serde_json::Value, name: &str, column: &str| {
        let rows = report["rows"].as_array().unwrap();
        rows.iter().find(|r| r["function"] == name).unwrap()[column].clone()
    };
    assert_eq!(leaf.len(), 5);
    for r in &leaf {
        assert_eq!(
            r["flat"],
            row(&cpu, r["function_name"].as_str().unwrap(), "flat"),
            "{r}"
        );
    }
    let cum = json_lines(query(
        "json",
        "SELECT sum(value) AS cum FROM samples WHERE sample_type = 'cpu' AND stack_id IN \
         (SELECT stack_id FROM stack_frames WHERE function_name = 'runtime.mallocgc')",
    ));
    assert_eq!(cum[0]["cum"], row(&cpu, "runtime.mallocgc", "cum"));
    let table = query("table", "SELECT count(*) AS profiles FROM profiles");
    assert!(
        table.contains("| profiles |") && table.contains("| 5  "),
        "{table}"
    );
    let csv = query(
        "csv",
        "SELECT service_name FROM profiles ORDER BY service_name LIMIT 1",
    );
    assert_eq!(csv, "service_name\ncheckout\n");
    let (status, _, stderr) = run(
        d,
        &["query", "--store", "fleet", "SELECT nothing FROM nowhere"],
    );
    assert_eq!(status, 2, "{stderr}");
    assert!(
        stderr.contains("SQL:") && stderr.trim_end().lines().count() == 1,
        "{stderr}"
    );
}

/// `receive --store` writes each valid request's profiles, synced, before
/// it answers: with exports arriving at once and the receiver killed with
/// SIGKILL among them, every acknowledged request is in the store after a
/// restart, and the store reads. A store that cannot be written is a 503
/// to the exporter, never a 200.
#[test]
fn receive_keeps_every_acknowledged_request_across_a_kill() {
    let Some(corpus) = corpus_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let file = corpus.join("pprof/go/go-cpu.pb.gz");
    let file = file.to_str().unwrap();
    let mut receiving = Receiving::start(d, "fleet", "127.0.0.1:0");
    let address = receiving.address.clone();
    let sends: Vec<_> = (0..8)
        .map(|n| {
            let (dir, address, file) = (d.to_path_buf(), address.clone(), file.to_string());
            std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(40 * n));
                Receiving::send(&dir, &address, &file)
            })
        })
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(150));
    receiving.child.kill().unwrap(); // SIGKILL
    receiving.child.wait().unwrap();
    // Restarted where it was, the exports in flight retry into it.
    let restarted = Receiving::start(d, "fleet", &address);
    let mut acknowledged = sends
        .into_iter()
        .map(|s| s.join().unwrap())
        .filter(|ok| *ok)
        .count();
    for _ in 0..2 {
        assert!(Receiving::send(d, &restarted.address, file));
        acknowledged += 1;
    }
    drop(restarted);
    let (one, stored) = (cpu_total(d, &[file]), cpu_total(d, &["--store", "fleet"]));
    assert_eq!(stored % one, 0, "{stored} {one}");
    assert!(
        stored / one >= acknowledged as i64,
        "{stored} {one} {acknowledged}"
    );
    // A store under a file cannot be written: 503, so the exporter retries.
    std::fs::write(d.join("blocker"), b"").unwrap();
    let blocked = Receiving::start(d, "blocker/fleet", "127.0.0.1:0");
    ok(d, &["convert", "--to", "otlp", file, "-o", "request.pb"]);
    let request = std::fs::read(d.join("request.pb")).unwrap();
    let status = post(&blocked.address, &request);
    assert!(status.starts_with("HTTP/1.1 503"), "{status}");
    assert!(post(&blocked.address, b"").starts_with("HTTP/1.1 200"));
}

/// A request retried (its answer lost, or its receiver restarted) is
/// stored once: the same bytes posted again, before and after a SIGKILL
/// and a restart, are acknowledged and add nothing; another export of the
/// same file (another profile id) is stored beside it.
#[test]
fn a_retried_request_is_stored_once() {
    let Some(corpus) = corpus_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let file = corpus.join("pprof/go/go-cpu.pb.gz");
    let file = file.to_str().unwrap();
    let convert = [
        "convert",
        "--to",
        "otlp",
        "--resource",
        "service.name=checkout",
    ];
    ok(d, &[&convert[..], &[file, "-o", "request.pb"]].concat());
    ok(d, &[&convert[..], &[file, "-o", "another.pb"]].concat());
    let (request, another) = (
        std::fs::read(d.join("request.pb")).unwrap(),
        std::fs::read(d.join("another.pb")).unwrap(),
    );
    let mut receiving = Receiving::start(d, "fleet", "127.0.0.1:0");
    for _ in 0..2 {
        assert!(post(&receiving.address, &request).starts_with("HTTP/1.1 200"));
    }
    receiving.child.kill().unwrap(); // SIGKILL
    receiving.child.wait().unwrap();
    let restarted = Receiving::start(d, "fleet", &receiving.address);
    assert!(post(&restarted.address, &request).starts_with("HTTP/1.1 200"));
    let stored = || cpu_total(d, &["--store", "fleet"]);
    let one = cpu_total(d, &[file]);
    assert_eq!(stored(), one);
    assert!(post(&restarted.address, &another).starts_with("HTTP/1.1 200"));
    assert_eq!(stored(), 2 * one);
}

/// The total of `top`'s `cpu` sample type over `input`: a file, or the
/// store `fleet`.
fn cpu_total(d: &Path, input: &[&str]) -> i64 {
    let input = match input {
        ["--store", store] => vec!["--store", store, "--sample-type", "cpu"],
        files => [&["--sample-index", "cpu"][..], files].concat(),
    };
    let top = ["top", "--format", "json"];
    let top: serde_json::Value =
        serde_json::from_str(&ok(d, &[&top[..], &input].concat())).unwrap();
    top["total"].as_i64().unwrap()
}

/// What `receive --store` keeps of a request (taken from the receiver's
/// own reading of it) is what `store add` keeps of the same file, binary
/// or JSON: the eBPF capture, 82 small profiles sharing one
/// dictionary, their entries' rows made once per request.
#[test]
fn receive_stores_what_store_add_stores() {
    let Some(corpus) = corpus_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let capture = corpus.join("otlp/v1development/v1development-1.10-ebpf-export-request.pb");
    let capture = capture.to_str().unwrap();
    let to_json = ["convert", "--to", "otlp", "--format", "json", capture];
    ok(d, &[&to_json[..], &["-o", "request.json"]].concat());
    let json = (d.join("request.json"), "application/json");
    let mut sent = vec![json];
    for revision in [
        "1.10-ebpf",
        "1.8-ebpf",
        "1.7-ebpf-unsymbolized",
        "1.7-async-profiler-link-table",
        "1.5-ebpf-pyrosymbolized",
    ] {
        let file = format!("otlp/v1development/v1development-{revision}-export-request.pb");
        sent.push((corpus.join(file), "application/x-protobuf"));
    }
    for (n, (file, content_type)) in sent.iter().enumerate() {
        let (added, received) = (format!("added-{n}"), format!("received-{n}"));
        ok(d, &["store", "add", &added, file.to_str().unwrap()]);
        let receiving = Receiving::start(d, &received, "127.0.0.1:0");
        let status = post_as(
            &receiving.address,
            &std::fs::read(file).unwrap(),
            content_type,
        );
        assert!(status.starts_with("HTTP/1.1 200"), "{file:?}: {status}");
        drop(receiving);
        // Row for row, ids and all: the request's profiles converted
        // together make the rows each makes converted alone.
        for (table, order) in [
            ("samples", "profile_id, sample_index, sample_type"),
            ("profiles", "profile_id"),
            ("stacks", "stack_id"),
            ("locations", "location_id"),
            ("functions", "function_id"),
            ("mappings", "mapping_id"),
        ] {
            let sql = format!("SELECT * FROM {table} ORDER BY {order}");
            let rows = |store: &str| ok(d, &["query", "--store", store, &sql]);
            let here = rows(&added);
            let stored = table != "mappings" || !file.to_string_lossy().contains("async");
            assert!(
                here.lines().count() > 4 || !stored,
                "{file:?} {table}: {here}"
            );
            assert_eq!(rows(&received), here, "{file:?} {table}");
        }
    }
    // And the reports of the eBPF capture, both sample types.
    let report = |store: &str| {
        let mut out = Vec::new();
        for sample_type in ["samples", "off_cpu"] {
            let selection = ["--store", store, "--sample-type", sample_type];
            out.push(ok(d, &[&["traces"][..], &selection].concat()));
        }
        out
    };
    let added = report("added-1");
    assert!(added[0].lines().count() > 100, "{}", added[0]);
    assert_eq!(report("received-1"), added);
}

/// OTLP's sample times are the store's: each row is timed by its sample's
/// earliest event, with every event's time, and value where it has one,
/// beside it; the row's value is what the events sum to.
#[test]
fn otlp_sample_events_are_kept_beside_their_rows() {
    let Some(corpus) = corpus_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The capture as the generated model reads it, not through the store.
    let (capture, request) = ebpf_export(&corpus);
    ok(d, &["store", "add", "timed", capture.to_str().unwrap()]);
    let mut want = Vec::new();
    let profiles = (request.resource_profiles.iter())
        .flat_map(|r| &r.scope_profiles)
        .flat_map(|s| &s.profiles);
    for s in profiles.flat_map(|p| &p.samples) {
        let times: Vec<i64> = s.timestamps_unix_nano.iter().map(|&t| t as i64).collect();
        let paired = s.values.len() == times.len();
        let value = match s.values.is_empty() {
            true => times.len() as i64,
            false => s.values.iter().sum(),
        };
        let values = if paired { s.values.clone() } else { Vec::new() };
        want.push((times.iter().copied().min(), times, values, value));
    }
    let stored = |store: &str| {
        let sql = "SELECT time_unix_nano, timestamps_unix_nano, event_values, value FROM samples";
        let answer = ok(d, &["query", "--store", store, "--format", "json", sql]);
        let ints = |v: &serde_json::Value| -> Vec<i64> {
            let items = v.as_array().map_or(&[][..], Vec::as_slice);
            items.iter().map(|i| i.as_i64().unwrap()).collect()
        };
        let mut got = Vec::new();
        for line in answer.lines() {
            let row: serde_json::Value = serde_json::from_str(line).unwrap();
            let (time, times) = (row["time_unix_nano"].as_i64(), &row["timestamps_unix_nano"]);
            let value = row["value"].as_i64().unwrap();
            got.push((time, ints(times), ints(&row["event_values"]), value));
        }
        got.sort();
        got
    };
    want.sort();
    let events: usize = want.iter().map(|w| w.1.len()).sum();
    assert!(
        want.len() > 300 && events > 5000,
        "{} samples, {events} events",
        want.len()
    );
    assert_eq!(stored("timed"), want);
    // Compacted with a second host's copy: every event kept, once each.
    let again = ["store", "add", "twice", capture.to_str().unwrap()];
    ok(d, &again);
    ok(
        d,
        &[&again[..], &["--resource", "host.name=second"]].concat(),
    );
    ok(d, &["store", "compact", "twice"]);
    let mut twice = [want.clone(), want.clone()].concat();
    twice.sort();
    assert_eq!(stored("twice"), twice);
    // A stored profile comes back with its samples in their order, not
    // their events': as the profile converted alone.
    let added = ok(d, &["store", "add", "timed", capture.to_str().unwrap()]);
    let split = ["convert", "--to", "pprof", "--split", "split"];
    let split = ok(d, &[&split[..], &[capture.to_str().unwrap()]].concat());
    let mut compared = 0;
    for line in split.lines() {
        let [file, at, samples] = line.split('\t').collect::<Vec<_>>()[..] else {
            panic!("{line}")
        };
        let stored = added.lines().find(|l| l.contains(&format!(" {at}\t")));
        let id = stored.unwrap().split('\t').next().unwrap();
        if samples
            .trim_end_matches(" samples")
            .parse::<usize>()
            .unwrap()
            < 10
        {
            continue;
        }
        ok(
            d,
            &["store", "get", "timed", "--profile-id", id, "-o", "back.pb"],
        );
        assert_eq!(
            ok(d, &["traces", "back.pb"]),
            ok(d, &["traces", file]),
            "{at}"
        );
        // As OTLP, with the events it came with.
        let get = ["store", "get", "timed", "--profile-id", id, "--to", "otlp"];
        ok(d, &[&get[..], &["-o", "back.otlp.pb"]].concat());
        ok(d, &["validate", "back.otlp.pb"]);
        let back = std::fs::read(d.join("back.otlp.pb")).unwrap();
        let back = dev::ProfilesData::parse_from_bytes(&back).unwrap();
        let events = |p: &dev::Profile| -> Vec<(Vec<u64>, Vec<i64>)> {
            let each = p.samples.iter();
            each.map(|s| (s.timestamps_unix_nano.clone(), s.values.clone()))
                .collect()
        };
        let [r, s, p] = at
            .split(|c: char| !c.is_ascii_digit())
            .filter(|n| !n.is_empty())
            .map(|n| n.parse::<usize>().unwrap())
            .collect::<Vec<_>>()[..]
        else {
            panic!("{at}")
        };
        let sent = &request.resource_profiles[r].scope_profiles[s].profiles[p];
        let back = &back.resource_profiles[0].scope_profiles[0].profiles[0];
        assert_eq!(events(back), events(sent), "{at}");
        compared += 1;
    }
    assert!(compared > 5, "{split}");
}

/// A sample whose values do not pair with its times (which OTLP forbids,
/// and `store add` takes, as the bridge does) keeps the value the reports
/// count, in the store and back out as OTLP, which stays valid.
#[test]
fn unpaired_event_values_keep_their_sample_s_value() {
    let Some(corpus) = corpus_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (_, mut request) = ebpf_export(&corpus);
    let profile = &mut request.resource_profiles[1].scope_profiles[0].profiles[0];
    let t = profile.time_unix_nano + 1;
    let samples = &mut profile.samples;
    (samples[0].values, samples[0].timestamps_unix_nano) = (vec![5, 6], vec![t]);
    (samples[1].values, samples[1].timestamps_unix_nano) = (vec![5], vec![t, t + 1]);
    std::fs::write(d.join("odd.pb"), request.write_to_bytes().unwrap()).unwrap();
    let added = ok(d, &["store", "add", "odd", "odd.pb"]);
    let at = " resource_profiles[1].scope_profiles[0].profiles[0]\t";
    let id = added.lines().find(|l| l.contains(at)).unwrap();
    let id = id.split('\t').next().unwrap();
    let sql = format!(
        "SELECT sample_index, value, timestamps_unix_nano AS times FROM samples \
         WHERE profile_id = decode('{id}', 'hex') AND sample_index < 2 ORDER BY sample_index"
    );
    let rows = ok(d, &["query", "--store", "odd", "--format", "json", &sql]);
    let want = format!(
        "{{\"sample_index\":0,\"value\":11,\"times\":[{t}]}}\n\
         {{\"sample_index\":1,\"value\":5,\"times\":[{t},{}]}}\n",
        t + 1
    );
    assert_eq!(rows, want);
    let get = [
        "store",
        "get",
        "odd",
        "--profile-id",
        id,
        "--to",
        "otlp",
        "-o",
        "back.pb",
    ];
    ok(d, &get);
    ok(d, &["validate", "back.pb"]);
    let back = dev::ProfilesData::parse_from_bytes(&std::fs::read(d.join("back.pb")).unwrap());
    let back = back.unwrap();
    let samples = &back.resource_profiles[0].scope_profiles[0].profiles[0].samples;
    let pair = |n: usize| {
        (
            samples[n].values.clone(),
            samples[n].timestamps_unix_nano.clone(),
        )
    };
    // One time beside the value pairs with it; two cannot: left out.
    assert_eq!(pair(0), (vec![11], vec![t]));
    assert_eq!(pair(1), (vec![5], vec![]));
}

/// v1experimental's sample times are the store's too: a sample is timed by
/// its earliest, and keeps them all; its values, per sample type, do not
/// pair with them.
#[test]
fn v1experimental_sample_times_time_their_rows() {
    use protoprof_model_otlp::opentelemetry::proto::profiles::v1experimental::ProfilesData;
    let Some(corpus) = corpus_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let file = corpus.join("otlp/v1experimental/v1experimental-go-cpu-profilesdata.pb");
    let mut data = ProfilesData::parse_from_bytes(&std::fs::read(&file).unwrap()).unwrap();
    let container = &mut data.resource_profiles[0].scope_profiles[0].profiles[0];
    let p = container.profile.as_mut().unwrap();
    let t = p.time_nanos as u64;
    p.sample[0].timestamps_unix_nano = vec![t + 5, t + 1];
    p.sample[1].timestamps_unix_nano = vec![t + 2];
    std::fs::write(d.join("timed.pb"), data.write_to_bytes().unwrap()).unwrap();
    ok(d, &["store", "add", "timed", "timed.pb"]);
    let sql = "SELECT sample_index, time_unix_nano - profile_time_unix_nano AS after, \
               timestamps_unix_nano AS times, event_values FROM samples \
               WHERE sample_type = 'cpu' AND sample_index < 3 ORDER BY sample_index";
    let rows = ok(d, &["query", "--store", "timed", "--format", "json", sql]);
    let want = format!(
        "{{\"sample_index\":0,\"after\":1,\"times\":[{},{}]}}\n\
         {{\"sample_index\":1,\"after\":2,\"times\":[{}]}}\n\
         {{\"sample_index\":2,\"after\":0}}\n",
        t + 5,
        t + 1,
        t + 2
    );
    assert_eq!(rows, want);
}

/// The corpus's export from OpenTelemetry's eBPF profiler (v1.10, 317
/// samples with event times): its path, and the request as the generated
/// model reads it.
fn ebpf_export(corpus: &Path) -> (std::path::PathBuf, ExportProfilesServiceRequest) {
    let path = corpus.join("otlp/v1development/v1development-1.10-ebpf-export-request.pb");
    let request = ExportProfilesServiceRequest::parse_from_bytes(&std::fs::read(&path).unwrap());
    (path, request.unwrap())
}

/// POSTs `body` as a binary OTLP request; the response's status line.
fn post(address: &str, body: &[u8]) -> String {
    post_as(address, body, "application/x-protobuf")
}

/// POSTs `body` as an OTLP request of `content_type`; the response's
/// status line.
fn post_as(address: &str, body: &[u8], content_type: &str) -> String {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    let head = format!(
        "POST /v1development/profiles HTTP/1.1\r\nHost: {address}\r\n\
         Content-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body).unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).unwrap();
    let response = String::from_utf8_lossy(&response);
    response.lines().next().unwrap_or_default().to_string()
}

/// `store series` sums per step: grouped by service, each service's sum
/// is its `top --store` total; through one function, the sum is the
/// function's cum.
#[test]
fn series_sum_to_what_the_reports_count() {
    let Some(corpus) = corpus_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fleet(&corpus, d);
    let lines = |args: &[&str]| -> Vec<serde_json::Value> {
        let series = [&["store", "series", "fleet", "--format", "json"][..], args].concat();
        ok(d, &series)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let top = |args: &[&str]| -> serde_json::Value {
        let top = [
            "top",
            "--store",
            "fleet",
            "--sample-type",
            "cpu",
            "--format",
            "json",
        ];
        let args = [&top[..], &["--nodefraction", "0"], args].concat();
        serde_json::from_str(&ok(d, &args)).unwrap()
    };
    let by_service = lines(&[
        "--step",
        "1h",
        "--group-by",
        "service.name",
        "--sample-type",
        "cpu",
    ]);
    assert!(by_service.len() >= 3, "{by_service:?}");
    for service in ["checkout", "search"] {
        let sum: i64 = by_service
            .iter()
            .filter(|r| r["service.name"] == service)
            .map(|r| r["value"].as_i64().unwrap())
            .sum();
        let selected = top(&["--select", &format!("service.name=\"{service}\"")]);
        assert_eq!(sum, selected["total"].as_i64().unwrap(), "{service}");
    }
    let function = "runtime.mallocgc";
    let through = lines(&[
        "--step",
        "1d",
        "--function",
        function,
        "--sample-type",
        "cpu",
    ]);
    let sum: i64 = through.iter().map(|r| r["value"].as_i64().unwrap()).sum();
    let rows = top(&[]);
    let row = rows["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["function"] == function);
    assert_eq!(sum, row.unwrap()["cum"].as_i64().unwrap());
    let (status, _, stderr) = run(d, &["store", "series", "fleet", "--step", "1x"]);
    assert_eq!(status, 2, "{stderr}");
    assert!(stderr.contains("--step"), "{stderr}");
}

/// `store add` of files the store holds adds nothing; `store compact`
/// merges each partition's files into one: reports read as before, and a
/// profile stored twice (by another writer of the same store) counts once
/// again.
#[test]
fn compaction_keeps_what_reports_read_and_counts_a_profile_once() {
    let Some(corpus) = corpus_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fleet(&corpus, d);
    let selector = r#"service.name="checkout""#;
    let reports = |d: &Path| -> Vec<String> {
        [&["top"][..], &["traces"], &["tags"]]
            .iter()
            .map(|r| {
                ok(
                    d,
                    &[r, &["--store", "fleet", "--select", selector][..]].concat(),
                )
            })
            .collect()
    };
    let before = reports(d);
    // The checkout service's files again: the same profiles, not added.
    let again: Vec<String> = SERVICES[0]
        .1
        .iter()
        .map(|f| corpus.join(f).to_str().unwrap().to_string())
        .collect();
    let mut add = vec!["store", "add", "fleet", "--service", "checkout"];
    add.extend(again.iter().map(String::as_str));
    let added = ok(d, &add);
    assert_eq!(added.lines().count(), again.len(), "{added}");
    assert!(
        added.lines().all(|l| l.ends_with("\talready stored")),
        "{added}"
    );
    assert_eq!(reports(d), before);
    // Another writer of the store (a second receiver) wrote them again.
    for file in protoprof_tests::files_under(&d.join("fleet")) {
        let name = file.to_string_lossy().into_owned();
        if name.contains("service=checkout") && name.ends_with(".parquet") {
            std::fs::copy(&file, name.replace(".parquet", "-again.parquet")).unwrap();
        }
    }
    assert_ne!(reports(d), before, "stored twice, counted twice");
    let files = |d: &Path| protoprof_tests::files_under(&d.join("fleet/samples")).len();
    let many = files(d);
    let out = ok(d, &["store", "compact", "fleet"]);
    assert!(out.contains("partitions compacted"), "{out}");
    assert!(files(d) < many, "{out}");
    assert_eq!(reports(d), before);
    // Nothing left to merge the second time.
    let out = ok(d, &["store", "compact", "fleet"]);
    assert!(out.contains(": 0 partitions compacted"), "{out}");
}

/// `serve --store` serves the selection: its title names the store and
/// the selector, and its top table lists what `top --store` lists.
#[test]
fn serve_serves_a_selection() {
    let Some(corpus) = corpus_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fleet(&corpus, d);
    let selector = r#"service.name="checkout""#;
    let selection = [
        "--store",
        "fleet",
        "--select",
        selector,
        "--sample-type",
        "cpu",
    ];
    let base = ["--base-select", r#"service.name="search""#];
    for options in [&selection[..], &[&selection[..], &base].concat()] {
        let [meta, top] = served_json(d, options, ["/api/meta", "/api/top"]);
        assert!(meta["title"].as_str().unwrap().contains(selector), "{meta}");
        let served: Vec<&str> = top["rows"]
            .as_array()
            .unwrap()
            .iter()
            .take(5)
            .map(|r| r["name"].as_str().unwrap())
            .collect();
        let cli: serde_json::Value = serde_json::from_str(&ok(
            d,
            &[&["top", "--format", "json"][..], options].concat(),
        ))
        .unwrap();
        let listed: Vec<&str> = cli["rows"]
            .as_array()
            .unwrap()
            .iter()
            .take(5)
            .map(|r| r["function"].as_str().unwrap())
            .collect();
        assert_eq!(served, listed, "{options:?}");
    }
}

/// The JSON `serve` with `options` answers at each of `paths`.
fn served_json<const N: usize>(
    d: &Path,
    options: &[&str],
    paths: [&str; N],
) -> [serde_json::Value; N] {
    use std::io::{BufRead, Read, Write};
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("protoprof"))
        .args(["serve", "--listen", "127.0.0.1:0"])
        .args(options)
        .current_dir(d)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .rsplit_once(' ')
        .unwrap()
        .1
        .trim_end_matches('/');
    let address = url.trim_start_matches("http://").to_string();
    let get = |path: &str| -> serde_json::Value {
        let mut stream = std::net::TcpStream::connect(&address).unwrap();
        let request =
            format!("GET {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        let body = response.split_once("\r\n\r\n").unwrap().1;
        serde_json::from_str(body).unwrap()
    };
    let answers = paths.map(get);
    let _ = child.kill();
    let _ = child.wait();
    answers
}

/// A store in object storage (`s3://`, against moto's S3 server on
/// loopback) is written, read and compacted as a directory is: the same
/// reports, SQL and stored profiles.
#[test]
fn a_store_in_s3_reads_as_a_local_one() {
    let Some(corpus) = corpus_dir() else { return };
    let Some(python) = protoprof_tests::python_store() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ids = fleet(&corpus, d);
    let (mut server, address) = protoprof_tests::moto_with_bucket(&python, "fleet");
    let s3 = |args: &[&str]| -> String {
        let out = common::protoprof(d)
            .args(args)
            .env("AWS_ENDPOINT_URL", format!("http://{address}"))
            .env("AWS_ALLOW_HTTP", "true")
            .env("AWS_ACCESS_KEY_ID", "protoprof")
            .env("AWS_SECRET_ACCESS_KEY", "protoprof")
            .env("AWS_REGION", "us-east-1")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    add_services(&corpus, "s3://fleet/profiles-store", &[], &s3);
    let selector = r#"service.name=~"check.*|search""#;
    for report in [&["top"][..], &["traces"], &["tree"]] {
        let local = ok(
            d,
            &[report, &["--store", "fleet", "--select", selector][..]].concat(),
        );
        let remote = s3(&[
            report,
            &["--store", "s3://fleet/profiles-store", "--select", selector][..],
        ]
        .concat());
        assert!(remote == local, "{report:?}");
    }
    let sql = "SELECT sample_type, sum(value) AS total FROM samples GROUP BY 1 ORDER BY 1";
    let remote = [
        "query",
        "--store",
        "s3://fleet/profiles-store",
        "--format",
        "csv",
        sql,
    ];
    let local = ["query", "--store", "fleet", "--format", "csv", sql];
    assert_eq!(s3(&remote), ok(d, &local));
    let (file, id) = &ids[0];
    s3(&[
        "store",
        "get",
        "s3://fleet/profiles-store",
        "--profile-id",
        id,
        "-o",
        "back.pb.gz",
    ]);
    assert_eq!(ok(d, &["top", "back.pb.gz"]), ok(d, &["top", file]));

    // Everything sent again (as a retried export is): stored once.
    add_services(&corpus, "s3://fleet/profiles-store", &[], &s3);
    assert_eq!(s3(&remote), ok(d, &local), "sent again, stored once");
    // The same from a second host, by four writers at once: each profile
    // stored once, in a second file of each partition.
    let second_host = ["--resource", "host.name=second"];
    std::thread::scope(|scope| {
        for _ in 0..4 {
            let (corpus, s3) = (&corpus, &s3);
            scope
                .spawn(move || add_services(corpus, "s3://fleet/profiles-store", &second_host, s3));
        }
    });
    add_services(&corpus, "fleet", &second_host, &|args| ok(d, args));
    assert_eq!(s3(&remote), ok(d, &local), "four writers at once");
    // Compacted while a third host's profiles are written: each partition
    // is merged under the write lock, nothing is lost, nothing is twice.
    let third_host = ["--resource", "host.name=third"];
    let compact = ["store", "compact", "s3://fleet/profiles-store"];
    let compacted = std::thread::scope(|scope| {
        let compacting = scope.spawn(|| s3(&compact));
        add_services(&corpus, "s3://fleet/profiles-store", &third_host, &s3);
        compacting.join().unwrap()
    });
    add_services(&corpus, "fleet", &third_host, &|args| ok(d, args));
    assert!(compacted.contains("partitions compacted"), "{compacted}");
    assert!(!compacted.contains(": 0 partitions"), "{compacted}");
    assert_eq!(
        s3(&remote),
        ok(d, &local),
        "compacted while written: {compacted}"
    );
    // What was written meanwhile is merged by the next one.
    s3(&compact);
    let report = ["top", "--select", selector];
    let remote_top = s3(&[&report[..], &["--store", "s3://fleet/profiles-store"]].concat());
    assert_eq!(
        remote_top,
        ok(d, &[&report[..], &["--store", "fleet"]].concat())
    );
    // A second compaction finds one file per partition: nothing to do.
    let again = s3(&["store", "compact", "s3://fleet/profiles-store"]);
    assert!(again.contains(": 0 partitions compacted"), "{again}");
    // Sent again once compacted: the merged objects of a partition share
    // one name in every table, so their profiles are known stored.
    add_services(&corpus, "s3://fleet/profiles-store", &[], &s3);
    assert_eq!(s3(&remote), ok(d, &local), "sent again once compacted");
    let _ = server.kill();
    let _ = server.wait();
}

/// `store add` of each of the [`SERVICES`] into `store`, with `extra`
/// options, through `run`.
fn add_services(corpus: &Path, store: &str, extra: &[&str], run: &dyn Fn(&[&str]) -> String) {
    for (service, files) in SERVICES {
        let paths: Vec<String> = files
            .iter()
            .map(|f| corpus.join(f).to_str().unwrap().to_string())
            .collect();
        let mut args = vec!["store", "add", store, "--service", service];
        args.extend(extra);
        args.extend(paths.iter().map(String::as_str));
        run(&args);
    }
}

/// The rows of a `top` report (from its table's head on): what two
/// reports of the same data share whatever their headers say of where it
/// came from.
fn top_rows(report: &str) -> String {
    let at = report.find("      flat  flat%").expect("a top table");
    report[at..].to_string()
}

/// A pprof profile sent as OTLP (one OTLP profile per sample type, as
/// `convert --to otlp` and `send` write it) is stored as the one profile
/// it was, by `store add` and `receive --store` alike: `top --store`
/// prints what `top` of the file prints, for every sample type, and
/// `store get` gives it back so.
#[test]
fn a_pprof_profile_sent_as_otlp_is_stored_as_one_profile() {
    let Some(corpus) = corpus_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (n, (file, types)) in [
        ("pprof/real/go-cpu.pb.gz", &["samples", "cpu"][..]),
        (
            "pprof/real/go-heap.pb.gz",
            &["alloc_objects", "inuse_space"][..],
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let file = corpus.join(file);
        let file = file.to_str().unwrap();
        let (otlp, store) = (format!("sent-{n}.pb"), format!("store-{n}"));
        let convert = ["convert", "--to", "otlp", "--resource", "service.name=app"];
        ok(d, &[&convert[..], &[file, "-o", &otlp]].concat());
        let added = ok(d, &["store", "add", &store, &otlp]);
        let lines: Vec<&str> = added.lines().collect();
        assert_eq!(lines.len(), 1, "{added}");
        let fields: Vec<&str> = lines[0].split('\t').collect();
        assert_eq!(fields[1..3], [otlp.as_str(), "app"], "{added}");
        ok(
            d,
            &[
                "store",
                "get",
                &store,
                "--profile-id",
                fields[0],
                "-o",
                "back.pb.gz",
            ],
        );
        for sample_type in [None, Some(types[0]), Some(types[1])] {
            let index = sample_type.map_or(vec![], |t| vec!["--sample-index", t]);
            let top = |input: &[&str]| ok(d, &[&["top"][..], &index, input].concat());
            let expected = top(&[file]);
            assert_eq!(
                top(&["--store", &store]),
                expected,
                "{file} {sample_type:?}"
            );
            assert_eq!(top(&["back.pb.gz"]), expected, "{file} {sample_type:?}");
        }
    }
    // Received: the same.
    let file = corpus.join("pprof/real/go-cpu.pb.gz");
    let file = file.to_str().unwrap();
    let receiving = Receiving::start(d, "received", "127.0.0.1:0");
    assert!(Receiving::send(d, &receiving.address, file));
    drop(receiving);
    let ids = ok(
        d,
        &[
            "query",
            "--store",
            "received",
            "--format",
            "csv",
            "SELECT profile_id FROM profiles",
        ],
    );
    assert_eq!(ids.lines().count(), 2, "a header and one profile: {ids}");
    let top = |input: &[&str]| ok(d, &[&["top"][..], input].concat());
    assert_eq!(top(&["--store", "received"]), top(&[file]));
}

/// A selection of profiles of several sample types (CPU and heap of one
/// service) is one profile with every type: reports take pprof's default
/// (`cpu` here) and `--sample-index` (or `--sample-type`) chooses another,
/// whose rows are the heap profile's own.
#[test]
fn a_selection_of_several_sample_types_reports_each() {
    let Some(corpus) = corpus_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (cpu, heap) = (
        corpus.join("pprof/real/go-cpu.pb.gz"),
        corpus.join("pprof/real/go-heap.pb.gz"),
    );
    let (cpu, heap) = (cpu.to_str().unwrap(), heap.to_str().unwrap());
    ok(d, &["store", "add", "mixed", "--service", "app", cpu, heap]);
    let default = ok(d, &["top", "--store", "mixed"]);
    assert!(default.contains("Type: cpu"), "{default}");
    assert_eq!(top_rows(&default), top_rows(&ok(d, &["top", cpu])));
    for option in ["--sample-index", "--sample-type"] {
        let stored = ok(d, &["top", "--store", "mixed", option, "alloc_space"]);
        let file = ok(d, &["top", "--sample-index", "alloc_space", heap]);
        assert_eq!(top_rows(&stored), top_rows(&file), "{option}");
    }
    // The page's sample menu lists every type, pprof's default chosen.
    let [meta] = served_json(d, &["--store", "mixed"], ["/api/meta"]);
    let types: Vec<&str> = (meta["sample_types"].as_array().unwrap().iter())
        .map(|t| t["type"].as_str().unwrap())
        .collect();
    assert_eq!(types.len(), 6, "{meta}");
    assert!(types.contains(&"inuse_space"), "{meta}");
    assert_eq!(
        types[meta["default_index"].as_u64().unwrap() as usize],
        "cpu"
    );
    // Two names of one option, with files too.
    assert_eq!(
        ok(d, &["top", "--sample-type", "samples", cpu]),
        ok(d, &["top", "--sample-index", "samples", cpu])
    );
    // A store's options without --store are refused, naming the option.
    for option in [
        &["--select", "service.name=\"app\""][..],
        &["--from", "-1h"],
        &["--cluster", "df://x:1"],
    ] {
        refused(
            d,
            &[&["top"][..], option, &[cpu]].concat(),
            &[option[0], "--store"],
        );
    }
    // A profile whose resource names no service is stored, and said to
    // be, under OpenTelemetry's `unknown_service`.
    let added = ok(d, &["store", "add", "nameless", cpu]);
    assert_eq!(added.split('\t').nth(2), Some("unknown_service"), "{added}");
    // Where no report takes it, --sample-type without --store is refused.
    let filter = ["filter", "--sample-type", "cpu", cpu, "-o", "f.pb.gz"];
    refused(d, &filter, &["--sample-type", "--store"]);
}

/// Asserts that `args` end in a usage error (2), one line saying each of
/// `said`.
fn refused(d: &Path, args: &[&str], said: &[&str]) {
    let (status, _, stderr) = run(d, args);
    assert_eq!(status, 2, "{args:?}: {stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
    for said in said {
        assert!(stderr.contains(said), "{args:?}: {said}: {stderr}");
    }
}

/// A selection that matches nothing says what the store holds: each
/// service, its profiles and their time range.
#[test]
fn an_empty_selection_says_what_the_store_holds() {
    let Some(corpus) = corpus_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fleet(&corpus, d);
    let said = [
        "matches no profile",
        "checkout: 2 profiles from ",
        "heap one: 2 profiles",
        "search: 1 profile at ",
    ];
    refused(d, &["top", "--store", "fleet", "--from", "-1h"], &said);
}

/// Files that pprof does not merge are named, both, with their sample
/// types, and the exit status is 2 (the inputs asked for are at fault).
#[test]
fn files_that_do_not_merge_are_named() {
    let Some(corpus) = corpus_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (cpu, heap) = (
        corpus.join("pprof/real/go-cpu.pb.gz"),
        corpus.join("pprof/real/go-heap.pb.gz"),
    );
    let top = ["top", cpu.to_str().unwrap(), heap.to_str().unwrap()];
    let said = [
        "go-cpu.pb.gz",
        "go-heap.pb.gz",
        "cpu/nanoseconds",
        "inuse_space/bytes",
    ];
    refused(dir.path(), &top, &said);
}

/// Attribute values of every kind OTLP allows are stored as users write
/// them (strings as they are, numbers and booleans as text, arrays and
/// key-value lists as JSON, bytes as base64), read so by protoprof's SQL,
/// reports and DuckDB; the bridge's `pprof.scope.*` layout attributes are
/// not stored as the profile's.
#[test]
fn attribute_values_are_stored_as_users_write_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let example = protoprof_tests::workspace_root().join("examples/cpu.pb.gz");
    let to_json = [
        "convert",
        "--to",
        "otlp",
        "--format",
        "json",
        "--resource",
        "service.name=attrs",
    ];
    ok(
        d,
        &[&to_json[..], &[example.to_str().unwrap(), "-o", "cpu.json"]].concat(),
    );
    let mut data: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("cpu.json")).unwrap()).unwrap();
    let kinds = serde_json::json!([
        {"key": "k.string", "value": {"stringValue": "eu [1]"}},
        {"key": "k.int", "value": {"intValue": "-42"}},
        {"key": "k.double", "value": {"doubleValue": 1.5}},
        {"key": "k.bool", "value": {"boolValue": true}},
        {"key": "k.bytes", "value": {"bytesValue": "aGkh"}},
        {"key": "k.array", "value": {"arrayValue": {"values": [{"intValue": "0"}, {"stringValue": "x"}, {"doubleValue": 0.5}]}}},
        {"key": "k.kvlist", "value": {"kvlistValue": {"values": [{"key": "a", "value": {"boolValue": false}}, {"key": "b", "value": {"arrayValue": {"values": [{"bytesValue": "AP8="}]}}}]}}},
        {"key": "k.empty", "value": {}}
    ]);
    let written = [
        ("k.string", "eu [1]"),
        ("k.int", "-42"),
        ("k.double", "1.5"),
        ("k.bool", "true"),
        ("k.bytes", "aGkh"),
        ("k.array", r#"[0,"x",0.5]"#),
        ("k.kvlist", r#"{"a":false,"b":["AP8="]}"#),
        ("k.empty", ""),
    ];
    let attributes = &mut data["resourceProfiles"][0]["resource"]["attributes"];
    attributes
        .as_array_mut()
        .unwrap()
        .extend(kinds.as_array().unwrap().iter().cloned());
    std::fs::write(d.join("kinds.json"), data.to_string()).unwrap();
    let added = ok(d, &["store", "add", "store", "kinds.json"]);
    let id = added.split('\t').next().unwrap();
    // `store get --to otlp` gives each back as the text stored.
    let get = ["store", "get", "store", "--profile-id", id, "--to", "otlp"];
    ok(
        d,
        &[&get[..], &["--format", "json", "-o", "back.json"]].concat(),
    );
    let back: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("back.json")).unwrap()).unwrap();
    let back = back["resourceProfiles"][0]["resource"]["attributes"]
        .as_array()
        .unwrap()
        .clone();
    for (key, text) in written.iter().filter(|(_, text)| !text.is_empty()) {
        let found = back.iter().find(|kv| kv["key"] == *key);
        let value = found.map(|kv| kv["value"]["stringValue"].clone());
        assert_eq!(
            value,
            Some(serde_json::json!(text)),
            "store get {key}: {back:?}"
        );
    }
    let sql = "SELECT resource_attributes FROM profiles";
    let answer: serde_json::Value = serde_json::from_str(&ok(
        d,
        &["query", "--store", "store", "--format", "json", sql],
    ))
    .unwrap();
    let stored = &answer["resource_attributes"];
    for (key, text) in written {
        assert_eq!(stored[key], text, "{key}: {stored}");
    }
    assert!(
        stored.get("pprof.scope.sample_type_order").is_none(),
        "{stored}"
    );
    // CSV holds the map as JSON text.
    let csv = ok(d, &["query", "--store", "store", "--format", "csv", sql]);
    let cell = r#""{""k.string"":""eu [1]"",""k.int"":""-42"""#;
    assert!(csv.lines().nth(1).unwrap().starts_with(cell), "{csv}");
    assert!(csv.contains(r#"""k.array"":""[0,\""x\"",0.5]"""#), "{csv}");
    let report = ok(d, &["top", "--store", "store"]);
    for rust in ["ArrayValue", "Some(", "special_fields"] {
        assert!(!report.contains(rust), "{rust}: {report}");
    }
    // DuckDB reads the same texts from the Parquet files.
    let Some(python) = protoprof_tests::python_store() else {
        return;
    };
    let files = d.join("store/profiles/**/*.parquet");
    let script = format!(
        "import duckdb, json\n\
         rows = duckdb.sql(\"SELECT resource_attributes FROM read_parquet('{}', hive_partitioning=true)\").fetchall()\n\
         print(json.dumps(dict(rows[0][0])))",
        files.display()
    );
    let out = std::process::Command::new(python)
        .args(["-c", &script])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let duckdb: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for (key, text) in written {
        assert_eq!(duckdb[key], text, "DuckDB {key}: {duckdb}");
    }
}

/// `query`: `SHOW TABLES` and `information_schema` list the tables, and
/// every example of `query --help` runs.
#[test]
fn query_lists_its_tables_and_its_help_examples_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let example = protoprof_tests::workspace_root().join("examples/cpu.pb.gz");
    ok(
        d,
        &[
            "store",
            "add",
            "fleet/",
            "--service",
            "checkout",
            example.to_str().unwrap(),
        ],
    );
    let tables = ok(
        d,
        &[
            "query",
            "--store",
            "fleet",
            "--format",
            "csv",
            "SHOW TABLES",
        ],
    );
    for table in [
        "samples",
        "profiles",
        "stacks",
        "locations",
        "functions",
        "mappings",
        "stack_leaf",
    ] {
        assert!(tables.contains(&format!(",{table},")), "{table}: {tables}");
    }
    let columns = ok(
        d,
        &[
            "query",
            "--store",
            "fleet",
            "--format",
            "csv",
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'samples'",
        ],
    );
    assert!(columns.contains("stack_id"), "{columns}");
    // Wide enough that no example is wrapped.
    let help = common::protoprof(d)
        .args(["query", "--help"])
        .env("COLUMNS", "400")
        .output();
    let help = String::from_utf8(help.unwrap().stdout).unwrap();
    let examples: Vec<&str> = help
        .lines()
        .filter_map(|l| l.trim().strip_prefix("protoprof query "))
        .collect();
    assert!(examples.len() >= 3, "{help}");
    for example in examples {
        let out = std::process::Command::new("bash")
            .args(["-c", &format!("\"$PROTOPROF\" query {example}")])
            .env("PROTOPROF", assert_cmd::cargo::cargo_bin("protoprof"))
            .current_dir(d)
            .output()
            .unwrap();
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(out.status.success(), "query {example}: {stderr}");
        assert!(stdout.lines().count() >= 2, "query {example}: {stdout}");
    }
    // The CSV example sums one sample type: main.burn's flat CPU time, in
    // nanoseconds as `top --unit nanoseconds` has it, not CPU time plus counts.
    let flat = ok(d, &["query", "--store", "fleet", "--format", "csv",
        "SELECT sum(value) FROM samples JOIN stack_leaf USING (stack_id) WHERE sample_type = 'cpu' AND function_name = 'main.burn'"]);
    assert_eq!(flat.lines().nth(1), Some("510000000"), "{flat}");
}
