//! For every rule of the catalogue, a fixture that breaks exactly that rule
//! (code, severity and path asserted) next to a valid twin that passes.

mod fixtures;

use std::collections::BTreeSet;

use protobuf::{Message, MessageField};
use protoprof_model_otlp::opentelemetry::proto::profiles::v1development as dev;
use protoprof_model_otlp::opentelemetry::proto::profiles::v1experimental as otlp;
use protoprof_model_pprof::perftools::profiles as pprof;
use protoprof_model_relay::envoy::service::discovery::v3 as xds;
use protoprof_model_relay::google::rpc::Status;
use protoprof_validate::{rules, validate_message, validate_pprof, Options, Report, Severity};

/// A rule, how to break it from a valid fixture, and the path it must name.
struct Case {
    code: &'static str,
    path: &'static str,
    broken: Box<dyn protobuf::MessageDyn>,
}

fn pprof_case(
    code: &'static str,
    path: &'static str,
    edit: impl FnOnce(&mut pprof::Profile),
) -> Case {
    let mut p = fixtures::pprof();
    edit(&mut p);
    Case {
        code,
        path,
        broken: Box::new(p),
    }
}

fn otlp_case(
    code: &'static str,
    path: &'static str,
    edit: impl FnOnce(&mut otlp::ProfilesData),
) -> Case {
    let mut d = fixtures::otlp();
    edit(&mut d);
    Case {
        code,
        path,
        broken: Box::new(d),
    }
}

fn cases() -> Vec<Case> {
    let mut cases = pprof_cases();
    cases.extend(otlp_profile_cases());
    cases.extend(otlp_container_cases());
    cases.extend(relay_cases());
    cases.extend(development_cases());
    cases
}

fn dev_case(
    code: &'static str,
    path: &'static str,
    edit: impl FnOnce(&mut dev::ProfilesData),
) -> Case {
    let mut d = fixtures::development();
    edit(&mut d);
    Case {
        code,
        path,
        broken: Box::new(d),
    }
}

fn development_cases() -> Vec<Case> {
    use fixtures::{dictionary_of as dict, profile_of as prof};
    macro_rules! profile {
        ($rest:literal) => {
            concat!("resource_profiles[0].scope_profiles[0].profiles[0]", $rest)
        };
    }
    macro_rules! sample {
        ($rest:literal) => {
            concat!(
                "resource_profiles[0].scope_profiles[0].profiles[0].samples[0]",
                $rest
            )
        };
    }
    vec![
        dev_case("OTLPDEV-EMPTY-001", "resource_profiles", |d| {
            d.resource_profiles.clear()
        }),
        dev_case("OTLPDEV-DICT-001", "dictionary", |d| d.dictionary.clear()),
        dev_case("OTLPDEV-STR-001", "dictionary.string_table[0]", |d| {
            dict(d).string_table[0] = "x".into()
        }),
        dev_case("OTLPDEV-ZERO-001", "dictionary.function_table[0]", |d| {
            dict(d).function_table[0].start_line = 5
        }),
        dev_case("OTLPDEV-REF-001", sample!(".stack_index"), |d| {
            prof(d).samples[0].stack_index = 9
        }),
        dev_case("OTLPDEV-REF-002", sample!(".stack_index"), |d| {
            prof(d).samples[0].stack_index = -1
        }),
        dev_case("OTLPDEV-ATTR-001", sample!(".attribute_indices[1]"), |d| {
            prof(d).samples[0].attribute_indices = vec![1, 2]
        }),
        dev_case("OTLPDEV-SAMPLE-001", sample!(""), |d| {
            prof(d).samples[0].values.clear()
        }),
        dev_case(
            "OTLPDEV-SAMPLE-002",
            sample!(".timestamps_unix_nano"),
            |d| prof(d).samples[0].timestamps_unix_nano = vec![fixtures::TIME; 2],
        ),
        dev_case("OTLPDEV-SAMPLE-003", profile!(".samples"), |d| {
            let mut timed = prof(d).samples[0].clone();
            timed.values.clear();
            timed.timestamps_unix_nano = vec![fixtures::TIME];
            prof(d).samples.push(timed);
        }),
        dev_case(
            "OTLPDEV-TIME-001",
            sample!(".timestamps_unix_nano[0]"),
            |d| prof(d).samples[0].timestamps_unix_nano = vec![1],
        ),
        dev_case("OTLPDEV-PID-001", profile!(".profile_id"), |d| {
            prof(d).profile_id = vec![0; 16]
        }),
        dev_case(
            "OTLPDEV-PAY-001",
            profile!(".original_payload_format"),
            |d| prof(d).original_payload = vec![1],
        ),
        dev_case("OTLPDEV-FUNC-001", "dictionary.function_table[1]", |d| {
            let f = &mut dict(d).function_table[1];
            f.name_strindex = 0;
            f.filename_strindex = 0;
        }),
        dev_case(
            "OTLPDEV-MAP-001",
            "dictionary.mapping_table[1].memory_limit",
            |d| dict(d).mapping_table[1].memory_limit = 0x1000,
        ),
        dev_case(
            "OTLPDEV-LINE-001",
            "dictionary.location_table[1].lines[0].line",
            |d| dict(d).location_table[1].lines[0].line = -3,
        ),
        dev_case(
            "OTLPDEV-LINK-001",
            "dictionary.link_table[1].trace_id",
            |d| dict(d).link_table[1].trace_id = vec![1; 8],
        ),
        dev_case(
            "OTLPDEV-LINK-002",
            "dictionary.link_table[1].span_id",
            |d| dict(d).link_table[1].span_id = vec![2; 4],
        ),
        dev_case("OTLPDEV-DUP-001", "dictionary.function_table[2]", |d| {
            let f = dict(d).function_table[1].clone();
            dict(d).function_table.push(f);
            let last = dict(d).function_table.len() as i32 - 1;
            // Both referenced: an inlined frame of the same function.
            let mut line = dict(d).location_table[1].lines[0].clone();
            line.function_index = last;
            dict(d).location_table[1].lines.push(line);
        }),
        dev_case("OTLPDEV-ORPHAN-001", "dictionary.string_table[8]", |d| {
            dict(d).string_table.push("nobody's".into());
        }),
        dev_case("OTLPDEV-UNK-001", profile!(""), |d| {
            prof(d)
                .special_fields
                .mut_unknown_fields()
                .add_varint(99, 1)
        }),
    ]
}

fn pprof_cases() -> Vec<Case> {
    vec![
        pprof_case("PPROF-STR-001", "string_table", |p| {
            // No string table, and nothing pointing past index 0 into it.
            *p = pprof::Profile {
                sample_type: vec![pprof::ValueType::default()],
                ..Default::default()
            };
        }),
        pprof_case("PPROF-STR-002", "string_table[0]", |p| {
            p.string_table[0] = "x".into()
        }),
        pprof_case("PPROF-REF-001", "function[0].name", |p| {
            p.function[0].name = 1000
        }),
        pprof_case("PPROF-REF-002", "sample[0].label[0].str", |p| {
            p.sample[0].label[0].str = -1
        }),
        pprof_case("PPROF-REF-003", "sample[0].location_id[1]", |p| {
            p.sample[0].location_id[1] = 99
        }),
        pprof_case("PPROF-REF-004", "location[0].line[0].function_id", |p| {
            p.location[0].line[0].function_id = 0
        }),
        pprof_case("PPROF-ID-001", "mapping[1].id", |p| {
            p.mapping.push(pprof::Mapping::default())
        }),
        pprof_case("PPROF-ID-002", "function[1].id", |p| {
            let twin = p.function[0].clone();
            p.function.push(twin);
        }),
        pprof_case("PPROF-SAMPLE-001", "sample[0]", |p| {
            p.sample[0].value = vec![1]
        }),
        pprof_case("PPROF-SAMPLE-002", "sample_type", |p| {
            p.sample_type.clear();
            p.period_type = MessageField::none();
            p.default_sample_type = 0;
        }),
        pprof_case("PPROF-LABEL-001", "sample[0].label[0]", |p| {
            p.sample[0].label[0].key = 0
        }),
        pprof_case("PPROF-LABEL-002", "sample[0].label[0]", |p| {
            p.sample[0].label[0].num = 5
        }),
        pprof_case("PPROF-LABEL-003", "sample[0].label[0]", |p| {
            p.sample[0].label[0].num_unit = 10
        }),
        pprof_case("PPROF-META-001", "period_type", |p| {
            p.period_type.as_mut().unwrap().unit = 2
        }),
        pprof_case("PPROF-META-002", "default_sample_type", |p| {
            p.default_sample_type = 5
        }),
        pprof_case("PPROF-META-003", "time_nanos", |p| p.time_nanos = -1),
        pprof_case("PPROF-META-004", "duration_nanos", |p| {
            p.duration_nanos = -1
        }),
        pprof_case("PPROF-LOC-001", "location[1].address", |p| {
            p.location[1].address = 0x20000
        }),
        pprof_case("PPROF-FRAMES-001", "drop_frames", |p| {
            p.string_table[11] = "runtime(".into()
        }),
        pprof_case("PPROF-UNK-001", "function[0]", |p| {
            p.function[0]
                .special_fields
                .mut_unknown_fields()
                .add_varint(99, 1)
        }),
    ]
}

fn otlp_profile_cases() -> Vec<Case> {
    use fixtures::profile;
    vec![
        otlp_case("OTLP-STR-001", "resource_profiles[0].scope_profiles[0].profiles[0].profile.string_table", |d| {
            *profile(d) = otlp::Profile { sample_type: fixtures::otlp_profile().sample_type, ..Default::default() };
            profile(d).period_type = fixtures::otlp_profile().period_type;
        }),
        otlp_case("OTLP-STR-002", "resource_profiles[0].scope_profiles[0].profiles[0].profile.string_table[0]", |d| {
            profile(d).string_table[0] = "x".into()
        }),
        otlp_case("OTLP-REF-001", "resource_profiles[0].scope_profiles[0].profiles[0].profile.function[0].name", |d| {
            profile(d).function[0].name = 1000
        }),
        otlp_case("OTLP-REF-002", "resource_profiles[0].scope_profiles[0].profiles[0].profile.location_indices[1]", |d| {
            profile(d).location_indices[1] = -1
        }),
        otlp_case("OTLP-REF-003", "resource_profiles[0].scope_profiles[0].profiles[0].profile.sample[0].locations_start_index", |d| {
            profile(d).sample[0].locations_length = 5
        }),
        otlp_case("OTLP-ID-001", "resource_profiles[0].scope_profiles[0].profiles[0].profile.location[1].id", |d| {
            profile(d).location[0].id = 7
        }),
        otlp_case("OTLP-ID-002", "resource_profiles[0].scope_profiles[0].profiles[0].profile.location[1].id", |d| {
            profile(d).location[0].id = 7;
            profile(d).location[1].id = 7;
        }),
        otlp_case("OTLP-SAMPLE-001", "resource_profiles[0].scope_profiles[0].profiles[0].profile.sample[0]", |d| {
            profile(d).sample[0].value = vec![1, 2, 3]
        }),
        otlp_case("OTLP-SAMPLE-002", "resource_profiles[0].scope_profiles[0].profiles[0].profile.sample_type", |d| {
            profile(d).sample_type.clear();
            profile(d).period_type = MessageField::none();
            profile(d).default_sample_type = 0;
        }),
        otlp_case("OTLP-LABEL-001", "resource_profiles[0].scope_profiles[0].profiles[0].profile.sample[0].label[0]", |d| {
            profile(d).sample[0].label.push(otlp::Label { str: 5, ..Default::default() })
        }),
        otlp_case("OTLP-LABEL-002", "resource_profiles[0].scope_profiles[0].profiles[0].profile.sample[0].label[0]", |d| {
            profile(d).sample[0].label.push(otlp::Label { key: 9, str: 5, num: 1, ..Default::default() })
        }),
        otlp_case("OTLP-LABEL-003", "resource_profiles[0].scope_profiles[0].profiles[0].profile.sample[0].label[0]", |d| {
            profile(d).sample[0].label.push(otlp::Label { key: 9, str: 5, num_unit: 10, ..Default::default() })
        }),
        otlp_case("OTLP-META-001", "resource_profiles[0].scope_profiles[0].profiles[0].profile.period_type", |d| {
            profile(d).period_type.as_mut().unwrap().unit = 2
        }),
        otlp_case("OTLP-META-002", "resource_profiles[0].scope_profiles[0].profiles[0].profile.default_sample_type", |d| {
            profile(d).default_sample_type = 5
        }),
        otlp_case("OTLP-META-003", "resource_profiles[0].scope_profiles[0].profiles[0].profile.time_nanos", |d| {
            profile(d).time_nanos = -5
        }),
        otlp_case("OTLP-META-004", "resource_profiles[0].scope_profiles[0].profiles[0].profile.duration_nanos", |d| {
            profile(d).duration_nanos = -5
        }),
        otlp_case("OTLP-FRAMES-001", "resource_profiles[0].scope_profiles[0].profiles[0].profile.keep_frames", |d| {
            profile(d).string_table[12] = "[".into()
        }),
        otlp_case("OTLP-UNK-001", "resource_profiles[0]", |d| {
            d.resource_profiles[0].special_fields.mut_unknown_fields().add_length_delimited(1000, b"x".to_vec())
        }),
    ]
}

fn otlp_container_cases() -> Vec<Case> {
    use fixtures::{container, profile};
    vec![
        otlp_case("OTLP-PID-001", "resource_profiles[0].scope_profiles[0].profiles[0].profile_id", |d| {
            container(d).profile_id = vec![1, 2, 3]
        }),
        otlp_case("OTLP-PID-002", "resource_profiles[0].scope_profiles[0].profiles[0].profile_id", |d| {
            container(d).profile_id = vec![0; 16]
        }),
        otlp_case("OTLP-PROF-001", "resource_profiles[0].scope_profiles[0].profiles[0].profile", |d| {
            container(d).profile = MessageField::none()
        }),
        otlp_case("OTLP-TIME-001", "resource_profiles[0].scope_profiles[0].profiles[0].end_time_unix_nano", |d| {
            container(d).end_time_unix_nano = 50;
            profile(d).sample[0].timestamps_unix_nano.clear();
        }),
        otlp_case("OTLP-TIME-002", "resource_profiles[0].scope_profiles[0].profiles[0].profile.sample[0].timestamps_unix_nano[0]", |d| {
            profile(d).sample[0].timestamps_unix_nano[0] = 500
        }),
        otlp_case("OTLP-PAY-001", "resource_profiles[0].scope_profiles[0].profiles[0].original_payload_format", |d| {
            container(d).original_payload = b"JFR.".to_vec()
        }),
        otlp_case("OTLP-PAY-002", "resource_profiles[0].scope_profiles[0].profiles[0].original_payload", |d| {
            container(d).original_payload = vec![0x1f, 0x8b];
            container(d).original_payload_format = "pprof".into();
        }),
        otlp_case("OTLP-TEMP-001", "resource_profiles[0].scope_profiles[0].profiles[0].profile.sample_type[1].aggregation_temporality", |d| {
            profile(d).sample_type[1].aggregation_temporality = protobuf::EnumOrUnknown::from_i32(0)
        }),
        otlp_case("OTLP-TEMP-002", "resource_profiles[0].scope_profiles[0].profiles[0].profile.period_type.aggregation_temporality", |d| {
            profile(d).period_type.as_mut().unwrap().aggregation_temporality = protobuf::EnumOrUnknown::from_i32(7)
        }),
        otlp_case("OTLP-BUILD-001", "resource_profiles[0].scope_profiles[0].profiles[0].profile.mapping[0].build_id_kind", |d| {
            profile(d).mapping[0].build_id_kind = protobuf::EnumOrUnknown::from_i32(5)
        }),
        otlp_case("OTLP-LINK-001", "resource_profiles[0].scope_profiles[0].profiles[0].profile.link_table[0].trace_id", |d| {
            profile(d).link_table[0].trace_id = vec![1, 2, 3]
        }),
        otlp_case("OTLP-LINK-002", "resource_profiles[0].scope_profiles[0].profiles[0].profile.link_table[0].span_id", |d| {
            profile(d).link_table[0].span_id = vec![0; 8]
        }),
        otlp_case("OTLP-ATTR-001", "resource_profiles[0].scope_profiles[0].profiles[0].profile.sample[0].attributes[1]", |d| {
            profile(d).sample[0].attributes = vec![0, 0]
        }),
        otlp_case("OTLP-ATTR-002", "resource_profiles[0].scope_profiles[0].profiles[0].profile.attribute_units[0].attribute_key", |d| {
            profile(d).attribute_units[0].attribute_key = 9
        }),
        otlp_case("OTLP-ATTR-003", "resource_profiles[0].resource.dropped_attributes_count", |d| {
            d.resource_profiles[0].resource.as_mut().unwrap().dropped_attributes_count = 2
        }),
    ]
}

/// `any` in an `envoy.service.discovery.v3.Resource` wrapper named `name`.
fn wrapped(
    any: protobuf::well_known_types::any::Any,
    name: &str,
) -> protobuf::well_known_types::any::Any {
    protobuf::well_known_types::any::Any::pack(&xds::Resource {
        name: name.into(),
        resource: MessageField::some(any),
        ..Default::default()
    })
    .unwrap()
}

#[test]
fn a_wrapped_resource_of_the_response_type_is_valid() {
    let response = xds::DiscoveryResponse {
        resources: vec![wrapped(fixtures::control_plane(), "a")],
        ..fixtures::discovery_response()
    };
    let report = validate_message(&response, &Options::default()).unwrap();
    assert!(report.diagnostics.is_empty(), "{}", report.render_human());
}

fn relay_cases() -> Vec<Case> {
    vec![
        Case {
            code: "RELAY-TYPE-001",
            path: "resources[0].type_url",
            broken: Box::new(xds::DiscoveryResponse {
                type_url: "type.googleapis.com/other".into(),
                ..fixtures::discovery_response()
            }),
        },
        Case {
            code: "RELAY-TYPE-001",
            path: "resources[0].value.resource.type_url",
            broken: Box::new(xds::DiscoveryResponse {
                resources: vec![wrapped(fixtures::control_plane(), "a")],
                type_url: "type.googleapis.com/other".into(),
                ..fixtures::discovery_response()
            }),
        },
        Case {
            code: "RELAY-WRAP-001",
            path: "resources[0].value",
            broken: Box::new(xds::DiscoveryResponse {
                resources: vec![protobuf::well_known_types::any::Any {
                    type_url: "type.googleapis.com/envoy.service.discovery.v3.Resource".into(),
                    value: vec![0x12, 0xff],
                    ..Default::default()
                }],
                ..fixtures::discovery_response()
            }),
        },
        Case {
            code: "RELAY-NAME-001",
            path: "resources[0].name",
            broken: {
                let mut r = fixtures::delta_response();
                r.resources[0].name.clear();
                Box::new(r)
            },
        },
        Case {
            code: "RELAY-NONCE-001",
            path: "nonce",
            broken: Box::new(xds::DeltaDiscoveryResponse {
                nonce: String::new(),
                ..fixtures::delta_response()
            }),
        },
        Case {
            code: "RELAY-NACK-001",
            path: "response_nonce",
            broken: Box::new(xds::DiscoveryRequest {
                version_info: "1".into(),
                error_detail: MessageField::some(Status {
                    code: 3,
                    message: "bad".into(),
                    ..Default::default()
                }),
                ..Default::default()
            }),
        },
        Case {
            code: "RELAY-UNK-001",
            path: "",
            broken: {
                let mut r = fixtures::discovery_response();
                r.special_fields.mut_unknown_fields().add_varint(77, 1);
                Box::new(r)
            },
        },
    ]
}

fn validate(message: &dyn protobuf::MessageDyn) -> Report {
    validate_message(message, &Options::default()).expect("a type with rules")
}

/// With the optional checks on (`--strict`).
fn validate_strict(message: &dyn protobuf::MessageDyn) -> Report {
    let strict = Options {
        duplicates_and_orphans: true,
        ..Default::default()
    };
    validate_message(message, &strict).expect("a type with rules")
}

/// The rules only `--strict` checks.
const STRICT_ONLY: [&str; 2] = ["OTLPDEV-DUP-001", "OTLPDEV-ORPHAN-001"];

#[test]
fn valid_twins_pass_clean() {
    let twins: Vec<Box<dyn protobuf::MessageDyn>> = vec![
        Box::new(fixtures::pprof()),
        Box::new(fixtures::otlp()),
        Box::new(fixtures::discovery_response()),
        Box::new(fixtures::delta_response()),
        Box::new(xds::DiscoveryRequest {
            response_nonce: "n1".into(),
            ..Default::default()
        }),
        Box::new(xds::DeltaDiscoveryRequest::default()),
        Box::new(fixtures::development()),
    ];
    for twin in twins {
        for report in [validate(&*twin), validate_strict(&*twin)] {
            assert!(report.diagnostics.is_empty(), "{}", report.render_human());
        }
    }
}

#[test]
fn each_fixture_breaks_exactly_its_rule() {
    for case in cases() {
        let report = match STRICT_ONLY.contains(&case.code) {
            true => validate_strict(&*case.broken),
            false => validate(&*case.broken),
        };
        let codes: BTreeSet<&str> = report.counts.iter().map(|c| c.code).collect();
        assert_eq!(
            codes,
            BTreeSet::from([case.code]),
            "{}:\n{}",
            case.code,
            report.render_human()
        );
        let d = &report.diagnostics[0];
        let rule = rules::by_code(case.code).unwrap();
        assert_eq!(d.severity, rule.severity, "{}", case.code);
        assert_eq!(d.path, case.path, "{}", case.code);
        assert_eq!(report.is_valid(), rule.severity == Severity::Warning);
    }
}

/// Rules reported of what the decoder dropped, not found in a message
/// (`report_dropped_input`); `dropped_input_is_an_error` tests them.
const INPUT_RULES: [&str; 1] = ["JSON-KEY-001"];

#[test]
fn every_rule_has_a_case() {
    let tested: BTreeSet<&str> = cases().iter().map(|c| c.code).collect();
    let all: BTreeSet<&str> = rules::ALL
        .iter()
        .map(|r| r.code)
        .filter(|code| !INPUT_RULES.contains(code))
        .collect();
    assert_eq!(tested, all);
}

#[test]
fn dropped_input_is_an_error() {
    let mut report = validate(&fixtures::pprof());
    assert!(report.is_valid());
    let options = protoprof_validate::Options {
        max_per_rule: 1,
        ..Default::default()
    };
    let dropped = [
        "profiles[0].bogus".to_string(),
        "profiles[1].bogus".to_string(),
    ];
    protoprof_validate::report_dropped_input(&mut report, &dropped, &options);
    assert!(!report.is_valid());
    assert_eq!((report.errors, report.count("JSON-KEY-001")), (2, 2));
    let shown: Vec<&str> = report.diagnostics.iter().map(|d| d.path.as_str()).collect();
    assert_eq!(
        shown,
        ["profiles[0].bogus"],
        "one shown, as max_per_rule says"
    );
}

#[test]
fn message_explains_the_limit() {
    let mut p = fixtures::pprof();
    p.sample[0].location_id[1] = 4817;
    let report = validate(&p);
    assert_eq!(
        report.diagnostics[0].message,
        "no entry of location has id 4817"
    );
    let mut d = fixtures::otlp();
    fixtures::profile(&mut d).location_indices[0] = 4817;
    let report = validate(&d);
    assert_eq!(
        report.diagnostics[0].message,
        "index 4817 out of range: location has 2 entries"
    );
    assert_eq!(report.diagnostics[0].value.as_deref(), Some("4817"));
}

#[test]
fn caps_count_everything_and_fail_fast_stops() {
    let mut p = fixtures::pprof();
    let sample = p.sample[0].clone();
    p.sample = (0..10_000)
        .map(|_| pprof::Sample {
            location_id: vec![1, 77],
            ..sample.clone()
        })
        .collect();
    let report = validate_message(
        &p,
        &Options {
            max_per_rule: 5,
            fail_fast: false,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(report.count("PPROF-REF-003"), 10_000);
    assert_eq!(report.diagnostics.len(), 5);
    assert!(report
        .render_human()
        .contains("... 9995 more PPROF-REF-003 (error) not shown"));
    let fast = validate_message(
        &p,
        &Options {
            max_per_rule: 5,
            fail_fast: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(fast.errors, 1);
    assert!(fast.stopped_early);
}

/// Large profiles are checked on two threads, each half into its own
/// collector: the report is still the one-thread report. Broken elements
/// sit in both halves of the samples and of the stack table; with a cap of
/// one per rule the first half's is the one shown, and fail-fast stops at
/// the very first.
#[test]
fn large_profiles_report_in_order_across_threads() {
    const N: usize = 120_000;
    let broken = [7, N / 2 - 1, N / 2 + 3, N - 1];
    let mut p = fixtures::pprof();
    let sample = p.sample[0].clone();
    p.sample = (0..N)
        .map(|i| match broken.contains(&i) {
            true => pprof::Sample {
                location_id: vec![1, 77],
                ..sample.clone()
            },
            false => sample.clone(),
        })
        .collect();
    let mut d = fixtures::development();
    let dictionary = d.dictionary.as_mut().unwrap();
    let stack = dictionary.stack_table[1].clone();
    dictionary.stack_table = (0..N)
        .map(|i| match (i, broken.contains(&i)) {
            (0, _) => dev::Stack::default(),
            (_, true) => dev::Stack {
                location_indices: vec![1, 900],
                ..Default::default()
            },
            (_, false) => stack.clone(),
        })
        .collect();
    let profile = &mut d.resource_profiles[0].scope_profiles[0].profiles[0];
    let sample = profile.samples[0].clone();
    profile.samples = (0..N)
        .map(|i| dev::Sample {
            stack_index: if broken.contains(&i) { N as i32 + 5 } else { 1 },
            ..sample.clone()
        })
        .collect();
    let options = |max_per_rule, fail_fast| Options {
        max_per_rule,
        fail_fast,
        ..Default::default()
    };
    for (message, prefix) in [
        (&p as &dyn protobuf::MessageDyn, "sample[7]"),
        (
            &d,
            "resource_profiles[0].scope_profiles[0].profiles[0].samples[7]",
        ),
    ] {
        let all = validate_message(message, &options(20, false)).unwrap();
        let paths: Vec<&str> = all.diagnostics.iter().map(|d| d.path.as_str()).collect();
        assert_eq!(all.errors as usize, paths.len(), "{paths:?}");
        assert!(
            paths.len() >= 4 && paths[0].starts_with(prefix),
            "{paths:?}"
        );
        let at = |i: usize| paths.iter().position(|p| p.contains(&format!("[{i}]")));
        assert!(
            at(7) < at(N / 2 + 3) && at(N / 2 - 1) < at(N - 1),
            "{paths:?}"
        );
        let one = validate_message(message, &options(1, false)).unwrap();
        assert_eq!(one.errors, all.errors);
        assert!(
            one.diagnostics.iter().all(|d| d.path.contains("[7]")),
            "{one:?}"
        );
        let fast = validate_message(message, &options(20, true)).unwrap();
        assert!(fast.stopped_early && fast.errors == 1, "{fast:?}");
        assert!(fast.diagnostics[0].path.starts_with(prefix), "{fast:?}");
    }
}

#[test]
fn reports_render_for_humans_and_machines() {
    let mut p = fixtures::pprof();
    p.sample[0].location_id[0] = 99;
    p.sample[0].value = vec![1];
    p.location[1].address = 0x20000;
    let report = validate(&p);
    insta::assert_snapshot!("pprof_human", report.render_human());
    insta::assert_snapshot!("pprof_json", report.to_json());
    let mut d = fixtures::otlp();
    fixtures::container(&mut d).profile_id = vec![0; 16];
    fixtures::profile(&mut d).sample[0].locations_start_index = 1;
    let report = validate(&d);
    insta::assert_snapshot!("otlp_human", report.render_human());
}

/// Every reference the schema annotates is checked: break each one in turn
/// (the first message of its type gets an out-of-range value) and expect a
/// diagnostic at that field. Proves the generated walkers cover the table.
#[test]
fn every_annotated_reference_is_checked() {
    let pprof_base: Box<dyn protobuf::MessageDyn> = Box::new(fixtures::pprof());
    // The deprecated fields too, so that their references can be broken.
    let mut otlp_profile = fixtures::otlp_profile();
    otlp_profile.sample[0].label.push(otlp::Label {
        key: 9,
        str: 5,
        ..Default::default()
    });
    otlp_profile.sample[0].location_index = vec![0, 1];
    let otlp_base: Box<dyn protobuf::MessageDyn> = Box::new(otlp_profile);
    for (schema, base) in [
        (&protoprof_model_pprof::SCHEMA, pprof_base),
        (&protoprof_model_otlp::SCHEMA, otlp_base),
    ] {
        // v1development's references: the next test.
        for r in schema
            .references
            .iter()
            .filter(|r| !r.message.contains(".v1development."))
        {
            let mut broken = base.clone_box();
            assert!(
                break_first(&mut *broken, r),
                "no {} in the fixture to break {}",
                r.message,
                r.field
            );
            let report = match broken.downcast_ref::<otlp::Profile>() {
                Some(profile) => {
                    let mut data = fixtures::otlp();
                    *fixtures::profile(&mut data) = profile.clone();
                    validate(&data)
                }
                None => validate(&*broken),
            };
            assert!(
                report
                    .diagnostics
                    .iter()
                    .any(|d| d.severity == Severity::Error && d.path.contains(r.field)),
                "{}.{}: not caught:\n{}",
                r.message,
                r.field,
                report.render_human()
            );
        }
    }
}

/// The same for v1development: every index into the dictionary, whether
/// the record sits in the dictionary or in a profile.
#[test]
fn every_annotated_v1development_reference_is_checked() {
    let references: Vec<_> = protoprof_model_otlp::SCHEMA
        .references
        .iter()
        .filter(|r| r.message.contains(".v1development."))
        .collect();
    assert!(references.len() >= 17, "{}", references.len());
    for r in references {
        let mut broken: Box<dyn protobuf::MessageDyn> = Box::new(fixtures::development());
        assert!(
            break_first(&mut *broken, r),
            "no {} in the fixture to break {}",
            r.message,
            r.field
        );
        let report = validate(&*broken);
        assert!(
            report
                .diagnostics
                .iter()
                .any(|d| d.code == "OTLPDEV-REF-001" && d.path.contains(r.field)),
            "{}.{}: not caught:\n{}",
            r.message,
            r.field,
            report.render_human()
        );
    }
}

/// Sets `r.field` of the first message of type `r.message` (depth first) to a
/// value past every table. Returns whether one was found.
fn break_first(m: &mut dyn protobuf::MessageDyn, r: &protoprof_model_meta::FieldRef) -> bool {
    use protobuf::reflect::{ReflectValueBox, ReflectValueRef, RuntimeFieldType, RuntimeType};
    let descriptor = m.descriptor_dyn();
    if descriptor.full_name() == r.message {
        let field = descriptor.field_by_name(r.field).unwrap();
        let huge = |t: &RuntimeType| match t {
            RuntimeType::I64 => ReflectValueBox::I64(1 << 40),
            RuntimeType::U64 => ReflectValueBox::U64(1 << 40),
            RuntimeType::U32 => ReflectValueBox::U32(1 << 30),
            RuntimeType::I32 => ReflectValueBox::I32(1 << 30),
            other => panic!("reference of type {other:?}"),
        };
        match field.runtime_field_type() {
            RuntimeFieldType::Singular(t) => field.set_singular_field(m, huge(&t)),
            RuntimeFieldType::Repeated(t) => field.mut_repeated(m).push(huge(&t)),
            RuntimeFieldType::Map(..) => unreachable!(),
        }
        return true;
    }
    for field in descriptor.fields() {
        match field.runtime_field_type() {
            RuntimeFieldType::Singular(RuntimeType::Message(_))
                if field.has_field(m) && break_first(field.mut_message(m), r) =>
            {
                return true;
            }
            RuntimeFieldType::Repeated(RuntimeType::Message(_)) => {
                let len = field.get_repeated(m).len();
                for i in 0..len {
                    let ReflectValueRef::Message(element) = field.get_repeated(m).get(i) else {
                        unreachable!()
                    };
                    let mut element = element.clone_box();
                    if break_first(&mut *element, r) {
                        field
                            .mut_repeated(m)
                            .set(i, ReflectValueBox::Message(element));
                        return true;
                    }
                }
            }
            _ => {}
        }
    }
    false
}

#[test]
fn encoded_fixtures_are_what_the_codec_would_read() {
    // The fixtures are ordinary messages: they encode and decode unchanged.
    let bytes = fixtures::pprof().write_to_bytes().unwrap();
    assert_eq!(
        pprof::Profile::parse_from_bytes(&bytes).unwrap(),
        fixtures::pprof()
    );
}

/// Samples read one at a time from the codec's view give the report the
/// whole model gives, for every pprof rule's fixture, also when the cap or
/// fail-fast decides which diagnostics are kept.
#[test]
fn the_codec_view_validates_as_the_model_does() {
    use protoprof_codec::{decode_pprof_view, DecodeOptions};
    let capped = Options {
        max_per_rule: 1,
        ..Options::default()
    };
    let fail_fast = Options {
        fail_fast: true,
        ..Options::default()
    };
    let mut cases = cases();
    let mut both_broken = fixtures::pprof();
    both_broken.sample[0].location_id[1] = 99;
    both_broken.location[0].line[0].function_id = 0;
    both_broken.location[0].mapping_id = 77; // a second PPROF-REF-003, after the sample's
    both_broken.sample[0].label[0].str = -1;
    cases.push(Case {
        code: "PPROF-REF-003",
        path: "sample[0].location_id[1]",
        broken: Box::new(both_broken),
    });
    let mut compared = 0;
    for case in cases {
        let Some(profile) = case.broken.downcast_ref::<pprof::Profile>() else {
            continue;
        };
        let bytes = profile.write_to_bytes().unwrap();
        let view = decode_pprof_view(&bytes, &DecodeOptions::default())
            .unwrap()
            .message;
        assert!(view.samples_are_bytes(), "{}", case.code);
        for options in [Options::default(), capped, fail_fast] {
            assert_eq!(
                validate_pprof(&view, &options),
                validate_pprof(profile, &options),
                "{}",
                case.code
            );
        }
        compared += 1;
    }
    assert!(compared >= 15, "{compared} pprof fixtures");
}
