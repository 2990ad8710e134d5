//! OTLP/JSON rules checked by hand, and snapshots of the JSON and text forms
//! of small fixtures.

use protobuf::{Message, MessageField};
use protoprof_codec::{json, registry, text, CodecError};
use protoprof_model_otlp::opentelemetry::proto::common::v1::{any_value, AnyValue, KeyValue};
use protoprof_model_otlp::opentelemetry::proto::profiles::v1experimental as otlp;
use protoprof_model_pprof::perftools::profiles as pprof;

fn container() -> otlp::ProfileContainer {
    otlp::ProfileContainer {
        profile_id: (0x10..0x20).collect(),
        start_time_unix_nano: 1_700_000_000_000_000_000,
        end_time_unix_nano: 1_700_000_010_000_000_000,
        attributes: vec![KeyValue {
            key: "thread.name".into(),
            value: MessageField::some(AnyValue {
                value: Some(any_value::Value::StringValue("worker-3".into())),
                ..Default::default()
            }),
            ..Default::default()
        }],
        original_payload_format: "jfr".into(),
        original_payload: vec![0xca, 0xfe],
        profile: MessageField::some(otlp::Profile {
            sample_type: vec![otlp::ValueType {
                type_: 1,
                unit: 2,
                aggregation_temporality:
                    otlp::AggregationTemporality::AGGREGATION_TEMPORALITY_DELTA.into(),
                ..Default::default()
            }],
            sample: vec![otlp::Sample {
                locations_length: 1,
                value: vec![-7],
                link: 0,
                ..Default::default()
            }],
            location: vec![otlp::Location {
                address: 0x401000,
                ..Default::default()
            }],
            location_indices: vec![0],
            link_table: vec![otlp::Link {
                trace_id: vec![0xab; 16],
                span_id: vec![0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08],
                ..Default::default()
            }],
            string_table: vec!["".into(), "cpu".into(), "nanoseconds".into()],
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn parse<M: Message + protobuf::MessageFull>(text: &str) -> Result<M, CodecError> {
    let descriptor = M::descriptor();
    let message = json::parse(text, &descriptor, 100)?;
    Ok(M::parse_from_bytes(&message.write_to_bytes_dyn().unwrap()).unwrap())
}

#[test]
fn ids_are_hex_and_other_bytes_base64() {
    let printed = json::print(&container(), false);
    assert!(
        printed.contains(r#""profileId":"101112131415161718191a1b1c1d1e1f""#),
        "{printed}"
    );
    assert!(
        printed.contains(r#""traceId":"abababababababababababababababab""#),
        "{printed}"
    );
    assert!(
        printed.contains(r#""spanId":"0102030405060708""#),
        "{printed}"
    );
    assert!(printed.contains(r#""originalPayload":"yv4=""#), "{printed}");
}

#[test]
fn int64_as_strings_enums_as_integers_camel_case_keys() {
    let printed = json::print(&container(), false);
    assert!(
        printed.contains(r#""startTimeUnixNano":"1700000000000000000""#),
        "{printed}"
    );
    assert!(printed.contains(r#""value":["-7"]"#), "{printed}");
    assert!(
        printed.contains(r#""aggregationTemporality":1"#),
        "{printed}"
    );
    assert!(printed.contains(r#""locationsLength":"1""#), "{printed}");
    assert!(!printed.contains("start_time"), "{printed}");
}

#[test]
fn input_accepts_numbers_or_strings_names_and_both_key_spellings() {
    let a: otlp::ValueType = parse(r#"{"type": 1, "unit": "2", "aggregationTemporality": "AGGREGATION_TEMPORALITY_CUMULATIVE"}"#).unwrap();
    let b: otlp::ValueType =
        parse(r#"{"type": "1", "unit": 2, "aggregation_temporality": 2}"#).unwrap();
    assert_eq!(a, b);
    assert_eq!(a.aggregation_temporality.value(), 2);
    let big: otlp::ProfileContainer = parse(
        r#"{"startTimeUnixNano": 18446744073709551615, "endTimeUnixNano": "18446744073709551615"}"#,
    )
    .unwrap();
    assert_eq!(big.start_time_unix_nano, u64::MAX);
    assert_eq!(big.end_time_unix_nano, u64::MAX);
}

#[test]
fn unknown_keys_and_nulls_are_ignored_bom_is_skipped() {
    let c: otlp::ProfileContainer =
        parse("\u{feff}{\"futureField\": {\"x\": 1}, \"profileId\": \"00000000000000000000000000000001\", \"profile\": null}").unwrap();
    assert_eq!(
        c.profile_id,
        [0u8; 15].iter().copied().chain([1]).collect::<Vec<u8>>()
    );
    assert!(c.profile.is_none());
}

#[test]
fn bad_values_are_reported_with_their_path() {
    let error = parse::<otlp::ProfilesData>(
        r#"{"resourceProfiles": [{"scopeProfiles": [{"profiles": [{"profileId": "not-hex"}]}]}]}"#,
    )
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "JSON at resourceProfiles[0].scopeProfiles[0].profiles[0].profileId: expected hex digits, found \"not-hex\""
    );
    let error = parse::<otlp::ValueType>(r#"{"type": 1.5}"#).unwrap_err();
    assert!(error.to_string().contains("expected an integer"), "{error}");
    let error = parse::<otlp::ValueType>(r#"{"aggregationTemporality": "SOMETIMES"}"#).unwrap_err();
    assert!(error.to_string().contains("is not a value of"), "{error}");
    let error = parse::<otlp::ValueType>("{\"type\": 1,\n \"unit\": }").unwrap_err();
    assert!(
        matches!(error, CodecError::Json { line: 2, .. }),
        "{error:?}"
    );
}

#[test]
fn snapshots_of_json_and_text() {
    insta::assert_snapshot!("otlp_container_json", json::print(&container(), true));
    insta::assert_snapshot!("otlp_container_text", text::print(&container()));
    let mut profile = pprof::Profile {
        sample_type: vec![pprof::ValueType {
            type_: 1,
            unit: 2,
            ..Default::default()
        }],
        sample: vec![pprof::Sample {
            location_id: vec![1],
            value: vec![42],
            label: vec![pprof::Label {
                key: 3,
                str: 4,
                ..Default::default()
            }],
            ..Default::default()
        }],
        location: vec![pprof::Location {
            id: 1,
            line: vec![pprof::Line {
                function_id: 1,
                line: 42,
                ..Default::default()
            }],
            ..Default::default()
        }],
        function: vec![pprof::Function {
            id: 1,
            name: 5,
            ..Default::default()
        }],
        string_table: [
            "",
            "samples",
            "count",
            "thread",
            "worker-3",
            "main.compute\t\"quoted\"",
        ]
        .map(String::from)
        .to_vec(),
        ..Default::default()
    };
    profile
        .special_fields
        .mut_unknown_fields()
        .add_varint(100, 7);
    profile
        .special_fields
        .mut_unknown_fields()
        .add_length_delimited(101, b"\x00raw".to_vec());
    let printed = text::print(&profile);
    insta::assert_snapshot!("pprof_text_with_unknown_fields", printed);
    let descriptor = registry::message_descriptor("perftools.profiles.Profile").unwrap();
    let parsed = text::parse(&printed, &descriptor, 100).unwrap();
    assert_eq!(
        parsed.write_to_bytes_dyn().unwrap(),
        profile.write_to_bytes().unwrap()
    );
}

#[test]
fn text_errors_name_line_and_column() {
    let descriptor = registry::message_descriptor("perftools.profiles.Profile").unwrap();
    let error = text::parse(
        "sample_type {\n  type: 1\n  colour: 2\n}\n",
        &descriptor,
        100,
    )
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "text format at line 3 column 3: perftools.profiles.ValueType has no field `colour`"
    );
    let error = text::parse("time_nanos: \"soon\"", &descriptor, 100).unwrap_err();
    assert!(error.to_string().contains("line 1 column 13"), "{error}");
}
