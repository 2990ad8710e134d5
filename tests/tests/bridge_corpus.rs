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

/// A synthetic profile whose samples carry trace links (`every`: on every
/// sample, else on every other one) and timestamps.
fn with_links_and_timestamps(every: bool) -> PprofProfile {
    let mut p = protoprof_synth::profile(&protoprof_synth::Shape::with_samples(400, 5));
    let mut string = |s: &str| {
        p.string_table.push(s.to_string());
        p.string_table.len() as i64 - 1
    };
    let (trace, span, ts, ns) = (
        string("trace_id"),
        string("span_id"),
        string("timestamp"),
        string("nanoseconds"),
    );
    // Three distinct links, so link indices other than 0 are written.
    let trace_values: Vec<i64> = (0..3)
        .map(|k| string(&format!("0123456789abcdef0123456789abcde{k}")))
        .collect();
    let span_value = string("0123456789abcdef");
    let label = |key, str, num, num_unit| protoprof_model_pprof::perftools::profiles::Label {
        key,
        str,
        num,
        num_unit,
        ..Default::default()
    };
    for (i, sample) in p.sample.iter_mut().enumerate() {
        if every || i % 2 == 0 {
            sample.label.push(label(trace, trace_values[i % 3], 0, 0));
            sample.label.push(label(span, span_value, 0, 0));
        }
        sample
            .label
            .push(label(ts, 0, 1_700_000_000_000 + i as i64, ns));
    }
    p
}

/// Converting from the codec's view (samples read one at a time) gives
/// exactly the `ProfilesData` converting the whole model gives, and the
/// direct encoder writes exactly its bytes: on every pprof file of the
/// corpus, on a synthetic profile large enough for the second thread, and
/// on profiles with trace links (on all or some samples) and timestamps;
/// with labels as attributes and kept as labels; the content-hash id
/// included, and errors alike.
#[test]
fn the_view_and_the_direct_encoder_convert_as_the_model_does() {
    use protoprof_codec::decode_pprof_view;
    use protoprof_pprof_bridge::{pprof_to_otlp_bytes, ProfileId};
    let mut inputs: Vec<(String, Vec<u8>)> = Vec::new();
    let large = protoprof_synth::profile(&protoprof_synth::Shape::with_samples(60_000, 3));
    inputs.push(("synthetic".into(), large.write_to_bytes().unwrap()));
    for every in [true, false] {
        let linked = with_links_and_timestamps(every);
        inputs.push((
            format!("links on every sample: {every}"),
            linked.write_to_bytes().unwrap(),
        ));
    }
    if let Some(corpus) = corpus_dir() {
        for path in files_under(&corpus.join("pprof")) {
            inputs.push((path.display().to_string(), std::fs::read(&path).unwrap()));
        }
    }
    let mut as_bytes = 0;
    for keep_labels in [false, true] {
        let options = ToOtlpOptions {
            profile_id: ProfileId::ContentHash,
            keep_labels,
            ..ToOtlpOptions::default()
        };
        for (name, bytes) in &inputs {
            let decode_options = DecodeOptions::default();
            let model = decode::<PprofProfile>(bytes, &decode_options)
                .unwrap()
                .message;
            let view = decode_pprof_view(bytes, &decode_options).unwrap().message;
            as_bytes += usize::from(view.samples_are_bytes());
            match (
                pprof_to_otlp(&view, &options),
                pprof_to_otlp(&model, &options),
            ) {
                (Ok(from_view), Ok(from_model)) => {
                    assert!(from_view == from_model, "{name}");
                    let profile =
                        &from_model.resource_profiles[0].scope_profiles[0].profiles[0].profile;
                    if name.starts_with("links") && !keep_labels {
                        let linked = profile.sample.iter().filter(|s| s.link > 0).count();
                        let timed = profile
                            .sample
                            .iter()
                            .filter(|s| !s.timestamps_unix_nano.is_empty());
                        assert_eq!(
                            !profile.link_table.is_empty(),
                            name.ends_with("true"),
                            "{name}"
                        );
                        assert!(linked > 0 || !name.ends_with("true"), "{name}");
                        assert_eq!(timed.count(), profile.sample.len(), "{name}");
                    }
                    let encoded = from_model.write_to_bytes().unwrap();
                    let direct = pprof_to_otlp_bytes(&view, &options).unwrap();
                    assert!(direct == encoded, "{name}: direct encoding differs");
                }
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{name}"),
                (a, b) => panic!("{name}: view {:?}, model {:?}", a.err(), b.err()),
            }
        }
    }
    assert!(
        as_bytes * 10 >= inputs.len() * 2 * 8,
        "{as_bytes} of {}",
        inputs.len() * 2
    );
}

/// OTLP v1development (the current revision) → pprof: one profile that Go's
/// pprof accepts and protoprof validates clean, with one sample type per
/// distinct OTLP sample type and every sample's value under its own type.
/// The totals are computed here from the OTLP, independently of the bridge.
#[test]
fn current_v1development_files_convert_to_pprof_that_go_accepts() {
    use protoprof_model_otlp::opentelemetry::proto::profiles::v1development as dev;
    use protoprof_pprof_bridge::development_to_pprof;
    let Some(corpus) = corpus_dir() else { return };
    let out = tempfile::tempdir().unwrap();
    let mut written = Vec::new();
    for path in files_under(&corpus.join("otlp/v1development")) {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.contains("-1.10-") {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        let decoded = protoprof_codec::decode_any(&bytes, None, &Default::default()).unwrap();
        let data = decoded
            .decoded
            .message
            .downcast_ref::<dev::ProfilesData>()
            .unwrap();
        let converted = development_to_pprof(data);
        if name.contains("corrupted") {
            let error = converted.unwrap_err().to_string();
            assert!(
                error.contains("samples[0].stack_index") && error.contains("1000000000"),
                "{error}"
            );
            continue;
        }
        let pprof = converted.unwrap().value;
        let strings = &data.dictionary.string_table;
        let mut expected: Vec<((String, String), i64)> = Vec::new();
        let mut samples = 0;
        for profile in data
            .resource_profiles
            .iter()
            .flat_map(|r| &r.scope_profiles)
            .flat_map(|s| &s.profiles)
        {
            let t = profile.sample_type.as_ref().unwrap();
            let key = (
                strings[t.type_strindex as usize].clone(),
                strings[t.unit_strindex as usize].clone(),
            );
            let total: i64 = profile
                .samples
                .iter()
                .map(|s| {
                    if s.values.is_empty() {
                        s.timestamps_unix_nano.len() as i64
                    } else {
                        s.values.iter().sum()
                    }
                })
                .sum();
            samples += profile.samples.len();
            match expected.iter_mut().find(|(k, _)| *k == key) {
                Some((_, sum)) => *sum += total,
                None => expected.push((key, total)),
            }
        }
        let got: Vec<((String, String), i64)> = pprof
            .sample_type
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let key = (
                    pprof.string_table[t.type_ as usize].clone(),
                    pprof.string_table[t.unit as usize].clone(),
                );
                (key, pprof.sample.iter().map(|s| s.value[i]).sum())
            })
            .collect();
        assert_eq!(got, expected, "{name}");
        assert!(expected.len() >= 2, "{name}: {expected:?}");
        assert_eq!(pprof.sample.len(), samples, "{name}");
        let report = validate_pprof(&pprof, &Options::default());
        assert!(
            report.diagnostics.is_empty(),
            "{name}:\n{}",
            report.render_human()
        );
        let file = out.path().join(format!("{name}.pprof"));
        std::fs::write(&file, pprof.write_to_bytes().unwrap()).unwrap();
        written.push(file);
    }
    assert_eq!(written.len(), 2, "the .pb and the .json capture");
    if let Some(failures) = go_pprof_check(&written) {
        assert!(
            failures.is_empty(),
            "Go's pprof rejects:\n{}",
            failures.join("\n")
        );
    }
}

/// The round-trip laws for v1development on every pprof file of the corpus:
/// pprof -> v1development -> pprof is semantically equal to the input
/// without a warning, the v1development message validates clean (through
/// the wire), and v1development -> pprof -> v1development gives back the
/// very message (same tables, same order, same ids).
#[test]
fn every_pprof_file_survives_pprof_v1development_pprof() {
    use protoprof_model_otlp::opentelemetry::proto::profiles::v1development::ProfilesData as OtlpDevelopmentData;
    use protoprof_pprof_bridge::{
        development_to_pprof, pprof_to_development, ProfileId, ToDevelopmentOptions,
    };
    use protoprof_validate::validate_development_data;
    let Some(corpus) = corpus_dir() else { return };
    let options = ToDevelopmentOptions {
        profile_id: ProfileId::ContentHash,
        ..Default::default()
    };
    let mut converted_files = 0;
    for path in files_under(&corpus.join("pprof")) {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let input =
            decode::<PprofProfile>(&std::fs::read(&path).unwrap(), &DecodeOptions::default())
                .unwrap()
                .message;
        let converted = pprof_to_development(&input, &options);
        if let Some((_, why)) = NOT_CONVERTIBLE.iter().find(|(n, _)| *n == name) {
            assert!(converted.is_err(), "{name} converted although {why}");
            continue;
        }
        let converted = converted.unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            converted.warnings.is_empty(),
            "{name}: {:?}",
            converted.warnings
        );
        let data = converted.value;
        let data = OtlpDevelopmentData::parse_from_bytes(&data.write_to_bytes().unwrap()).unwrap();
        let report = validate_development_data(&data, &Options::default());
        assert!(
            report.is_valid() && report.warnings == 0,
            "{name}: v1development output not clean:\n{}",
            report.render_human()
        );
        let back = development_to_pprof(&data).unwrap();
        assert!(back.warnings.is_empty(), "{name}: {:?}", back.warnings);
        semantic::pprof_equal(&input, &back.value)
            .unwrap_or_else(|d| panic!("{name}: round trip changed the profile: {d}"));
        // The id comes back from its `otlp:` comment.
        let again = pprof_to_development(&back.value, &ToDevelopmentOptions::default())
            .unwrap()
            .value;
        assert!(
            again == data,
            "{name}: v1development -> pprof -> v1development changed the message"
        );
        converted_files += 1;
    }
    assert!(converted_files >= 42, "{converted_files} files converted");
}

/// Merging views (samples read from the bytes one at a time) gives the
/// profile that merging the decoded models gives, on every corpus pprof file
/// merged with itself and with the next file whose sample types match.
#[test]
fn merging_views_gives_what_merging_models_gives() {
    use protoprof_codec::decode_pprof_view;
    use protoprof_pprof_bridge::merge::merge;
    let Some(corpus) = corpus_dir() else { return };
    let inputs: Vec<(String, Vec<u8>)> = files_under(&corpus.join("pprof"))
        .into_iter()
        .map(|p| (p.display().to_string(), std::fs::read(&p).unwrap()))
        .collect();
    let options = DecodeOptions::default();
    let (mut merged, mut summed) = (0, 0);
    for (i, (name, bytes)) in inputs.iter().enumerate() {
        let (_, next) = &inputs[(i + 1) % inputs.len()];
        let models = [bytes, next].map(|b| decode::<PprofProfile>(b, &options).unwrap().message);
        let views = [bytes, next].map(|b| decode_pprof_view(b, &options).unwrap().message);
        for pair in [[0, 0], [0, 1]] {
            let from_models = merge(&pair.map(|k| models[k].clone()));
            let from_views = merge(&pair.map(|k| views[k].clone()));
            match (from_views, from_models) {
                (Ok(v), Ok(m)) => {
                    assert!(v == m, "{name}: {pair:?}");
                    merged += 1;
                    let samples: usize = pair.iter().map(|&k| models[k].sample.len()).sum();
                    summed += usize::from(v.sample.len() < samples);
                }
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{name}"),
                (a, b) => panic!("{name}: view {:?}, model {:?}", a.err(), b.err()),
            }
        }
    }
    // Most pairs merge, and equal samples are summed, not kept twice.
    assert!(merged >= inputs.len(), "{merged} of {}", inputs.len() * 2);
    assert!(summed >= inputs.len() / 2, "{summed}");
}

/// pprof → v1development written straight from the converted tables (from
/// the model and from the codec's view) is byte for byte the encoding of
/// the converted message: on every corpus pprof file, synthetic profiles
/// (one with 60,000 distinct stacks, past the two-thread thresholds), profiles with trace links on all or some samples, a profile
/// without sample types and one whose samples are short of values; errors
/// alike.
#[test]
fn the_direct_v1development_encoder_writes_the_message_encoding() {
    use protoprof_codec::decode_pprof_view;
    use protoprof_pprof_bridge::{
        pprof_to_development, pprof_to_development_bytes, ProfileId, ToDevelopmentOptions,
    };
    let mut inputs: Vec<(String, PprofProfile)> = vec![
        (
            "synthetic".into(),
            protoprof_synth::profile(&protoprof_synth::Shape::with_samples(30_000, 3)),
        ),
        (
            // Past every two-thread threshold (50,000 samples or stacks):
            // interning, encoding samples, the stack table written while
            // encoded.
            "distinct stacks".into(),
            protoprof_synth::profile(&protoprof_synth::Shape {
                stacks: protoprof_synth::Stacks::Distinct,
                ..protoprof_synth::Shape::with_samples(60_000, 4)
            }),
        ),
        (
            "links on every sample".into(),
            with_links_and_timestamps(true),
        ),
        (
            "links on some samples".into(),
            with_links_and_timestamps(false),
        ),
    ];
    let mut no_types = with_links_and_timestamps(false);
    no_types.sample_type.clear();
    no_types.sample.iter_mut().for_each(|s| s.value.clear());
    inputs.push(("no sample types".into(), no_types));
    let mut short = with_links_and_timestamps(true);
    short
        .sample
        .iter_mut()
        .step_by(3)
        .for_each(|s| s.value.truncate(1));
    inputs.push(("samples short of values".into(), short));
    if let Some(corpus) = corpus_dir() {
        for path in files_under(&corpus.join("pprof")) {
            let bytes = std::fs::read(&path).unwrap();
            let p = decode::<PprofProfile>(&bytes, &DecodeOptions::default());
            inputs.push((path.display().to_string(), p.unwrap().message));
        }
    }
    let options = ToDevelopmentOptions {
        profile_id: ProfileId::ContentHash,
        ..Default::default()
    };
    let mut compared = 0;
    for (name, model) in &inputs {
        let bytes = model.write_to_bytes().unwrap();
        let view = decode_pprof_view(&bytes, &DecodeOptions::default())
            .unwrap()
            .message;
        match (
            pprof_to_development(model, &options),
            pprof_to_development_bytes(model, &options),
            pprof_to_development_bytes(&view, &options),
        ) {
            (Ok(message), Ok(direct), Ok(from_view)) => {
                let encoded = message.value.write_to_bytes().unwrap();
                assert!(direct.value == encoded, "{name}: direct encoding differs");
                assert!(from_view.value == encoded, "{name}: from the view differs");
                assert_eq!(direct.warnings, message.warnings, "{name}");
                compared += 1;
            }
            (Err(a), Err(b), Err(c)) => {
                assert_eq!(a.to_string(), b.to_string(), "{name}");
                assert_eq!(a.to_string(), c.to_string(), "{name}");
            }
            (a, b, c) => panic!("{name}: {:?} {:?} {:?}", a.err(), b.err(), c.err()),
        }
    }
    assert!(
        compared + 1 >= inputs.len(),
        "{compared} of {}",
        inputs.len()
    );
}

/// The law between the bridge and the validator: every pprof input that
/// validates (the real profiles, the malformed set's valid ones, and a
/// profile whose function has no name, system name or filename) converts to
/// OTLP of both versions that validates, and back to the same profile.
#[test]
fn every_valid_input_converts_to_otlp_that_validates() {
    use protoprof_pprof_bridge::{
        development_to_pprof, pprof_to_development, ToDevelopmentOptions,
    };
    use protoprof_validate::validate_development_data;
    let Some(corpus) = corpus_dir() else { return };
    let mut inputs: Vec<(String, PprofProfile)> = Vec::new();
    for path in files_under(&corpus.join("pprof"))
        .into_iter()
        .chain(files_under(&corpus.join("malformed")))
    {
        let bytes = std::fs::read(&path).unwrap();
        let Ok(decoded) = decode::<PprofProfile>(&bytes, &DecodeOptions::default()) else {
            continue;
        };
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        inputs.push((name, decoded.message));
    }
    // A function that only a start line describes, as pprof allows.
    let mut nameless = inputs
        .iter()
        .find(|(name, _)| name == "go-cpu.pb.gz")
        .expect("go-cpu.pb.gz in the corpus")
        .1
        .clone();
    let f = &mut nameless.function[0];
    (f.name, f.system_name, f.filename, f.start_line) = (0, 0, 0, 12);
    // Negative line numbers, as Julia's pprof writes `start_line = -1` and
    // Go accepts: OTLP's are >= 0, so they travel in `pprof.profile.*`.
    let mut negative = nameless.clone();
    negative.function[1].start_line = -1;
    let line = &mut negative.location[0].line[0];
    (line.line, line.column) = (-1, -3);
    negative.location[1].line[0].column = -2;
    assert!(validate_pprof(&negative, &Options::default()).is_valid());
    inputs.push(("negative line numbers".into(), negative));
    inputs.push(("nameless function".into(), nameless));
    let mut checked = 0;
    for (name, input) in &inputs {
        if !validate_pprof(input, &Options::default()).is_valid() {
            continue;
        }
        let development = pprof_to_development(input, &ToDevelopmentOptions::default())
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .value;
        let report = validate_development_data(&development, &Options::default());
        assert!(report.is_valid(), "{name}:\n{}", report.render_human());
        let back = development_to_pprof(&development).unwrap().value;
        semantic::pprof_equal(input, &back).unwrap_or_else(|d| panic!("{name}: {d}"));
        let experimental = pprof_to_otlp(input, &ToOtlpOptions::default()).unwrap();
        let report = validate_profiles_data(&experimental, &Options::default());
        assert!(report.is_valid(), "{name}:\n{}", report.render_human());
        checked += 1;
    }
    assert!(checked >= 50, "only {checked} valid inputs");
    // The nameless function is said, as a warning (--strict fails it).
    let (_, nameless) = inputs.last().unwrap();
    let development = pprof_to_development(nameless, &ToDevelopmentOptions::default())
        .unwrap()
        .value;
    let report = validate_development_data(&development, &Options::default());
    assert_eq!(
        report.count("OTLPDEV-FUNC-001"),
        1,
        "{}",
        report.render_human()
    );
}
