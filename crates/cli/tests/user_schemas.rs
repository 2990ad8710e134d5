//! Messages of the user's own schemas (`--proto`, `-I`, `--descriptor-set`,
//! `--type`), held to the ecosystem's own implementations:
//!
//! - `protoc --decode` (Debian's protobuf-compiler, which `.ci/run`
//!   installs): the text is the same byte for byte, and encoding it again
//!   gives the bytes `protoc --encode --deterministic_output` gives. For
//!   Google's own `descriptor.proto`, for protoprof's `.proto` files read as
//!   user schemas on every binary corpus file (where the output must also
//!   equal the built-in types' output), and for random messages of a schema
//!   with every field kind;
//! - Python's `json_format` (protobuf 7, in the `.ci/run` virtual
//!   environment): the same proto3 JSON, well-known types included, read
//!   back to the same bytes;
//! - `edit` with a scripted editor, a parse error and its reopen;
//! - bad schemas and bad bytes: one line naming the file, line or byte.

mod common;

use std::path::{Path, PathBuf};

use common::{ok, run};
use proptest::prelude::*;
use protoprof_tests::{corpus_dir, files_under, protoc, python_xds, workspace_root, Protoc};

fn schemas_dir() -> PathBuf {
    workspace_root().join("crates/cli/tests/schemas")
}

const KINDS_PROTO: &str = "shop/kinds.proto";

/// A message with every field kind, written as text format.
const SAMPLE: &str = r#"
f_double: 1e-300 f_float: -0 f_int64: -9223372036854775808 f_string: "caf\303\251 \001"
f_optional: 0
r_float: [1.5, nan, -inf] r_unpacked: [1, -1] r_colour: [COLOUR_RED, 7]
m_bool { key: true value: COLOUR_GREEN } m_sint64 { key: -3 value: "\377" }
c_item { id: 3 parts { name: "p" } }
w_timestamp { seconds: -62135596800 } w_duration { seconds: -1 nanos: -500000000 }
w_int64 { value: 5 } w_struct { fields { key: "k" value { list_value { values { number_value: 1.5 } values { null_value: NULL_VALUE } } } } }
w_value { string_value: "s" } w_mask { paths: "a.b_c" paths: "d" }
w_any { type_url: "type.googleapis.com/shop.v1.Item" value: "\010\007" }
w_anys { type_url: "type.googleapis.com/google.protobuf.Duration" value: "\010\003" }
order { id: 7 quantities: [1, 2] packed_quantities: [3, 4] kind: WHOLESALE }
"#;

/// `protoc --encode` of `text` as `type_name` of the test schema, map
/// entries sorted as protoprof writes them.
fn protoc_encode(protoc: &Protoc, type_name: &str, text: &str) -> Vec<u8> {
    let args = [
        "--deterministic_output",
        &format!("--encode={type_name}"),
        KINDS_PROTO,
    ];
    protoc
        .run(&[&schemas_dir()], &args, text.as_bytes())
        .unwrap_or_else(|e| panic!("protoc --encode: {e}\n{text}"))
}

fn protoc_decode(protoc: &Protoc, type_name: &str, bytes: &[u8]) -> String {
    let args = [&format!("--decode={type_name}") as &str, KINDS_PROTO];
    let out = protoc
        .run(&[&schemas_dir()], &args, bytes)
        .expect("protoc --decode");
    String::from_utf8(out).expect("protoc prints ASCII")
}

/// The test schema as the library loads it for `--proto`.
fn kinds_schema() -> protoprof_codec::user::SchemaSet {
    let sources = protoprof_codec::user::SchemaSources {
        protos: vec![schemas_dir().join(KINDS_PROTO)],
        proto_paths: vec![schemas_dir()],
        descriptor_sets: Vec::new(),
    };
    protoprof_codec::user::SchemaSet::load(&sources, &Default::default())
        .expect("the test schema loads")
}

/// Decodes `bytes` as `type_name` of `schemas`: (text, JSON, binary again).
fn read_as(
    schemas: &protoprof_codec::user::SchemaSet,
    type_name: &str,
    bytes: &[u8],
) -> (String, String, Vec<u8>) {
    let options = protoprof_codec::DecodeOptions {
        allow_empty: true,
        ..Default::default()
    };
    let decoded = protoprof_codec::user::decode(bytes, schemas, Some(type_name), &options)
        .unwrap_or_else(|e| panic!("decoding as {type_name}: {e}"));
    let message = &*decoded.decoded.decoded.message;
    let json =
        protoprof_codec::user::proto3::print(message, schemas, true).expect("prints as JSON");
    (
        protoprof_codec::text::print(message),
        json.text,
        protoprof_codec::user::encode(message),
    )
}

/// Text or JSON read back as `type_name`, encoded.
fn written_from(
    schemas: &protoprof_codec::user::SchemaSet,
    type_name: &str,
    text: &str,
) -> Vec<u8> {
    let descriptor = schemas.message(type_name).unwrap();
    let message = match text.starts_with('{') {
        true => protoprof_codec::user::proto3_parse::parse(text, &descriptor, schemas, 100),
        false => protoprof_codec::text::parse(text, &descriptor, 100),
    };
    let message = message.unwrap_or_else(|e| panic!("reading back as {type_name}: {e}\n{text}"));
    protoprof_codec::user::encode(&*message)
}

#[test]
fn every_field_kind_reads_and_writes_as_protoc_does() {
    let Some(protoc) = protoc() else { return };
    let schemas = kinds_schema();
    let bytes = protoc_encode(&protoc, "shop.v1.Kinds", SAMPLE);
    let (text, json, again) = read_as(&schemas, "shop.v1.Kinds", &bytes);
    assert_eq!(text, protoc_decode(&protoc, "shop.v1.Kinds", &bytes));
    assert_eq!(again, bytes, "decode then encode");
    assert_eq!(
        written_from(&schemas, "shop.v1.Kinds", &text),
        bytes,
        "text read back"
    );
    assert_eq!(
        written_from(&schemas, "shop.v1.Kinds", &json),
        bytes,
        "JSON read back"
    );
    // Read as a type that declares only some of the fields, the rest are
    // unknown fields, printed as protoc prints them and kept.
    let (prefix, _, kept) = read_as(&schemas, "shop.v1.KindsPrefix", &bytes);
    assert_eq!(
        prefix,
        protoc_decode(&protoc, "shop.v1.KindsPrefix", &bytes)
    );
    assert!(
        prefix.contains("71 {"),
        "an unknown message prints as a block:\n{prefix}"
    );
    let from_text = written_from(&schemas, "shop.v1.KindsPrefix", &prefix);
    assert_eq!(read_as(&schemas, "shop.v1.Kinds", &from_text).0, text);
    assert_eq!(read_as(&schemas, "shop.v1.Kinds", &kept).0, text);
}

#[test]
fn the_command_line_reads_and_writes_user_messages() {
    let Some(protoc) = protoc() else { return };
    let dir = tempfile::tempdir().unwrap();
    let bytes = protoc_encode(&protoc, "shop.v1.Kinds", SAMPLE);
    std::fs::write(dir.path().join("kinds.bin"), &bytes).unwrap();
    let schema = schemas_dir().join(KINDS_PROTO);
    let include = schemas_dir();
    let with_schema = |args: &[&str]| -> Vec<String> {
        let mut all = vec![
            "--proto".to_string(),
            schema.display().to_string(),
            "-I".into(),
            include.display().to_string(),
        ];
        all.extend(args.iter().map(|a| a.to_string()));
        all
    };
    let run_ok = |args: &[&str]| {
        let args = with_schema(args);
        ok(
            dir.path(),
            &args.iter().map(String::as_str).collect::<Vec<_>>(),
        )
    };
    // Detected without --type: Kinds is the message the bytes fit best.
    let text = run_ok(&["decode", "kinds.bin"]);
    assert_eq!(text, protoc_decode(&protoc, "shop.v1.Kinds", &bytes));
    let inspected = run_ok(&["inspect", "kinds.bin"]);
    assert!(
        inspected.contains("type: shop.v1.Kinds (binary protobuf)"),
        "{inspected}"
    );
    assert!(inspected.contains("fits: shop.v1.Kinds "), "{inspected}");
    assert_eq!(run_ok(&["view", "--full", "kinds.bin"]), text);
    run_ok(&["decode", "--to", "json", "kinds.bin", "-o", "kinds.json"]);
    run_ok(&[
        "encode",
        "--type",
        "shop.v1.Kinds",
        "kinds.json",
        "-o",
        "from-json.bin",
    ]);
    assert_eq!(
        std::fs::read(dir.path().join("from-json.bin")).unwrap(),
        bytes
    );
    std::fs::write(dir.path().join("kinds.txt"), &text).unwrap();
    run_ok(&[
        "encode",
        "--type",
        "shop.v1.Kinds",
        "kinds.txt",
        "-o",
        "from-text.bin.gz",
    ]);
    let gz = dir.path().join("from-text.bin.gz");
    assert_eq!(protoprof_tests::read_profile_bytes(&gz), bytes);
    // The schema as a descriptor set serves as well as the .proto files.
    let set = protoc
        .run(
            &[&include],
            &[
                "--include_imports",
                "--descriptor_set_out=/dev/stdout",
                KINDS_PROTO,
            ],
            b"",
        )
        .unwrap();
    std::fs::write(dir.path().join("kinds.desc"), set).unwrap();
    let from_set = ok(
        dir.path(),
        &[
            "--descriptor-set",
            "kinds.desc",
            "decode",
            "--type",
            "shop.v1.Kinds",
            "kinds.bin",
        ],
    );
    assert_eq!(from_set, text);
    // Frames: varint-delimited messages of a user type.
    let mut framed = Vec::new();
    for _ in 0..3 {
        framed.extend(varint(bytes.len() as u64));
        framed.extend(&bytes);
    }
    std::fs::write(dir.path().join("framed.bin"), framed).unwrap();
    let frames = run_ok(&["frames", "--framing", "delimited", "--decode", "framed.bin"]);
    assert_eq!(frames.matches("shop.v1.Kinds").count(), 3, "{frames}");
    assert!(frames.contains("    w_timestamp {"), "{frames}");
}

fn varint(mut v: u64) -> Vec<u8> {
    let mut out = Vec::new();
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
    out
}

/// Google's own well-known `.proto` files, compiled by protoc into one
/// `FileDescriptorSet`.
fn googles_descriptor_set(protoc: &Protoc) -> Vec<u8> {
    let names: Vec<String> = std::fs::read_dir(protoc.include.join("google/protobuf"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".proto"))
        .map(|n| format!("google/protobuf/{n}"))
        .collect();
    let mut args = vec!["--include_imports", "--descriptor_set_out=/dev/stdout"];
    args.extend(names.iter().map(String::as_str));
    protoc
        .run(&[], &args, b"")
        .expect("protoc compiles Google's .proto files")
}

#[test]
fn googles_descriptor_set_reads_as_protoc_reads_it() {
    let Some(protoc) = protoc() else { return };
    let dir = tempfile::tempdir().unwrap();
    let set = googles_descriptor_set(&protoc);
    std::fs::write(dir.path().join("google.desc"), &set).unwrap();
    let include = protoc.include.display().to_string();
    let expected = protoc
        .run(
            &[],
            &[
                "--decode=google.protobuf.FileDescriptorSet",
                "google/protobuf/descriptor.proto",
            ],
            &set,
        )
        .unwrap();
    let schema_forms: [&[&str]; 2] = [
        &[
            "--proto",
            "google/protobuf/descriptor.proto",
            "-I",
            &include,
        ],
        &["--descriptor-set", "google.desc"],
    ];
    for schema in schema_forms {
        let mut args = schema.to_vec();
        args.extend([
            "decode",
            "--type",
            "google.protobuf.FileDescriptorSet",
            "google.desc",
            "-o",
            "set.txt",
        ]);
        ok(dir.path(), &args);
        let text = std::fs::read(dir.path().join("set.txt")).unwrap();
        assert!(
            text == expected,
            "{schema:?}: the text differs from protoc's"
        );
        let mut args = schema.to_vec();
        args.extend([
            "encode",
            "--type",
            "google.protobuf.FileDescriptorSet",
            "set.txt",
            "-o",
            "again.desc",
        ]);
        ok(dir.path(), &args);
        assert!(
            std::fs::read(dir.path().join("again.desc")).unwrap() == set,
            "{schema:?}: re-encoded"
        );
        let mut args = schema.to_vec();
        args.extend(["decode", "--to", "json", "google.desc", "-o", "set.json"]);
        ok(dir.path(), &args);
        let mut args = schema.to_vec();
        args.extend([
            "encode",
            "--type",
            "google.protobuf.FileDescriptorSet",
            "set.json",
            "-o",
            "from-json.desc",
        ]);
        ok(dir.path(), &args);
        assert!(
            std::fs::read(dir.path().join("from-json.desc")).unwrap() == set,
            "{schema:?}: JSON"
        );
    }
}

/// Every `.proto` file of protoprof's own schemas, relative to `proto/`.
fn project_protos() -> Vec<String> {
    let root = workspace_root().join("proto");
    let mut names: Vec<String> = files_under(&root)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "proto"))
        .map(|p| p.strip_prefix(&root).unwrap().display().to_string())
        .collect();
    names.sort();
    names
}

/// Reads a corpus file as `type_name` of protoprof's `.proto` files loaded
/// as user schemas (`user_args`), and compares: with the built-in type's
/// text (unless the built-in reader upgrades an older OTLP revision: read
/// as the current one, as here, rust-protobuf's generated code keeps the
/// last of a singular message given twice where protoc merges them) and
/// with protoc's (unless protoc refuses strings that are not UTF-8, which
/// protoprof repairs). Bytes of an older revision that do not fit the
/// current schema are refused by both. Whether each comparison was made.
fn compare_corpus_file(
    protoc: &Protoc,
    user_args: &[String],
    file: &Path,
    type_name: &str,
    upgraded: bool,
) -> (bool, bool) {
    let corpus = file.parent().unwrap();
    let shown = file.display().to_string();
    let mut args: Vec<&str> = user_args.iter().map(String::as_str).collect();
    args.extend(["decode", "--type", type_name, &shown]);
    let (status, user_text, user_warnings) = run(corpus, &args);
    let proto_dir = workspace_root().join("proto");
    let mut protoc_args = vec![format!("--decode={type_name}")];
    protoc_args.extend(project_protos());
    let protoc_args: Vec<&str> = protoc_args.iter().map(String::as_str).collect();
    let expected = protoc.run(
        &[&proto_dir],
        &protoc_args,
        &protoprof_tests::read_profile_bytes(file),
    );
    if status != 0 {
        assert!(
            expected.is_err(),
            "{shown}: protoprof refuses what protoc reads: {user_warnings}"
        );
        return (false, false);
    }
    let (_, built_in, _) = run(corpus, &["decode", "--type", type_name, &shown]);
    assert!(
        upgraded || user_text == built_in,
        "{shown}: the text differs from the built-in text"
    );
    match expected {
        // Older OTLP revisions read as the current one are mostly unknown
        // fields, where protoprof and protoc part in two documented ways
        // (docs/codec.md): unknown fields print in number order, protoc's in
        // wire order (the same for canonical encodings, not for these), and
        // a payload protoc reads as holding groups prints as a string.
        Ok(_) if upgraded => {}
        Ok(expected) => assert!(
            user_text.as_bytes() == expected,
            "{shown}: the text differs from protoc's"
        ),
        Err(_) => assert!(
            user_warnings.contains("UTF-8"),
            "{shown}: protoc failed: {user_warnings}"
        ),
    }
    (!upgraded, !user_warnings.contains("UTF-8"))
}

/// The built-in message type of a corpus file, when it is binary protobuf,
/// and whether the built-in reader upgrades it from an older OTLP revision.
fn built_in_type(file: &Path) -> Option<(String, bool)> {
    let dir = file.parent().unwrap();
    let (status, out, _) = run(
        dir,
        &["inspect", "--format", "json", &file.display().to_string()],
    );
    let value: serde_json::Value = serde_json::from_str(&out).ok().filter(|_| status == 0)?;
    let value = if value.is_array() {
        value[0].clone()
    } else {
        value
    };
    let upgraded = value.to_string().contains("upgraded");
    (value["form"] == "binary protobuf").then(|| {
        (
            value["message_type"].as_str().unwrap().to_string(),
            upgraded,
        )
    })
}

#[test]
fn protoprofs_own_protos_as_user_schemas_read_the_corpus_as_built_in_and_protoc_do() {
    let (Some(protoc), Some(corpus)) = (protoc(), corpus_dir()) else {
        return;
    };
    let proto_dir = workspace_root().join("proto");
    let mut user_args: Vec<String> = vec!["-I".into(), proto_dir.display().to_string()];
    for p in &project_protos() {
        user_args.extend(["--proto".into(), proto_dir.join(p).display().to_string()]);
    }
    let (mut same_as_built_in, mut same_as_protoc) = (0, 0);
    for dir in ["pprof", "otlp"] {
        for file in files_under(&corpus.join(dir)) {
            let Some((type_name, upgraded)) = built_in_type(&file) else {
                continue;
            };
            let (built_in, protoc_too) =
                compare_corpus_file(&protoc, &user_args, &file, &type_name, upgraded);
            same_as_built_in += usize::from(built_in);
            same_as_protoc += usize::from(protoc_too);
        }
    }
    assert!(
        same_as_built_in >= 40 && same_as_protoc >= 40,
        "{same_as_built_in} {same_as_protoc}"
    );
}

/// A text-format value for a string or bytes field: any bytes, escaped in
/// octal (which protoc reads for both).
fn quoted(bytes: &[u8]) -> String {
    format!(
        "\"{}\"",
        bytes
            .iter()
            .map(|b| format!("\\{b:03o}"))
            .collect::<String>()
    )
}

fn utf8_text() -> impl Strategy<Value = String> {
    any::<String>().prop_map(|s| quoted(s.as_bytes()))
}

fn float_text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<f64>().prop_map(|v| format!("{v:e}")),
        Just("nan".to_string()),
        Just("-inf".to_string()),
        (-1000i32..1000).prop_map(|v| (f64::from(v) / 8.0).to_string()),
    ]
}

/// `name: value` lines for a random set of Kinds' fields.
fn kinds_text() -> impl Strategy<Value = String> {
    let scalars = (
        prop::option::of(float_text()),
        prop::option::of(float_text().prop_map(|t| match t.parse::<f64>() {
            Ok(v) if v.is_finite() => format!("{:e}", v as f32),
            _ => t,
        })),
        prop::option::of(any::<i64>()),
        prop::option::of(any::<u64>()),
        prop::option::of(any::<i32>()),
        prop::option::of(utf8_text()),
        prop::option::of(prop::collection::vec(any::<u8>(), 0..20)),
        prop::option::of((any::<i32>(), any::<u32>(), any::<bool>())),
    );
    let repeated = (
        prop::collection::vec(any::<i64>(), 0..4),
        prop::collection::vec(any::<i32>(), 0..4),
        prop::collection::vec(any::<u32>(), 0..4),
        prop::collection::vec(0i32..4, 0..4),
        prop::collection::vec(utf8_text(), 0..3),
        prop::collection::btree_map(any::<i32>(), utf8_text(), 0..3),
        // Keys once each: protoc prints every entry of a key given twice on
        // the wire, where protoprof keeps the last (protobuf's rule).
        prop::collection::btree_map(any::<u64>(), any::<bool>(), 0..3),
        prop::option::of((any::<i64>(), 0i32..1_000_000_000)),
    );
    (scalars, repeated).prop_map(|(s, r)| kinds_lines(s, r))
}

type Scalars = (
    Option<String>,
    Option<String>,
    Option<i64>,
    Option<u64>,
    Option<i32>,
    Option<String>,
    Option<Vec<u8>>,
    Option<(i32, u32, bool)>,
);
type Repeated = (
    Vec<i64>,
    Vec<i32>,
    Vec<u32>,
    Vec<i32>,
    Vec<String>,
    std::collections::BTreeMap<i32, String>,
    std::collections::BTreeMap<u64, bool>,
    Option<(i64, i32)>,
);

fn kinds_lines(
    (d, f, i64v, u64v, i32v, s, b, packed): Scalars,
    (ri64, rsint, rfixed, colours, strings, items, uints, stamp): Repeated,
) -> String {
    let mut out = Vec::new();
    let mut push = |name: &str, value: String| out.push(format!("{name}: {value}"));
    let texts = [("f_double", d), ("f_float", f), ("f_string", s)];
    for (name, value) in texts {
        if let Some(value) = value {
            push(name, value);
        }
    }
    let numbers = [
        ("f_int64", i64v.map(|v| v.to_string())),
        ("f_uint64", u64v.map(|v| v.to_string())),
        ("f_sint32", i32v.map(|v| v.to_string())),
        ("f_bytes", b.map(|v| quoted(&v))),
    ];
    for (name, value) in numbers {
        if let Some(value) = value {
            push(name, value);
        }
    }
    if let Some((a, c, e)) = packed {
        push("f_sfixed32", a.to_string());
        push("f_fixed32", c.to_string());
        push("f_bool", e.to_string());
        push("f_optional", "0".into());
    }
    ri64.iter().for_each(|v| push("r_sint64", v.to_string()));
    rsint.iter().for_each(|v| push("r_unpacked", v.to_string()));
    rsint.iter().for_each(|v| push("r_sfixed32", v.to_string()));
    rfixed.iter().for_each(|v| push("r_fixed32", v.to_string()));
    colours.iter().for_each(|v| push("r_colour", v.to_string()));
    strings.iter().for_each(|v| push("r_bytes", v.clone()));
    items.iter().for_each(|(k, v)| {
        out.push(format!(
            "m_int32 {{ key: {k} value {{ id: {k} name: {v} }} }}"
        ))
    });
    uints
        .iter()
        .for_each(|(k, v)| out.push(format!("m_uint64 {{ key: {k} value: \"{v}\" }}")));
    if let Some(v) = uints.values().next() {
        out.push(format!("m_bool {{ key: {v} value: COLOUR_RED }}"));
    }
    // A singular message (merged when two messages follow each other) and a
    // second member of the oneof c_number is in.
    if let Some((k, v)) = items.iter().next() {
        out.push(format!("f_item {{ id: {k} parts {{ name: {v} }} }}"));
    }
    if let (Some(text), None) = (strings.first(), stamp) {
        out.push(format!("c_text: {text}"));
    }
    if let Some((seconds, nanos)) = stamp {
        let seconds_in_range = seconds % 315_576_000_000;
        let nanos = if seconds_in_range < 0 { -nanos } else { nanos };
        out.push(format!(
            "w_duration {{ seconds: {seconds_in_range} nanos: {nanos} }}"
        ));
        out.push(format!("c_number: {seconds}"));
    }
    out.join("\n")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Random messages with every field kind: protoc's text, and its bytes
    /// back from the text and from the JSON.
    #[test]
    fn random_messages_read_and_write_as_protoc_does(text in kinds_text()) {
        let Some(protoc) = protoc() else { return Ok(()) };
        let schemas = kinds_schema();
        let bytes = protoc_encode(&protoc, "shop.v1.Kinds", &text);
        let (ours, json, again) = read_as(&schemas, "shop.v1.Kinds", &bytes);
        prop_assert_eq!(&ours, &protoc_decode(&protoc, "shop.v1.Kinds", &bytes));
        prop_assert_eq!(&again, &bytes);
        prop_assert_eq!(&written_from(&schemas, "shop.v1.Kinds", &ours), &bytes);
        // NaN has no single JSON form; everything else comes back exactly.
        if !ours.contains("nan") {
            prop_assert_eq!(&written_from(&schemas, "shop.v1.Kinds", &json), &bytes);
        }
        // Read as a type that declares a few of the fields: the others are
        // unknown fields, and the text keeps them exactly. (protoc's text
        // of unknown fields is compared on SAMPLE and on the corpus; random
        // bytes hit the two places where protoprof prints a string and
        // protoc a block, a group and a tag with bits past 32, docs/codec.md.)
        let (prefix, _, _) = read_as(&schemas, "shop.v1.KindsPrefix", &bytes);
        let from_prefix = written_from(&schemas, "shop.v1.KindsPrefix", &prefix);
        prop_assert_eq!(&read_as(&schemas, "shop.v1.Kinds", &from_prefix).0, &ours);
        prop_assert_eq!(printed_from_bytes(&schemas, "shop.v1.KindsPrefix", &bytes), prefix);
    }

    /// Two messages one after the other are one message, merged (the last
    /// scalar and oneof member win, singular messages merge, map keys are
    /// replaced): the text printed straight from the bytes is the text of
    /// the message read from them.
    #[test]
    fn text_printed_from_the_bytes_is_the_text_of_the_message(first in kinds_text(), second in kinds_text()) {
        let Some(protoc) = protoc() else { return Ok(()) };
        let schemas = kinds_schema();
        let mut bytes = protoc_encode(&protoc, "shop.v1.Kinds", &first);
        bytes.extend(protoc_encode(&protoc, "shop.v1.Kinds", &second));
        for type_name in ["shop.v1.Kinds", "shop.v1.KindsPrefix"] {
            let (text, _, _) = read_as(&schemas, type_name, &bytes);
            prop_assert_eq!(printed_from_bytes(&schemas, type_name, &bytes), text);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Any bytes, as any message of the schema: decoded or refused with an
    /// error, printed from the bytes exactly when they decode, never a
    /// panic; and what decodes writes back and decodes to the same text.
    #[test]
    fn any_bytes_decode_or_fail_cleanly(bytes in prop::collection::vec(any::<u8>(), 0..300), which in 0usize..64) {
        let schemas = kinds_schema();
        let descriptor = schemas.messages()[which % schemas.messages().len()].clone();
        let name = descriptor.full_name().to_string();
        let options = protoprof_codec::DecodeOptions { allow_empty: true, ..Default::default() };
        let mut message = descriptor.new_instance();
        let decoded = protoprof_codec::user::parse::merge(&mut *message, &bytes, 100);
        let mut printed = Vec::new();
        let from_bytes = protoprof_codec::user::print_binary(&bytes, &descriptor, &Default::default(), &mut printed);
        prop_assert_eq!(decoded.is_ok(), from_bytes.is_ok(), "{}", name);
        if decoded.is_ok() {
            let text = protoprof_codec::text::print(&*message);
            prop_assert_eq!(&String::from_utf8(printed).unwrap(), &text);
            let again = protoprof_codec::user::encode(&*message);
            let reread = protoprof_codec::user::decode(&again, &schemas, Some(&name), &options).unwrap();
            prop_assert_eq!(protoprof_codec::text::print(&*reread.decoded.decoded.message), text);
        }
    }
}

/// Bytes of a named type that look like text but are not text format
/// (two bytes of binary can be "x "): read as binary, with a warning that
/// says so. Text that is neither stays a text error.
#[test]
fn bytes_that_only_look_like_text_read_as_binary_with_a_warning() {
    let schemas = kinds_schema();
    let options = protoprof_codec::DecodeOptions::default();
    let any = "google.protobuf.Any";
    let decoded = protoprof_codec::user::decode(b"x ", &schemas, Some(any), &options).unwrap();
    let warnings = &decoded.decoded.decoded.warnings;
    assert!(
        warnings[0].to_string().contains("read as binary protobuf"),
        "{warnings:?}"
    );
    assert_eq!(
        protoprof_codec::text::print(&*decoded.decoded.decoded.message),
        "15: 32\n"
    );
    let text =
        protoprof_codec::user::decode(b"type_url: \"a\"", &schemas, Some(any), &options).unwrap();
    assert!(text.decoded.decoded.warnings.is_empty());
    let neither = protoprof_codec::user::decode(b"type_url: ", &schemas, Some(any), &options);
    assert!(
        matches!(neither, Err(protoprof_codec::CodecError::Text { .. })),
        "{neither:?}"
    );
}

/// `user::print_binary`'s text of `bytes` as `type_name`.
fn printed_from_bytes(
    schemas: &protoprof_codec::user::SchemaSet,
    type_name: &str,
    bytes: &[u8],
) -> String {
    let descriptor = schemas.message(type_name).unwrap();
    let mut out = Vec::new();
    protoprof_codec::user::print_binary(bytes, &descriptor, &Default::default(), &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

/// Python's json_format, given the schema as a descriptor set: `print`
/// writes a binary message as JSON, `parse` a JSON document as binary.
const PYTHON_JSON: &str = r#"
import sys
from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory
files = descriptor_pb2.FileDescriptorSet.FromString(open(sys.argv[1], 'rb').read())
pool = descriptor_pool.DescriptorPool()
for f in files.file:
    pool.Add(f)
cls = message_factory.GetMessageClass(pool.FindMessageTypeByName(sys.argv[2]))
if sys.argv[3] == 'print':
    m = cls.FromString(open(sys.argv[4], 'rb').read())
    print(json_format.MessageToJson(m, descriptor_pool=pool))
else:
    m = json_format.Parse(open(sys.argv[4]).read(), cls(), descriptor_pool=pool)
    sys.stdout.buffer.write(m.SerializeToString(deterministic=True))
"#;

#[test]
fn json_is_what_pythons_json_format_writes_and_reads() {
    let (Some(protoc), Some(python)) = (protoc(), python_xds()) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let set = protoc
        .run(
            &[&schemas_dir()],
            &[
                "--include_imports",
                "--descriptor_set_out=/dev/stdout",
                KINDS_PROTO,
            ],
            b"",
        )
        .unwrap();
    let path = |name: &str| dir.path().join(name).display().to_string();
    std::fs::write(path("kinds.desc"), set).unwrap();
    let schemas = kinds_schema();
    let bytes = protoc_encode(&protoc, "shop.v1.Kinds", SAMPLE);
    std::fs::write(path("kinds.bin"), &bytes).unwrap();
    let (_, ours, _) = read_as(&schemas, "shop.v1.Kinds", &bytes);
    std::fs::write(path("ours.json"), &ours).unwrap();
    let python = |args: &[&str]| {
        let out = std::process::Command::new(&python)
            .args(["-c", PYTHON_JSON, &path("kinds.desc"), "shop.v1.Kinds"])
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    let theirs: serde_json::Value =
        serde_json::from_slice(&python(&["print", &path("kinds.bin")])).unwrap();
    let ours_value: serde_json::Value = serde_json::from_str(&ours).unwrap();
    assert_eq!(
        ours_value, theirs,
        "the same proto3 JSON as Python's json_format"
    );
    assert!(
        python(&["parse", &path("ours.json")]) == bytes,
        "Python reads our JSON back to the same bytes"
    );
}

#[test]
fn edit_reopens_the_editor_at_a_parse_error_and_writes_a_user_message() {
    let Some(protoc) = protoc() else { return };
    let dir = tempfile::tempdir().unwrap();
    let bytes = protoc_encode(&protoc, "shop.v1.Kinds", SAMPLE);
    std::fs::write(dir.path().join("kinds.bin"), &bytes).unwrap();
    // First run: breaks a value. Second run (the error noted under its
    // line): keeps the note it was shown, then fixes the value.
    let editor = dir.path().join("editor.sh");
    let seen = dir.path().join("seen.txt");
    let script = format!(
        "#!/bin/sh\nif grep -q '^# protoprof:' \"$1\"; then\n  cp \"$1\" '{}'\n  \
         sed -i 's/^f_int64: oops$/f_int64: 42/' \"$1\"\nelse\n  \
         sed -i 's/^f_int64: -9223372036854775808$/f_int64: oops/' \"$1\"\nfi\n",
        seen.display()
    );
    std::fs::write(&editor, script).unwrap();
    std::fs::set_permissions(&editor, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let schema = schemas_dir().join(KINDS_PROTO).display().to_string();
    let include = schemas_dir().display().to_string();
    let output = common::protoprof(dir.path())
        .env("EDITOR", &editor)
        .env_remove("VISUAL")
        .args(["--proto", &schema, "-I", &include, "edit", "kinds.bin"])
        .output()
        .unwrap();
    let (status, _, stderr) = common::outcome(output);
    assert_eq!(status, 0, "{stderr}");
    assert!(
        stderr.contains("does not parse: text format at line 3 column 10"),
        "{stderr}"
    );
    let seen = std::fs::read_to_string(seen).expect("the editor ran twice");
    assert!(
        seen.contains("f_int64: oops\n# protoprof: ^ text format at line 3 column 10"),
        "{seen}"
    );
    let text = ok(
        dir.path(),
        &["--proto", &schema, "-I", &include, "decode", "kinds.bin"],
    );
    let expected = protoc_decode(&protoc, "shop.v1.Kinds", &bytes)
        .replace("f_int64: -9223372036854775808", "f_int64: 42");
    assert_eq!(text, expected);
}

#[test]
fn bad_schemas_and_bad_bytes_are_one_line_naming_the_place() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).unwrap();
    write(
        "broken.proto",
        "syntax = \"proto3\";\nmessage A {\n  int32 a = 1\n}\n",
    );
    write(
        "lonely.proto",
        "syntax = \"proto3\";\nimport \"missing/dep.proto\";\nmessage B { int32 b = 1; }\n",
    );
    write(
        "good.proto",
        "syntax = \"proto3\";\npackage g;\nmessage Point { int32 x = 1; int32 y = 2; }\n",
    );
    std::fs::write(dir.path().join("cut.bin"), [0x08, 0x96]).unwrap();
    std::fs::write(dir.path().join("not-a-set.desc"), b"\xff\xff\xff").unwrap();
    let cases: [(&[&str], &str); 6] = [
        (
            &["--proto", "broken.proto", "decode", "cut.bin"],
            "broken.proto:4:1",
        ),
        (
            &["--proto", "lonely.proto", "decode", "cut.bin"],
            "missing/dep.proto",
        ),
        (
            &[
                "--proto",
                "good.proto",
                "decode",
                "--type",
                "Point",
                "cut.bin",
            ],
            "did you mean g.Point?",
        ),
        (
            &[
                "--proto",
                "good.proto",
                "decode",
                "--type",
                "g.Point",
                "cut.bin",
            ],
            "at byte 0",
        ),
        (
            &["--descriptor-set", "not-a-set.desc", "decode", "cut.bin"],
            "not-a-set.desc: not a binary FileDescriptorSet",
        ),
        (
            &[
                "--proto",
                "/elsewhere/x.proto",
                "-I",
                ".",
                "decode",
                "cut.bin",
            ],
            "not under any proto path",
        ),
    ];
    for (args, expected) in cases {
        let (status, _, stderr) = run(dir.path(), args);
        assert_eq!(status, 2, "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: one line: {stderr}");
        assert!(
            stderr.contains(expected),
            "{args:?}: expected `{expected}` in: {stderr}"
        );
    }
}

/// A message of the user's own schema, read without `--proto`, is no
/// protoprof type: `validate`, `decode` and `inspect` say that no known
/// schema fits and exit non-zero, where they once read it as an envoy
/// message, printed nonsense and called it valid. With `--proto` it reads.
#[test]
fn a_message_no_known_schema_fits_is_not_read_as_one() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("u.proto"),
        "syntax = \"proto3\";\npackage u;\n\
         message A { string name = 1; int64 count = 2; repeated double values = 3; }\n\
         message C { int64 id = 1; string title = 2; repeated string tags = 3; }\n",
    )
    .unwrap();
    let messages = [
        ("A", "name: \"checkout\" count: 42 values: 1.5 values: 2.5"),
        ("C", "id: 7 title: \"hello world\" tags: \"a\" tags: \"b\""),
    ];
    for (name, text) in messages {
        std::fs::write(d.join("m.txt"), text).unwrap();
        let type_name = format!("u.{name}");
        ok(
            d,
            &[
                "--proto", "u.proto", "encode", "--type", &type_name, "m.txt", "-o", "m.bin",
            ],
        );
        for command in ["validate", "decode", "inspect"] {
            let (status, stdout, stderr) = run(d, &[command, "m.bin"]);
            assert_ne!(status, 0, "{name}: {command} read it: {stdout}{stderr}");
            assert!(
                stderr.contains("no schema protoprof knows fits these bytes")
                    && stderr.contains("decode --raw")
                    && stderr.contains("--proto"),
                "{name}: {command}: {stderr}"
            );
            assert!(!stdout.contains("valid"), "{name}: {command}: {stdout}");
        }
        let text = ok(d, &["--proto", "u.proto", "decode", "m.bin"]);
        let first_field = text.split(' ').next().unwrap();
        assert!(
            text.starts_with(first_field) && text.contains(": 42\n") == (name == "A"),
            "{text}"
        );
    }
}

/// Text with `\u` and `\U` escapes (a surrogate pair too) encodes to the
/// bytes `protoc --encode` gives, where it was once refused; a short
/// escape is an error naming the line, as protoc's is.
#[test]
fn unicode_escapes_encode_as_protoc_encodes_them() {
    let Some(protoc) = protoc() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let schema = schemas_dir().join(KINDS_PROTO);
    let schema = schema.to_str().unwrap();
    let include = schemas_dir();
    let include = include.to_str().unwrap();
    let encode = |text: &str| {
        std::fs::write(d.join("u.txt"), text).unwrap();
        let args = [
            "--proto",
            schema,
            "-I",
            include,
            "encode",
            "--type",
            "shop.v1.Kinds",
            "u.txt",
            "-o",
            "u.bin",
        ];
        run(d, &args)
    };
    for text in [
        r#"f_string: "caf\u00e9 \U0001F600 \ud83d\ude00 \u20AC""#,
        r#"f_bytes: "\u00e9\U00010348""#,
    ] {
        let (status, _, stderr) = encode(text);
        assert_eq!(status, 0, "{text}: {stderr}");
        let ours = std::fs::read(d.join("u.bin")).unwrap();
        assert_eq!(
            ours,
            protoc_encode(&protoc, "shop.v1.Kinds", text),
            "{text}"
        );
    }
    let (status, _, stderr) = encode("f_string: \"\\u00e\"");
    assert_eq!(status, 2, "{stderr}");
    assert!(
        stderr.contains("four hex digits") && stderr.contains("line 1"),
        "{stderr}"
    );
}

/// Map entries print in key order in JSON, the same on every run (a
/// map's own order changes from run to run), as in the text format.
#[test]
fn json_of_maps_is_deterministic() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let proto = workspace_root().join("examples/index-record.proto");
    let proto = proto.to_str().unwrap();
    let labels: String = (0..40)
        .map(|n| {
            format!(
                "labels {{ key: \"k{:02}\" value: \"v{n}\" }}\n",
                (n * 17) % 40
            )
        })
        .collect();
    std::fs::write(d.join("r.txt"), format!("service: \"checkout\"\n{labels}")).unwrap();
    let encode = [
        "--proto",
        proto,
        "encode",
        "--type",
        "store.v1.IndexRecord",
        "r.txt",
        "-o",
        "r.bin",
    ];
    ok(d, &encode);
    let json = ok(d, &["--proto", proto, "decode", "--to", "json", "r.bin"]);
    for _ in 0..3 {
        assert_eq!(
            ok(d, &["--proto", proto, "decode", "--to", "json", "r.bin"]),
            json
        );
    }
    let keys: Vec<usize> = (0..40)
        .map(|n| json.find(&format!("\"k{n:02}\"")).expect("every key"))
        .collect();
    assert!(keys.windows(2).all(|w| w[0] < w[1]), "{json}");
}

/// `decode --raw` prints what `protoc --decode_raw` prints, byte for byte,
/// on every binary corpus file protoc reads (gzip inflated first, which
/// protoc does not do); on what protoc cannot read it fails too.
/// `--guess` is protoprof's own reading, which differs.
#[test]
fn decode_raw_is_protocs_decode_raw() {
    let (Some(protoc), Some(corpus)) = (protoc(), corpus_dir()) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut compared = 0;
    for path in files_under(&corpus) {
        let name = path.display().to_string();
        if name.ends_with(".json") || name.ends_with(".md") || name.contains("gzip-bomb") {
            continue;
        }
        if name.ends_with(".gz") && !name.contains("/pprof/") {
            continue; // the damaged gzip files: not protobuf to either
        }
        let bytes = protoprof_tests::read_profile_bytes(&path);
        std::fs::write(d.join("in.bin"), &bytes).unwrap();
        let theirs = protoc.run(&[], &["--decode_raw"], &bytes);
        let (status, ours, stderr) = run(d, &["decode", "--raw", "in.bin"]);
        match theirs {
            Ok(theirs) => {
                assert_eq!(status, 0, "{name}: {stderr}");
                assert!(
                    ours.as_bytes() == theirs,
                    "{name}: decode --raw differs from protoc"
                );
                compared += 1;
            }
            Err(_) => assert_eq!(status, 2, "{name}: protoc fails, protoprof printed"),
        }
    }
    assert!(compared >= 70, "only {compared} files compared");
    let cpu = workspace_root().join("examples/cpu.pb.gz");
    let guessed = ok(d, &["decode", "--raw", "--guess", cpu.to_str().unwrap()]);
    assert!(guessed.contains("# packed varints?"), "{guessed}");
}

/// `encode` without `--type` reads the text as the type `decode` finds
/// for it, of protoprof's schemas or the user's, and gives back the bytes;
/// binary input is named as such; a usage error after `--proto FILE` points
/// at the command's own help.
#[test]
fn encode_finds_the_type_as_decode_does() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let examples = workspace_root().join("examples");
    let proto = examples.join("index-record.proto");
    let (proto, record) = (proto.to_str().unwrap(), examples.join("index-record.bin"));
    let text = ok(d, &["--proto", proto, "decode", record.to_str().unwrap()]);
    std::fs::write(d.join("record.txt"), text).unwrap();
    ok(
        d,
        &["--proto", proto, "encode", "record.txt", "-o", "record.bin"],
    );
    assert_eq!(
        std::fs::read(d.join("record.bin")).unwrap(),
        std::fs::read(&record).unwrap()
    );
    let cpu = examples.join("cpu.pb.gz");
    std::fs::write(d.join("cpu.txt"), ok(d, &["decode", cpu.to_str().unwrap()])).unwrap();
    ok(d, &["encode", "cpu.txt", "-o", "cpu.pb"]);
    let original = protoprof_tests::read_profile_bytes(&cpu);
    assert_eq!(std::fs::read(d.join("cpu.pb")).unwrap(), original);
    let (status, _, stderr) = run(d, &["encode", "cpu.pb", "-o", "again.pb"]);
    assert_eq!(status, 2);
    assert!(stderr.contains("is already binary"), "{stderr}");
    let (status, _, stderr) = run(d, &["--proto", proto, "encode", "-o", "x.bin"]);
    assert_eq!(status, 2);
    assert!(stderr.contains("(see protoprof encode --help)"), "{stderr}");
}
