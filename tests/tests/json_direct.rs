//! OTLP/JSON read straight into protobuf bytes (`json::to_binary`) gives the
//! message `json::parse` (a serde_json tree, then reflection) gives: on
//! every JSON file of the corpus, on every corpus profile printed as
//! OTLP/JSON (v1development and v1experimental), and on the unusual forms
//! OTLP/JSON allows. Errors are `json::parse`'s own.

use protobuf::reflect::MessageDescriptor;
use protobuf::{MessageDyn, MessageFull};
use protoprof_codec::{decode_any, json, DecodeOptions};
use protoprof_model_otlp::opentelemetry::proto::profiles::v1development::ProfilesData as DevelopmentData;
use protoprof_model_otlp::opentelemetry::proto::profiles::v1experimental::ProfilesData;
use protoprof_pprof_bridge::{
    pprof_to_development, pprof_to_otlp, ToDevelopmentOptions, ToOtlpOptions,
};
use protoprof_tests::{corpus_dir, files_under, read_profile_bytes};

/// Both readers on `text` as `descriptor`'s type agree.
fn same(name: &str, text: &str, descriptor: &MessageDescriptor) {
    let options = DecodeOptions::default();
    let tree = json::parse(text, descriptor, options.limits.max_depth);
    let direct = decode_any(text.as_bytes(), Some(descriptor.full_name()), &options);
    match (tree, direct) {
        // Compared encoded: NaN is not equal to itself.
        (Ok(a), Ok(b)) => assert!(
            a.write_to_bytes_dyn().unwrap() == b.decoded.message.write_to_bytes_dyn().unwrap()
                && b.decoded.message.descriptor_dyn() == *descriptor,
            "{name}: the readers differ"
        ),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{name}"),
        (a, b) => panic!("{name}: tree {:?} vs direct {:?}", a.err(), b.err()),
    }
}

/// Printed as OTLP/JSON, and checked to take the direct path.
fn printed(message: &dyn MessageDyn) -> String {
    let text = json::print(message, false);
    let descriptor = message.descriptor_dyn();
    assert!(protoprof_codec::json_to_binary(&text, &descriptor, 100).is_some());
    text
}

#[test]
fn corpus_json_and_printed_profiles_read_alike() {
    let Some(corpus) = corpus_dir() else { return };
    let mut seen = 0;
    for path in files_under(&corpus) {
        let name = path.display().to_string();
        if !name.ends_with(".json") {
            continue;
        }
        let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
        for descriptor in [DevelopmentData::descriptor(), ProfilesData::descriptor()] {
            same(&name, &text, &descriptor);
        }
        seen += 1;
    }
    for path in files_under(&corpus.join("pprof")).into_iter().step_by(3) {
        let bytes = read_profile_bytes(&path);
        let Ok(decoded) =
            protoprof_codec::decode::<protoprof_codec::PprofProfile>(&bytes, &Default::default())
        else {
            continue;
        };
        let p = decoded.message;
        let name = path.display().to_string();
        if let Ok(d) = pprof_to_development(&p, &ToDevelopmentOptions::default()) {
            same(&name, &printed(&d.value), &DevelopmentData::descriptor());
        }
        if let Ok(d) = pprof_to_otlp(&p, &ToOtlpOptions::default()) {
            same(&name, &printed(&d), &ProfilesData::descriptor());
        }
        seen += 1;
    }
    assert!(seen > 10, "only {seen} documents");
}

#[test]
fn unusual_forms_and_errors_read_alike() {
    let descriptor = DevelopmentData::descriptor();
    let documents = [
        // original names, ids in hex, 64-bit integers as strings and numbers
        r#"{"resource_profiles":[{"scope_profiles":[{"profiles":[{"profile_id":"0102030405060708090a0b0c0d0e0f10","time_unix_nano":"17","duration_nano":5,"samples":[{"values":["1",2,3.0],"stack_index":1}]}]}]}],"dictionary":{"string_table":["","a"],"link_table":[{},{"traceId":"00112233445566778899aabbccddeeff","spanId":"0011223344556677"}]}}"#,
        // nulls, unknown keys, a byte order mark, floats and bools in AnyValue
        "\u{feff}{\"resourceProfiles\":null,\"extra\":{\"a\":[1,2]},\"dictionary\":{\"attributeTable\":[{\"value\":{\"doubleValue\":\"NaN\"}},{\"value\":{\"boolValue\":true}},{\"value\":{\"doubleValue\":1}},{\"value\":{\"intValue\":\"-5\"}},{\"value\":{\"bytesValue\":\"AAE=\"}}]}}",
        // a key given twice (the tree keeps the last)
        r#"{"dictionary":{"stringTable":["a"]},"dictionary":{"stringTable":["b"]}}"#,
        r#"{"dictionary":{"string_table":["a"],"stringTable":["b"]}}"#,
        // errors: types, ranges, syntax
        r#"{"dictionary":{"stackTable":[{"locationIndices":[4294967296]}]}}"#,
        r#"{"dictionary":{"stringTable":"a"}}"#,
        r#"{"dictionary":{"stringTable":[1]}}"#,
        r#"{"dictionary":{"stringTable":[null]}}"#,
        r#"{"dictionary":[]}"#,
        r#"{"dictionary":{"linkTable":[{"traceId":"xyz"}]}}"#,
        r#"{"resourceProfiles":[{"scopeProfiles":[{"profiles":[{"samples":[{"values":[1.5]}]}]}]}]}"#,
        r#"{"dictionary":{"#,
        r#"[]"#,
        r#"{}"#,
    ];
    for (i, text) in documents.iter().enumerate() {
        same(&format!("document {i}"), text, &descriptor);
        // The first takes the direct path; the rest go to `json::parse`,
        // the second for its key that names no field (`json::parse` says
        // what it drops).
        let direct = protoprof_codec::json_to_binary(text, &descriptor, 100);
        assert_eq!(direct.is_some(), i < 1 || *text == "{}", "document {i}");
    }
}

/// `json::print` writes, without a tree, the text of the tree
/// `json::message_value` builds: compact and pretty, on every corpus
/// profile as v1development and v1experimental, and on the relay's types.
#[test]
fn printing_without_a_tree_writes_the_trees_text() {
    let Some(corpus) = corpus_dir() else { return };
    let check = |message: &dyn MessageDyn| {
        let tree = json::message_value(message);
        assert_eq!(
            json::print(message, false),
            serde_json::to_string(&tree).unwrap()
        );
        assert_eq!(
            json::print(message, true),
            serde_json::to_string_pretty(&tree).unwrap()
        );
    };
    let mut seen = 0;
    for path in files_under(&corpus.join("pprof")).into_iter().step_by(4) {
        let bytes = read_profile_bytes(&path);
        let Ok(decoded) =
            protoprof_codec::decode::<protoprof_codec::PprofProfile>(&bytes, &Default::default())
        else {
            continue;
        };
        check(&decoded.message);
        if let Ok(d) = pprof_to_development(&decoded.message, &ToDevelopmentOptions::default()) {
            check(&d.value);
        }
        if let Ok(d) = pprof_to_otlp(&decoded.message, &ToOtlpOptions::default()) {
            check(&d);
        }
        seen += 1;
    }
    for path in files_under(&corpus.join("otlp")) {
        if let Ok(decoded) = decode_any(&read_profile_bytes(&path), None, &Default::default()) {
            check(&*decoded.decoded.message);
            seen += 1;
        }
    }
    assert!(seen > 20, "only {seen} messages");
}
