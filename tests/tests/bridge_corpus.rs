//! The round-trip law on the real corpus: pprof -> OTLP -> pprof and
//! OTLP -> pprof -> OTLP are semantically equal; the OTLP output validates;
//! the pprof output validates and Go's own parser accepts it.

use protobuf::Message;
use protoprof_codec::{decode, DecodeOptions, OtlpProfilesData, PprofProfile};
use protoprof_pprof_bridge::{otlp_to_pprof, pprof_to_otlp, semantic, ToOtlpOptions};
use protoprof_tests::{corpus_dir, files_under, go_pprof_check};
use protoprof_validate::{validate_pprof, validate_profiles_data, Options};

/// Real files that cannot be converted, with the reason.
const NOT_CONVERTIBLE: &[(&str, &str)] = &[(
    "dotnet-multi-function-id-0.pb",
    "every function has id 0, so the lines' function ids resolve to nothing (Go rejects the file too)",
)];

#[test]
fn every_pprof_file_survives_pprof_otlp_pprof() {
    let Some(corpus) = corpus_dir() else { return };
    let out = tempfile::tempdir().unwrap();
    let mut written = Vec::new();
    for path in files_under(&corpus.join("pprof")) {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let input =
            decode::<PprofProfile>(&std::fs::read(&path).unwrap(), &DecodeOptions::default())
                .unwrap()
                .message;
        let converted = pprof_to_otlp(&input, &ToOtlpOptions::default());
        if let Some((_, why)) = NOT_CONVERTIBLE.iter().find(|(n, _)| *n == name) {
            assert!(converted.is_err(), "{name} converted although {why}");
            continue;
        }
        let otlp = converted.unwrap_or_else(|e| panic!("{name}: {e}"));
        let report = validate_profiles_data(&otlp, &Options::default());
        assert!(
            report.is_valid(),
            "{name}: OTLP output invalid:\n{}",
            report.render_human()
        );
        // Through the wire, as a user would send it.
        let otlp = OtlpProfilesData::parse_from_bytes(&otlp.write_to_bytes().unwrap()).unwrap();
        let back = otlp_to_pprof(&otlp).unwrap();
        assert!(back.warnings.is_empty(), "{name}: {:?}", back.warnings);
        let [pprof] = &back.value[..] else {
            panic!("{name}: one container, one profile")
        };
        semantic::pprof_equal(&input, pprof)
            .unwrap_or_else(|d| panic!("{name}: round trip changed the profile: {d}"));
        let report = validate_pprof(pprof, &Options::default());
        let input_report = validate_pprof(&input, &Options::default());
        assert_eq!(
            report.errors,
            input_report.errors,
            "{name}:\n{}",
            report.render_human()
        );
        let file = out.path().join(format!("{name}.pb"));
        std::fs::write(&file, pprof.write_to_bytes().unwrap()).unwrap();
        written.push(file);
    }
    assert!(written.len() >= 42, "{} files converted", written.len());
    if let Some(failures) = go_pprof_check(&written) {
        assert!(
            failures.is_empty(),
            "Go's pprof rejects converted profiles:\n{}",
            failures.join("\n")
        );
    }
}

#[test]
fn every_otlp_file_survives_otlp_pprof_otlp() {
    let Some(corpus) = corpus_dir() else { return };
    let out = tempfile::tempdir().unwrap();
    let mut written = Vec::new();
    for path in files_under(&corpus.join("otlp/v1experimental")) {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let input =
            decode::<OtlpProfilesData>(&std::fs::read(&path).unwrap(), &DecodeOptions::default())
                .unwrap()
                .message;
        let pprofs = otlp_to_pprof(&input).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(pprofs.warnings.is_empty(), "{name}: {:?}", pprofs.warnings);
        let mut containers = Vec::new();
        let mut envelope = None;
        for (i, p) in pprofs.value.iter().enumerate() {
            let report = validate_pprof(p, &Options::default());
            assert!(
                report.is_valid(),
                "{name}: pprof invalid:\n{}",
                report.render_human()
            );
            let file = out.path().join(format!("{name}.{i}.pb"));
            std::fs::write(&file, p.write_to_bytes().unwrap()).unwrap();
            written.push(file);
            let (container, env) =
                protoprof_pprof_bridge::pprof_to_container(p, &ToOtlpOptions::default()).unwrap();
            containers.push(container);
            envelope = Some(env);
        }
        let again = envelope.unwrap().wrap(containers);
        semantic::otlp_equal(&input, &again)
            .unwrap_or_else(|d| panic!("{name}: round trip changed the data: {d}"));
    }
    assert!(written.len() >= 5);
    if let Some(failures) = go_pprof_check(&written) {
        assert!(
            failures.is_empty(),
            "Go's pprof rejects converted profiles:\n{}",
            failures.join("\n")
        );
    }
}

/// Converting from the codec's view (samples read one at a time) gives
/// exactly the `ProfilesData` converting the whole model gives, on every
/// pprof file of the corpus and on a synthetic profile large enough for the
/// second thread; the content-hash profile id included, and errors alike.
#[test]
fn the_view_converts_as_the_model_does() {
    use protoprof_codec::decode_pprof_view;
    use protoprof_pprof_bridge::{pprof_samples_to_otlp, ProfileId};
    let options = ToOtlpOptions {
        profile_id: ProfileId::ContentHash,
        ..ToOtlpOptions::default()
    };
    let mut inputs: Vec<(String, Vec<u8>)> = Vec::new();
    let large = protoprof_synth::profile(&protoprof_synth::Shape::with_samples(60_000, 3));
    inputs.push(("synthetic".into(), large.write_to_bytes().unwrap()));
    if let Some(corpus) = corpus_dir() {
        for path in files_under(&corpus.join("pprof")) {
            inputs.push((path.display().to_string(), std::fs::read(&path).unwrap()));
        }
    }
    let mut as_bytes = 0;
    for (name, bytes) in &inputs {
        let decode_options = DecodeOptions::default();
        let model = decode::<PprofProfile>(bytes, &decode_options)
            .unwrap()
            .message;
        let view = decode_pprof_view(bytes, &decode_options).unwrap().message;
        as_bytes += usize::from(view.samples_are_bytes());
        match (
            pprof_samples_to_otlp(&view, &options),
            pprof_to_otlp(&model, &options),
        ) {
            (Ok(from_view), Ok(from_model)) => assert!(from_view == from_model, "{name}"),
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{name}"),
            (a, b) => panic!("{name}: view {:?}, model {:?}", a.err(), b.err()),
        }
    }
    assert!(
        as_bytes * 10 >= inputs.len() * 8,
        "{as_bytes} of {}",
        inputs.len()
    );
}
