//! The round-trip law over generated profiles, and each documented mapping
//! case on a small fixture.

use protobuf::{Message, MessageField};
use protoprof_model_otlp::opentelemetry::proto::common::v1::{
    any_value::Value, AnyValue, KeyValue,
};
use protoprof_model_otlp::opentelemetry::proto::profiles::v1experimental as otlp;
use protoprof_model_pprof::perftools::profiles as pprof;
use protoprof_pprof_bridge::{
    merge, otlp_to_pprof, otlp_to_pprof_merged, pprof_to_otlp, semantic, ProfileId, ToOtlpOptions,
    NO_MAPPING_ATTRIBUTE,
};
use protoprof_validate::{validate_pprof, validate_profiles_data, Options};

use protoprof_synth::Rng;

const WORDS: [&str; 12] = [
    "main",
    "cpu",
    "bytes",
    "thread",
    "worker",
    "count",
    "x",
    "x",
    "nanoseconds",
    "run",
    "alloc_space",
    "é",
];

/// A valid pprof profile exercising what the bridge must carry: sparse ids,
/// unmapped locations next to mappings, inlined lines, repeated stacks,
/// string and numeric labels (some keys repeated in a sample, some units in
/// conflict), trace links on some or all samples, timestamps, comments,
/// duplicate strings in the table.
fn valid_profile(seed: u64) -> pprof::Profile {
    let mut r = Rng::new(seed);
    let mut strings: Vec<String> = vec![String::new()];
    let (r, strings) = (&mut r, &mut strings);
    let sample_types = 1 + r.below(3);
    let sample_type = (0..sample_types)
        .map(|_| pprof::ValueType {
            type_: word(r, strings),
            unit: word(r, strings),
            ..Default::default()
        })
        .collect();
    let mapping = random_mappings(r, strings);
    let function = random_functions(r, strings);
    let location = random_locations(r, &mapping, &function);
    let links_everywhere = r.chance(2);
    let key_thread = word(r, strings);
    let key_bytes = word(r, strings);
    let (unit_a, unit_b) = (word(r, strings), word(r, strings));
    strings.extend(["trace_id", "span_id", "timestamp", "nanoseconds"].map(String::from));
    let [trace_key, span_key, timestamp_key, ns] =
        [4, 3, 2, 1].map(|back| (strings.len() - back) as i64);
    let keys = LabelKeys {
        thread: key_thread,
        bytes: key_bytes,
        units: [0, unit_a, unit_b],
        trace: trace_key,
        span: span_key,
        timestamp: timestamp_key,
        nanoseconds: ns,
    };
    let sample = (0..r.below(12))
        .map(|_| random_sample(r, strings, &keys, &location, sample_types, links_everywhere))
        .collect();
    let comment = (0..r.below(3)).map(|_| word(r, strings)).collect();
    let period_type = match r.chance(2) {
        true => MessageField::some(pprof::ValueType {
            type_: word(r, strings),
            unit: word(r, strings),
            ..Default::default()
        }),
        false => MessageField::none(),
    };
    pprof::Profile {
        sample_type,
        sample,
        mapping,
        location,
        function,
        drop_frames: if r.chance(3) { word(r, strings) } else { 0 },
        keep_frames: 0,
        time_nanos: r.below(1 << 30) as i64,
        duration_nanos: r.below(1 << 20) as i64,
        period_type,
        period: r.below(100) as i64,
        comment,
        default_sample_type: 0,
        doc_url: if r.chance(3) { word(r, strings) } else { 0 },
        string_table: std::mem::take(strings),
        ..Default::default()
    }
}

/// Appends a random word (sometimes with a trailing `_`, so equal words at
/// two indices happen) and returns its index.
fn word(r: &mut Rng, strings: &mut Vec<String>) -> i64 {
    strings.push(format!(
        "{}{}",
        WORDS[r.below(WORDS.len())],
        if r.chance(3) { "" } else { "_" }
    ));
    strings.len() as i64 - 1
}

fn random_mappings(r: &mut Rng, strings: &mut Vec<String>) -> Vec<pprof::Mapping> {
    (0..r.below(3))
        .map(|i| pprof::Mapping {
            id: 10 * i as u64 + 3,
            memory_start: 0x1000 * (i as u64 + 1),
            memory_limit: 0x1000 * (i as u64 + 2),
            file_offset: r.below(100) as u64,
            filename: word(r, strings),
            build_id: if r.chance(2) { word(r, strings) } else { 0 },
            has_functions: r.chance(2),
            has_inline_frames: r.chance(2),
            ..Default::default()
        })
        .collect()
}

fn random_functions(r: &mut Rng, strings: &mut Vec<String>) -> Vec<pprof::Function> {
    (0..1 + r.below(6))
        .map(|i| pprof::Function {
            id: 100 + 7 * i as u64,
            name: word(r, strings),
            system_name: if r.chance(2) { word(r, strings) } else { 0 },
            filename: word(r, strings),
            start_line: r.below(50) as i64,
            ..Default::default()
        })
        .collect()
}

fn random_locations(
    r: &mut Rng,
    mapping: &[pprof::Mapping],
    function: &[pprof::Function],
) -> Vec<pprof::Location> {
    (0..1 + r.below(8))
        .map(|i| {
            let m = if mapping.is_empty() || r.chance(3) {
                None
            } else {
                Some(&mapping[r.below(mapping.len())])
            };
            pprof::Location {
                id: 1000 + i as u64,
                mapping_id: m.map_or(0, |m| m.id),
                address: m.map_or(0, |m| m.memory_start + r.below(0x1000) as u64),
                line: (0..r.below(3))
                    .map(|_| pprof::Line {
                        function_id: function[r.below(function.len())].id,
                        line: r.below(500) as i64,
                        column: if r.chance(3) { r.below(80) as i64 } else { 0 },
                        ..Default::default()
                    })
                    .collect(),
                is_folded: r.chance(5),
                ..Default::default()
            }
        })
        .collect()
}

/// String-table indices of the label keys and units samples use.
struct LabelKeys {
    thread: i64,
    bytes: i64,
    /// No unit, and two units that conflict.
    units: [i64; 3],
    trace: i64,
    span: i64,
    timestamp: i64,
    nanoseconds: i64,
}

fn random_sample(
    r: &mut Rng,
    strings: &mut Vec<String>,
    keys: &LabelKeys,
    location: &[pprof::Location],
    sample_types: usize,
    links_everywhere: bool,
) -> pprof::Sample {
    let mut label = Vec::new();
    if r.chance(2) {
        label.push(pprof::Label {
            key: keys.thread,
            str: word(r, strings),
            ..Default::default()
        });
    }
    if r.chance(3) {
        // Sometimes twice in one sample (attributes cannot hold that).
        for _ in 0..1 + usize::from(r.chance(4)) {
            let choices = if r.chance(4) { 3 } else { 2 };
            let unit = keys.units[r.below(choices)];
            label.push(pprof::Label {
                key: keys.bytes,
                num: r.below(1 << 20) as i64,
                num_unit: unit,
                ..Default::default()
            });
        }
    }
    if links_everywhere || r.chance(3) {
        let hex = |n: usize, r: &mut Rng| {
            (0..n)
                .map(|_| format!("{:02x}", 1 + r.below(255)))
                .collect::<String>()
        };
        let (t, sp) = (hex(16, r), hex(8, r));
        strings.push(t);
        label.push(pprof::Label {
            key: keys.trace,
            str: strings.len() as i64 - 1,
            ..Default::default()
        });
        strings.push(sp);
        label.push(pprof::Label {
            key: keys.span,
            str: strings.len() as i64 - 1,
            ..Default::default()
        });
    }
    if r.chance(3) {
        label.push(pprof::Label {
            key: keys.timestamp,
            num: 1_700_000_000 + r.below(1000) as i64,
            num_unit: keys.nanoseconds,
            ..Default::default()
        });
    }
    pprof::Sample {
        location_id: (0..r.below(6))
            .map(|_| location[r.below(location.len())].id)
            .collect(),
        value: (0..sample_types)
            .map(|_| r.below(1000) as i64 - 100)
            .collect(),
        label,
        ..Default::default()
    }
}

fn wire<M: Message>(m: &M) -> M {
    M::parse_from_bytes(&m.write_to_bytes().unwrap()).unwrap()
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::default())]

    #[test]
    fn pprof_otlp_pprof_is_semantically_equal(seed in proptest::prelude::any::<u64>()) {
        let input = valid_profile(seed);
        let report = validate_pprof(&input, &Options::default());
        proptest::prop_assert!(report.is_valid(), "generator made an invalid profile:\n{}", report.render_human());
        for keep_labels in [false, true] {
            let options = ToOtlpOptions { keep_labels, ..Default::default() };
            let data = wire(&pprof_to_otlp(&input, &options).unwrap());
            let report = validate_profiles_data(&data, &Options::default());
            proptest::prop_assert!(report.is_valid(), "OTLP invalid:\n{}", report.render_human());
            let back = otlp_to_pprof(&data).unwrap();
            proptest::prop_assert!(back.warnings.is_empty(), "{:?}", back.warnings);
            let result = semantic::pprof_equal(&input, &back.value[0]);
            proptest::prop_assert!(result.is_ok(), "{:?}", result);
            // And once more from OTLP: OTLP -> pprof -> OTLP keeps the data.
            let (container, envelope) = protoprof_pprof_bridge::pprof_to_container(&back.value[0], &ToOtlpOptions::default()).unwrap();
            let again = envelope.wrap(vec![container]);
            if !keep_labels {
                let result = semantic::otlp_equal(&data, &again);
                proptest::prop_assert!(result.is_ok(), "{:?}", result);
            }
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::default())]

    /// The v1development laws on generated profiles: pprof -> v1development
    /// -> pprof is semantically equal, the message validates clean, and
    /// v1development -> pprof -> v1development gives the same message.
    #[test]
    fn pprof_v1development_pprof_is_semantically_equal(seed in proptest::prelude::any::<u64>()) {
        use protoprof_pprof_bridge::{development_to_pprof, pprof_to_development, ToDevelopmentOptions};
        let input = valid_profile(seed);
        let data = wire(&pprof_to_development(&input, &ToDevelopmentOptions::default()).unwrap().value);
        let report = protoprof_validate::validate_development_data(&data, &Options::default());
        proptest::prop_assert!(report.is_valid() && report.warnings == 0, "v1development not clean:\n{}", report.render_human());
        let back = development_to_pprof(&data).unwrap();
        proptest::prop_assert!(back.warnings.is_empty(), "{:?}", back.warnings);
        let result = semantic::pprof_equal(&input, &back.value);
        proptest::prop_assert!(result.is_ok(), "{:?}", result);
        let again = pprof_to_development(&back.value, &ToDevelopmentOptions::default()).unwrap().value;
        proptest::prop_assert!(again == data, "v1development -> pprof -> v1development changed the message");
    }
}

fn base() -> pprof::Profile {
    valid_profile(7)
}

#[test]
fn semantic_equality_notices_differences() {
    let a = base();
    assert_eq!(semantic::pprof_equal(&a, &a.clone()), Ok(()));
    let mut b = a.clone();
    b.sample[0].value[0] += 1;
    assert!(semantic::pprof_equal(&a, &b)
        .unwrap_err()
        .contains("samples differ"));
    let mut c = a.clone();
    let name = c.function[0].name as usize;
    c.string_table[name] = "renamed".into();
    assert!(semantic::pprof_equal(&a, &c).is_err());
    let mut d = a.clone();
    d.time_nanos += 1;
    assert!(semantic::pprof_equal(&a, &d)
        .unwrap_err()
        .starts_with("time_nanos"));
    // Ids and table order do not matter.
    let mut e = a.clone();
    e.function.reverse();
    e.location.reverse();
    assert_eq!(semantic::pprof_equal(&a, &e), Ok(()));
}

#[test]
fn unmapped_locations_next_to_mappings_use_a_marked_placeholder() {
    let mut p = base();
    p.mapping = vec![pprof::Mapping {
        id: 5,
        memory_start: 0x1000,
        memory_limit: 0x2000,
        ..Default::default()
    }];
    for (i, l) in p.location.iter_mut().enumerate() {
        l.mapping_id = if i % 2 == 0 { 5 } else { 0 };
        l.address = if i % 2 == 0 { 0x1100 } else { 0 };
    }
    let data = pprof_to_otlp(&p, &ToOtlpOptions::default()).unwrap();
    let profile = data.resource_profiles[0].scope_profiles[0].profiles[0]
        .profile
        .as_ref()
        .unwrap();
    assert_eq!(profile.mapping.len(), 2);
    let marker = &profile.attribute_table[profile.mapping[1].attributes[0] as usize];
    assert_eq!(marker.key, NO_MAPPING_ATTRIBUTE);
    assert_eq!(profile.location[1].mapping_index, 1);
    let back = otlp_to_pprof(&data).unwrap().value.remove(0);
    assert_eq!(back.mapping.len(), 1);
    assert_eq!(
        back.location.iter().filter(|l| l.mapping_id == 0).count(),
        p.location.iter().filter(|l| l.mapping_id == 0).count()
    );
}

#[test]
fn identical_stacks_share_one_slice_and_ids_are_kept() {
    let mut p = base();
    let stack = vec![p.location[0].id];
    p.sample = (0..3)
        .map(|i| pprof::Sample {
            location_id: stack.clone(),
            value: vec![i; p.sample_type.len()],
            ..Default::default()
        })
        .collect();
    let data = pprof_to_otlp(&p, &ToOtlpOptions::default()).unwrap();
    let profile = data.resource_profiles[0].scope_profiles[0].profiles[0]
        .profile
        .as_ref()
        .unwrap();
    assert_eq!(profile.location_indices, vec![0]);
    assert!(profile
        .sample
        .iter()
        .all(|s| s.locations_start_index == 0 && s.locations_length == 1));
    assert_eq!(profile.location[0].id, p.location[0].id);
    let back = otlp_to_pprof(&data).unwrap().value.remove(0);
    assert_eq!(
        back.location[0].id, p.location[0].id,
        "deprecated ids restore the original ids"
    );
}

#[test]
fn trace_links_when_every_sample_has_one() {
    let p = (0..200).map(valid_profile).find(|p| {
        !p.sample.is_empty()
            && p.sample.iter().all(|s| {
                s.label
                    .iter()
                    .any(|l| p.string_table[l.key as usize] == "trace_id")
            })
    });
    let p = p.expect("a seed with links on every sample");
    let data = pprof_to_otlp(&p, &ToOtlpOptions::default()).unwrap();
    let profile = data.resource_profiles[0].scope_profiles[0].profiles[0]
        .profile
        .as_ref()
        .unwrap();
    assert!(!profile.link_table.is_empty());
    assert!(profile
        .link_table
        .iter()
        .all(|l| l.trace_id.len() == 16 && l.span_id.len() == 8));
    assert!(profile
        .attribute_table
        .iter()
        .all(|kv| kv.key != "trace_id"));
}

#[test]
fn content_hash_ids_are_deterministic_and_random_ids_differ() {
    let p = base();
    let hashed = ToOtlpOptions {
        profile_id: ProfileId::ContentHash,
        ..Default::default()
    };
    let id = |o: &ToOtlpOptions| {
        pprof_to_otlp(&p, o).unwrap().resource_profiles[0].scope_profiles[0].profiles[0]
            .profile_id
            .clone()
    };
    assert_eq!(id(&hashed), id(&hashed));
    assert_eq!(id(&hashed).len(), 16);
    assert_ne!(id(&ToOtlpOptions::default()), id(&ToOtlpOptions::default()));
    let fixed = ToOtlpOptions {
        profile_id: ProfileId::Fixed([9; 16]),
        ..Default::default()
    };
    assert_eq!(id(&fixed), vec![9; 16]);
}

#[test]
fn resource_attributes_temporality_and_payload_options() {
    let p = base();
    let options = ToOtlpOptions {
        resource_attributes: vec![KeyValue {
            key: "service.name".into(),
            value: MessageField::some(AnyValue {
                value: Some(Value::StringValue("checkout".into())),
                ..Default::default()
            }),
            ..Default::default()
        }],
        temporality: Some(otlp::AggregationTemporality::AGGREGATION_TEMPORALITY_CUMULATIVE),
        original_payload: Some(p.write_to_bytes().unwrap()),
        ..Default::default()
    };
    let data = pprof_to_otlp(&p, &options).unwrap();
    let rp = &data.resource_profiles[0];
    assert_eq!(rp.resource.attributes[0].key, "service.name");
    let container = &rp.scope_profiles[0].profiles[0];
    assert_eq!(container.original_payload_format, "pprof");
    let profile = container.profile.as_ref().unwrap();
    assert!(profile
        .sample_type
        .iter()
        .all(|t| t.aggregation_temporality.value() == 2));
    // The payload option is the SHOULD NOT case: a warning, not an error.
    let report = validate_profiles_data(&data, &Options::default());
    assert!(
        report.is_valid() && report.count("OTLP-PAY-002") == 1,
        "{}",
        report.render_human()
    );
    // Back to pprof and forward again: resource and temporality come back.
    let back = otlp_to_pprof(&data).unwrap();
    assert!(back
        .warnings
        .iter()
        .any(|w| w.message.contains("original payload")));
    let (container, envelope) =
        protoprof_pprof_bridge::pprof_to_container(&back.value[0], &ToOtlpOptions::default())
            .unwrap();
    assert_eq!(envelope.resource.attributes[0].key, "service.name");
    assert!(container
        .profile
        .sample_type
        .iter()
        .all(|t| t.aggregation_temporality.value() == 2));
}

#[test]
fn attribute_values_pprof_cannot_hold_become_string_labels_with_a_warning() {
    let mut data = pprof_to_otlp(&base(), &ToOtlpOptions::default()).unwrap();
    let profile = data.resource_profiles[0].scope_profiles[0].profiles[0]
        .profile
        .as_mut()
        .unwrap();
    profile.attribute_table.push(KeyValue {
        key: "ratio".into(),
        value: MessageField::some(AnyValue {
            value: Some(Value::DoubleValue(0.5)),
            ..Default::default()
        }),
        ..Default::default()
    });
    let ratio = profile.attribute_table.len() as u64 - 1;
    profile.sample.push(otlp::Sample {
        value: vec![0; profile.sample_type.len()],
        attributes: vec![ratio],
        ..Default::default()
    });
    let back = otlp_to_pprof(&data).unwrap();
    assert_eq!(back.warnings.len(), 1, "{:?}", back.warnings);
    assert!(back.warnings[0]
        .message
        .contains("double attribute values become string labels"));
    let p = &back.value[0];
    let last = p.sample.last().unwrap();
    assert_eq!(p.string_table[last.label[0].str as usize], "0.5");
}

#[test]
fn both_stack_slice_readings_and_the_deprecated_location_index() {
    let data = pprof_to_otlp(&base(), &ToOtlpOptions::default()).unwrap();
    let reference = otlp_to_pprof(&data).unwrap().value.remove(0);
    // Reading 2: no location_indices, the slice addresses location directly.
    let mut direct = data.clone();
    let profile = direct.resource_profiles[0].scope_profiles[0].profiles[0]
        .profile
        .as_mut()
        .unwrap();
    let indices = std::mem::take(&mut profile.location_indices);
    let mut location_index = Vec::new();
    for s in &mut profile.sample {
        let stack: Vec<u64> = indices[s.locations_start_index as usize
            ..(s.locations_start_index + s.locations_length) as usize]
            .iter()
            .map(|&x| x as u64)
            .collect();
        location_index.push(stack);
    }
    // Rebuild as deprecated location_index (length 0 means "use it").
    for (s, stack) in profile.sample.iter_mut().zip(&location_index) {
        s.locations_start_index = 0;
        s.locations_length = 0;
        s.location_index = stack.clone();
    }
    let from_deprecated = otlp_to_pprof(&direct).unwrap().value.remove(0);
    assert_eq!(semantic::pprof_equal(&reference, &from_deprecated), Ok(()));
}

#[test]
fn merging_containers_needs_agreeing_sample_types() {
    let p = base();
    let mut data = pprof_to_otlp(&p, &ToOtlpOptions::default()).unwrap();
    let container = data.resource_profiles[0].scope_profiles[0].profiles[0].clone();
    data.resource_profiles[0].scope_profiles[0]
        .profiles
        .push(container);
    let merged = otlp_to_pprof_merged(&data).unwrap().value;
    let total = |p: &pprof::Profile| p.sample.iter().map(|s| s.value[0] as i128).sum::<i128>();
    assert_eq!(total(&merged), 2 * total(&p));
    assert!(validate_pprof(&merged, &Options::default()).is_valid());
    let mut other = base();
    other.sample_type.push(pprof::ValueType {
        type_: 1,
        unit: 1,
        ..Default::default()
    });
    let error = merge::merge(&[p, other]).unwrap_err();
    assert!(error.to_string().contains("sample types"), "{error}");
}

#[test]
fn merge_saturates_instead_of_overflowing() {
    let mut p = base();
    p.sample.truncate(1);
    if p.sample.is_empty() {
        p.sample.push(pprof::Sample {
            value: vec![0; p.sample_type.len()],
            ..Default::default()
        });
    }
    p.sample[0].value = vec![i64::MAX; p.sample_type.len()];
    let merged = merge::merge(&[p.clone(), p]).unwrap();
    assert_eq!(merged.sample[0].value[0], i64::MAX);
}
