//! Binary, OTLP/JSON and text round trips for every message type (random
//! messages) and every real file of the corpus.

use protobuf::reflect::MessageDescriptor;
use protobuf::MessageDyn;
use protoprof_codec::{json, registry, text, DecodeOptions};
use protoprof_tests::arbitrary::{random_message, Rng};
use protoprof_tests::{corpus_dir, files_under, read_profile_bytes};

const DEPTH: u32 = 100;

fn all_descriptors() -> Vec<MessageDescriptor> {
    registry::message_names()
        .iter()
        .map(|n| registry::message_descriptor(n).unwrap())
        .collect()
}

fn same(descriptor: &MessageDescriptor, a: &dyn MessageDyn, b: &dyn MessageDyn) -> bool {
    descriptor.eq(a, b)
}

/// google.protobuf.Struct comes precompiled with rust-protobuf and keeps its
/// map in a HashMap, so its entries encode in hash order: for types that
/// reach it, compare messages instead of bytes.
fn bytes_are_deterministic(descriptor: &MessageDescriptor) -> bool {
    let mut seen = std::collections::HashSet::new();
    let mut pending = vec![descriptor.clone()];
    while let Some(d) = pending.pop() {
        if d.full_name() == "google.protobuf.Struct" {
            return false;
        }
        if !seen.insert(d.full_name().to_string()) {
            continue;
        }
        for field in d.fields() {
            use protobuf::reflect::{RuntimeFieldType::*, RuntimeType::Message};
            match field.runtime_field_type() {
                Singular(Message(m)) | Repeated(Message(m)) | Map(_, Message(m)) => pending.push(m),
                _ => {}
            }
        }
    }
    true
}

fn assert_same_encoding(
    descriptor: &MessageDescriptor,
    got: &dyn MessageDyn,
    want_bytes: &[u8],
    want: &dyn MessageDyn,
    what: &str,
) {
    if bytes_are_deterministic(descriptor) {
        assert_eq!(
            got.write_to_bytes_dyn().unwrap(),
            want_bytes,
            "{}: {what}",
            descriptor.full_name()
        );
    } else {
        assert!(
            same(descriptor, got, want),
            "{}: {what}",
            descriptor.full_name()
        );
    }
}

/// binary -> text -> binary gives the same bytes; JSON keeps everything but
/// unknown fields (which JSON cannot carry).
fn check_round_trips(descriptor: &MessageDescriptor, message: &dyn MessageDyn, has_unknown: bool) {
    let name = descriptor.full_name();
    let bytes = message.write_to_bytes_dyn().unwrap();
    let options = DecodeOptions {
        allow_empty: true,
        ..Default::default()
    };
    let decoded = protoprof_codec::decode_dynamic(&bytes, descriptor, &options)
        .unwrap_or_else(|e| panic!("{name}: decode: {e}"))
        .message;
    assert!(
        same(descriptor, &*decoded, message),
        "{name}: binary round trip"
    );

    let printed = text::print(message);
    let parsed = text::parse(&printed, descriptor, DEPTH)
        .unwrap_or_else(|e| panic!("{name}: text {e}\n{printed}"));
    assert_same_encoding(
        descriptor,
        &*parsed,
        &bytes,
        message,
        &format!("text round trip\n{printed}"),
    );
    assert_eq!(text::print(&*parsed), printed, "{name}: text is not stable");

    let json_text = json::print(message, false);
    let from_json = json::parse(&json_text, descriptor, DEPTH)
        .unwrap_or_else(|e| panic!("{name}: JSON {e}\n{json_text}"));
    if !has_unknown {
        assert_same_encoding(
            descriptor,
            &*from_json,
            &bytes,
            message,
            &format!("JSON round trip\n{json_text}"),
        );
    }
    assert_eq!(
        json::print(&*from_json, false),
        json_text,
        "{name}: JSON is not stable"
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 48, ..Default::default() })]

    #[test]
    fn every_message_type_round_trips(seed in proptest::prelude::any::<u64>()) {
        let mut rng = Rng::new(seed);
        for descriptor in all_descriptors() {
            let with_unknown = rng.below(2) == 0;
            let message = random_message(&descriptor, &mut rng, 3, with_unknown);
            check_round_trips(&descriptor, &*message, with_unknown);
        }
    }
}

#[test]
fn every_corpus_file_round_trips_through_text_and_json() {
    let Some(corpus) = corpus_dir() else { return };
    let pprof = registry::message_descriptor("perftools.profiles.Profile").unwrap();
    let otlp =
        registry::message_descriptor("opentelemetry.proto.profiles.v1experimental.ProfilesData")
            .unwrap();
    let mut count = 0;
    for (dir, descriptor) in [("pprof", &pprof), ("otlp/v1experimental", &otlp)] {
        for path in files_under(&corpus.join(dir)) {
            let bytes = read_profile_bytes(&path);
            let decoded =
                protoprof_codec::decode_dynamic(&bytes, descriptor, &DecodeOptions::default())
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            check_round_trips(descriptor, &*decoded.message, false);
            count += 1;
        }
    }
    assert!(count >= 47, "{count} corpus files");
}
