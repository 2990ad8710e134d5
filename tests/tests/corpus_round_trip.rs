//! Every real profile of the shared corpus decodes with the models, and
//! re-encoding gives bytes that decode to an equal message.

use std::path::Path;

use protobuf::Message;
use protoprof_model_otlp::opentelemetry::proto::collector::profiles::v1experimental::ExportProfilesServiceRequest;
use protoprof_model_otlp::opentelemetry::proto::profiles::v1experimental::ProfilesData;
use protoprof_model_pprof::perftools::profiles::Profile;
use protoprof_tests::{corpus_dir, files_under, read_profile_bytes};

/// Corpus files the plain model cannot decode, with the reason. rust-protobuf
/// decodes proto3 `string` fields strictly, and these string tables are not
/// UTF-8 (Go's pprof accepts them). Repairing them is the codec's job.
const PPROF_DECODE_FAILURES: &[(&str, &str)] = &[("pyroscope-test-invalid-utf8.pb.gz", "UTF-8")];

/// Decode -> encode -> decode gives an equal message, and encoding is
/// canonical: the second encoding equals the first. Returns whether the
/// first encoding reproduced the input bytes exactly.
fn round_trip<M: Message + PartialEq + std::fmt::Debug>(
    path: &Path,
    bytes: &[u8],
) -> Result<bool, String> {
    let decoded = M::parse_from_bytes(bytes).map_err(|e| e.to_string())?;
    let encoded = decoded.write_to_bytes().expect("encode a decoded message");
    let again = M::parse_from_bytes(&encoded).expect("decode our own encoding");
    assert!(
        again == decoded,
        "{}: re-decoded message differs",
        path.display()
    );
    assert_eq!(
        again.write_to_bytes().unwrap(),
        encoded,
        "{}: encoding is not stable",
        path.display()
    );
    Ok(encoded == bytes)
}

#[test]
fn every_pprof_file_round_trips() {
    let Some(corpus) = corpus_dir() else { return };
    let files = files_under(&corpus.join("pprof"));
    assert!(
        files.len() >= 40,
        "expected the corpus's pprof files, found {}",
        files.len()
    );
    let mut failures = Vec::new();
    let mut identical = 0;
    for path in &files {
        let bytes = read_profile_bytes(path);
        match round_trip::<Profile>(path, &bytes) {
            Ok(same) => identical += usize::from(same),
            Err(error) => failures.push((
                path.file_name().unwrap().to_string_lossy().into_owned(),
                error,
            )),
        }
    }
    eprintln!(
        "{} pprof files: {} decoded, {} re-encoded byte for byte (Go's encoder writes short repeated \
         fields unpacked, so most differ)",
        files.len(),
        files.len() - failures.len(),
        identical
    );
    let failed: Vec<&str> = failures.iter().map(|(name, _)| name.as_str()).collect();
    let expected: Vec<&str> = PPROF_DECODE_FAILURES
        .iter()
        .map(|(name, _)| *name)
        .collect();
    assert_eq!(failed, expected, "decode failures: {failures:?}");
    for ((name, error), (_, reason)) in failures.iter().zip(PPROF_DECODE_FAILURES) {
        assert!(
            error.contains(reason),
            "{name}: failed for another reason: {error}"
        );
    }
}

#[test]
fn every_v1experimental_file_round_trips_byte_for_byte() {
    let Some(corpus) = corpus_dir() else { return };
    let files = files_under(&corpus.join("otlp/v1experimental"));
    assert!(
        files.len() >= 4,
        "expected the corpus's v1experimental files"
    );
    for path in &files {
        let bytes = read_profile_bytes(path);
        // ProfilesData and ExportProfilesServiceRequest share one wire form.
        for same in [
            round_trip::<ProfilesData>(path, &bytes),
            round_trip::<ExportProfilesServiceRequest>(path, &bytes),
        ] {
            let same = same.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert!(same, "{}: re-encoding changed the bytes", path.display());
        }
        let data = ProfilesData::parse_from_bytes(&bytes).unwrap();
        let containers: usize = data
            .resource_profiles
            .iter()
            .flat_map(|r| &r.scope_profiles)
            .map(|s| s.profiles.len())
            .sum();
        assert!(containers >= 1, "{}: no profile inside", path.display());
    }
}
