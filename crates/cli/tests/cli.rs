//! The `protoprof` binary, run as a user would: snapshots of every command's
//! output, edits through a scripted editor, exit statuses, and `top` against
//! Go's `go tool pprof -top`.

mod common;

use common::{ok, outcome, protoprof, run};
use std::path::{Path, PathBuf};

use protobuf::well_known_types::any::Any;
use protobuf::{Message, MessageField};
use protoprof_model_pprof::perftools::profiles::{
    Function, Label, Line, Location, Mapping, Profile, Sample, ValueType,
};
use protoprof_tests::{corpus_dir, files_under};

/// main -> work -> compute, with a label per sample; two sample types.
fn fixture() -> Profile {
    let strings = [
        "",
        "samples",
        "count",
        "cpu",
        "nanoseconds",
        "main",
        "work",
        "compute",
        "main.go",
        "thread",
        "worker-1",
        "worker-2",
        "/bin/app",
    ];
    let function = [(1, 5), (2, 6), (3, 7)]
        .map(|(id, name)| Function {
            id,
            name,
            filename: 8,
            ..Default::default()
        })
        .to_vec();
    let location = (1..=3)
        .map(|id| Location {
            id,
            mapping_id: 1,
            address: 0x1000 + 0x10 * id,
            line: vec![Line {
                function_id: id,
                line: 10 * id as i64,
                ..Default::default()
            }],
            ..Default::default()
        })
        .collect();
    let sample = |stack: Vec<u64>, v: i64, thread: i64| Sample {
        location_id: stack,
        value: vec![v, v * 10_000_000],
        label: vec![Label {
            key: 9,
            str: thread,
            ..Default::default()
        }],
        ..Default::default()
    };
    Profile {
        sample_type: vec![
            ValueType {
                type_: 1,
                unit: 2,
                ..Default::default()
            },
            ValueType {
                type_: 3,
                unit: 4,
                ..Default::default()
            },
        ],
        sample: vec![
            sample(vec![3, 2, 1], 7, 10),
            sample(vec![2, 1], 3, 11),
            sample(vec![3, 2, 1], 1, 11),
        ],
        mapping: vec![Mapping {
            id: 1,
            memory_start: 0x1000,
            memory_limit: 0x2000,
            filename: 12,
            ..Default::default()
        }],
        location,
        function,
        string_table: strings.map(String::from).to_vec(),
        time_nanos: 1_700_000_000_000_000_000,
        duration_nanos: 10_000_000_000,
        period_type: MessageField::some(ValueType {
            type_: 3,
            unit: 4,
            ..Default::default()
        }),
        period: 10_000_000,
        ..Default::default()
    }
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    protoprof_codec::gzip::compress(bytes, 6).unwrap()
}

/// A directory with the fixture (`cpu.pb.gz`), a changed copy (`after.pb`), a
/// broken copy (`broken.pb`) and a relay capture (`capture.grpc`).
fn workdir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let p = fixture();
    std::fs::write(
        dir.path().join("cpu.pb.gz"),
        gzip(&p.write_to_bytes().unwrap()),
    )
    .unwrap();
    let mut after = p.clone();
    after.sample[0].value = vec![20, 200_000_000];
    std::fs::write(dir.path().join("after.pb"), after.write_to_bytes().unwrap()).unwrap();
    let mut broken = p.clone();
    broken.sample[1].location_id[0] = 99;
    broken.sample[2].value.pop();
    std::fs::write(
        dir.path().join("broken.pb"),
        broken.write_to_bytes().unwrap(),
    )
    .unwrap();
    use protoprof_codec::frame::{write_frame, Framing};
    use protoprof_model_relay::envoy::config::core::v3::ControlPlane;
    use protoprof_model_relay::envoy::service::discovery::v3::DiscoveryResponse;
    let url = "type.googleapis.com/envoy.config.core.v3.ControlPlane";
    let resource = Any::pack(&ControlPlane {
        identifier: "cp-1".into(),
        ..Default::default()
    })
    .unwrap();
    let responses = [
        DiscoveryResponse::default(),
        DiscoveryResponse {
            version_info: "1".into(),
            type_url: url.into(),
            resources: vec![resource.clone()],
            nonce: "a".into(),
            ..Default::default()
        },
        DiscoveryResponse {
            version_info: "2".into(),
            type_url: url.into(),
            resources: vec![resource; 2],
            nonce: "b".into(),
            ..Default::default()
        },
    ];
    let mut capture = Vec::new();
    for (i, r) in responses.iter().enumerate() {
        write_frame(
            &mut capture,
            Framing::Grpc,
            &r.write_to_bytes().unwrap(),
            (i == 2).then_some(6),
        )
        .unwrap();
    }
    std::fs::write(dir.path().join("capture.grpc"), capture).unwrap();
    dir
}

/// `run` with `$EDITOR` set (and `$VISUAL` unset), for `edit`.
fn run_with_editor(dir: &Path, args: &[&str], editor: &Path) -> (i32, String, String) {
    let output = protoprof(dir)
        .args(args)
        .env("EDITOR", editor)
        .env_remove("VISUAL")
        .output()
        .unwrap();
    outcome(output)
}

#[test]
fn snapshots_of_every_command() {
    let dir = workdir();
    let d = dir.path();
    insta::assert_snapshot!("inspect", ok(d, &["inspect", "cpu.pb.gz"]));
    insta::assert_snapshot!(
        "inspect_json",
        ok(d, &["inspect", "--format", "json", "cpu.pb.gz"])
    );
    insta::assert_snapshot!("view", ok(d, &["view", "cpu.pb.gz"]));
    insta::assert_snapshot!(
        "decode_json",
        ok(d, &["decode", "--to", "json", "cpu.pb.gz"])
    );
    insta::assert_snapshot!("decode_raw", ok(d, &["decode", "--raw", "after.pb"]));
    insta::assert_snapshot!("top", ok(d, &["top", "cpu.pb.gz"]));
    insta::assert_snapshot!(
        "top_json",
        ok(
            d,
            &[
                "top",
                "--format",
                "json",
                "--sample-index",
                "samples",
                "cpu.pb.gz"
            ]
        )
    );
    insta::assert_snapshot!("top_cum", ok(d, &["top", "--cum", "-n", "2", "cpu.pb.gz"]));
    insta::assert_snapshot!("folded", ok(d, &["folded", "cpu.pb.gz"]));
    insta::assert_snapshot!("diff", ok(d, &["diff", "cpu.pb.gz", "after.pb"]));
    insta::assert_snapshot!(
        "diff_json",
        ok(d, &["diff", "--format", "json", "cpu.pb.gz", "after.pb"])
    );
    insta::assert_snapshot!("frames", ok(d, &["frames", "capture.grpc"]));
    insta::assert_snapshot!(
        "frames_json",
        ok(d, &["frames", "--format", "json", "capture.grpc"])
    );
    ok(
        d,
        &[
            "convert",
            "--to",
            "otlp",
            "--otlp-version",
            "v1experimental",
            "--deterministic-id",
            "--resource",
            "service.name=demo",
            "cpu.pb.gz",
            "-o",
            "cpu.otlp.pb",
        ],
    );
    insta::assert_snapshot!("inspect_otlp", ok(d, &["inspect", "cpu.otlp.pb"]));
    insta::assert_snapshot!("view_otlp", ok(d, &["view", "cpu.otlp.pb"]));
    // The default: v1development, one Profile per sample type.
    ok(
        d,
        &[
            "convert",
            "--to",
            "otlp",
            "--deterministic-id",
            "--resource",
            "service.name=demo",
            "cpu.pb.gz",
            "-o",
            "cpu.v1dev.pb",
        ],
    );
    insta::assert_snapshot!(
        "inspect_otlp_development",
        ok(d, &["inspect", "cpu.v1dev.pb"])
    );
    insta::assert_snapshot!("view_otlp_development", ok(d, &["view", "cpu.v1dev.pb"]));
    // The rows; the headers differ by the otlp: comments that carry the
    // envelope, which pprof lists as it lists every comment.
    let rows = |text: String| text.split_once("flat%").unwrap().1.to_string();
    assert_eq!(
        rows(ok(d, &["top", "cpu.v1dev.pb"])),
        rows(ok(d, &["top", "cpu.pb.gz"])),
        "analysis of the OTLP equals that of the pprof it came from"
    );
    let (status, stdout, _) = run(d, &["validate", "cpu.pb.gz", "broken.pb"]);
    assert_eq!(status, 1);
    insta::assert_snapshot!("validate", stdout);
    let (status, stdout, _) = run(d, &["validate", "--format", "json", "broken.pb"]);
    assert_eq!(status, 1);
    insta::assert_snapshot!("validate_json", stdout);
}

#[test]
fn decode_and_encode_are_exact_inverses() {
    let dir = workdir();
    let d = dir.path();
    let original = protoprof_tests::read_profile_bytes(&d.join("cpu.pb.gz"));
    for form in ["text", "json"] {
        let out = format!("cpu.{form}");
        ok(d, &["decode", "--to", form, "cpu.pb.gz", "-o", &out]);
        ok(
            d,
            &[
                "encode",
                "--type",
                "perftools.profiles.Profile",
                &out,
                "-o",
                "again.pb",
            ],
        );
        assert_eq!(
            std::fs::read(d.join("again.pb")).unwrap(),
            original,
            "{form}"
        );
    }
    // Standard input and output.
    let text = protoprof(d)
        .args(["decode", "-"])
        .write_stdin(original.clone())
        .output()
        .unwrap()
        .stdout;
    let bytes = protoprof(d)
        .args([
            "encode",
            "--type",
            "perftools.profiles.Profile",
            "-",
            "-o",
            "-",
        ])
        .write_stdin(text)
        .output()
        .unwrap();
    assert_eq!(bytes.stdout, original);
}

#[test]
fn convert_round_trips_and_never_overwrites_its_input() {
    let dir = workdir();
    let d = dir.path();
    ok(
        d,
        &[
            "convert",
            "--to",
            "otlp",
            "--format",
            "json",
            "cpu.pb.gz",
            "-o",
            "cpu.otlp.json",
        ],
    );
    ok(
        d,
        &[
            "convert",
            "--to",
            "pprof",
            "--gzip",
            "cpu.otlp.json",
            "-o",
            "back.pb.gz",
        ],
    );
    let back =
        Profile::parse_from_bytes(&protoprof_tests::read_profile_bytes(&d.join("back.pb.gz")))
            .unwrap();
    protoprof_pprof_bridge::semantic::pprof_equal(&fixture(), &back).unwrap();
    let before = std::fs::read(d.join("cpu.pb.gz")).unwrap();
    let (status, _, stderr) = run(
        d,
        &["convert", "--to", "otlp", "cpu.pb.gz", "-o", "cpu.pb.gz"],
    );
    assert_eq!(status, 2);
    assert!(stderr.contains("--in-place"), "{stderr}");
    assert_eq!(std::fs::read(d.join("cpu.pb.gz")).unwrap(), before);
    ok(d, &["merge", "cpu.pb.gz", "after.pb", "-o", "merged.pb"]);
    let merged = ok(
        d,
        &[
            "top",
            "--format",
            "json",
            "--sample-index",
            "0",
            "merged.pb",
        ],
    );
    // The roots: 7 + 3 + 1 samples in cpu.pb.gz, 20 + 3 + 1 in after.pb.
    assert!(merged.contains("\"cum\": 35"), "{merged}");
}

/// `convert --to otlp` writes v1development as it makes it (to a file,
/// through gzip, to standard output): the bytes are the library's.
#[test]
fn convert_to_otlp_streams_the_library_bytes() {
    let dir = workdir();
    let d = dir.path();
    let options = protoprof_pprof_bridge::ToDevelopmentOptions {
        profile_id: protoprof_pprof_bridge::ProfileId::ContentHash,
        ..Default::default()
    };
    let expected = protoprof_pprof_bridge::pprof_to_development_bytes(&fixture(), &options)
        .unwrap()
        .value;
    let convert = ["convert", "--to", "otlp", "--deterministic-id", "cpu.pb.gz"];
    ok(d, &[&convert[..], &["-o", "dev.pb"]].concat());
    assert_eq!(std::fs::read(d.join("dev.pb")).unwrap(), expected);
    ok(d, &[&convert[..], &["--gzip", "-o", "dev.pb.gz"]].concat());
    let gzipped = std::fs::read(d.join("dev.pb.gz")).unwrap();
    assert!(protoprof_codec::gzip::is_gzip(&gzipped));
    assert_eq!(
        protoprof_tests::read_profile_bytes(&d.join("dev.pb.gz")),
        expected
    );
    let stdout = protoprof(d)
        .args([&convert[..], &["-o", "-"]].concat())
        .output()
        .unwrap();
    assert!(stdout.status.success());
    assert_eq!(stdout.stdout, expected);
    // v1experimental likewise.
    let options = protoprof_pprof_bridge::ToOtlpOptions {
        profile_id: protoprof_pprof_bridge::ProfileId::ContentHash,
        ..Default::default()
    };
    let expected = protoprof_pprof_bridge::pprof_to_otlp_bytes(&fixture(), &options).unwrap();
    let experimental = ["--otlp-version", "v1experimental"];
    ok(
        d,
        &[&convert[..], &experimental, &["-o", "exp.pb.gz", "--gzip"]].concat(),
    );
    assert_eq!(
        protoprof_tests::read_profile_bytes(&d.join("exp.pb.gz")),
        expected
    );
    ok(
        d,
        &[&convert[..], &experimental, &["-o", "exp.pb"]].concat(),
    );
    assert_eq!(std::fs::read(d.join("exp.pb")).unwrap(), expected);
}

fn editor_script(dir: &Path, body: &str) -> PathBuf {
    let path = dir.join("editor.sh");
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    path
}

#[test]
fn edit_with_a_scripted_editor() {
    let dir = workdir();
    let d = dir.path();
    let file = d.join("cpu.pb.gz");
    let before = std::fs::read(&file).unwrap();
    // A valid change: the first sample's count 7 becomes 8.
    let valid = editor_script(d, r#"sed -i '0,/value: 7$/s//value: 8/' "$1""#);
    let output = protoprof(d)
        .args(["edit", "cpu.pb.gz"])
        .env("EDITOR", &valid)
        .env_remove("VISUAL")
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let after = std::fs::read(&file).unwrap();
    assert!(after.starts_with(&[0x1f, 0x8b]), "still gzip");
    let edited = Profile::parse_from_bytes(&protoprof_tests::read_profile_bytes(&file)).unwrap();
    assert_eq!(edited.sample[0].value[0], 8);

    // An invalid change (a location that does not exist) is not written.
    let invalid = editor_script(d, r#"sed -i '0,/location_id: 3$/s//location_id: 99/' "$1""#);
    let output = protoprof(d)
        .args(["edit", "cpu.pb.gz"])
        .env("EDITOR", &invalid)
        .env_remove("VISUAL")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("PPROF-REF-003"), "{stderr}");
    assert_eq!(std::fs::read(&file).unwrap(), after, "unchanged");
    let kept = stderr
        .lines()
        .find_map(|l| l.split("the edited text is in ").nth(1))
        .expect("temp path printed");
    assert!(
        std::fs::read_to_string(kept)
            .unwrap()
            .contains("location_id: 99"),
        "the edit is kept"
    );

    // --force writes it anyway.
    let output = protoprof(d)
        .args(["edit", "--force", "cpu.pb.gz"])
        .env("EDITOR", &invalid)
        .env_remove("VISUAL")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));

    // An aborted edit (the editor fails) leaves the file byte-identical.
    let current = std::fs::read(&file).unwrap();
    let aborted = editor_script(d, r#"echo garbage > "$1"; exit 3"#);
    let output = protoprof(d)
        .args(["edit", "cpu.pb.gz"])
        .env("EDITOR", &aborted)
        .env_remove("VISUAL")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(std::fs::read(&file).unwrap(), current);
    assert_ne!(current, before);
}

#[test]
fn malformed_inputs_exit_2_with_one_line_and_never_panic() {
    let Some(corpus) = corpus_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out").to_string_lossy().into_owned();
    let mut failures = 0;
    let giving_up = editor_script(dir.path(), "exit 3");
    for path in files_under(&corpus.join("malformed"))
        .into_iter()
        .filter(|p| p.extension().is_none_or(|e| e != "md"))
    {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let file = path.to_string_lossy().into_owned();
        // Every command that reads a profile; edit works on a copy, with an
        // editor that gives up (the file must stay as it was).
        let copy = dir.path().join(format!("edit-{name}"));
        std::fs::copy(&path, &copy).unwrap();
        let copy_arg = copy.to_string_lossy().into_owned();
        let commands: [&[&str]; 19] = [
            &["edit", &copy_arg],
            &["inspect", &file],
            &["validate", &file],
            &["top", &file],
            &["tree", &file],
            &["traces", &file],
            &["callgraph", &file],
            &["callgrind", &file],
            &["list", ".", &file],
            &["filter", &file, "-o", &out],
            &["view", &file],
            &["decode", &file],
            &["folded", &file],
            &["flamegraph", &file, "-o", &out],
            &["convert", "--to", "otlp", &file, "-o", &out],
            &["convert", "--to", "pprof", &file, "-o", &out],
            &["diff", &file, &file],
            &["merge", &file, &file, "-o", &out],
            &["frames", &file],
        ];
        for args in commands {
            let (status, _, stderr) = run_with_editor(dir.path(), args, &giving_up);
            assert!(
                [0, 1, 2].contains(&status) && !stderr.contains("panicked"),
                "{name} {args:?}: status {status} (panic?): {stderr}"
            );
            if status != 2 {
                continue;
            }
            if args[0] == "inspect" {
                failures += 1;
            }
            if args[0] == "edit" {
                assert_eq!(std::fs::read(&copy).unwrap(), std::fs::read(&path).unwrap());
            }
            // One error format for every command, validate included.
            let report = &stderr;
            let lines: Vec<&str> = report
                .lines()
                .filter(|l| !l.starts_with("protoprof: warning"))
                .collect();
            assert_eq!(lines.len(), 1, "{name} {args:?}: {report}");
            assert!(lines[0].contains(&name), "{name} {args:?}: {report}");
            assert!(
                lines[0].starts_with("protoprof: error: "),
                "{name} {args:?}: {report}"
            );
            assert_eq!(
                lines[0].matches(name.as_str()).count(),
                1,
                "the file named once: {report}"
            );
        }
    }
    // The structurally broken ones: truncations, bad varints and wire types,
    // gzip damage, both bombs, nesting depth, zlib, random bytes, empty input.
    assert!(failures >= 18, "only {failures} files failed to decode");
}

/// The codec's limits are options and environment variables; an error a
/// limit causes names the option that raises it.
#[test]
fn limits_are_options_and_the_error_names_them() {
    let dir = workdir();
    let (status, _, stderr) = run(
        dir.path(),
        &["--max-input-size", "100B", "inspect", "cpu.pb.gz"],
    );
    assert_eq!(status, 2, "{stderr}");
    assert!(stderr.contains("over the limit of 100"), "{stderr}");
    assert!(
        stderr.contains("--max-input-size or PROTOPROF_MAX_INPUT_SIZE"),
        "{stderr}"
    );
    let output = protoprof(dir.path())
        .env("PROTOPROF_MAX_INFLATED_SIZE", "100")
        .args(["validate", "cpu.pb.gz"])
        .output()
        .unwrap();
    // validate reports a file it cannot read on standard error, as every
    // command does.
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--max-inflated-size or PROTOPROF_MAX_INFLATED_SIZE"),
        "{stderr}"
    );
    // Within the limits given, as without them.
    ok(
        dir.path(),
        &[
            "--max-input-size",
            "1MB",
            "--max-depth",
            "50",
            "validate",
            "cpu.pb.gz",
        ],
    );
    let (status, _, stderr) = run(dir.path(), &["--max-depth", "1", "inspect", "cpu.pb.gz"]);
    assert_eq!(status, 2, "{stderr}");
    assert!(
        stderr.contains("--max-depth or PROTOPROF_MAX_DEPTH"),
        "{stderr}"
    );
    let (status, _, stderr) = run(
        dir.path(),
        &["--max-input-size", "12parsecs", "inspect", "cpu.pb.gz"],
    );
    assert_eq!(status, 2, "{stderr}");
    assert!(stderr.contains("unknown size unit"), "{stderr}");
}

/// Human output cuts long lines and says how much it cut; `--full` and the
/// machine forms keep everything.
#[test]
fn human_output_cuts_long_strings() {
    let Some(corpus) = corpus_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let file = corpus.join("malformed/otlp-v1experimental-nested-anyvalue-100k.pb");
    let file = file.to_string_lossy();
    // Read as asked, the 794 kB of nested messages are one string field.
    let forced = ["--type", "envoy.service.discovery.v3.DiscoveryRequest"];
    for command in ["inspect", "view"] {
        let shown = ok(dir.path(), &[&[command][..], &forced, &[&file]].concat());
        assert!(shown.len() < 4096, "{command}: {} bytes", shown.len());
        assert!(
            shown.contains("more characters; --full shows all"),
            "{command}: {shown}"
        );
        let full = ok(
            dir.path(),
            &[&[command, "--full"][..], &forced, &[&file]].concat(),
        );
        assert!(
            full.len() > 1_000_000,
            "{command} --full: {} bytes",
            full.len()
        );
    }
    let json = ok(
        dir.path(),
        &[&["inspect", "--format", "json"][..], &forced, &[&file]].concat(),
    );
    assert!(
        json.len() > 1_000_000,
        "inspect --format json: {} bytes",
        json.len()
    );
}

/// `protoprof top` gives the numbers `go tool pprof -top` gives.
#[test]
fn top_matches_go_tool_pprof() {
    let Some(corpus) = corpus_dir() else { return };
    if protoprof_tests::go_pprof_check(&[]).is_none() {
        return; // no Go (and not under CI)
    }
    let files = [
        "pprof/go/go-cpu.pb.gz",
        "pprof/go/go-heap.pb.gz",
        "pprof/go/go-block.pb.gz",
        // Not go-heap-truncated-stacks-*: Go's display rewrites generic shape
        // names there (dropping parenthesised groups, not consistently), so
        // names cannot be matched; the numbers are not the issue.
        "pprof/real/go-heap.pb.gz",
        "pprof/real/go-mutex.pb.gz",
        "pprof/real/java-jfr-cpu.pb.gz",
        "pprof/real/nodejs-wall.pb.gz",
        "pprof/real/python-cpu.pb.gz",
    ];
    let dir = tempfile::tempdir().unwrap();
    for file in files {
        let path = corpus.join(file);
        let p = Profile::parse_from_bytes(&protoprof_tests::read_profile_bytes(&path)).unwrap();
        let index = protoprof_analysis::sample_index(&p, None).unwrap();
        let unit =
            protoprof_model_meta::StringTable::string(&p, p.sample_type[index].unit).to_string();
        let go_unit = match unit.as_str() {
            "nanoseconds" => "ns",
            "microseconds" => "us",
            "bytes" => "B",
            _ => "",
        };
        let mut go = std::process::Command::new("go");
        go.args([
            "tool",
            "pprof",
            "-top",
            "-nodecount=1000000",
            "-nodefraction=0",
            "-edgefraction=0",
        ]);
        if !go_unit.is_empty() {
            go.arg(format!("-unit={go_unit}"));
        }
        let output = go.arg(&path).env("HOME", dir.path()).output().unwrap();
        assert!(
            output.status.success(),
            "{file}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let go_rows = parse_go_top(&String::from_utf8_lossy(&output.stdout), go_unit);
        assert!(!go_rows.is_empty(), "{file}: no rows from go tool pprof");
        let ours: serde_json::Value = serde_json::from_str(&ok(
            dir.path(),
            &[
                "top",
                "--format",
                "json",
                "--nodefraction",
                "0",
                path.to_str().unwrap(),
            ],
        ))
        .unwrap();
        assert_eq!(ours["unit"], unit.as_str(), "{file}");
        let ours: std::collections::BTreeMap<String, (i64, i64)> = ours["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["function"].as_str().unwrap().to_string(),
                    (r["flat"].as_i64().unwrap(), r["cum"].as_i64().unwrap()),
                )
            })
            .collect();
        for (name, (flat, cum)) in &go_rows {
            assert_eq!(ours.get(name), Some(&(*flat, *cum)), "{file}: {name}");
        }
        assert_eq!(ours.len(), go_rows.len(), "{file}: function count");
        // And the human report, header to last row, as pprof prints it
        // (pprof's defaults: node fraction 0.005, the report's unit chosen
        // as pprof chooses it; times in UTC).
        for (ours, theirs) in [
            (&[][..], &[][..]),
            (&["--nodecount", "7"][..], &["-nodecount=7"][..]),
            (&["--cum", "--unit", "ms"][..], &["-cum", "-unit=ms"][..]),
            (
                &["--focus", "main", "--granularity", "lines"][..],
                &["-focus=main", "-lines"][..],
            ),
        ] {
            let output = std::process::Command::new("go")
                .args(["tool", "pprof", "-top"])
                .args(theirs)
                .arg(&path)
                .env("HOME", dir.path())
                .env("TZ", "UTC")
                .output()
                .unwrap();
            let mut args = vec!["top"];
            args.extend_from_slice(ours);
            args.push(path.to_str().unwrap());
            assert_eq!(
                ok(dir.path(), &args),
                String::from_utf8_lossy(&output.stdout),
                "{file} {ours:?}"
            );
        }
    }
}

/// Rows of `go tool pprof -top`: function -> (flat, cum), values in `unit`.
fn parse_go_top(output: &str, unit: &str) -> std::collections::BTreeMap<String, (i64, i64)> {
    let value = |v: &str| -> i64 {
        v.strip_suffix(unit)
            .unwrap_or(v)
            .parse()
            .unwrap_or_else(|_| panic!("value {v:?}"))
    };
    output
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("flat"))
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.len() < 6 {
                return None;
            }
            let name = fields[5..].join(" ");
            // Go marks inlining in the name; the function is the same.
            let name = [" (inline)", " (partial-inline)"]
                .iter()
                .fold(name.clone(), |n, suffix| {
                    n.strip_suffix(suffix).unwrap_or(&n).to_string()
                });
            Some((name, (value(fields[0]), value(fields[3]))))
        })
        .collect()
}

#[test]
fn completions_and_help() {
    let dir = tempfile::tempdir().unwrap();
    assert!(ok(dir.path(), &["completions", "bash"]).contains("protoprof"));
    let help = ok(dir.path(), &["top", "--help"]);
    assert!(help.contains("Examples:"), "{help}");
    let (status, _, stderr) = run(dir.path(), &["top"]);
    assert_eq!(status, 2, "{stderr}");
}

/// OTLP v1development end to end: inspect names the revision, validate
/// reads it, analysis equals the analysis of what `convert --to pprof`
/// writes, and older revisions are refused with their name.
#[test]
fn v1development_is_read_validated_and_analysed() {
    let Some(corpus) = corpus_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let dev = corpus.join("otlp/v1development");
    let current = dev
        .join("v1development-1.10-ebpf-export-request.pb")
        .to_string_lossy()
        .into_owned();
    let inspected = ok(d, &["inspect", &current]);
    assert!(
        inspected.contains("revision: opentelemetry-proto v1.10.0/v1.11.0"),
        "{inspected}"
    );
    assert!(
        inspected.contains("resources 77, profiles 82"),
        "{inspected}"
    );
    let validated = ok(d, &["validate", &current]);
    assert!(validated.contains(": valid ("), "{validated}");
    ok(
        d,
        &["convert", "--to", "pprof", &current, "-o", "dev.pb.gz"],
    );
    for command in [&["top", "-n", "20"][..], &["folded"][..]] {
        let from_otlp = ok(d, &[command, &[current.as_str()]].concat());
        let from_pprof = ok(d, &[command, &["dev.pb.gz"]].concat());
        assert_eq!(from_otlp, from_pprof, "{command:?}");
        assert!(from_otlp.lines().count() > 5);
    }
    // v1.8.0/v1.9.0 is upgraded on the wire, with a warning naming it.
    let v1_8 = dev.join("v1development-1.8-ebpf-export-request.pb");
    let (status, stdout, stderr) = run(d, &["top", &v1_8.to_string_lossy()]);
    assert_eq!(status, 0, "{stderr}");
    assert!(
        stderr.contains("opentelemetry-proto v1.8.0/v1.9.0, read as v1.10.0"),
        "{stderr}"
    );
    assert!(stdout.contains("finish_task_switch"), "{stdout}");
    for (file, revision) in [
        (
            "v1development-1.7-ebpf-unsymbolized-export-request.pb",
            "v1.7.0",
        ),
        (
            "v1development-1.5-ebpf-pyrosymbolized-export-request.pb",
            "v1.4.0/v1.5.0",
        ),
    ] {
        // Older revisions are rebuilt in the current model, with the
        // warning naming the revision.
        let path = dev.join(file).to_string_lossy().into_owned();
        let (status, stdout, stderr) = run(d, &["top", &path]);
        assert_eq!(status, 0, "{file}: {stderr}");
        assert!(stderr.contains(revision), "{file}: {stderr}");
        assert!(stdout.lines().count() > 5, "{file}: {stdout}");
    }
}

/// `convert --to otlp` writes v1development by default and v1experimental
/// when asked, from pprof or from OTLP of the other version (through pprof),
/// and the profile survives every leg; an older v1development revision
/// comes out as the current one.
#[test]
fn convert_between_otlp_versions_and_revisions() {
    let dir = workdir();
    let d = dir.path();
    let to_otlp = |input: &str, output: &str, version: &str| {
        ok(
            d,
            &[
                "convert",
                "--to",
                "otlp",
                "--otlp-version",
                version,
                input,
                "-o",
                output,
            ],
        )
    };
    let assert_same_profile = |otlp: &str| {
        ok(d, &["convert", "--to", "pprof", otlp, "-o", "back.pb"]);
        let back = Profile::parse_from_bytes(&std::fs::read(d.join("back.pb")).unwrap()).unwrap();
        protoprof_pprof_bridge::semantic::pprof_equal(&fixture(), &back)
            .unwrap_or_else(|e| panic!("{otlp}: {e}"));
    };
    ok(d, &["convert", "--to", "otlp", "cpu.pb.gz", "-o", "dev.pb"]);
    assert!(ok(d, &["inspect", "dev.pb"]).contains("v1development.ProfilesData"));
    to_otlp("dev.pb", "exp.pb", "v1experimental");
    assert!(ok(d, &["inspect", "exp.pb"]).contains("v1experimental.ProfilesData"));
    to_otlp("exp.pb", "dev-again.pb", "v1development");
    for file in ["dev.pb", "exp.pb", "dev-again.pb"] {
        assert_same_profile(file);
    }
    let Some(corpus) = protoprof_tests::corpus_dir() else {
        return;
    };
    let old = corpus.join("otlp/v1development/v1development-1.8-ebpf-export-request.pb");
    let (status, _, stderr) = run(
        d,
        &[
            "convert",
            "--to",
            "otlp",
            &old.to_string_lossy(),
            "-o",
            "current.pb",
        ],
    );
    assert_eq!(status, 0, "{stderr}");
    assert!(stderr.contains("v1.8"), "the upgrade is reported: {stderr}");
    let inspected = ok(d, &["inspect", "current.pb"]);
    assert!(inspected.contains("v1.10"), "{inspected}");
    assert_eq!(
        ok(d, &["top", "current.pb"]),
        ok(d, &["top", &old.to_string_lossy()]),
        "the upgraded file analyses as the original"
    );
    // --otlp-revision overrides what the bytes look like: read as v1.10,
    // v1.8's values are attribute indices, and the read fails.
    let old = old.to_string_lossy();
    let (status, _, stderr) = run(d, &["inspect", "--otlp-revision", "1.10", &old]);
    assert_eq!(status, 2, "{stderr}");
    let forced = ok(d, &["inspect", "--otlp-revision", "v1.9.0", &old]);
    assert!(forced.contains("v1.9.0"), "{forced}");
    // Revisions before v1.8 are read too (v1.7: tables in a dictionary,
    // samples as location slices).
    let v1_7 = corpus
        .join("otlp/v1development/v1development-1.7-async-profiler-link-table-export-request.pb");
    let (status, _, stderr) = run(d, &["validate", &v1_7.to_string_lossy()]);
    assert_eq!(status, 0, "{stderr}");
    assert!(stderr.contains("v1.7.0"), "{stderr}");
}

/// `convert --to pprof --split DIR`: one pprof file per OTLP profile, each
/// accepted by Go's pprof, together holding what the merged conversion holds.
#[test]
fn convert_split_writes_one_pprof_per_profile() {
    let Some(corpus) = protoprof_tests::corpus_dir() else {
        return;
    };
    let dir = workdir();
    let d = dir.path();
    let input = corpus.join("otlp/v1development/v1development-1.10-ebpf-export-request.pb");
    let input = input.to_string_lossy();
    let listing = ok(d, &["convert", "--to", "pprof", "--split", "each", &input]);
    ok(d, &["convert", "--to", "pprof", &input, "-o", "merged.pb"]);
    let files: Vec<std::path::PathBuf> = listing
        .lines()
        .map(|line| d.join(line.split('\t').next().unwrap()))
        .collect();
    assert_eq!(files.len(), 82, "{listing}");
    let total = |p: &Profile| -> i64 { p.sample.iter().flat_map(|s| &s.value).sum() };
    let read = |f: &std::path::Path| Profile::parse_from_bytes(&std::fs::read(f).unwrap()).unwrap();
    let split_total: i64 = files.iter().map(|f| total(&read(f))).sum();
    assert_eq!(split_total, total(&read(&d.join("merged.pb"))));
    assert!(files.iter().all(|f| read(f).sample_type.len() == 1));
    let main_binary = read(&d.join("merged.pb")).mapping[0].clone();
    for f in &files {
        assert_holds_only_what_it_reaches(&read(f), &main_binary);
    }
    if let Some(failures) = protoprof_tests::go_pprof_check(&files) {
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }
    let (status, _, stderr) = run(d, &["convert", "--to", "otlp", "--split", "x", "cpu.pb.gz"]);
    assert_eq!(status, 2, "{stderr}");
}

/// A profile split from a message whose dictionary many share holds the
/// locations its samples reach, their functions and mappings, and the main
/// binary first; nothing else.
fn assert_holds_only_what_it_reaches(p: &Profile, main_binary: &Mapping) {
    use std::collections::BTreeSet;
    let reached: BTreeSet<u64> = p
        .sample
        .iter()
        .flat_map(|s| s.location_id.clone())
        .collect();
    let locations: BTreeSet<u64> = p.location.iter().map(|l| l.id).collect();
    assert_eq!(locations, reached);
    let functions: BTreeSet<u64> = p.function.iter().map(|f| f.id).collect();
    let called = p
        .location
        .iter()
        .flat_map(|l| &l.line)
        .map(|l| l.function_id);
    assert_eq!(functions, called.collect());
    let mut mappings: BTreeSet<u64> = p.location.iter().map(|l| l.mapping_id).collect();
    mappings.insert(main_binary.id);
    mappings.remove(&0);
    assert_eq!(
        p.mapping.iter().map(|m| m.id).collect::<BTreeSet<_>>(),
        mappings
    );
    assert_eq!(p.mapping[0].id, main_binary.id);
    assert_eq!(p.mapping[0].memory_start, main_binary.memory_start);
}

/// (file, go's unit, our options, go's options) for every filter and granularity.
type FilterCase = (
    &'static str,
    &'static str,
    &'static [&'static str],
    &'static [&'static str],
);

fn filter_cases() -> &'static [FilterCase] {
    const CPU: &str = "pprof/go/go-cpu.pb.gz";
    const HEAP: &str = "pprof/go/go-heap.pb.gz";
    &[
        (CPU, "ns", &["--focus=main\\.burn"], &["-focus=main\\.burn"]),
        (CPU, "ns", &["--ignore=runtime"], &["-ignore=runtime"]),
        (
            CPU,
            "ns",
            &["--focus=main", "--ignore=mix"],
            &["-focus=main", "-ignore=mix"],
        ),
        (CPU, "ns", &["--hide=runtime"], &["-hide=runtime"]),
        (CPU, "ns", &["--show=main\\."], &["-show=main\\."]),
        (
            CPU,
            "ns",
            &["--show-from=main\\.main"],
            &["-show_from=main\\.main"],
        ),
        (
            CPU,
            "ns",
            &["--prune-from=runtime\\."],
            &["-prune_from=runtime\\."],
        ),
        (
            CPU,
            "ns",
            &["--tagfocus=phase:cpu"],
            &["-tagfocus=phase:cpu"],
        ),
        (CPU, "ns", &["--tagfocus=worker=0"], &["-tagfocus=worker=0"]),
        (
            CPU,
            "ns",
            &["--tagignore=phase:alloc,worker:1"],
            &["-tagignore=phase:alloc,worker:1"],
        ),
        (HEAP, "B", &["--tagfocus=1kb:1mb"], &["-tagfocus=1kb:1mb"]),
        (
            HEAP,
            "B",
            &["--tagfocus=bytes=2kb:"],
            &["-tagfocus=bytes=2kb:"],
        ),
        (CPU, "ns", &["--granularity=lines"], &["-lines"]),
        (CPU, "ns", &["--granularity=files"], &["-files"]),
        (
            CPU,
            "ns",
            &["--granularity=filefunctions"],
            &["-filefunctions"],
        ),
        (CPU, "ns", &["--granularity=addresses"], &["-addresses"]),
        (
            CPU,
            "ns",
            &["--granularity=addresses", "--noinlines"],
            &["-addresses", "-noinlines"],
        ),
        (CPU, "ns", &["--noinlines"], &["-noinlines"]),
        (
            HEAP,
            "B",
            &["--granularity=lines", "--focus=main"],
            &["-lines", "-focus=main"],
        ),
        (
            "pprof/real/java-jfr-cpu.pb.gz",
            "ns",
            &["--hide=java\\.", "--granularity=files"],
            &["-hide=java\\.", "-files"],
        ),
    ]
}

/// Every sample filter and granularity of `top` gives, row for row, what
/// `go tool pprof -top` gives with the same option.
#[test]
fn top_filters_and_granularities_match_go_tool_pprof() {
    let Some(corpus) = corpus_dir() else { return };
    if protoprof_tests::go_pprof_check(&[]).is_none() {
        return; // no Go (and not under CI)
    }
    let cases = filter_cases();
    let dir = tempfile::tempdir().unwrap();
    for (file, unit, ours, theirs) in cases {
        let path = corpus.join(file);
        let output = std::process::Command::new("go")
            .args([
                "tool",
                "pprof",
                "-top",
                "-nodecount=1000000",
                "-nodefraction=0",
                "-edgefraction=0",
            ])
            .arg(format!("-unit={unit}"))
            .args(*theirs)
            .arg(&path)
            .env("HOME", dir.path())
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{file} {theirs:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let go_rows = parse_go_top(&String::from_utf8_lossy(&output.stdout), unit);
        let mut args = vec!["top", "--format", "json", "--nodefraction", "0"];
        args.extend_from_slice(ours);
        let path_text = path.to_string_lossy();
        args.push(&path_text);
        let report: serde_json::Value = serde_json::from_str(&ok(dir.path(), &args)).unwrap();
        let rows: std::collections::BTreeMap<String, (i64, i64)> = report["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let name = r["function"].as_str().unwrap().to_string();
                (
                    name,
                    (r["flat"].as_i64().unwrap(), r["cum"].as_i64().unwrap()),
                )
            })
            .collect();
        assert_eq!(rows, go_rows, "{file} {ours:?}");
    }
}

/// The two CPU profiles the base-profile tests compare, and a directory;
/// `None` without the corpus or Go (outside CI).
fn base_inputs() -> Option<(tempfile::TempDir, String, String)> {
    let corpus = corpus_dir()?;
    protoprof_tests::go_pprof_check(&[])?;
    let a = corpus.join("pprof/go/go-cpu.pb.gz");
    let b = protoprof_tests::workspace_root().join("examples/cpu.pb.gz");
    let dir = tempfile::tempdir().unwrap();
    Some((dir, a.to_str()?.to_string(), b.to_str()?.to_string()))
}

/// `go tool pprof -top` with `args`, as text (times in UTC).
fn go_top(d: &Path, args: &[String]) -> String {
    let output = std::process::Command::new("go")
        .args(["tool", "pprof", "-top"])
        .args(args)
        .env("HOME", d)
        .env("TZ", "UTC")
        .output()
        .unwrap();
    assert!(output.status.success(), "{args:?}");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Base profiles (`--base`, `--diff-base`, `--normalize`) give what
/// `go tool pprof -top` gives, header to last row.
#[test]
fn base_profiles_match_go_tool_pprof() {
    let Some((dir, a, b)) = base_inputs() else {
        return;
    };
    let (d, a, b) = (dir.path(), a.as_str(), b.as_str());
    let cases: [(Vec<&str>, Vec<String>); 5] = [
        (vec!["--base", b, a], vec![format!("-base={b}"), a.into()]),
        (
            vec!["--diff-base", b, a],
            vec![format!("-diff_base={b}"), a.into()],
        ),
        (
            vec!["--diff-base", b, "--normalize", a],
            vec![format!("-diff_base={b}"), "-normalize".into(), a.into()],
        ),
        (
            vec!["--base", b, "-n", "5", "--cum", a],
            vec![
                format!("-base={b}"),
                "-nodecount=5".into(),
                "-cum".into(),
                a.into(),
            ],
        ),
        (
            vec!["--diff-base", a, "--focus", "main", b],
            vec![format!("-diff_base={a}"), "-focus=main".into(), b.into()],
        ),
    ];
    for (ours, theirs) in cases {
        let expected = go_top(d, &theirs);
        let mut args = vec!["top"];
        args.extend(&ours);
        assert_eq!(ok(d, &args), expected, "{ours:?}");
    }
}

/// Profiles in different units are brought to the finer one first, as
/// pprof does.
#[test]
fn mixed_units_match_go_tool_pprof() {
    let Some((dir, a, b)) = base_inputs() else {
        return;
    };
    let (d, a, b) = (dir.path(), a.as_str(), b.as_str());
    // Profiles in different units are brought to the finer one first.
    let mut micro = Profile::parse_from_bytes(&protoprof_tests::read_profile_bytes(
        std::path::Path::new(b),
    ))
    .unwrap();
    let ns = micro
        .string_table
        .iter()
        .position(|s| s == "nanoseconds")
        .unwrap();
    micro.string_table[ns] = "microseconds".into();
    for sample in &mut micro.sample {
        sample.value[1] /= 1000;
    }
    micro.period /= 1000;
    std::fs::write(d.join("micro.pb"), micro.write_to_bytes().unwrap()).unwrap();
    let micro_path = d.join("micro.pb");
    let micro_path = micro_path.to_str().unwrap();
    for (ours, theirs) in [
        (
            vec!["top", a, micro_path],
            vec![a.to_string(), micro_path.to_string()],
        ),
        (
            vec!["top", "--diff-base", micro_path, a],
            vec![format!("-diff_base={micro_path}"), a.to_string()],
        ),
    ] {
        let expected = go_top(d, &theirs);
        assert_eq!(ok(d, &ours), expected, "{ours:?}");
    }
}

/// `diff --normalize`, a differential flame graph, several inputs.
#[test]
fn normalized_diff_differential_flamegraph_and_several_inputs() {
    let Some((dir, a, b)) = base_inputs() else {
        return;
    };
    let (d, a, b) = (dir.path(), a.as_str(), b.as_str());
    // diff --normalize gives the changes top --diff-base --normalize shows.
    let rows = |args: &[&str]| -> std::collections::BTreeMap<String, i64> {
        let json: serde_json::Value = serde_json::from_str(&ok(d, args)).unwrap();
        let rows = json
            .get("rows")
            .unwrap_or(&json)
            .as_array()
            .unwrap()
            .clone();
        rows.iter()
            .map(|r| {
                let flat = r
                    .get("flat_base")
                    .map_or(r["flat"].as_i64().unwrap(), |base| {
                        r["flat"].as_i64().unwrap() - base.as_i64().unwrap()
                    });
                (r["function"].as_str().unwrap().to_string(), flat)
            })
            .filter(|(_, v)| *v != 0)
            .collect()
    };
    assert_eq!(
        rows(&["diff", "--normalize", "--format", "json", a, b]),
        rows(&[
            "top",
            "--diff-base",
            a,
            "--normalize",
            "--nodefraction",
            "0",
            "--format",
            "json",
            b
        ])
    );
    // A differential flame graph: shrunk stacks blue, grown ones red.
    ok(d, &["flamegraph", "--diff-base", a, b, "-o", "diff.svg"]);
    let svg = std::fs::read_to_string(d.join("diff.svg")).unwrap();
    let fills: Vec<(u32, u32, u32)> = svg
        .split("fill=\"rgb(")
        .skip(1)
        .filter_map(|f| {
            let rgb: Vec<u32> = f
                .split(')')
                .next()?
                .split(',')
                .filter_map(|v| v.parse().ok())
                .collect();
            Some((rgb[0], rgb[1], rgb[2]))
        })
        .collect();
    assert!(
        fills.iter().any(|(r, _, b)| b > r),
        "no blue (shrunk) frame"
    );
    assert!(fills.iter().any(|(r, _, b)| r > b), "no red (grown) frame");
    ok(d, &["merge", a, b, "-o", "merged.pb"]);
    assert_eq!(ok(d, &["top", a, b]), ok(d, &["top", "merged.pb"]));
    assert_eq!(ok(d, &["folded", a, b]), ok(d, &["folded", "merged.pb"]));
}

/// `peek --format json` holds the nodes, callers and callees the text shows.
#[test]
fn peek_json_holds_what_the_text_shows() {
    let dir = workdir();
    let d = dir.path();
    let text = ok(d, &["peek", "w", "cpu.pb.gz"]);
    let json: serde_json::Value =
        serde_json::from_str(&ok(d, &["peek", "--format", "json", "w", "cpu.pb.gz"])).unwrap();
    let nodes = json["nodes"].as_array().unwrap();
    let node_lines = text
        .lines()
        .filter(|l| l.contains("                | "))
        .count();
    assert_eq!(nodes.len(), node_lines, "{text}");
    for node in nodes {
        let name = node["function"].as_str().unwrap();
        assert!(text.contains(&format!("| {name}\n")), "{name}");
        for edge in node["callers"].as_array().unwrap() {
            assert!(edge["value"].as_i64().unwrap() <= node["cum"].as_i64().unwrap());
        }
    }
}

/// `traces`, `tags`, `peek` and `tree` print what `go tool pprof -traces`,
/// `-tags`, `-peek` and `-tree` print, byte for byte (filters, granularity
/// and trimming included).
#[test]
fn traces_tags_peek_and_tree_match_go_tool_pprof() {
    let Some(corpus) = corpus_dir() else { return };
    if protoprof_tests::go_pprof_check(&[]).is_none() {
        return; // no Go (and not under CI)
    }
    let dir = tempfile::tempdir().unwrap();
    let files = [
        "pprof/go/go-cpu.pb.gz",
        "pprof/go/go-heap.pb.gz",
        "pprof/go/go-goroutine.pb.gz",
        "pprof/real/java-jfr-cpu.pb.gz",
        "pprof/real/go-goroutine-labels.pb.gz",
        "pprof/real/dotnet-multi-labels.pb",
        "pprof/real/nodejs-wall.pb.gz",
        // Names as pprof's symbolizer simplifies them (`<T as Trait>::f`
        // reported as `::f`).
        "pprof/real/rust-cpu.pb.gz",
    ];
    let commands: [(&[&str], &[&str]); 8] = [
        (&["tree"], &["-tree"]),
        (
            &[
                "tree",
                "-n",
                "10",
                "--nodefraction",
                "0.01",
                "--edgefraction",
                "0.01",
            ],
            &[
                "-tree",
                "-nodecount=10",
                "-nodefraction=0.01",
                "-edgefraction=0.01",
            ],
        ),
        (
            &[
                "tree",
                "--focus",
                "main",
                "--hide",
                "runtime",
                "--granularity",
                "lines",
            ],
            &["-tree", "-focus=main", "-hide=runtime", "-lines"],
        ),
        (&["traces"], &["-traces"]),
        (&["tags"], &["-tags"]),
        (&["peek", "."], &["-peek=."]),
        (
            &["peek", "[a-z]", "--granularity", "files"],
            &["-peek=[a-z]", "-files"],
        ),
        (
            &["traces", "--focus", "main", "--granularity", "lines"],
            &["-traces", "-focus=main", "-lines"],
        ),
    ];
    for file in files {
        let path = corpus.join(file);
        for (ours, theirs) in commands {
            let go = || {
                std::process::Command::new("go")
                    .args(["tool", "pprof"])
                    .args(theirs)
                    .arg(&path)
                    .env("HOME", dir.path())
                    .env("TZ", "UTC")
                    .output()
                    .unwrap()
            };
            let output = go();
            let mut args = ours.to_vec();
            args.push(path.to_str().unwrap());
            let (status, stdout, stderr) = run(dir.path(), &args);
            // pprof's own arguments, through `protoprof pprof`: the same run.
            let as_pprof = [&["pprof"][..], theirs, &[path.to_str().unwrap()]].concat();
            let through_pprof = run(dir.path(), &as_pprof);
            assert_eq!(
                (through_pprof.0, &through_pprof.1),
                (status, &stdout),
                "{as_pprof:?}"
            );
            // Where pprof refuses (a peek that matches nothing), so do we.
            assert_eq!(
                status == 0,
                output.status.success(),
                "{file} {ours:?}: {stderr}"
            );
            let theirs_text = String::from_utf8_lossy(&output.stdout).to_string();
            if stdout == theirs_text {
                continue;
            }
            // pprof orders edges and nodes that tie on every key it prints
            // (two files' nodes at file granularity) as its hash maps
            // happen to iterate: where two of its runs disagree, its order
            // is not defined, and the lines are compared as sets.
            let runs: Vec<String> = (0..4)
                .map(|_| String::from_utf8_lossy(&go().stdout).to_string())
                .collect();
            if runs.contains(&stdout) {
                continue;
            }
            assert!(
                runs.iter().any(|run| *run != theirs_text),
                "{file} {ours:?}: pprof prints the same each time, and not this:\n{stdout}"
            );
            let sorted = |text: &str| {
                let mut lines: Vec<&str> = text.lines().collect();
                lines.sort_unstable();
                lines.join("\n")
            };
            assert_eq!(sorted(&stdout), sorted(&theirs_text), "{file} {ours:?}");
        }
    }
}

/// `protoprof pprof` takes pprof's command line as pprof users type it
/// (single dash, `-flag=value` and `-flag value`, `--flag`) and prints what
/// `go tool pprof` prints, byte for byte.
#[test]
fn pprofs_own_command_line_prints_what_go_tool_pprof_prints() {
    let Some(corpus) = corpus_dir() else { return };
    if protoprof_tests::go_pprof_check(&[]).is_none() {
        return; // no Go (and not under CI)
    }
    let dir = tempfile::tempdir().unwrap();
    let heap = corpus.join("pprof/real/go-heap.pb.gz");
    let cases: [&[&str]; 4] = [
        &["-top", "-nodecount=10", "-sample_index=alloc_space"],
        &[
            "-top",
            "-nodecount",
            "5",
            "--cum",
            "-sample_index",
            "inuse_space",
        ],
        &["-traces", "-nodecount=3", "-sample_index=alloc_objects"],
        &["-tree", "-nodecount=8", "-focus", "runtime", "-lines"],
    ];
    for args in cases {
        let go = std::process::Command::new("go")
            .args(["tool", "pprof"])
            .args(args)
            .arg(&heap)
            .env("HOME", dir.path())
            .env("TZ", "UTC")
            .output()
            .unwrap();
        assert!(go.status.success(), "{args:?}");
        let mut ours = vec!["pprof"];
        ours.extend(args.iter().copied());
        ours.push(heap.to_str().unwrap());
        assert_eq!(
            ok(dir.path(), &ours),
            String::from_utf8_lossy(&go.stdout),
            "{args:?}"
        );
    }
}

/// `--tagroot` and `--tagleaf` add the frames `go tool pprof -tagroot` and
/// `-tagleaf` add (string and numeric labels, keys a sample lacks);
/// `--tagshow` and `--taghide` show the labels pprof's show; and every
/// report on them, header included, is pprof's, byte for byte.
#[test]
fn label_frames_and_shown_labels_match_go_tool_pprof() {
    let Some(corpus) = corpus_dir() else { return };
    if protoprof_tests::go_pprof_check(&[]).is_none() {
        return; // no Go (and not under CI)
    }
    let dir = tempfile::tempdir().unwrap();
    const CPU: &str = "pprof/go/go-cpu.pb.gz";
    let cases: [(&str, &[&str], &[&str]); 10] = [
        (
            CPU,
            &["top", "--tagroot", "phase,worker"],
            &["-top", "-tagroot=phase,worker"],
        ),
        (
            CPU,
            &["traces", "--tagleaf", "phase,worker"],
            &["-traces", "-tagleaf=phase,worker"],
        ),
        (
            CPU,
            &["tree", "--tagroot", "step"],
            &["-tree", "-tagroot=step"],
        ),
        (
            "pprof/go/go-heap.pb.gz",
            &["traces", "--tagroot", "bytes"],
            &["-traces", "-tagroot=bytes"],
        ),
        (
            "pprof/go/go-heap.pb.gz",
            &["top", "--tagleaf", "bytes"],
            &["-top", "-tagleaf=bytes"],
        ),
        (
            "pprof/real/dotnet-multi-labels.pb",
            &["tree", "--tagleaf", "pod,qweqwe"],
            &["-tree", "-tagleaf=pod,qweqwe"],
        ),
        (
            CPU,
            &["traces", "--tagshow", "^[pw]"],
            &["-traces", "-tagshow=^[pw]"],
        ),
        (
            CPU,
            &["tags", "--taghide", "phase"],
            &["-tags", "-taghide=phase"],
        ),
        (
            CPU,
            &["tags", "--tagshow", "o", "--taghide", "p"],
            &["-tags", "-tagshow=o", "-taghide=p"],
        ),
        // pprof lists no prune_from among the active filters.
        (
            CPU,
            &["top", "--prune-from", "runtime"],
            &["-top", "-prune_from=runtime"],
        ),
    ];
    for (file, ours, theirs) in cases {
        let path = corpus.join(file);
        let output = std::process::Command::new("go")
            .args(["tool", "pprof"])
            .args(theirs)
            .arg(&path)
            .env("HOME", dir.path())
            .env("TZ", "UTC")
            .output()
            .unwrap();
        let mut args = ours.to_vec();
        args.push(path.to_str().unwrap());
        assert_eq!(
            ok(dir.path(), &args),
            String::from_utf8_lossy(&output.stdout),
            "{file} {ours:?}"
        );
    }
}

/// `callgrind` writes what `go tool pprof -callgrind` writes, byte for
/// byte: name compression, relative addresses, disambiguated callees (one
/// name, several functions), values in the smallest unit.
#[test]
fn callgrind_matches_go_tool_pprof() {
    let Some(corpus) = corpus_dir() else { return };
    if protoprof_tests::go_pprof_check(&[]).is_none() {
        return; // no Go (and not under CI)
    }
    let dir = tempfile::tempdir().unwrap();
    // Not go-heap-truncated-stacks-3: there pprof numbers the functions of
    // one name in hash-map order, so its own runs differ (ours is one of
    // them).
    let cases: [(&str, &[&str], &[&str]); 5] = [
        ("pprof/go/go-cpu.pb.gz", &[], &[]),
        (
            "pprof/go/go-heap.pb.gz",
            &["--sample-index", "alloc_space"],
            &["-sample_index=alloc_space"],
        ),
        ("pprof/real/rust-cpu.pb.gz", &[], &[]),
        ("pprof/real/ebpf-cpu-python-no-addr-no-line.pb.gz", &[], &[]),
        (
            "pprof/go/go-cpu.pb.gz",
            &["--focus", "main", "--hide", "runtime"],
            &["-focus=main", "-hide=runtime"],
        ),
    ];
    for (file, ours, theirs) in cases {
        let path = corpus.join(file);
        let go = || {
            let path = path.to_str().unwrap();
            stdout(go_tool_pprof(
                dir.path(),
                dir.path(),
                &[&["-callgrind"], theirs, &[path]].concat(),
            ))
        };
        let mut args = vec!["callgrind"];
        args.extend_from_slice(ours);
        args.push(path.to_str().unwrap());
        let text = ok(dir.path(), &args);
        assert!(
            go() == text,
            "{file} {ours:?}: the callgrind file differs from pprof's"
        );
    }
}

/// Legacy gperftools CPU profiles and text heap profiles (pprof's own test
/// inputs) analyse as `go tool pprof -symbolize=none` analyses them, byte
/// for byte.
#[test]
fn legacy_cpu_profiles_match_go_tool_pprof() {
    let Some(testdata) = protoprof_tests::legacy_testdata() else {
        return; // no Go (and not under CI)
    };
    let dir = tempfile::tempdir().unwrap();
    let names = protoprof_tests::LEGACY_INPUTS;
    for name in names {
        let path = testdata.join(name);
        let path = path.to_str().unwrap();
        let commands: [(&[&str], &[&str]); 3] = [
            (&["top"], &["-top"]),
            (
                &["traces", "--granularity", "addresses"],
                &["-traces", "-addresses"],
            ),
            (
                &["top", "--granularity", "addresses", "-n", "10"],
                &["-top", "-addresses", "-nodecount=10"],
            ),
        ];
        for (ours, theirs) in commands {
            let output = std::process::Command::new("go")
                .args(["tool", "pprof", "-symbolize=none"])
                .args(theirs)
                .arg(path)
                .env("HOME", dir.path())
                .env("TZ", "UTC")
                .output()
                .unwrap();
            let mut args = ours.to_vec();
            args.push(path);
            assert_eq!(
                ok(dir.path(), &args),
                String::from_utf8_lossy(&output.stdout),
                "{name} {ours:?}"
            );
        }
    }
}

/// Every report on the OTLP conversion of a profile (v1development and
/// v1experimental) is the report on the profile: the rows, the traces, the
/// tags, the peek (headers aside: they list the `otlp:` comments that carry
/// the envelope, as pprof lists every comment).
#[test]
fn reports_on_otlp_equal_reports_on_pprof() {
    let dir = workdir();
    let d = dir.path();
    ok(d, &["convert", "--to", "otlp", "cpu.pb.gz", "-o", "dev.pb"]);
    let exp = [
        "convert",
        "--to",
        "otlp",
        "--otlp-version",
        "v1experimental",
    ];
    ok(d, &[&exp[..], &["cpu.pb.gz", "-o", "exp.pb"]].concat());
    let body = |text: String, from: &str| -> String {
        text.split_once(from)
            .map_or(text.clone(), |(_, rest)| rest.to_string())
    };
    let reports: [(&[&str], &str); 6] = [
        (
            &["top", "--focus", "work", "--granularity", "lines"],
            "flat%",
        ),
        (&["top", "--tagfocus", "thread=worker-1", "--cum"], "flat%"),
        (&["traces", "--hide", "^main$"], "-----------+"),
        (&["tags"], ""),
        (&["peek", "work"], "calls calls%"),
        (&["folded", "--show", "compute|work"], ""),
    ];
    for (args, from) in reports {
        let want = body(ok(d, &[args, &["cpu.pb.gz"]].concat()), from);
        assert!(
            want.lines().filter(|l| !l.trim().is_empty()).count() >= 2,
            "{args:?}: {want}"
        );
        for otlp in ["dev.pb", "exp.pb"] {
            let got = body(ok(d, &[args, &[otlp]].concat()), from);
            assert_eq!(got, want, "{args:?} on {otlp}");
        }
    }
}

/// `view` prints a binary pprof file's samples straight from its bytes, one
/// at a time; what it prints is what it prints for the same profile decoded
/// whole (from its text form), annotations and all, on the corpus pprof
/// files whose strings are text (those under 60 kB: the suite stays fast).
#[test]
fn view_streams_samples_as_the_whole_model_would_print_them() {
    let Some(corpus) = corpus_dir() else { return };
    let dir = workdir();
    let d = dir.path();
    let mut compared = 0;
    for path in files_under(&corpus.join("pprof")) {
        if std::fs::metadata(&path).unwrap().len() > 60_000 {
            continue;
        }
        let file = path.to_str().unwrap();
        let (status, _, stderr) = run(d, &["decode", file, "-o", "whole.txtpb"]);
        // Invalid UTF-8 is repaired on decoding: the text is not the same.
        if status != 0 || stderr.contains("invalid UTF-8") {
            continue;
        }
        let streamed = ok(d, &["view", "--full", file]);
        assert!(streamed.contains("sample {"), "{file}");
        assert_eq!(
            streamed,
            ok(d, &["view", "--full", "whole.txtpb"]),
            "{file}"
        );
        compared += 1;
    }
    assert!(compared >= 25, "{compared}");
}

/// `callgraph` writes the DOT of `go tool pprof -dot` byte for byte: the
/// same visual graph (entropy order, node count, residual and redundant
/// edges, legend, sizes and colours) and, on labelled profiles, the same
/// label boxes: one per label set, and a heap profile's allocation sizes,
/// grouped into ranges (`80B..40kB`) past four, all counted against the
/// node count.
#[test]
fn callgraph_dot_matches_go_tool_pprof() {
    let Some(corpus) = corpus_dir() else { return };
    if protoprof_tests::go_pprof_check(&[]).is_none() {
        return; // no Go (and not under CI)
    }
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &[&str], &[&str]); 11] = [
        ("pprof/real/rust-cpu.pb.gz", &[], &[]),
        ("pprof/real/java-jfr-cpu.pb.gz", &[], &[]),
        (
            "pprof/real/nodejs-cpu.pb.gz",
            &["-n", "12"],
            &["-nodecount=12"],
        ),
        (
            "pprof/real/java-jfr-cpu.pb.gz",
            &["--focus", "Thread", "--nodefraction", "0.05"],
            &["-focus=Thread", "-nodefraction=0.05"],
        ),
        ("pprof/go/go-cpu.pb.gz", &["-n", "0"], &["-nodecount=0"]),
        (
            "pprof/real/go-heap.pb.gz",
            &["-n", "0", "--sample-index", "alloc_space"],
            &["-nodecount=0", "-sample_index=alloc_space"],
        ),
        (
            "pprof/go/go-cpu.pb.gz",
            &[
                "-n",
                "0",
                "--granularity",
                "lines",
                "--edgefraction",
                "0.01",
            ],
            &["-nodecount=0", "-lines", "-edgefraction=0.01"],
        ),
        ("pprof/go/go-heap.pb.gz", &[], &[]),
        ("pprof/real/go-goroutine-labels.pb.gz", &[], &[]),
        (
            "pprof/real/go-cpu-span-id-labels.pb.gz",
            &["-n", "15"],
            &["-nodecount=15"],
        ),
        (
            "pprof/go/go-heap.pb.gz",
            &["--sample-index", "alloc_objects", "--nodefraction", "0"],
            &["-sample_index=alloc_objects", "-nodefraction=0"],
        ),
    ];
    let (mut label_boxes, mut size_ranges) = (0, 0);
    for (file, ours, theirs) in cases {
        let path = corpus.join(file);
        let go_args = [&["-dot"], theirs, &[path.to_str().unwrap()]].concat();
        let expected = stdout(go_tool_pprof(dir.path(), dir.path(), &go_args));
        let mut args = vec!["callgraph"];
        args.extend_from_slice(ours);
        args.push(path.to_str().unwrap());
        let dot = ok(dir.path(), &args);
        assert!(
            expected.lines().count() > 10,
            "{file}: pprof wrote {expected}"
        );
        assert!(
            expected == dot,
            "{file} {ours:?}: the DOT differs from pprof's"
        );
        label_boxes += dot.matches("shape=box3d").count();
        size_ranges += dot.matches("B..").count();
    }
    assert!(
        label_boxes > 100 && size_ranges > 5,
        "{label_boxes} {size_ranges}"
    );
}

/// `list` prints `go tool pprof -list`'s listing byte for byte: the Go
/// corpus profiles' source is in `../shared/tools/gen-go-profiles`, found
/// through the source path, the trim path, pprof's guess from the search
/// directory's name, or the working directory; other profiles' files are
/// missing, which both report the same way.
#[test]
fn list_matches_go_tool_pprof() {
    let Some(corpus) = corpus_dir() else { return };
    if protoprof_tests::go_pprof_check(&[]).is_none() {
        return; // no Go (and not under CI)
    }
    let home = tempfile::tempdir().unwrap();
    let tools = corpus.join("../tools");
    let source = tools.join("gen-go-profiles");
    let (source, tools) = (source.to_str().unwrap(), tools.to_str().unwrap());
    // (file, regex, our options, pprof's, working directory)
    type Case<'a> = (&'a str, &'a str, &'a [&'a str], &'a [&'a str], &'a Path);
    let cases: [Case; 6] = [
        (
            "pprof/go/go-cpu.pb.gz",
            "main\\.",
            &["--source-path", source],
            &["-source_path", source],
            home.path(),
        ),
        (
            "pprof/go/go-heap.pb.gz",
            "main\\.|mallocgc$",
            &[
                "--source-path",
                source,
                "--sample-index",
                "alloc_space",
                "--focus",
                "allocMaps",
            ],
            &[
                "-source_path",
                source,
                "-sample_index=alloc_space",
                "-focus=allocMaps",
            ],
            home.path(),
        ),
        (
            "pprof/go/go-cpu.pb.gz",
            "burn|mix",
            &[
                "--source-path",
                tools,
                "--trim-path",
                "/go/src/corpus/shared/tools",
            ],
            &[
                "-source_path",
                tools,
                "-trim_path",
                "/go/src/corpus/shared/tools",
            ],
            home.path(),
        ),
        // No source path: the working directory (and its parents).
        (
            "pprof/go/go-allocs.pb.gz",
            "main\\.",
            &[],
            &[],
            Path::new(source),
        ),
        (
            "pprof/real/rust-cpu.pb.gz",
            "server|poll",
            &[],
            &[],
            home.path(),
        ),
        (
            "pprof/real/ebpf-cpu-python-no-addr-no-line.pb.gz",
            ".",
            &[],
            &[],
            home.path(),
        ),
    ];
    for (file, regex, ours, theirs, cwd) in cases {
        let path = corpus.join(file);
        let go_args = [theirs, &["-list", regex, path.to_str().unwrap()]].concat();
        let expected = stdout(go_tool_pprof(cwd, home.path(), &go_args));
        let mut args = vec!["list", regex];
        args.extend_from_slice(ours);
        args.push(path.to_str().unwrap());
        let listing = ok(cwd, &args);
        assert!(
            expected.lines().count() > 2,
            "{file}: pprof wrote {expected}"
        );
        assert!(
            expected == listing,
            "{file} {ours:?}: the listing differs from pprof's:\n{expected}\n---\n{listing}"
        );
    }
}

/// `--relative-percentages` (shares of the samples the filters keep) and
/// `--mean` (each value divided by the sample's count: mean delays of
/// contention profiles) in every report that prints them, as
/// `go tool pprof -relative_percentages` and `-mean`.
#[test]
fn relative_percentages_and_mean_match_go_tool_pprof() {
    let Some(corpus) = corpus_dir() else { return };
    if protoprof_tests::go_pprof_check(&[]).is_none() {
        return; // no Go (and not under CI)
    }
    let dir = tempfile::tempdir().unwrap();
    let go_pprof = |args: &[&str], path: &Path| {
        let args = [args, &[path.to_str().unwrap()]].concat();
        stdout(go_tool_pprof(dir.path(), dir.path(), &args))
    };
    let relative: [(&[&str], &[&str]); 5] = [
        (
            &["top", "--focus", "burn|mix"],
            &["-top", "-focus=burn|mix"],
        ),
        (
            &["tree", "--ignore", "runtime"],
            &["-tree", "-ignore=runtime"],
        ),
        (
            &["peek", "main\\.", "--hide", "sort"],
            &["-peek=main\\.", "-hide=sort"],
        ),
        (
            &["tags", "--tagfocus", "worker=^1$"],
            &["-tags", "-tagfocus=worker=^1$"],
        ),
        (
            &["traces", "--focus", "mapChurn"],
            &["-traces", "-focus=mapChurn"],
        ),
    ];
    let mean: [(&[&str], &[&str]); 5] = [
        (&["top"], &["-top"]),
        (&["tree"], &["-tree"]),
        (&["peek", "."], &["-peek=."]),
        (&["traces"], &["-traces"]),
        (&["callgraph"], &["-dot"]),
    ];
    let cases = relative
        .iter()
        .map(|c| {
            (
                "pprof/go/go-cpu.pb.gz",
                "--relative-percentages",
                "-relative_percentages",
                c,
            )
        })
        .chain(mean.iter().flat_map(|c| {
            ["pprof/go/go-block.pb.gz", "pprof/real/go-mutex.pb.gz"]
                .map(|file| (file, "--mean", "-mean", c))
        }));
    for (file, our_option, their_option, (ours, theirs)) in cases {
        let path = corpus.join(file);
        let expected = go_pprof(&[&[their_option], *theirs].concat(), &path);
        let mut args = ours.to_vec();
        args.extend([our_option, path.to_str().unwrap()]);
        let text = ok(dir.path(), &args);
        assert!(
            expected.lines().count() > 2,
            "{ours:?}: pprof wrote {expected}"
        );
        assert!(
            expected == text,
            "{file} {our_option} {ours:?}: differs from pprof's:\n{expected}\n---\n{text}"
        );
    }
}

/// `filter` writes the profile `go tool pprof -proto` writes: the samples
/// the filters keep, each location's lines after hide, show, show_from and
/// prune_from, bases merged in. Both outputs read back to the same traces
/// (every sample, its labels, value and stack) and the same top.
#[test]
fn filter_writes_what_go_tool_pprof_proto_writes() {
    let Some(corpus) = corpus_dir() else { return };
    if protoprof_tests::go_pprof_check(&[]).is_none() {
        return; // no Go (and not under CI)
    }
    let dir = tempfile::tempdir().unwrap();
    let cpu = corpus.join("pprof/go/go-cpu.pb.gz");
    let truncated = corpus.join("pprof/real/go-cpu-truncated-stacks.pb.gz");
    let fixed = corpus.join("pprof/real/go-cpu-truncated-stacks-fixed.pb.gz");
    let (cpu, truncated, fixed) = (
        cpu.to_str().unwrap(),
        truncated.to_str().unwrap(),
        fixed.to_str().unwrap(),
    );
    let cases: [(&[&str], &[&str]); 6] = [
        (
            &["--focus", "burn", "--hide", "runtime", cpu],
            &["-focus=burn", "-hide=runtime", cpu],
        ),
        (
            &["--ignore", "mapChurn", "--show", "main\\.", cpu],
            &["-ignore=mapChurn", "-show=main\\.", cpu],
        ),
        (
            &["--show-from", "mix", "--tagfocus", "worker=^0$", cpu],
            &["-show_from=mix", "-tagfocus=worker=^0$", cpu],
        ),
        (
            &["--prune-from", "runtime\\.", cpu],
            &["-prune_from=runtime\\.", cpu],
        ),
        (&["--base", truncated, fixed], &["-base", truncated, fixed]),
        (
            &["--diff-base", truncated, "--focus", "aws", fixed],
            &["-diff_base", truncated, "-focus=aws", fixed],
        ),
    ];
    for (n, (ours, theirs)) in cases.iter().enumerate() {
        let go_out = dir.path().join(format!("theirs-{n}.pb.gz"));
        let go_args = [&["-proto", "-output", go_out.to_str().unwrap()], *theirs].concat();
        let output = go_tool_pprof(dir.path(), dir.path(), &go_args);
        assert!(
            output.status.success(),
            "{theirs:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let our_out = dir.path().join(format!("ours-{n}.pb.gz"));
        let mut args = vec!["filter", "-o", our_out.to_str().unwrap()];
        args.extend_from_slice(ours);
        ok(dir.path(), &args);
        for report in [&["traces"][..], &["top", "-n", "40"]] {
            let read = |file: &Path| ok(dir.path(), &[report, &[file.to_str().unwrap()]].concat());
            let (expected, written) = (read(&go_out), read(&our_out));
            assert!(expected.lines().count() > 5, "{ours:?}: {expected}");
            assert!(
                expected == written,
                "{ours:?} {report:?}:\n{expected}\n---\n{written}"
            );
        }
    }
}

/// `go tool pprof ARGS` run in `cwd`, with `home` as its `HOME` (where it
/// keeps its state) and times in UTC.
fn go_tool_pprof(cwd: &Path, home: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new("go")
        .args(["tool", "pprof"])
        .args(args)
        .current_dir(cwd)
        .env("HOME", home)
        .env("TZ", "UTC")
        .output()
        .unwrap()
}

fn stdout(output: std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// A profile whose caller reaches `leaf` inlined in some samples and by a
/// call in others, plus a callee reached only inlined, once heavily and
/// once by an edge lighter than pprof's edge cutoff.
fn profile_with_mixed_inlining() -> Profile {
    let mut p = Profile::new();
    p.string_table = [
        "", "samples", "count", "main", "leaf", "helper", "rare", "f.go",
    ]
    .map(String::from)
    .to_vec();
    p.sample_type.push(ValueType {
        type_: 1,
        unit: 2,
        ..Default::default()
    });
    for (id, name) in [(1, 3), (2, 4), (3, 5), (4, 6)] {
        p.function.push(Function {
            id,
            name,
            system_name: name,
            filename: 7,
            ..Default::default()
        });
    }
    let line = |function_id: u64, line: i64| Line {
        function_id,
        line,
        ..Default::default()
    };
    // 1: main; 2: leaf inlined into main; 3: leaf alone; 4: helper
    // inlined into leaf; 5: rare inlined into main.
    let locations: [(u64, Vec<Line>); 5] = [
        (1, vec![line(1, 10)]),
        (2, vec![line(2, 20), line(1, 11)]),
        (3, vec![line(2, 21)]),
        (4, vec![line(3, 30), line(2, 22)]),
        (5, vec![line(4, 40), line(1, 12)]),
    ];
    for (id, lines) in locations {
        p.location.push(Location {
            id,
            address: 0x1000 + id,
            line: lines,
            ..Default::default()
        });
    }
    for (stack, value) in [
        (vec![2], 5000),
        (vec![3, 1], 4000),
        (vec![4, 1], 3000),
        (vec![5], 1),
    ] {
        p.sample.push(Sample {
            location_id: stack,
            value: vec![value],
            ..Default::default()
        });
    }
    p
}

/// pprof's rule for `(inline)` and `(partial-inline)`: an edge is inline
/// only when every sample takes it inlined, and edges under the edge
/// cutoff do not count; `top` prints what `go tool pprof -top` prints.
#[test]
fn inline_marks_follow_pprofs_edges() {
    if protoprof_tests::go_pprof_check(&[]).is_none() {
        return; // no Go (and not under CI)
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let bytes = profile_with_mixed_inlining().write_to_bytes().unwrap();
    std::fs::write(d.join("mixed.pb"), bytes).unwrap();
    for granularity in ["functions", "lines"] {
        let ours = ok(d, &["top", "--granularity", granularity, "mixed.pb"]);
        let flag = format!("-{granularity}");
        let theirs = stdout(go_tool_pprof(d, d, &["-top", &flag, "mixed.pb"]));
        assert_eq!(ours, theirs, "{granularity}");
    }
    let ours = ok(d, &["top", "--nodefraction", "0", "mixed.pb"]);
    let theirs = stdout(go_tool_pprof(
        d,
        d,
        &["-top", "-nodefraction=0", "mixed.pb"],
    ));
    assert_eq!(ours, theirs);
    let mark = |name: &str| {
        let row = ours
            .lines()
            .find(|l| l.ends_with(name) || l.contains(&format!(" {name} ")));
        row.unwrap_or_else(|| panic!("{name}: {ours}")).to_string()
    };
    // leaf: inlined in one sample, called in another: one edge, not
    // inline, so no mark (the old rule said partial-inline).
    assert!(!mark("leaf").contains("inline"), "{ours}");
    assert!(mark("helper").ends_with("(inline)"), "{ours}");
    // rare's only edge weighs 1 of 12001, under the 0.001 cutoff.
    assert!(!mark("rare").contains("inline"), "{ours}");
}
