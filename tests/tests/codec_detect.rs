//! Detection tells every corpus file's form and type, recognises the later
//! OTLP revision, and explicit types override it.

use protoprof_codec::detect::{detect, Form};
use protoprof_codec::otlp::revision::OtlpRevision;
use protoprof_codec::{decode_any, CodecError, DecodeOptions, Limits};
use protoprof_tests::{corpus_dir, files_under, hex};

#[test]
fn every_pprof_file_is_detected_as_pprof() {
    let Some(corpus) = corpus_dir() else { return };
    let files = files_under(&corpus.join("pprof"));
    assert!(files.len() >= 40);
    for path in files {
        let input = std::fs::read(&path).unwrap();
        let detection = detect(&input, &Limits::default())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(detection.form, Form::Binary, "{}", path.display());
        assert_eq!(
            detection.gzipped,
            path.extension().is_some_and(|e| e == "gz"),
            "{}",
            path.display()
        );
        let best = detection.best().unwrap();
        assert_eq!(
            best.full_name,
            "perftools.profiles.Profile",
            "{}",
            path.display()
        );
        // Clearly ahead of the runner-up.
        let second = detection.candidates.get(1).map_or(0.0, |c| c.confidence);
        assert!(
            best.confidence - second > 0.2,
            "{}: {:?}",
            path.display(),
            detection.candidates
        );
    }
}

#[test]
fn every_v1experimental_file_is_detected_as_otlp() {
    let Some(corpus) = corpus_dir() else { return };
    for path in files_under(&corpus.join("otlp/v1experimental")) {
        let input = std::fs::read(&path).unwrap();
        let detection = detect(&input, &Limits::default()).unwrap();
        assert_eq!(
            detection.best().unwrap().full_name,
            "opentelemetry.proto.profiles.v1experimental.ProfilesData",
            "{}",
            path.display()
        );
    }
}

#[test]
fn every_v1development_file_is_read_or_named_with_its_revision() {
    let Some(corpus) = corpus_dir() else { return };
    let files = files_under(&corpus.join("otlp/v1development"));
    assert!(files.len() >= 7);
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let input = std::fs::read(&path).unwrap();
        // The file names carry the revision (corpus MANIFEST.md).
        let releases = if name.contains("-1.10-") {
            "v1.10.0/v1.11.0"
        } else if name.contains("-1.8-") {
            "v1.8.0/v1.9.0"
        } else if name.contains("-1.7-") {
            "v1.7.0"
        } else {
            assert!(name.contains("-1.5-"), "{name}");
            "v1.4.0/v1.5.0"
        };
        match detect(&input, &Limits::default()) {
            Ok(detection) => {
                assert_eq!(
                    detection.otlp_revision.map(OtlpRevision::releases),
                    Some(releases),
                    "{name}"
                );
                // v1.8.0/v1.9.0 are read after a rewrite, with a warning.
                let upgraded = detection
                    .otlp_revision
                    .is_some_and(OtlpRevision::is_upgradable);
                assert!(upgraded || releases == "v1.10.0/v1.11.0", "{name}");
                assert!(
                    detection
                        .best()
                        .unwrap()
                        .full_name
                        .contains(".v1development."),
                    "{name}: {detection:?}"
                );
                let decoded = decode_any(&input, None, &DecodeOptions::default()).unwrap();
                assert!(decoded.descriptor.full_name().contains(".v1development."));
                let warned = decoded.decoded.warnings.iter().any(|w| {
                    matches!(
                        w.kind,
                        protoprof_codec::WarningKind::RevisionUpgraded { .. }
                    )
                });
                assert_eq!(warned, upgraded, "{name}: {:?}", decoded.decoded.warnings);
            }
            Err(CodecError::UnsupportedVersion { found, evidence }) => {
                assert_ne!(releases, "v1.10.0/v1.11.0", "{name}: {evidence}");
                assert!(found.contains(releases), "{name}: {found}");
                assert!(!evidence.is_empty());
                // decode_any says the same instead of producing nonsense.
                let error = decode_any(&input, None, &DecodeOptions::default()).unwrap_err();
                assert!(error.to_string().contains(releases), "{error}");
            }
            Err(other) => panic!("{name}: {other}"),
        }
    }
}

#[test]
fn explicit_type_overrides_detection_and_forms_decode() {
    let Some(corpus) = corpus_dir() else { return };
    let input = std::fs::read(corpus.join("malformed/otlp-v1experimental-nested-anyvalue-100k.pb"))
        .unwrap();
    let error = decode_any(
        &input,
        Some("opentelemetry.proto.profiles.v1experimental.ProfilesData"),
        &DecodeOptions::default(),
    )
    .unwrap_err();
    assert!(
        error.to_string().contains("nesting deeper than the limit"),
        "{error}"
    );

    let gz = std::fs::read(corpus.join("pprof/real/go-heap.pb.gz")).unwrap();
    let decoded = decode_any(&gz, None, &DecodeOptions::default()).unwrap();
    assert!(decoded.decoded.gzipped);
    assert_eq!(decoded.descriptor.full_name(), "perftools.profiles.Profile");
    // The same message through the text and JSON forms is detected and decoded back.
    let text = protoprof_codec::text::print(&*decoded.decoded.message);
    let json = protoprof_codec::json::print(&*decoded.decoded.message, true);
    for (form, bytes) in [(Form::Text, text.as_bytes()), (Form::Json, json.as_bytes())] {
        let again = decode_any(bytes, None, &DecodeOptions::default()).unwrap();
        assert_eq!(again.form, form);
        assert_eq!(again.descriptor.full_name(), "perftools.profiles.Profile");
        assert!(decoded
            .descriptor
            .eq(&*again.decoded.message, &*decoded.decoded.message));
    }
}

#[test]
fn broken_input_reports_the_error_of_the_type_it_was_meant_to_be() {
    let Some(corpus) = corpus_dir() else { return };
    let input = std::fs::read(corpus.join("malformed/truncated-mid-length-delimited.pb")).unwrap();
    let error = detect(&input, &Limits::default()).unwrap_err().to_string();
    assert!(
        error.contains("read as perftools.profiles.Profile: byte 12 in sample[0]: length prefix claims 18 bytes"),
        "{error}"
    );
}

#[test]
fn relay_messages_are_told_apart() {
    use protobuf::well_known_types::any::Any;
    use protobuf::{Message, MessageField};
    use protoprof_model_relay::envoy::config::core::v3::{ControlPlane, Node};
    use protoprof_model_relay::envoy::service::discovery::v3 as xds;
    let url = "type.googleapis.com/envoy.config.core.v3.ControlPlane";
    let any = Any::pack(&ControlPlane {
        identifier: "cp".into(),
        ..Default::default()
    })
    .unwrap();
    let node = Node {
        id: "proxy-7".into(),
        cluster: "edge".into(),
        ..Default::default()
    };
    let cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "envoy.service.discovery.v3.DiscoveryResponse",
            xds::DiscoveryResponse {
                version_info: "3".into(),
                resources: vec![any.clone()],
                type_url: url.into(),
                nonce: "n".into(),
                ..Default::default()
            }
            .write_to_bytes()
            .unwrap(),
        ),
        (
            "envoy.service.discovery.v3.DiscoveryRequest",
            xds::DiscoveryRequest {
                version_info: "3".into(),
                node: MessageField::some(node.clone()),
                type_url: url.into(),
                response_nonce: "n".into(),
                ..Default::default()
            }
            .write_to_bytes()
            .unwrap(),
        ),
        (
            "envoy.service.discovery.v3.DeltaDiscoveryResponse",
            xds::DeltaDiscoveryResponse {
                resources: vec![xds::Resource {
                    name: "a".into(),
                    version: "1".into(),
                    resource: MessageField::some(any),
                    ..Default::default()
                }],
                type_url: url.into(),
                nonce: "n".into(),
                ..Default::default()
            }
            .write_to_bytes()
            .unwrap(),
        ),
        (
            "envoy.service.discovery.v3.DeltaDiscoveryRequest",
            xds::DeltaDiscoveryRequest {
                node: MessageField::some(node),
                type_url: url.into(),
                response_nonce: "n".into(),
                ..Default::default()
            }
            .write_to_bytes()
            .unwrap(),
        ),
    ];
    for (expected, bytes) in cases {
        let detection = detect(&bytes, &Limits::default()).unwrap();
        assert_eq!(
            detection.best().unwrap().full_name,
            expected,
            "{:?}",
            detection.candidates
        );
    }
}

/// Found by the fuzzing campaign: a small v1experimental message with one
/// undeclared field was read as an xDS `DiscoveryRequest` whose
/// `version_info` held the whole input as binary (repaired UTF-8), and
/// `validate` called it valid. The type whose structure the input has wins.
#[test]
fn a_string_field_swallowing_binary_does_not_beat_structure() {
    let input = hex(concat!(
        "0ae6010a1d0a1b0a0c736572766963652e6e616d65320b0a096d616c666f726d656412c4010a0f0a0d67",
        "656e5f6d616c666f726d656412b0010a100000000000000f0000000000000000001100002a36fe9c9717",
        "1900cac471fe9c97174289010a060801100218011208120103400252010022071880202202100a220918",
        "80402204080110142a061003180320052a061004180420057200320773616d706c65733205636f756e74",
        "32046d61696e3204776f726b32072d61696e2e676f488080a8b1e39fe7cb17508094ebdc037a02010082",
        "01150a0b7468726561642e6e616d6512060a046d61696e"
    ));
    let detection = detect(&input, &Limits::default()).unwrap();
    assert_eq!(
        detection.best().unwrap().full_name,
        "opentelemetry.proto.profiles.v1experimental.ProfilesData",
        "{:?}",
        detection.candidates
    );
}

#[test]
fn large_v1development_files_are_detected_as_their_small_originals() {
    // One top-level field past the detection window: detection reads a
    // pruned copy of the message (codec's pruned.rs), which must tell the
    // same type and revision; a dictionary after the samples still counts.
    let Some(corpus) = corpus_dir() else { return };
    let files = files_under(&corpus.join("otlp/v1development"));
    let binary = files
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "pb"));
    let mut compared = 0;
    for path in binary {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let input = std::fs::read(path).unwrap();
        let large = with_scopes_repeated(&input, 9 << 20);
        assert!(large.len() > 9 << 20, "{name}");
        match (
            detect(&input, &Limits::default()),
            detect(&large, &Limits::default()),
        ) {
            (Ok(small), Ok(large)) => {
                assert_eq!(small.otlp_revision, large.otlp_revision, "{name}");
                let names = |d: &protoprof_codec::detect::Detection| {
                    d.candidates.iter().map(|c| c.full_name).collect::<Vec<_>>()
                };
                assert_eq!(names(&small), names(&large), "{name}");
            }
            (
                Err(CodecError::UnsupportedVersion { found: small, .. }),
                Err(CodecError::UnsupportedVersion { found: large, .. }),
            ) => assert_eq!(small, large, "{name}"),
            (small, large) => panic!("{name}: {small:?} but {large:?}"),
        }
        compared += 1;
    }
    assert!(compared >= 6);
}

/// `message` (a ProfilesData or export request of any revision) with the
/// scope_profiles (2) of its first resource_profiles (1) repeated until that
/// field's payload passes `size` bytes.
fn with_scopes_repeated(message: &[u8], size: usize) -> Vec<u8> {
    let top = top_fields(message);
    let first = top.iter().position(|f| f.number == 1).unwrap();
    let scopes: Vec<u8> = top_fields(top[first].payload)
        .iter()
        .filter(|f| f.number == 2)
        .flat_map(|f| f.whole.to_vec())
        .collect();
    assert!(!scopes.is_empty());
    let mut grown = top[first].payload.to_vec();
    while grown.len() <= size {
        grown.extend_from_slice(&scopes);
    }
    let mut out = Vec::new();
    for (i, field) in top.iter().enumerate() {
        if i == first {
            protoprof_model_meta::wire::write_len_prefix(&mut out, 1, grown.len());
            out.extend_from_slice(&grown);
        } else {
            out.extend_from_slice(field.whole);
        }
    }
    out
}

/// One top-level field of a message, as protobuf's own reader finds it.
struct TopField<'a> {
    number: u32,
    /// Tag and value.
    whole: &'a [u8],
    /// A length-delimited field's payload (empty for the other wire types).
    payload: &'a [u8],
}

fn top_fields(bytes: &[u8]) -> Vec<TopField<'_>> {
    use protobuf::rt::WireType;
    let mut stream = protobuf::CodedInputStream::from_bytes(bytes);
    let mut fields = Vec::new();
    loop {
        let start = stream.pos() as usize;
        let Some(tag) = stream.read_raw_tag_or_eof().unwrap() else {
            return fields;
        };
        let wire_type = WireType::new(tag & 7).unwrap();
        let mut payload: &[u8] = &[];
        if wire_type == WireType::LengthDelimited {
            let len = stream.read_raw_varint64().unwrap() as usize;
            let at = stream.pos() as usize;
            stream.skip_raw_bytes(len as u32).unwrap();
            payload = &bytes[at..at + len];
        } else {
            stream.skip_field(wire_type).unwrap();
        }
        let end = stream.pos() as usize;
        fields.push(TopField {
            number: tag >> 3,
            whole: &bytes[start..end],
            payload,
        });
    }
}

/// Large OTLP v1experimental (past the 8 MiB from which detection reads a
/// pruned copy) whose bulk is one packed run, as a profile of distinct
/// stacks has it in `location_indices`: detected as the small one is.
#[test]
fn a_large_v1experimental_profile_is_detected_on_its_pruned_copy() {
    use protobuf::Message;
    use protoprof_model_otlp::opentelemetry::proto::profiles::v1experimental::ProfilesData;
    let Some(corpus) = corpus_dir() else { return };
    let path = corpus.join("otlp/v1experimental/v1experimental-go-cpu-profilesdata.pb");
    let small = std::fs::read(path).unwrap();
    let mut data = ProfilesData::parse_from_bytes(&small).unwrap();
    let profile = data.resource_profiles[0].scope_profiles[0].profiles[0]
        .profile
        .as_mut()
        .unwrap();
    // 12 MB of 3-byte varints, which do not read as fields: the copy cuts
    // the run.
    profile
        .location_indices
        .extend((0..4_000_000).map(|i| 0x4000 + (i * 7919) % 200_000));
    let large = data.write_to_bytes().unwrap();
    assert!(large.len() > 12_000_000);
    let of = |input: &[u8]| {
        let detection = detect(input, &Limits::default()).unwrap();
        (detection.form, detection.best().unwrap().full_name)
    };
    let expected = (
        Form::Binary,
        "opentelemetry.proto.profiles.v1experimental.ProfilesData",
    );
    assert_eq!(of(&small), expected);
    assert_eq!(of(&large), expected);
    let decoded = decode_any(&large, None, &DecodeOptions::default()).unwrap();
    assert_eq!(decoded.descriptor.full_name(), expected.1);
}
