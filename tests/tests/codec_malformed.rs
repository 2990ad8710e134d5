//! Every file of `malformed/` gets the outcome its README asks for: a clear
//! error of the right kind, or acceptance (with the right warnings) where
//! the bytes are legal protobuf. No panic, bounded memory.

use std::path::Path;

use protobuf::Message;
use protoprof_codec::{
    decode, decode_any, CodecError, DecodeOptions, Decoded, WarningKind, WireProblem,
};
use protoprof_model_otlp::opentelemetry::proto::profiles::v1experimental::ProfilesData;
use protoprof_model_pprof::perftools::profiles::Profile;
use protoprof_tests::{corpus_dir, files_under};

/// What decoding one file must give.
enum Expect {
    /// Decodes with no warning.
    Clean,
    /// Decodes to the same message as `base-valid.pb`.
    SameAsBase,
    /// Decodes with at least one warning of this kind (compared by variant).
    Warns(fn(&WarningKind) -> bool),
    /// Fails with an error this predicate accepts.
    Fails(fn(&CodecError) -> bool),
}

use Expect::*;

fn wire(problem: fn(&WireProblem) -> bool) -> impl Fn(&CodecError) -> bool {
    move |e| matches!(e, CodecError::Wire { problem: p, .. } if problem(p))
}

fn expectation(name: &str) -> Expect {
    match name {
        "base-valid.pb"
        | "base-valid.pb.gz"
        | "sample-fields-unpacked.pb"
        | "gzip-two-members.pb.gz" => SameAsBase,
        "empty.pb" => Fails(|e| matches!(e, CodecError::Empty)),
        "random-4k.bin" => Fails(|e| matches!(e, CodecError::Wire { .. })),
        "bom-json.json" | "invalid-wire-type-7.pb" => {
            Fails(|e| wire(|p| *p == WireProblem::InvalidWireType(7))(e))
        }
        "zlib-not-gzip.pb.z" => Fails(|e| matches!(e, CodecError::Zlib)),
        "truncated-mid-varint.pb" => Fails(|e| wire(|p| *p == WireProblem::TruncatedVarint)(e)),
        "truncated-mid-length-delimited.pb" | "length-prefix-2pow62.pb" => {
            Fails(|e| wire(|p| matches!(p, WireProblem::LengthExceedsInput { .. }))(e))
        }
        "varint-11-bytes.pb" => Fails(|e| wire(|p| *p == WireProblem::VarintTooLong)(e)),
        "varint-10-bytes-overflow.pb" => Fails(|e| wire(|p| *p == WireProblem::VarintOverflow)(e)),
        "field-number-zero.pb" | "gzip-bomb-1gib-zeros.pb.gz" => {
            Fails(|e| wire(|p| *p == WireProblem::FieldNumberZero)(e))
        }
        "packed-varint-truncated.pb" => Fails(|e| wire(|p| *p == WireProblem::TruncatedPacked)(e)),
        "nested-unknown-groups-100k.pb" | "otlp-v1experimental-nested-anyvalue-100k.pb" => {
            Fails(|e| wire(|p| matches!(p, WireProblem::DepthExceeded { .. }))(e))
        }
        "wrong-wire-type-sample-varint.pb" | "wrong-wire-type-time-nanos-bytes.pb" => {
            Warns(|w| matches!(w, WarningKind::WrongWireType { .. }))
        }
        "time-nanos-twice.pb" => {
            Warns(|w| matches!(w, WarningKind::RepeatedSingularField { field: 9, count: 2 }))
        }
        "string-table-invalid-utf8.pb" | "pyroscope-invalid-utf8.pb.gz" => {
            Warns(|w| matches!(w, WarningKind::InvalidUtf8Repaired))
        }
        "gzip-bad-crc.pb.gz" | "gzip-bad-isize.pb.gz" => {
            Fails(|e| matches!(e, CodecError::GzipChecksum { .. }))
        }
        "gzip-truncated.pb.gz" | "gzip-header-only.pb.gz" => {
            Fails(|e| matches!(e, CodecError::GzipTruncated { .. }))
        }
        "gzip-trailing-garbage.pb.gz" => {
            Fails(|e| matches!(e, CodecError::GzipTrailingData { .. }))
        }
        "gzip-bomb-1gib-unknown-field.pb.gz" => {
            Fails(|e| matches!(e, CodecError::InflatedTooLarge { .. }))
        }
        // Legal protobuf whose problems are the validator's business.
        "duplicate-location-id.pb"
        | "function-id-zero.pb"
        | "label-str-and-num.pb"
        | "line-unknown-function-id.pb"
        | "location-id-zero.pb"
        | "location-unknown-mapping-id.pb"
        | "nested-unknown-field-100k.pb"
        | "nested-unknown-field-in-sample-100k.pb"
        | "sample-stack-100k-frames.pb"
        | "sample-unknown-location-id.pb"
        | "sample-value-count-mismatch.pb"
        | "sample-values-int64-extremes.pb"
        | "string-index-negative.pb"
        | "string-index-out-of-range.pb"
        | "string-table-0-not-empty.pb"
        | "string-table-missing.pb" => Clean,
        // rust-protobuf drops groups: never silently.
        "unknown-field-group-wire-type.pb" => {
            Warns(|w| matches!(w, WarningKind::GroupDropped { field: 100 }))
        }
        n if n.starts_with("otlp-v1experimental-") => Clean,
        other => panic!("no expectation for malformed/{other}; add one"),
    }
}

fn decode_as_its_type(
    path: &Path,
    options: &DecodeOptions,
) -> Result<(Vec<u8>, Decoded<()>), CodecError> {
    let input = std::fs::read(path).unwrap();
    let name = path.file_name().unwrap().to_string_lossy();
    let (bytes, decoded) = if name.starts_with("otlp-") {
        let d = decode::<ProfilesData>(&input, options)?;
        (
            d.message.write_to_bytes().unwrap(),
            Decoded {
                message: (),
                warnings: d.warnings,
                warnings_suppressed: 0,
                gzipped: d.gzipped,
            },
        )
    } else {
        let d = decode::<Profile>(&input, options)?;
        (
            d.message.write_to_bytes().unwrap(),
            Decoded {
                message: (),
                warnings: d.warnings,
                warnings_suppressed: 0,
                gzipped: d.gzipped,
            },
        )
    };
    Ok((bytes, decoded))
}

#[test]
fn every_malformed_file_gets_its_expected_outcome() {
    let Some(corpus) = corpus_dir() else { return };
    let dir = corpus.join("malformed");
    let options = DecodeOptions::default();
    let base = decode::<Profile>(&std::fs::read(dir.join("base-valid.pb")).unwrap(), &options)
        .expect("base-valid decodes")
        .message;
    let mut checked = 0;
    for path in files_under(&dir)
        .into_iter()
        .filter(|p| p.extension().is_none_or(|e| e != "md"))
    {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let result = decode_as_its_type(&path, &options);
        match (expectation(&name), result) {
            (Clean, Ok((_, d))) => assert!(
                d.warnings.is_empty(),
                "{name}: unexpected warnings {:?}",
                d.warnings
            ),
            (SameAsBase, Ok((bytes, d))) => {
                assert!(d.warnings.is_empty(), "{name}: {:?}", d.warnings);
                assert_eq!(Profile::parse_from_bytes(&bytes).unwrap(), base, "{name}");
            }
            (Warns(kind), Ok((_, d))) => assert!(
                d.warnings.iter().any(|w| kind(&w.kind)),
                "{name}: expected warning missing, got {:?}",
                d.warnings
            ),
            (Fails(accepts), Err(error)) => {
                assert!(accepts(&error), "{name}: wrong error: {error}")
            }
            (Fails(_), Ok(_)) => panic!("{name}: accepted, must fail"),
            (_, Err(error)) => panic!("{name}: must decode, failed: {error}"),
        }
        checked += 1;
    }
    assert!(checked >= 50, "only {checked} malformed files found");
}

#[test]
fn errors_name_the_byte_offset_and_field_path() {
    let Some(corpus) = corpus_dir() else { return };
    let dir = corpus.join("malformed");
    let read = |name: &str| std::fs::read(dir.join(name)).unwrap();
    let options = DecodeOptions::default();
    let error = decode::<Profile>(&read("packed-varint-truncated.pb"), &options).unwrap_err();
    let text = error.to_string();
    assert!(
        text.contains("sample[") && text.contains("location_id"),
        "{text}"
    );
    let error =
        decode::<Profile>(&read("truncated-mid-length-delimited.pb"), &options).unwrap_err();
    assert_eq!(
        error.to_string(),
        "malformed protobuf at byte 12 in sample[0]: length prefix claims 18 bytes but only 4 are left in the enclosing message"
    );
    let warned = decode::<Profile>(&read("string-table-invalid-utf8.pb"), &options).unwrap();
    let paths: Vec<&str> = warned.warnings.iter().map(|w| w.path.as_str()).collect();
    assert!(
        paths.iter().all(|p| p.starts_with("string_table[")),
        "{paths:?}"
    );
    assert_eq!(paths.len(), 5, "five invalid strings: {paths:?}");
}

#[test]
fn strict_utf8_rejects_and_names_the_string() {
    let Some(corpus) = corpus_dir() else { return };
    let input = std::fs::read(corpus.join("malformed/string-table-invalid-utf8.pb")).unwrap();
    let strict = DecodeOptions {
        strict_utf8: true,
        ..Default::default()
    };
    match decode::<Profile>(&input, &strict) {
        Err(CodecError::InvalidUtf8 { path, .. }) => {
            assert!(path.starts_with("string_table["), "{path}")
        }
        other => panic!("expected InvalidUtf8, got {other:?}"),
    }
    // The repaired profile re-encodes as valid protobuf that strict mode accepts.
    let repaired = decode::<Profile>(&input, &DecodeOptions::default())
        .unwrap()
        .message;
    let again = decode::<Profile>(&repaired.write_to_bytes().unwrap(), &strict).unwrap();
    assert!(again
        .message
        .string_table
        .iter()
        .any(|s| s.contains('\u{fffd}')));
}

#[test]
fn nested_wire_type_surprises_are_kept_and_reported_when_thorough() {
    // sample[0] whose location_id (field 1, varint) arrives as fixed64, then
    // string_table [""].
    let bytes = protoprof_tests::hex("12 09 09 01 00 00 00 00 00 00 00  32 00");
    let default = decode::<Profile>(&bytes, &DecodeOptions::default()).unwrap();
    assert!(default.warnings.is_empty());
    // Not misread as a location id, and not lost: kept as an unknown field.
    let sample = &default.message.sample[0];
    assert!(sample.location_id.is_empty());
    assert_eq!(sample.special_fields.unknown_fields().iter().count(), 1);
    assert_eq!(default.message.write_to_bytes().unwrap(), bytes);

    let thorough = decode::<Profile>(
        &bytes,
        &DecodeOptions {
            thorough: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(thorough.warnings.len(), 1);
    assert_eq!(thorough.warnings[0].path, "sample[0].location_id[0]");
    assert!(matches!(
        thorough.warnings[0].kind,
        WarningKind::WrongWireType {
            field: 1,
            expected: 0,
            found: 1
        }
    ));
}

/// Detection never reads input that is broken as its own type as some other
/// type: what decoding as the file's type refuses, decoding with detection
/// refuses too (issue 13: two such files were "valid" relay messages).
#[test]
fn detection_never_reads_broken_input_as_another_type() {
    let Some(corpus) = corpus_dir() else { return };
    let options = DecodeOptions::default();
    let mut checked = 0;
    for path in files_under(&corpus.join("malformed")) {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        // bom-json.json is OTLP/JSON behind a byte-order mark: broken as
        // binary protobuf, readable as what it is.
        let skipped = name.ends_with(".md") || name == "bom-json.json";
        if skipped || !matches!(expectation(&name), Fails(_)) {
            continue;
        }
        if let Ok(decoded) = decode_any(&std::fs::read(&path).unwrap(), None, &options) {
            panic!(
                "{name}: broken, yet read as {}",
                decoded.descriptor.full_name()
            );
        }
        checked += 1;
    }
    assert!(checked >= 20, "only {checked} broken files found");
}

/// The error names the type the input most plausibly is, and what is wrong.
#[test]
fn detection_names_the_plausible_type_and_the_problem() {
    let Some(corpus) = corpus_dir() else { return };
    let read = |name: &str| std::fs::read(corpus.join("malformed").join(name)).unwrap();
    let options = DecodeOptions::default();
    let truncated = read("packed-varint-truncated.pb");
    // Where decoding it as a profile breaks, detection says it breaks.
    let Err(CodecError::Wire {
        offset: at,
        path: in_path,
        ..
    }) = decode::<Profile>(&truncated, &options)
    else {
        panic!("packed-varint-truncated.pb decodes as a Profile")
    };
    match decode_any(&truncated, None, &options) {
        Err(CodecError::Malformed {
            message,
            offset,
            path,
            problem,
        }) => {
            assert_eq!(message, "perftools.profiles.Profile");
            assert_eq!(problem, WireProblem::TruncatedPacked);
            assert_eq!((offset, path.as_str()), (at, in_path.as_str()));
            assert!(path.starts_with("sample[0]"), "{path}");
        }
        other => panic!(
            "packed-varint-truncated.pb: {:?}",
            other.map(|d| d.descriptor)
        ),
    }
    let deep = read("otlp-v1experimental-nested-anyvalue-100k.pb");
    match decode_any(&deep, None, &options) {
        Err(error @ CodecError::Malformed { .. }) => {
            let CodecError::Malformed {
                message, problem, ..
            } = &error
            else {
                unreachable!()
            };
            assert!(message.contains("profiles.v1experimental"), "{message}");
            assert_eq!(*problem, WireProblem::DepthExceeded { limit: 100 });
            let text = error.to_string();
            assert!(
                text.contains("nesting deeper than the limit of 100"),
                "{text}"
            );
            assert!(
                text.len() < 400,
                "one line, not the input: {} bytes",
                text.len()
            );
        }
        other => panic!("nested-anyvalue-100k: {:?}", other.map(|d| d.descriptor)),
    }
}
