//! Nothing is misread in silence: OTLP/JSON of another revision, keys that
//! name no field, references out of range, conversions the validator would
//! reject, and the Collector file exporter's streams, on corpus data.

mod common;

use common::{ok, run};
use std::path::{Path, PathBuf};

use protoprof_tests::corpus_dir;

fn development(corpus: &Path, name: &str) -> PathBuf {
    corpus.join("otlp/v1development").join(name)
}

/// The eBPF profiler's export as OTLP/JSON with v1.8.0's key names
/// (`sample`, `line`, renamed in v1.9.0), made from the corpus's v1.10.0
/// JSON export.
fn json_of_v1_8(corpus: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(development(
        corpus,
        "v1development-1.10-ebpf-export-request.json",
    ))
    .unwrap();
    let mut json: serde_json::Value = serde_json::from_str(&text).unwrap();
    fn rename(value: &mut serde_json::Value) {
        match value {
            serde_json::Value::Object(map) => {
                for (new, old) in [("samples", "sample"), ("lines", "line")] {
                    if let Some(v) = map.remove(new) {
                        map.insert(old.into(), v);
                    }
                }
                map.values_mut().for_each(rename);
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(rename),
            _ => {}
        }
    }
    rename(&mut json);
    json
}

fn first_profile(json: &mut serde_json::Value) -> &mut serde_json::Value {
    &mut json["resourceProfiles"][0]["scopeProfiles"][0]["profiles"][0]
}

/// OTLP/JSON with v1.8.0's key names reads as the same profiles as the
/// current revision's, with a warning naming the revision; a key that names
/// no field is a warning when read and an error in validation; a corrupted
/// copy is invalid; JSON of v1.7.0 is refused, not read as empty.
#[test]
fn json_of_older_revisions_is_upgraded_or_refused() {
    let Some(corpus) = corpus_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let current = development(&corpus, "v1development-1.10-ebpf-export-request.json");
    let current = current.to_str().unwrap();
    let json = json_of_v1_8(&corpus);
    std::fs::write(d.join("v1.8.json"), json.to_string()).unwrap();

    let (status, stdout, stderr) = run(d, &["inspect", "v1.8.json"]);
    assert_eq!(status, 0, "{stderr}");
    assert!(
        stderr.contains("v1.8.0") && stderr.contains("sample"),
        "{stderr}"
    );
    let summary = |text: &str| text.lines().skip(2).collect::<Vec<_>>().join("\n");
    assert_eq!(summary(&stdout), summary(&ok(d, &["inspect", current])));
    assert!(stdout.contains("profiles 82"), "{stdout}");
    assert_eq!(ok(d, &["top", "v1.8.json"]), ok(d, &["top", current]));
    assert_eq!(ok(d, &["validate", "v1.8.json"]).lines().count(), 1);

    // A key that names no field: read without it, said so, and invalid.
    let mut unknown = json.clone();
    first_profile(&mut unknown)["bogusKey"] = serde_json::json!(3);
    std::fs::write(d.join("unknown.json"), unknown.to_string()).unwrap();
    let (status, _, stderr) = run(d, &["inspect", "unknown.json"]);
    assert_eq!(status, 0);
    assert!(stderr.contains("profiles[0].bogusKey"), "{stderr}");
    let (status, stdout, _) = run(d, &["validate", "unknown.json"]);
    assert_eq!(status, 1, "{stdout}");
    assert!(
        stdout.contains("JSON-KEY-001") && stdout.contains("bogusKey"),
        "{stdout}"
    );

    // The corrupted copy pyroscope made of the binary export, in JSON.
    let mut corrupted = json.clone();
    first_profile(&mut corrupted)["sample"][0]["stackIndex"] = serde_json::json!(1_000_000_000);
    std::fs::write(d.join("corrupted.json"), corrupted.to_string()).unwrap();
    let (status, stdout, _) = run(d, &["validate", "corrupted.json"]);
    assert_eq!(status, 1, "{stdout}");
    assert!(stdout.contains("stack_index = 1000000000"), "{stdout}");

    // v1.7.0's samples are location slices: refused, by name.
    let mut older = json;
    first_profile(&mut older)["locationsStartIndex"] = serde_json::json!(0);
    std::fs::write(d.join("v1.7.json"), older.to_string()).unwrap();
    for command in ["inspect", "validate", "top"] {
        let (status, _, stderr) = run(d, &[command, "v1.7.json"]);
        assert_eq!(status, 2, "{command}: {stderr}");
        assert!(
            stderr.contains("locationsStartIndex") && stderr.contains("v1.7.0 or older"),
            "{command}: {stderr}"
        );
    }
}

/// One field of a message as it is on the wire: number, wire type, and the
/// bytes of its value (without the length prefix).
type WireField<'a> = (u32, u8, &'a [u8]);

fn read_varint(bytes: &[u8], at: &mut usize) -> u64 {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = bytes[*at];
        *at += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            break;
        }
    }
    value
}

fn wire_fields(bytes: &[u8]) -> Vec<WireField<'_>> {
    let mut at = 0;
    let mut out = Vec::new();
    while at < bytes.len() {
        let tag = read_varint(bytes, &mut at);
        let (number, wire_type) = ((tag >> 3) as u32, (tag & 7) as u8);
        let start = at;
        let end = match wire_type {
            0 => {
                read_varint(bytes, &mut at);
                at
            }
            1 => at + 8,
            5 => at + 4,
            2 => {
                let len = read_varint(bytes, &mut at) as usize;
                at + len
            }
            other => panic!("wire type {other}"),
        };
        let value_start = if wire_type == 2 { at } else { start };
        out.push((number, wire_type, &bytes[value_start..end]));
        at = end;
    }
    out
}

/// `bytes` with the varint at `path` (field numbers, the first occurrence
/// of each) set to `value`; the messages around it re-encoded.
fn set_varint(bytes: &[u8], path: &[u32], value: u64) -> Vec<u8> {
    use protoprof_model_meta::wire::{write_len_prefix, write_tag, write_varint};
    let mut out = Vec::new();
    let mut done = false;
    for (number, wire_type, raw) in wire_fields(bytes) {
        let hit = !done && number == path[0];
        done |= hit;
        match (hit, path.len(), wire_type) {
            (true, 1, _) => {
                write_tag(&mut out, number, 0);
                write_varint(&mut out, value);
            }
            (true, _, 2) => {
                let inner = set_varint(raw, &path[1..], value);
                write_len_prefix(&mut out, number, inner.len());
                out.extend_from_slice(&inner);
            }
            (_, _, 2) => {
                write_len_prefix(&mut out, number, raw.len());
                out.extend_from_slice(raw);
            }
            _ => {
                write_tag(&mut out, number, wire_type);
                out.extend_from_slice(raw);
            }
        }
    }
    assert!(done, "no field {} here", path[0]);
    out
}

/// A v1.7.0 export whose first sample's location slice runs past its
/// profile's `location_indices` (as a profile store's real test file has):
/// every command reads it; validation names the sample; reports show the
/// other samples with one warning naming it; `convert` refuses unless
/// `--drop-invalid`.
#[test]
fn a_sample_out_of_range_is_left_out_of_reports() {
    let Some(corpus) = corpus_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let original = std::fs::read(development(
        &corpus,
        "v1development-1.7-async-profiler-link-table-export-request.pb",
    ))
    .unwrap();
    // resource_profiles(1) → scope_profiles(2) → profiles(2) → sample(2) →
    // locations_length(2), v1.7.0's numbers.
    let broken = set_varint(&original, &[1, 2, 2, 2, 2], 100_000);
    std::fs::write(d.join("broken.pb"), &broken).unwrap();
    let (status, stdout, stderr) = run(d, &["inspect", "broken.pb"]);
    assert_eq!(status, 0, "{stderr}");
    assert!(stdout.contains("v1.7.0"), "{stdout}");
    assert!(stderr.contains("location slices lie outside"), "{stderr}");
    let (status, stdout, _) = run(d, &["validate", "broken.pb"]);
    assert_eq!(status, 1, "{stdout}");
    assert!(
        stdout.contains("samples[0].stack_index = 2147483647"),
        "{stdout}"
    );
    let broken_samples = stdout.matches("stack_index = 2147483647").count();
    for command in ["top", "folded"] {
        let (status, stdout, stderr) = run(d, &[command, "broken.pb"]);
        assert_eq!(status, 0, "{command}: {stderr}");
        assert!(!stdout.is_empty(), "{command}");
        let left_out: Vec<&str> = stderr.lines().filter(|l| l.contains("left out")).collect();
        assert!(
            left_out.len() == 1
                && left_out[0].contains(&format!("{broken_samples} of 208 samples left out"))
                && left_out[0].contains("samples[0].stack_index"),
            "{command}: {stderr}"
        );
    }
    let convert = ["convert", "--to", "pprof", "broken.pb", "-o", "b.pb"];
    let (status, _, stderr) = run(d, &convert);
    assert_eq!(status, 2, "{stderr}");
    assert!(stderr.contains("--drop-invalid"), "{stderr}");
    let (status, _, stderr) = run(d, &[&convert[..], &["--drop-invalid"]].concat());
    assert_eq!(status, 0, "{stderr}");
    assert_split_refuses_unless_dropping(d, "broken.pb", "broken");
    // The original reads as before.
    let original_path = development(
        &corpus,
        "v1development-1.7-async-profiler-link-table-export-request.pb",
    );
    ok(d, &["top", original_path.to_str().unwrap()]);
}

/// The Collector file exporter's streams, made of corpus exports: every
/// form the exporter writes (length-prefixed, zstd per message, zstd as a
/// whole, JSON lines) reads as the same set of profiles; `inspect` and
/// `validate` go message by message, naming each.
#[test]
fn file_exporter_streams_are_read_by_every_command() {
    let Some(corpus) = corpus_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let names = [
        "v1development-1.10-ebpf-export-request.pb",
        "v1development-1.8-ebpf-export-request.pb",
    ];
    let messages = write_streams(d, &corpus, &names);

    // inspect and validate: one section, one verdict per message.
    let text = ok(d, &["inspect", "stream.bin"]);
    assert!(
        text.contains("file: stream.bin: message 0 (byte 0)"),
        "{text}"
    );
    let second = format!(
        "file: stream.bin: message 1 (byte {})",
        4 + messages[0].len()
    );
    assert!(text.contains(&second), "{text}");
    assert!(
        text.contains("v1.8.0"),
        "the second message's revision: {text}"
    );
    let (_, stdout, stderr) = run(d, &["validate", "stream.bin"]);
    let verdicts: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("ProfilesData"))
        .collect();
    assert_eq!(verdicts.len(), 2, "{stdout}{stderr}");
    assert!(
        verdicts[0].starts_with("stream.bin: message 0 (byte 0): "),
        "{stdout}"
    );

    // The stream as one set of profiles: per sample type, the sum of its
    // messages' totals (a message without the type adds nothing).
    let total = |file: &str, sample_type: &str| -> Option<i64> {
        let args = [
            "top",
            "--format",
            "json",
            "--sample-index",
            sample_type,
            file,
        ];
        let (status, stdout, _) = run(d, &args);
        let json: serde_json::Value = serde_json::from_str(&stdout).ok().filter(|_| status == 0)?;
        json["total"].as_i64()
    };
    for sample_type in ["off_cpu", "samples"] {
        let each: i64 = names
            .iter()
            .filter_map(|n| total(development(&corpus, n).to_str().unwrap(), sample_type))
            .sum();
        assert!(each > 0, "{sample_type}");
        assert_eq!(
            total("stream.bin", sample_type),
            Some(each),
            "{sample_type}"
        );
    }
    let top = ok(d, &["top", "stream.bin"]);
    for other in ["stream-zstd.bin", "stream.zst", "stream.jsonl"] {
        assert_eq!(ok(d, &["top", other]), top, "{other}");
    }
    ok(
        d,
        &[
            "convert",
            "--to",
            "pprof",
            "stream.jsonl",
            "-o",
            "stream.pb.gz",
        ],
    );
    assert_eq!(ok(d, &["top", "stream.pb.gz"]), top);
    // The merged message keeps every reference in range: it validates, and
    // reads as the stream does.
    ok(
        d,
        &["convert", "--to", "otlp", "stream.bin", "-o", "merged.pb"],
    );
    let (status, stdout, _) = run(d, &["validate", "merged.pb"]);
    assert_eq!(status, 0, "{stdout}");
    assert_eq!(ok(d, &["top", "merged.pb"]), top);
    // edit edits one message, not a stream.
    let (status, _, stderr) = run(d, &["edit", "stream.bin"]);
    assert_eq!(status, 2, "{stderr}");
    assert!(stderr.contains("file exporter stream"), "{stderr}");
}

/// A profile whose unit is `μs` reads as Go's pprof reads it: its unit
/// sniffing measures names in bytes, so `μs` is no time unit to it and
/// values are printed unscaled. Every report equals `go tool pprof`'s.
#[test]
fn a_unit_named_with_mu_reads_as_go_reads_it() {
    if protoprof_tests::go_pprof_check(&[]).is_none() {
        return; // no Go (and not under CI)
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let example = protoprof_tests::workspace_root().join("examples/cpu.pb.gz");
    let text = ok(d, &["decode", example.to_str().unwrap()]);
    std::fs::write(d.join("mu.txt"), text.replace("\"nanoseconds\"", "\"μs\"")).unwrap();
    ok(
        d,
        &[
            "encode",
            "--type",
            "perftools.profiles.Profile",
            "mu.txt",
            "-o",
            "mu.pb",
        ],
    );
    let reports: [(&[&str], &str); 4] = [
        (&["top"], "-top"),
        (&["traces"], "-traces"),
        (&["tags"], "-tags"),
        (&["peek", "main"], "-peek=main"),
    ];
    for (ours, theirs) in reports {
        let go = std::process::Command::new("go")
            .args(["tool", "pprof", theirs, "mu.pb"])
            .current_dir(d)
            .env("HOME", d)
            .env("TZ", "UTC")
            .output()
            .unwrap();
        let text = ok(d, &[ours, &["mu.pb"]].concat());
        if ours == ["top"] {
            assert!(text.contains("μs"), "the unit printed as it is: {text}");
        }
        assert_eq!(text, String::from_utf8_lossy(&go.stdout), "{ours:?}");
    }
}

/// The exports `names` written into `d` as the file exporter writes them:
/// `stream.bin` (length-prefixed), `stream-zstd.bin` (each message zstd),
/// `stream.zst` (the whole stream zstd) and `stream.jsonl` (JSON lines).
/// Returns the messages.
fn write_streams(d: &Path, corpus: &Path, names: &[&str]) -> Vec<Vec<u8>> {
    let messages: Vec<Vec<u8>> = names
        .iter()
        .map(|n| std::fs::read(development(corpus, n)).unwrap())
        .collect();
    let framed = |payloads: &[Vec<u8>]| -> Vec<u8> {
        let mut out = Vec::new();
        for p in payloads {
            out.extend_from_slice(&(p.len() as u32).to_be_bytes());
            out.extend_from_slice(p);
        }
        out
    };
    let zstd = |bytes: &[u8]| {
        ruzstd::encoding::compress_to_vec(bytes, ruzstd::encoding::CompressionLevel::Fastest)
    };
    let stream = framed(&messages);
    std::fs::write(d.join("stream.bin"), &stream).unwrap();
    let compressed: Vec<Vec<u8>> = messages.iter().map(|m| zstd(m)).collect();
    std::fs::write(d.join("stream-zstd.bin"), framed(&compressed)).unwrap();
    std::fs::write(d.join("stream.zst"), zstd(&stream)).unwrap();
    let mut lines = String::new();
    for n in names.iter().copied() {
        let path = development(corpus, n);
        let json = ok(d, &["decode", "--to", "json", path.to_str().unwrap()]);
        let value: serde_json::Value = serde_json::from_str(&json).unwrap();
        lines.push_str(&value.to_string());
        lines.push('\n');
    }
    std::fs::write(d.join("stream.jsonl"), lines).unwrap();
    messages
}

/// The eBPF profiler's export with one sample (of 317) whose stack index
/// is past the stack table, and the same export without that sample.
fn one_broken_sample(corpus: &Path, d: &Path) -> (PathBuf, PathBuf) {
    use protobuf::Message;
    use protoprof_model_otlp::opentelemetry::proto::collector::profiles::v1development::ExportProfilesServiceRequest;
    let bytes = std::fs::read(development(
        corpus,
        "v1development-1.10-ebpf-export-request.pb",
    ))
    .unwrap();
    let mut request = ExportProfilesServiceRequest::parse_from_bytes(&bytes).unwrap();
    let mut without = request.clone();
    without.resource_profiles[1].scope_profiles[0].profiles[0]
        .samples
        .remove(0);
    request.resource_profiles[1].scope_profiles[0].profiles[0].samples[0].stack_index = 777;
    let (broken, rest) = (d.join("broken.pb"), d.join("rest.pb"));
    std::fs::write(&broken, request.write_to_bytes().unwrap()).unwrap();
    std::fs::write(&rest, without.write_to_bytes().unwrap()).unwrap();
    (broken, rest)
}

/// One broken sample does not hide the rest: reports show the others with
/// one warning that counts what was left out and names the first path,
/// exactly as they show the file without it; `convert` refuses unless
/// `--drop-invalid`, and then writes what protoprof validates.
#[test]
fn reports_show_the_samples_that_resolve() {
    let Some(corpus) = corpus_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    one_broken_sample(&corpus, d);
    let path = "resource_profiles[1].scope_profiles[0].profiles[0].samples[0].stack_index";
    let (status, stdout, _) = run(d, &["validate", "broken.pb"]);
    assert_eq!(status, 1, "{stdout}");
    assert!(stdout.contains(path), "{stdout}");
    for report in [
        &["top"][..],
        &["traces"],
        &["tags"],
        &["folded"],
        &["top", "--sample-index", "0"],
        &["top", "--base", "rest.pb"],
    ] {
        let broken = [report, &["broken.pb"]].concat();
        let (status, stdout, stderr) = run(d, &broken);
        assert_eq!(status, 0, "{report:?}: {stderr}");
        let warning = stderr
            .lines()
            .filter(|l| l.contains("samples left out"))
            .collect::<Vec<_>>();
        assert_eq!(warning.len(), 1, "{report:?}: {stderr}");
        assert!(
            warning[0].contains("1 of 317 samples") && warning[0].contains(path),
            "{stderr}"
        );
        let rest = [report, &["rest.pb"]].concat();
        let expected = ok(d, &rest);
        assert_eq!(
            stdout.replace("broken.pb", "rest.pb"),
            expected,
            "{report:?}"
        );
    }
    let (status, _, stderr) = run(
        d,
        &["convert", "--to", "pprof", "broken.pb", "-o", "b.pb.gz"],
    );
    assert_ne!(status, 0);
    assert!(
        stderr.contains(path) && stderr.contains("--drop-invalid"),
        "{stderr}"
    );
    assert!(!d.join("b.pb.gz").exists());
    let args = [
        "convert",
        "--to",
        "pprof",
        "--drop-invalid",
        "broken.pb",
        "-o",
        "b.pb.gz",
    ];
    let (status, _, stderr) = run(d, &args);
    assert_eq!(status, 0, "{stderr}");
    assert!(stderr.contains("1 of 317 samples left out"), "{stderr}");
    ok(d, &["convert", "--to", "pprof", "rest.pb", "-o", "r.pb.gz"]);
    assert_eq!(
        ok(d, &["top", "b.pb.gz"]),
        ok(d, &["top", "r.pb.gz"]).replace("r.pb.gz", "b.pb.gz")
    );
    ok(d, &["validate", "b.pb.gz"]);
}

/// Reports on an export of an older revision say so once, briefly; a
/// report of sums does not warn that per-event timestamps were summed (a
/// conversion, which keeps the pprof, does); `--quiet` silences warnings;
/// a timestamp at the profile's end is named as such.
#[test]
fn reports_warn_once_briefly_and_quiet_silences_them() {
    let Some(corpus) = corpus_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let file = development(&corpus, "v1development-1.8-ebpf-export-request.pb");
    let file = file.to_str().unwrap();
    for report in ["top", "traces", "tags", "folded"] {
        let (status, _, stderr) = run(d, &[report, file]);
        assert_eq!(status, 0, "{stderr}");
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 2, "{report}: {stderr}");
        let said = lines[0].split(".pb: ").nth(1).unwrap();
        assert_eq!(
            said, "input: OTLP of opentelemetry-proto v1.8.0/v1.9.0, read as v1.10.0",
            "{report}"
        );
        // The eBPF profiler's native frames, whose binaries are not here.
        let said = lines[1].split(".pb: ").nth(1).unwrap();
        assert!(
            said.starts_with("frames left as addresses: no binary found for 15 mapping(s) ("),
            "{report}: {said}"
        );
        let (_, _, stderr) = run(d, &[report, "--symbolize", "none", file]);
        assert_eq!(stderr.lines().count(), 1, "{report}: {stderr}");
        let (status, _, stderr) = run(d, &["--quiet", report, file]);
        assert_eq!((status, stderr.as_str()), (0, ""), "{report}");
    }
    let (status, _, stderr) = run(d, &["convert", "--to", "pprof", file, "-o", "p.pb.gz"]);
    assert_eq!(status, 0, "{stderr}");
    assert!(stderr.contains("no per-event timestamps"), "{stderr}");
    let (_, stdout, _) = run(d, &["validate", file]);
    assert!(
        stdout.contains("timestamps_unix_nano[0] = 1758272451225258686: at the profile's end"),
        "{stdout}"
    );
}

/// A real .NET profile whose functions all have id 0, which `go tool
/// pprof` refuses, and whose default sample type totals 0: both are said
/// on standard error, naming the sample types that have values, where the
/// report once came out empty or all `<unknown>` without a word.
#[test]
fn reserved_ids_and_an_empty_default_are_said() {
    let Some(corpus) = corpus_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let file = corpus.join("pprof/real/dotnet-multi-function-id-0.pb");
    let (status, _, stderr) = run(dir.path(), &["top", file.to_str().unwrap()]);
    assert_eq!(status, 0, "{stderr}");
    assert!(
        stderr.contains("41 of 41 functions have id 0")
            && stderr.contains("found function with reserved ID=0"),
        "{stderr}"
    );
    assert!(
        stderr.contains("lock-time/nanoseconds, totals 0")
            && stderr.contains("cpu/nanoseconds (--sample-index cpu)"),
        "{stderr}"
    );
    let args = ["top", "--sample-index", "cpu", file.to_str().unwrap()];
    let (_, _, stderr) = run(dir.path(), &args);
    assert!(!stderr.contains("totals 0"), "{stderr}");
}

/// The v1experimental siblings: a sample whose attribute, location or
/// location slice is past its table is left out of reports with one
/// warning naming it, and `convert` refuses it unless `--drop-invalid`.
#[test]
fn broken_v1experimental_samples_are_left_out_of_reports() {
    let Some(corpus) = corpus_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (name, field) in [
        ("attribute-index", "sample[0].attributes"),
        (
            "location-index",
            "sample[0].locations_start_index: location 9",
        ),
        ("stack-slice", "sample[0].locations_start_index"),
    ] {
        let file = corpus.join(format!(
            "malformed/otlp-v1experimental-{name}-out-of-range.pb"
        ));
        let file = file.to_str().unwrap();
        let (status, _, stderr) = run(d, &["top", file]);
        assert_eq!(status, 0, "{name}: {stderr}");
        assert!(
            stderr.contains("1 of 1 samples left out") && stderr.contains(field),
            "{name}: {stderr}"
        );
        let convert = ["convert", "--to", "pprof", file, "-o", "out.pb.gz"];
        let (status, _, stderr) = run(d, &convert);
        assert_eq!(status, 2, "{name}: {stderr}");
        assert!(stderr.contains("--drop-invalid"), "{name}: {stderr}");
        let (status, _, stderr) = run(d, &[&convert[..], &["--drop-invalid"]].concat());
        assert_eq!(status, 0, "{name}: {stderr}");
        assert_split_refuses_unless_dropping(d, file, name);
    }
}

/// `convert --split` refuses `file`'s invalid samples with the hint, and
/// with `--drop-invalid` writes the rest, saying what it left out.
fn assert_split_refuses_unless_dropping(d: &Path, file: &str, name: &str) {
    let split = ["convert", "--to", "pprof", file, "--split", "split"];
    let (status, _, stderr) = run(d, &split);
    assert_eq!(status, 2, "{name}: {stderr}");
    assert!(stderr.contains("--drop-invalid"), "{name}: {stderr}");
    let (status, stdout, stderr) = run(d, &[&split[..], &["--drop-invalid"]].concat());
    assert_eq!(status, 0, "{name}: {stderr}");
    assert!(stderr.contains("left out"), "{name}: {stderr}");
    assert!(stdout.contains("split/000-"), "{name}: {stdout}");
}
