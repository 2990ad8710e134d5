//! Every real profile of the corpus validates with no errors, or with the
//! errors that really are in it (each documented below), and every
//! malformed file whose problem is semantic gets the rule that names it.

use std::collections::BTreeMap;
use std::ops::RangeInclusive;

use protoprof_codec::{decode_any, DecodeOptions};
use protoprof_tests::{corpus_dir, files_under};
use protoprof_validate::{validate_message, Options, Report};

fn validate_file(path: &std::path::Path, type_name: Option<&str>) -> Report {
    let input = std::fs::read(path).unwrap();
    let decoded = decode_any(&input, type_name, &DecodeOptions::default())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    validate_message(&*decoded.decoded.message, &Options::default()).expect("a type with rules")
}

/// Real files whose findings are genuine, with the reason.
fn known_findings(name: &str) -> Option<(&'static [&'static str], &'static str)> {
    match name {
        "dotnet-multi-function-id-0.pb" => Some((
            &["PPROF-ID-001", "PPROF-REF-003"],
            "the .NET profiler writes every function with id 0 (Go's CheckValid rejects it too), so lines \
             naming function ids find no function",
        )),
        "v1development-1.10-ebpf-corrupted-stack-index-export-request.pb" => Some((
            &["OTLPDEV-REF-001", "OTLPDEV-TIME-001"],
            "pyroscope set every Sample.stack_index to 1000000000 (25 stacks); and, as in the \
             uncorrupted capture, one timestamp equals time + duration, just outside [time, time + \
             duration)",
        )),
        "v1development-1.8-ebpf-export-request.pb" => Some((
            &["OTLPDEV-TIME-001"],
            "warnings only: as in the v1.10 capture, the eBPF profiler puts last timestamps exactly at \
             time + duration",
        )),
        "ebpf-cpu-rust-unmapped.pb.gz" => Some((
            &["PPROF-LOC-001"],
            "warnings only: this eBPF profiler writes file-relative addresses next to runtime mapping ranges",
        )),
        _ => None,
    }
}

#[test]
fn real_profiles_have_no_errors_but_the_documented_ones() {
    let Some(corpus) = corpus_dir() else { return };
    let mut files = files_under(&corpus.join("pprof"));
    files.extend(files_under(&corpus.join("otlp/v1experimental")));
    // v1development as protoprof reads it: v1.10.0/v1.11.0 as it is,
    // v1.8.0/v1.9.0 upgraded (a misread v1.8 sample would break indices);
    // older revisions are named by detection, not read.
    files.extend(
        files_under(&corpus.join("otlp/v1development"))
            .into_iter()
            .filter(|p| {
                ["-1.10-", "-1.8-"]
                    .iter()
                    .any(|r| p.to_string_lossy().contains(r))
            }),
    );
    assert!(files.len() >= 50);
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let report = validate_file(&path, None);
        let found: Vec<&str> = report.counts.iter().map(|c| c.code).collect();
        match known_findings(&name) {
            Some((codes, _why)) => assert_eq!(found, codes, "{name}:\n{}", report.render_human()),
            None => assert!(
                report.diagnostics.is_empty(),
                "{name}:\n{}",
                report.render_human()
            ),
        }
    }
}

#[test]
fn malformed_files_get_the_rule_that_names_their_problem() {
    let Some(corpus) = corpus_dir() else { return };
    let expected: BTreeMap<&str, &[&str]> = BTreeMap::from([
        (
            "duplicate-location-id.pb",
            &["PPROF-ID-002", "PPROF-REF-003"][..],
        ),
        ("function-id-zero.pb", &["PPROF-ID-001", "PPROF-REF-004"]),
        ("label-str-and-num.pb", &["PPROF-LABEL-002"]),
        ("line-unknown-function-id.pb", &["PPROF-REF-003"]),
        ("location-id-zero.pb", &["PPROF-ID-001", "PPROF-REF-004"]),
        ("location-unknown-mapping-id.pb", &["PPROF-REF-003"]),
        ("sample-unknown-location-id.pb", &["PPROF-REF-003"]),
        ("sample-value-count-mismatch.pb", &["PPROF-SAMPLE-001"]),
        ("string-index-negative.pb", &["PPROF-REF-002"]),
        ("string-index-out-of-range.pb", &["PPROF-REF-001"]),
        ("string-table-0-not-empty.pb", &["PPROF-STR-002"]),
        ("string-table-missing.pb", &["PPROF-STR-001"]),
        ("nested-unknown-field-100k.pb", &["PPROF-UNK-001"]),
        ("wrong-wire-type-sample-varint.pb", &["PPROF-UNK-001"]),
        (
            "otlp-v1experimental-attribute-index-out-of-range.pb",
            &["OTLP-REF-001"],
        ),
        (
            "otlp-v1experimental-function-index-out-of-range.pb",
            &["OTLP-REF-001"],
        ),
        (
            "otlp-v1experimental-location-index-out-of-range.pb",
            &["OTLP-REF-001"],
        ),
        (
            "otlp-v1experimental-stack-slice-out-of-range.pb",
            &["OTLP-REF-003"],
        ),
        ("otlp-v1experimental-profile-id-zero.pb", &["OTLP-PID-002"]),
        ("otlp-v1experimental-profile-id-short.pb", &["OTLP-PID-001"]),
        (
            "otlp-v1experimental-end-before-start.pb",
            &["OTLP-TIME-001"],
        ),
        ("otlp-v1experimental-valid-small.pb", &[]),
        ("base-valid.pb", &[]),
    ]);
    for (name, codes) in expected {
        let type_name = if name.starts_with("otlp-") {
            "opentelemetry.proto.profiles.v1experimental.ProfilesData"
        } else {
            "perftools.profiles.Profile"
        };
        let report = validate_file(&corpus.join("malformed").join(name), Some(type_name));
        let found: Vec<&str> = report.counts.iter().map(|c| c.code).collect();
        assert_eq!(found, codes, "{name}:\n{}", report.render_human());
    }
}

/// Every pprof file of the corpus (real and malformed) that decodes gets the
/// same report from the codec's view, samples read one at a time, as from
/// the whole model; and the view keeps real profiles' samples as bytes.
#[test]
fn the_view_validates_every_pprof_file_as_the_model_does() {
    use protoprof_codec::{decode, decode_pprof_view, PprofProfile};
    use protoprof_model_meta::SampleSource;
    use protoprof_validate::validate_pprof;
    let Some(corpus) = corpus_dir() else { return };
    let mut files = files_under(&corpus.join("pprof"));
    files.extend(files_under(&corpus.join("malformed")));
    let options = DecodeOptions::default();
    let strict = Options {
        max_per_rule: 1,
        ..Options::default()
    };
    let (mut compared, mut as_bytes) = (0, 0);
    for path in files {
        let input = std::fs::read(&path).unwrap();
        let Ok(model) = decode::<PprofProfile>(&input, &options) else {
            continue;
        };
        let view_noting = |sample_summary| {
            let options = DecodeOptions {
                sample_summary,
                ..options.clone()
            };
            decode_pprof_view(&input, &options)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
                .message
        };
        let (view, bounded) = (view_noting(false), view_noting(true));
        assert_eq!(view.field_range(1), None, "{}", path.display());
        if view.samples_are_bytes() {
            let ids = model.message.sample.iter().flat_map(|s| &s.location_id);
            let (low, high) = (ids.clone().min(), ids.max());
            let range = bounded.field_range(1).expect("noted");
            let expected = low
                .zip(high)
                .map_or(RangeInclusive::new(u64::MAX, 0), |(low, high)| *low..=*high);
            assert_eq!(range, expected, "{}", path.display());
            let mut counts = model.message.sample.iter().map(|s| s.value.len());
            let first = counts.next();
            let common = first.filter(|&first| counts.all(|count| count == first));
            assert_eq!(bounded.common_value_count(), common, "{}", path.display());
        }
        for validation in [Options::default(), strict] {
            let report = validate_pprof(&model.message, &validation);
            assert_eq!(
                validate_pprof(&view, &validation),
                report,
                "{}",
                path.display()
            );
            assert_eq!(
                validate_pprof(&bounded, &validation),
                report,
                "{}",
                path.display()
            );
        }
        compared += 1;
        as_bytes += usize::from(view.samples_are_bytes());
    }
    assert!(compared >= 45, "{compared} files compared");
    assert!(as_bytes * 10 >= compared * 8, "{as_bytes} of {compared}");
}

/// A view that sums its samples up skips looking each location id up only
/// when every id between the bounds names a location: an id of 0, one
/// missing in a gap of the ids, or one past them is reported as the model
/// reports it, and so are labels, which are read either way. Values are
/// counted once for all only when every sample has as many.
#[test]
fn a_sample_summary_leaves_no_bad_reference_or_value_count_unreported() {
    use protobuf::Message;
    use protoprof_codec::{decode_pprof_view, PprofProfile};
    use protoprof_model_meta::SampleSource;
    use protoprof_model_pprof::perftools::profiles::{Label, Location, Sample, ValueType};
    use protoprof_validate::validate_pprof;
    let profile = |locations: &[u64], ids: &[u64], label_key: i64, values: usize| {
        let mut p = PprofProfile::new();
        p.string_table = ["", "samples", "count", "key"].map(String::from).to_vec();
        let mut sample_type = ValueType::new();
        (sample_type.type_, sample_type.unit) = (1, 2);
        p.sample_type.push(sample_type);
        for &id in locations {
            let mut location = Location::new();
            location.id = id;
            p.location.push(location);
        }
        // Enough samples for the check to run on two threads.
        for i in 0..60_000 {
            let mut sample = Sample::new();
            sample.location_id = vec![1, 2];
            sample.value = vec![1];
            if i == 40_000 {
                sample.location_id = ids.to_vec();
                sample.value = vec![1; values];
                let mut label = Label::new();
                (label.key, label.str) = (label_key, 1);
                sample.label.push(label);
            }
            p.sample.push(sample);
        }
        p
    };
    let options = DecodeOptions {
        sample_summary: true,
        ..DecodeOptions::default()
    };
    let locations = [1, 2, 3, 5];
    // Location ids, a sample's ids, its label's key and its value count,
    // the rules reported.
    type Case<'a> = (&'a [u64], &'a [u64], i64, usize, &'a [&'a str]);
    let cases: [Case; 8] = [
        (&locations, &[3, 5], 3, 1, &[]),
        (&locations, &[0], 3, 1, &["PPROF-REF-004"]),
        // A location with id 0 does not make a reference of 0 valid.
        (&[0, 1, 2], &[0], 3, 1, &["PPROF-ID-001", "PPROF-REF-004"]),
        (&locations, &[4], 3, 1, &["PPROF-REF-003"]),
        (&locations, &[6, 1], 3, 1, &["PPROF-REF-003"]),
        (&locations, &[5], 9, 1, &["PPROF-REF-001"]),
        (&locations, &[5], 3, 2, &["PPROF-SAMPLE-001"]),
        (&locations, &[5], 3, 0, &["PPROF-SAMPLE-001"]),
    ];
    for (locations, ids, label_key, values, codes) in cases {
        let model = profile(locations, ids, label_key, values);
        let bytes = model.write_to_bytes().unwrap();
        let view = decode_pprof_view(&bytes, &options).unwrap().message;
        assert!(view.samples_are_bytes());
        let (low, high) = (
            ids.iter().min().unwrap().min(&1),
            ids.iter().max().unwrap().max(&2),
        );
        assert_eq!(view.field_range(1), Some(*low..=*high), "{ids:?}");
        let common = (values == 1).then_some(1);
        assert_eq!(view.common_value_count(), common, "{values} values");
        let report = validate_pprof(&view, &Options::default());
        assert_eq!(
            report,
            validate_pprof(&model, &Options::default()),
            "{ids:?}"
        );
        let found: Vec<&str> = report.counts.iter().map(|c| c.code).collect();
        assert_eq!(found, codes, "{ids:?}: {}", report.render_human());
    }
}

#[test]
fn the_corrupted_v1development_file_gets_one_error_per_bad_stack_index() {
    let Some(corpus) = corpus_dir() else { return };
    let path = corpus
        .join("otlp/v1development/v1development-1.10-ebpf-corrupted-stack-index-export-request.pb");
    let report = validate_file(&path, None);
    let input = std::fs::read(&path).unwrap();
    let decoded = decode_any(&input, None, &DecodeOptions::default()).unwrap();
    let data = decoded
        .decoded
        .message
        .downcast_ref::<protoprof_model_otlp::opentelemetry::proto::profiles::v1development::ProfilesData>()
        .expect("read as v1development");
    let samples: usize = data
        .resource_profiles
        .iter()
        .flat_map(|rp| &rp.scope_profiles)
        .flat_map(|sp| &sp.profiles)
        .map(|p| p.samples.len())
        .sum();
    assert!(samples > 20);
    let stack_errors = report
        .counts
        .iter()
        .find(|c| c.code == "OTLPDEV-REF-001")
        .unwrap();
    assert_eq!(
        stack_errors.count as usize,
        samples,
        "{}",
        report.render_human()
    );
    // Capped as every rule is, each shown one names its sample and the value.
    let shown: Vec<_> = report
        .diagnostics
        .iter()
        .filter(|d| d.code == "OTLPDEV-REF-001")
        .collect();
    assert_eq!(shown.len(), Options::default().max_per_rule);
    assert!(
        shown[3].path.ends_with("samples[3].stack_index"),
        "{}",
        shown[3].path
    );
    assert_eq!(shown[3].value.as_deref(), Some("1000000000"));
}
