//! The OTLP v1development view (`DevelopmentView`, samples and stacks left
//! in the input bytes) reads what the whole decode reads, and converts to
//! the pprof the whole model converts to: on every corpus v1development
//! file, and on every corpus pprof file written as v1development.

use protobuf::{Message, MessageDyn};
use protoprof_codec::{
    decode_any, decode_any_view, write_pprof_source, AutoView, DecodeOptions, DevelopmentView,
    EncodedSamples, ProfileSetSamples,
};
use protoprof_model_otlp::opentelemetry::proto::collector::profiles::v1development::ExportProfilesServiceRequest;
use protoprof_model_otlp::opentelemetry::proto::profiles::v1development::{
    Profile, ProfilesData, ResourceProfiles, Sample, ScopeProfiles, Stack,
};
use protoprof_pprof_bridge::{
    development_as_pprof, development_to_pprof, development_to_pprof_with, pprof_to_development,
    ToDevelopmentOptions,
};
use protoprof_tests::{corpus_dir, files_under, read_profile_bytes};

/// The input decoded in full, as `ProfilesData`.
fn whole(bytes: &[u8]) -> Result<ProfilesData, String> {
    let decoded = decode_any(bytes, None, &DecodeOptions::default()).map_err(|e| e.to_string())?;
    let message: &dyn MessageDyn = &*decoded.decoded.message;
    if let Some(data) = message.downcast_ref::<ProfilesData>() {
        return Ok(data.clone());
    }
    let request = message
        .downcast_ref::<ExportProfilesServiceRequest>()
        .ok_or("not v1development")?;
    Ok(ProfilesData {
        resource_profiles: request.resource_profiles.clone(),
        dictionary: request.dictionary.clone(),
        ..Default::default()
    })
}

fn view(bytes: &[u8]) -> Option<Result<DevelopmentView<'_>, String>> {
    match decode_any_view(bytes, None, &DecodeOptions::default()) {
        Ok(AutoView::Development(view)) => Some(Ok(view.message)),
        Ok(_) => None,
        Err(e) => Some(Err(e.to_string())),
    }
}

/// Checks the view of `bytes` against the whole decode; whether its
/// samples were bytes.
fn check(name: &str, bytes: &[u8]) -> Option<bool> {
    let view = match view(bytes)? {
        Ok(view) => view,
        Err(e) => {
            assert!(whole(bytes).is_err(), "{name}: only the view fails: {e}");
            return None;
        }
    };
    let expected = whole(bytes).unwrap_or_else(|e| panic!("{name}: only the whole fails: {e}"));
    let in_bytes = view.samples_are_bytes();
    let mut samples = EncodedSamples::new();
    let streamed =
        development_to_pprof_with(view.data(), &view, &mut |s| samples.push(s)).map(|c| {
            let bytes = samples.into_view(c.value).encode().unwrap();
            (bytes, c.warnings)
        });
    let converted =
        development_to_pprof(&expected).map(|c| (c.value.write_to_bytes().unwrap(), c.warnings));
    match (streamed, &converted) {
        (Ok(a), Ok(b)) => assert!(a == *b, "{name}: the view converts differently"),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{name}"),
        (a, b) => panic!("{name}: view {:?} vs whole {:?}", a.err(), b.as_ref().err()),
    }
    // Converted as read, written as converted (`convert --to pprof`).
    if let (Ok(as_pprof), Ok((bytes, _))) = (development_as_pprof(view.data(), &view), &converted) {
        let mut written = Vec::new();
        write_pprof_source(&as_pprof.value.reading(&view), &mut written).unwrap();
        assert!(written == *bytes, "{name}: written as read differs");
    }
    let options = protoprof_validate::Options::default();
    let report = protoprof_validate::validate_development_parts(view.data(), &view, &options);
    let whole_report = protoprof_validate::validate_development_data(&expected, &options);
    assert_eq!(
        format!("{report:?}"),
        format!("{whole_report:?}"),
        "{name}: the view validates differently"
    );
    let mut data = view.into_data();
    data.special_fields = expected.special_fields.clone(); // a request's top level
    assert!(data == expected, "{name}: the view holds other data");
    Some(in_bytes)
}

#[test]
fn views_of_corpus_v1development_read_and_convert_as_the_whole_decode() {
    let Some(corpus) = corpus_dir() else { return };
    let mut seen = 0;
    for path in files_under(&corpus.join("otlp")) {
        let name = path.display().to_string();
        if name.ends_with(".json") || name.ends_with(".txt") || name.ends_with(".md") {
            continue;
        }
        seen += usize::from(check(&name, &read_profile_bytes(&path)).is_some());
    }
    assert!(seen >= 5, "only {seen} v1development files viewed");
}

#[test]
fn views_of_corpus_pprof_as_v1development_hold_samples_as_bytes() {
    let Some(corpus) = corpus_dir() else { return };
    let (mut seen, mut as_bytes) = (0, 0);
    for path in files_under(&corpus.join("pprof")) {
        let bytes = read_profile_bytes(&path);
        let Ok(decoded) = protoprof_codec::decode::<protoprof_codec::PprofProfile>(
            &bytes,
            &DecodeOptions::default(),
        ) else {
            continue;
        };
        let options = ToDevelopmentOptions::default();
        let Ok(data) = pprof_to_development(&decoded.message, &options) else {
            continue;
        };
        let encoded = data.value.write_to_bytes().unwrap();
        let name = path.display().to_string();
        if let Some(in_bytes) = check(&name, &encoded) {
            seen += 1;
            as_bytes += usize::from(in_bytes);
        }
    }
    assert!(seen >= 40, "only {seen} conversions viewed");
    assert_eq!(
        as_bytes, seen,
        "every plain encoding is read from the bytes"
    );
}

/// Samples and stacks the fast readers leave to rust-protobuf (unpacked
/// lists, unknown fields, timestamps) and values out of `int32` range.
#[test]
fn unusual_encodings_read_as_rust_protobuf_reads_them() {
    let mut data = ProfilesData::new();
    let dictionary = data.dictionary.mut_or_insert_default();
    dictionary.string_table = vec!["".into(), "cpu".into(), "ns".into()];
    dictionary.stack_table = vec![Stack::new(), Stack::new()];
    dictionary.stack_table[1].location_indices = vec![0, 0];
    let mut profile = Profile::new();
    profile.samples.push(Sample {
        stack_index: 1,
        values: vec![5],
        timestamps_unix_nano: vec![7],
        ..Default::default()
    });
    push_profile(&mut data, profile);
    let mut bytes = data.write_to_bytes().unwrap();
    let clean = bytes.clone();
    // An unknown field (99, varint 1) at the end of the last sample: its
    // length and the enclosing lengths grow by 3; rewrite the message.
    let mut odd = data.clone();
    let sample = &mut odd.resource_profiles[0].scope_profiles[0].profiles[0].samples[0];
    sample.mut_unknown_fields().add_varint(99, 1);
    let sample = sample.clone();
    bytes = odd.write_to_bytes().unwrap();
    let odd_view = view(&bytes).unwrap().unwrap();
    assert!(odd_view.samples_are_bytes());
    let mut buffer = Sample::new();
    assert_eq!(odd_view.sample(0, 0, &mut buffer), &sample);
    assert_eq!(odd_view.into_data(), odd);
    // A stack holding a location index past int32: rust-protobuf refuses
    // it, and so does the view.
    let stack = len_field(1, &[0x80, 0x80, 0x80, 0x80, 0x10]);
    let dictionary = [len_field(7, &[]), len_field(7, &stack)].concat();
    let sample = [0x08, 0x01, 0x20, 0x05];
    let profile = len_field(2, &sample);
    let scope = len_field(2, &profile);
    let resource = len_field(2, &scope);
    let input = [len_field(1, &resource), len_field(2, &dictionary)].concat();
    assert!(whole(&input).is_err());
    assert!(matches!(view(&input), Some(Err(_))));
    assert!(whole(&clean).is_ok() && view(&clean).is_some_and(|v| v.is_ok()));
}

/// `profile` in a resource and a scope of its own, appended to `data`.
fn push_profile(data: &mut ProfilesData, profile: Profile) {
    let mut scope = ScopeProfiles::new();
    scope.profiles.push(profile);
    let mut resource = ResourceProfiles::new();
    resource.scope_profiles.push(scope);
    data.resource_profiles.push(resource);
}

/// A length-delimited field.
fn len_field(number: u8, payload: &[u8]) -> Vec<u8> {
    assert!(payload.len() < 128 && number < 16);
    [&[number << 3 | 2, payload.len() as u8][..], payload].concat()
}

/// Validating or converting a view checks its stacks by the range of
/// their location indices when they hold nothing else, and reads each
/// otherwise: either way it reports what validating or converting the
/// whole message reports (`check`), and an index past the location table,
/// or a stack index past the stack table, is reported.
#[test]
fn stacks_checked_by_their_range_validate_as_the_whole_message() {
    let stacks_with = |last: Stack, last_index: i32| {
        let mut data = ProfilesData::new();
        let dictionary = data.dictionary.mut_or_insert_default();
        dictionary.string_table = vec!["".into()];
        dictionary.location_table = vec![Default::default(); 3];
        let in_range = Stack {
            location_indices: vec![1, 2, 0],
            ..Default::default()
        };
        dictionary.stack_table = vec![Stack::new(), in_range, last];
        let samples = (0..3).map(|i| Sample {
            stack_index: if i == 2 { last_index } else { i },
            values: vec![1],
            ..Default::default()
        });
        let profile = Profile {
            samples: samples.collect(),
            ..Default::default()
        };
        push_profile(&mut data, profile);
        data.write_to_bytes().unwrap()
    };
    let stack = |location_indices: Vec<i32>| Stack {
        location_indices,
        ..Default::default()
    };
    let mut unknown = stack(vec![1]);
    unknown.mut_unknown_fields().add_varint(9, 1);
    let cases = [
        (stack(vec![2, 2]), 2, None),
        (stack(vec![]), 2, None),
        (stack(vec![1, 3]), 2, Some("OTLPDEV-REF-001")),
        (stack(vec![-1]), 2, Some("OTLPDEV-REF-002")),
        (unknown, 2, Some("OTLPDEV-UNK-001")),
        // Stacks that fit, and a sample whose stack is past the table:
        // conversion reports that sample as the whole message's does.
        (stack(vec![2, 2]), 3, Some("OTLPDEV-REF-001")),
    ];
    for (last, last_index, expected) in cases {
        let name = format!("{:?} at {last_index}", last.location_indices);
        let bytes = stacks_with(last, last_index);
        assert_eq!(check(&name, &bytes), Some(true), "{name}: held as bytes");
        let view = view(&bytes).unwrap().unwrap();
        let options = protoprof_validate::Options::default();
        let report = protoprof_validate::validate_development_parts(view.data(), &view, &options);
        let codes: Vec<_> = report.diagnostics.iter().map(|d| d.code).collect();
        match expected {
            Some(code) => assert!(codes.contains(&code), "{name}: {codes:?}"),
            None => assert!(
                !codes.iter().any(|c| c.contains("REF") || c.contains("UNK")),
                "{name}: {codes:?}"
            ),
        }
    }
}

/// A message of 301 locations and `stacks` (after the empty stack 0),
/// each used by `samples_per_stack` samples, in turn: sample `i` uses
/// stack `i % stacks.len() + 1` and has the one value `i + 1`.
fn stacks_message(stacks: &[Vec<i32>], samples_per_stack: usize) -> Vec<u8> {
    let mut data = ProfilesData::new();
    let dictionary = data.dictionary.mut_or_insert_default();
    dictionary.string_table = vec!["".into()];
    dictionary.location_table = vec![Default::default(); 301];
    dictionary.stack_table = std::iter::once(Stack::new())
        .chain(stacks.iter().map(|indices| Stack {
            location_indices: indices.clone(),
            ..Default::default()
        }))
        .collect();
    let samples = (0..samples_per_stack * stacks.len()).map(|i| Sample {
        stack_index: (i % stacks.len()) as i32 + 1,
        values: vec![i as i64 + 1],
        ..Default::default()
    });
    let profile = Profile {
        samples: samples.collect(),
        ..Default::default()
    };
    push_profile(&mut data, profile);
    data.write_to_bytes().unwrap()
}

/// Samples of distinct stacks (stacks not kept as ids) written as pprof
/// copy a stack's bytes as the sample's location ids when those bytes are
/// what the ids are written as, and convert the others: either way the
/// pprof written is the whole message's conversion, byte for byte
/// (`check`).
#[test]
fn distinct_stacks_written_as_pprof_copy_the_stacks_they_can() {
    use protoprof_codec::SampleSource;
    let stacks: [(Vec<i32>, bool); 5] = [
        (vec![1, 2, 3], true),
        // A 2-byte varint, and a run of 200 bytes (a 2-byte length).
        (vec![300, 1], true),
        ((1..=100).map(|i| i + 200).collect(), true),
        // No location (left out) in the middle: converted.
        (vec![2, 0, 3], false),
        // The empty stack: nothing to copy, and nothing written.
        (vec![], true),
    ];
    let indices: Vec<Vec<i32>> = stacks.iter().map(|(indices, _)| indices.clone()).collect();
    let bytes = stacks_message(&indices, 1);
    assert_eq!(check("distinct stacks", &bytes), Some(true));
    let view = view(&bytes).unwrap().unwrap();
    let converted = development_as_pprof(view.data(), &view).unwrap().value;
    let source = converted.reading(&view);
    for (i, (indices, copied)) in stacks.iter().enumerate() {
        let run = source.field_run(i, 1);
        assert_eq!(run.is_some(), *copied, "stack {indices:?}");
        let mut sample = Default::default();
        let ids: Vec<u64> = (indices.iter())
            .filter(|&&l| l != 0)
            .map(|&l| l as u64)
            .collect();
        assert_eq!(source.sample(i, &mut sample).location_id, ids);
    }
}

/// Samples that share their stacks (stacks kept as ids) written as pprof
/// have their location ids written as they are read from the kept stacks
/// (`SampleSource::sample_writing_field`), not copied: the pprof written is
/// the whole message's conversion, byte for byte (`check`).
#[test]
fn shared_stacks_written_as_pprof_write_their_ids_as_read() {
    use protoprof_codec::{Fields, SampleSource};
    use protoprof_model_pprof::perftools::profiles as pprof;
    let stacks: [Vec<i32>; 3] = [vec![1, 2, 3], vec![300, 0, 1], vec![]];
    // Each stack used by three samples: kept (at least two samples a
    // stack of the table, the empty stack 0 included).
    let bytes = stacks_message(&stacks, 3);
    assert_eq!(check("shared stacks", &bytes), Some(true));
    let view = view(&bytes).unwrap().unwrap();
    let converted = development_as_pprof(view.data(), &view).unwrap().value;
    let source = converted.reading(&view);
    for i in 0..3 * stacks.len() {
        assert_eq!(source.field_run(i, 1), None, "kept stacks are not copied");
        let (mut written, mut sample) = (Vec::new(), Default::default());
        let rest = source.sample_writing_field(i, (1, &mut written), Fields::ALL, &mut sample);
        let rest = rest.expect("written as read");
        assert_eq!((rest.location_id.len(), rest.value.len()), (0, 1));
        let ids: Vec<u64> = (stacks[i % stacks.len()].iter())
            .filter(|&&l| l != 0)
            .map(|&l| l as u64)
            .collect();
        let mut expected = pprof::Sample::new();
        expected.location_id = ids;
        assert_eq!(written, expected.write_to_bytes().unwrap(), "sample {i}");
    }
}
