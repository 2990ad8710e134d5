//! The models carry exactly the wire facts of `shared/schemas/`, and the
//! generated reference table says what `references.md` says.

use protoprof_model_meta::{RefKind, Schema};
use protoprof_tests::schema_facts::{
    facts_of, parse_facts_markdown, parse_reference_markdown, references_of, render,
    render_references, Facts,
};
use protoprof_tests::schemas_dir;

static ALL: [&Schema; 3] = [
    &protoprof_model_pprof::SCHEMA,
    &protoprof_model_otlp::SCHEMA,
    &protoprof_model_relay::SCHEMA,
];

#[test]
fn models_match_the_shared_schema_facts() {
    let Some(dir) = schemas_dir() else { return };
    let mut expected = Facts::new();
    // Later documents win where two describe the same definition: common/v1
    // grew in v1.10.0, and otlp-v1development.md has it as it is now.
    for name in [
        "pprof.md",
        "otlp-v1experimental.md",
        "collector.md",
        "relay.md",
        "otlp-v1development.md",
    ] {
        let text =
            std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        expected.extend(parse_facts_markdown(&text));
    }
    // 5 files of facts list 13 .proto files and over 50 definitions.
    assert!(expected.keys().filter(|k| k.starts_with("file ")).count() >= 13);
    assert!(
        expected.len() > 50,
        "the facts parser found too little: {}",
        expected.len()
    );

    let actual = facts_of(&ALL);
    let mut problems = Vec::new();
    for (key, want) in &expected {
        match actual.get(key) {
            None => problems.push(format!("{key}: in the facts, not in the models")),
            Some(got) if got != want => problems.push(format!(
                "{key}: differs\n  facts:  {want:?}\n  models: {got:?}"
            )),
            Some(_) => {}
        }
    }
    for key in actual.keys().filter(|k| !expected.contains_key(*k)) {
        problems.push(format!("{key}: in the models, not in the facts"));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn reference_table_matches_references_md() {
    let Some(dir) = schemas_dir() else { return };
    let text = std::fs::read_to_string(dir.join("references.md")).expect("references.md");
    for (schema, heading, package) in [
        (
            &protoprof_model_pprof::SCHEMA,
            "pprof",
            "perftools.profiles",
        ),
        (
            &protoprof_model_otlp::SCHEMA,
            "OTLP v1experimental",
            "opentelemetry.proto.profiles.v1experimental",
        ),
        (
            &protoprof_model_otlp::SCHEMA,
            "OTLP v1development",
            "opentelemetry.proto.profiles.v1development",
        ),
    ] {
        let mut expected = parse_reference_markdown(&text, heading, schema, package);
        // "a slice, see below": the reading references.md prescribes.
        let slice = (
            format!("{package}.Sample"),
            "locations_start_index".to_string(),
        );
        if let Some(entry) = expected.get_mut(&slice) {
            entry.1 = "location_indices".to_string();
            let generated = schema
                .references_of(&slice.0)
                .find(|r| r.field == "locations_start_index")
                .expect("the slice start is in the reference table");
            assert_eq!(generated.slice_length, Some("locations_length"));
            assert_eq!(
                generated.table_when_empty.map(|t| t.field),
                Some("location")
            );
        }
        assert!(
            expected.len() >= 15,
            "{heading}: parsed only {} references",
            expected.len()
        );
        let mut generated = references_of(schema);
        generated.retain(|(message, _), _| message.starts_with(&format!("{package}.")));
        assert_eq!(generated, expected, "{heading}");
    }
}

#[test]
fn zero_and_empty_table_meanings() {
    let none_on_zero: Vec<_> = ALL
        .iter()
        .flat_map(|s| s.references)
        .filter(|r| r.zero_is_none)
        .map(|r| format!("{}.{}", r.message, r.field))
        .collect();
    // references.md: only Location.mapping_id has "0 means no mapping".
    assert_eq!(none_on_zero, ["perftools.profiles.Location.mapping_id"]);
    let none_on_empty: Vec<_> = ALL
        .iter()
        .flat_map(|s| s.references)
        .filter(|r| r.empty_table_is_none)
        .map(|r| format!("{}.{}", r.message, r.field))
        .collect();
    assert_eq!(
        none_on_empty,
        [
            "opentelemetry.proto.profiles.v1experimental.Sample.link",
            "opentelemetry.proto.profiles.v1experimental.Location.mapping_index",
        ]
    );
    assert!(ALL
        .iter()
        .flat_map(|s| s.references)
        .all(|r| r.kind == RefKind::Position || r.table.field != "string_table"));
}

#[test]
fn schema_summary_pprof() {
    snapshot("schema_summary_pprof", &protoprof_model_pprof::SCHEMA);
}

#[test]
fn schema_summary_otlp() {
    snapshot("schema_summary_otlp", &protoprof_model_otlp::SCHEMA);
}

#[test]
fn schema_summary_relay() {
    snapshot("schema_summary_relay", &protoprof_model_relay::SCHEMA);
}

/// Any schema change shows up in review as a change of this snapshot.
fn snapshot(name: &str, schema: &Schema) {
    let summary = format!(
        "{}\nreferences:\n{}",
        render(&facts_of(&[schema])),
        render_references(schema)
    );
    insta::assert_snapshot!(name, summary);
}
