//! Analysis reads OTLP as it reads the pprof it came from: on every corpus
//! pprof file, every sample type's top report, traces, tags and folded
//! stacks on the profile converted to OTLP (v1development and
//! v1experimental, through the wire) and back equal those on the profile,
//! and so do those on v1development samples converted as they are read
//! from a view of the bytes (as `protoprof top` reads them).

use protobuf::Message;
use protoprof_analysis::{self as analysis, Granularity, Selection, TopOptions};
use protoprof_codec::{decode, decode_any_view, AutoView, DecodeOptions, PprofProfile};
use protoprof_model_meta::StringTable;
use protoprof_model_otlp::opentelemetry::proto::profiles::v1development::ProfilesData as DevelopmentData;
use protoprof_model_otlp::opentelemetry::proto::profiles::v1experimental::ProfilesData;
use protoprof_model_pprof::samples::ProfileSamples;
use protoprof_pprof_bridge::{
    development_as_pprof, development_to_pprof, otlp_to_pprof_merged, pprof_to_development,
    pprof_to_otlp, ToDevelopmentOptions, ToOtlpOptions,
};
use protoprof_tests::{corpus_dir, files_under};

/// The profile as v1development bytes.
fn as_development(p: &PprofProfile) -> Option<Vec<u8>> {
    let data = pprof_to_development(p, &ToDevelopmentOptions::default()).ok()?;
    Some(data.value.write_to_bytes().unwrap())
}

/// The profile through v1development and back, decoded whole.
fn through_development(bytes: &[u8]) -> PprofProfile {
    let data = DevelopmentData::parse_from_bytes(bytes).unwrap();
    development_to_pprof(&data).unwrap().value
}

/// Every report of `selections` and sample types `indices` on the
/// v1development `bytes`, their samples converted as they are read from a
/// view, the dictionary shed first (as `protoprof top` reads them).
fn reports_read_as_converted(
    bytes: &[u8],
    selections: &[Selection],
    indices: std::ops::Range<usize>,
) -> Vec<Vec<String>> {
    let Ok(AutoView::Development(view)) = decode_any_view(bytes, None, &DecodeOptions::default())
    else {
        panic!("not viewed as v1development");
    };
    let mut view = view.message;
    let converted = development_as_pprof(view.data(), &view).unwrap().value;
    view.shed_dictionary();
    let source = converted.reading(&view);
    let mut out = Vec::new();
    for selection in selections {
        out.extend(
            indices
                .clone()
                .map(|index| reports(&source, index, selection)),
        );
    }
    out
}

/// The profile through v1experimental and back, as `protoprof` reads it.
fn through_experimental(p: &PprofProfile) -> Option<PprofProfile> {
    let data = pprof_to_otlp(p, &ToOtlpOptions::default()).ok()?;
    let data = ProfilesData::parse_from_bytes(&data.write_to_bytes().unwrap()).unwrap();
    Some(otlp_to_pprof_merged(&data).unwrap().value)
}

/// Every report of sample type `index` under `selection`, as text: the top
/// rows, the traces (as a set: pprof's `-traces` order is the samples'),
/// the tags and the folded stacks.
fn reports<S: ProfileSamples>(source: &S, index: usize, selection: &Selection) -> Vec<String> {
    let p = source.profile();
    let options = TopOptions {
        node_fraction: 0.0,
        ..TopOptions::default()
    };
    let top = analysis::top_report(source, index, selection, &options);
    let mut traces: Vec<String> = analysis::traces(source, index, selection)
        .iter()
        .map(|t| format!("{t:?}"))
        .collect();
    traces.sort();
    let unit = p.string(p.sample_type[index].unit).to_string();
    vec![
        format!("{:?} total {}", top.rows, top.total),
        traces.join("\n"),
        analysis::tags_text(
            &analysis::tags(source, index, selection),
            (&unit, None),
            top.total,
        ),
        format!("{:?}", analysis::folded_selected(source, index, selection)),
    ]
}

/// The selections compared: none, lines, and a focus on the function of
/// the first sample's leaf.
fn selections(p: &PprofProfile) -> Vec<Selection> {
    let lines = Selection {
        granularity: Granularity::Lines,
        ..Selection::default()
    };
    let mut all = vec![Selection::default(), lines];
    let leaf = p.sample.first().and_then(|s| s.location_id.first());
    let location = leaf.and_then(|id| p.location.iter().find(|l| l.id == *id));
    let function_id = location.and_then(|l| l.line.first()).map(|l| l.function_id);
    let function = function_id.and_then(|id| p.function.iter().find(|f| f.id == id));
    if let Some(f) = function.filter(|f| f.name != 0) {
        let name = regex::escape(p.string(f.name));
        all.push(Selection {
            focus: Selection::regex("focus", &name).unwrap(),
            ..Selection::default()
        });
    }
    all
}

#[test]
fn every_report_on_otlp_equals_the_report_on_the_pprof() {
    let Some(corpus) = corpus_dir() else { return };
    let mut compared = 0;
    for path in files_under(&corpus.join("pprof")) {
        let name = path.display().to_string();
        let bytes = std::fs::read(&path).unwrap();
        let p = decode::<PprofProfile>(&bytes, &DecodeOptions::default())
            .unwrap()
            .message;
        let (Some(dev_bytes), Some(exp)) = (as_development(&p), through_experimental(&p)) else {
            continue;
        };
        let dev = through_development(&dev_bytes);
        // The two largest files (41,347 samples) take seconds per report
        // set in a test build: one sample type, no selection, is enough.
        let (mut selections, mut indices) = (selections(&p), 0..p.sample_type.len());
        if p.sample.len() > 10_000 {
            (selections, indices) = (vec![Selection::default()], 0..1);
        }
        let mut read_as_converted =
            reports_read_as_converted(&dev_bytes, &selections, indices.clone()).into_iter();
        for selection in selections {
            for index in indices.clone() {
                let want = reports(&p, index, &selection);
                assert_eq!(
                    read_as_converted.next().as_ref(),
                    Some(&want),
                    "{name} v1development read as converted {index}"
                );
                assert_eq!(
                    reports(&dev, index, &selection),
                    want,
                    "{name} v1development {index}"
                );
                assert_eq!(
                    reports(&exp, index, &selection),
                    want,
                    "{name} v1experimental {index}"
                );
                compared += 1;
            }
        }
    }
    assert!(compared >= 100, "{compared} reports compared");
}
