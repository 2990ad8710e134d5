//! The OTLP v1experimental view (`ExperimentalView`, samples left in the
//! input bytes, `location_indices` held in 32 bits) reads, validates and
//! converts as the whole decode does: on every corpus file it is made for,
//! and on every corpus pprof file written as v1experimental.

use protobuf::{Message, MessageDyn};
use protoprof_codec::{
    decode_any, decode_any_view, write_pprof_source, AutoView, DecodeOptions, ExperimentalView,
    ProfileSetSamples,
};
use protoprof_model_otlp::opentelemetry::proto::collector::profiles::v1experimental::ExportProfilesServiceRequest;
use protoprof_model_otlp::opentelemetry::proto::profiles::v1experimental::{
    ProfileContainer, ProfilesData, Sample,
};
use protoprof_pprof_bridge::{
    experimental_as_pprof, otlp_to_pprof_merged, pprof_to_otlp, ProfileId, ToOtlpOptions,
};
use protoprof_tests::{corpus_dir, files_under, read_profile_bytes};
use protoprof_validate::{validate_profiles_data, validate_profiles_parts, Options};

/// The input decoded in full, as `ProfilesData`.
fn whole(bytes: &[u8]) -> Result<ProfilesData, String> {
    let decoded = decode_any(bytes, None, &DecodeOptions::default()).map_err(|e| e.to_string())?;
    let message: &dyn MessageDyn = &*decoded.decoded.message;
    if let Some(data) = message.downcast_ref::<ProfilesData>() {
        return Ok(data.clone());
    }
    let request = message
        .downcast_ref::<ExportProfilesServiceRequest>()
        .ok_or("not v1experimental")?;
    Ok(ProfilesData {
        resource_profiles: request.resource_profiles.clone(),
        ..Default::default()
    })
}

fn view(bytes: &[u8]) -> Option<Result<ExperimentalView<'_>, String>> {
    match decode_any_view(bytes, None, &DecodeOptions::default()) {
        Ok(AutoView::Experimental(view)) => Some(Ok(view.message)),
        Ok(_) => None,
        Err(e) => Some(Err(e.to_string())),
    }
}

/// What the view of `bytes` held: its samples as bytes, and its location
/// indices apart.
#[derive(Debug, Clone, Copy, Default)]
struct Held {
    samples_as_bytes: bool,
    indices_apart: bool,
}

/// Checks the view of `bytes` against the whole decode.
fn check(name: &str, bytes: &[u8]) -> Option<Held> {
    let view = match view(bytes)? {
        Ok(view) => view,
        Err(e) => {
            assert!(whole(bytes).is_err(), "{name}: only the view fails: {e}");
            return None;
        }
    };
    let expected = whole(bytes).unwrap_or_else(|e| panic!("{name}: only the whole fails: {e}"));
    let held = Held {
        samples_as_bytes: view.samples_are_bytes(),
        indices_apart: (0..view.profile_count()).any(|n| view.index_table(n).is_some()),
    };
    // Converted as read, written as converted (`convert --to pprof`, `top`).
    let converted = otlp_to_pprof_merged(&expected);
    match (experimental_as_pprof(view.data(), &view), &converted) {
        (None, _) => assert_ne!(view.profile_count(), 1, "{name}: one container declined"),
        (Some(Ok(as_pprof)), Ok(converted)) => {
            let mut written = Vec::new();
            write_pprof_source(&as_pprof.value.reading(&view), &mut written).unwrap();
            let bytes = converted.value.write_to_bytes().unwrap();
            assert!(written == bytes, "{name}: written as read differs");
            assert_eq!(as_pprof.warnings, converted.warnings, "{name}");
        }
        (Some(Err(a)), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{name}"),
        (Some(a), b) => panic!("{name}: view {:?} vs whole {:?}", a.err(), b.as_ref().err()),
    }
    let options = Options::default();
    let report = validate_profiles_parts(view.data(), &view, &options);
    let whole_report = validate_profiles_data(&expected, &options);
    assert_eq!(
        format!("{report:?}"),
        format!("{whole_report:?}"),
        "{name}: the view validates differently"
    );
    let mut data = view.into_data();
    data.special_fields = expected.special_fields.clone(); // a request's top level
    assert!(data == expected, "{name}: the view holds other data");
    Some(held)
}

/// `data` as OTLP/JSON: read through the view as its binary form is (the
/// JSON straight to protobuf bytes), and said to be JSON; whether it was
/// read (JSON of strings repaired from invalid UTF-8 is not, either way).
fn check_json(name: &str, data: &ProfilesData) -> bool {
    let json = protoprof_codec::json::print(data, false);
    let Some(Ok(view)) = view(json.as_bytes()) else {
        assert!(
            whole(json.as_bytes()).is_err(),
            "{name}: only the view fails"
        );
        return false;
    };
    assert_eq!(view.form(), protoprof_codec::detect::Form::Json, "{name}");
    let held = check(&format!("{name} as JSON"), json.as_bytes()).unwrap();
    assert!(held.samples_as_bytes, "{name} as JSON");
    true
}

#[test]
fn views_of_corpus_v1experimental_read_and_convert_as_the_whole_decode() {
    let Some(corpus) = corpus_dir() else { return };
    let mut seen = 0;
    for dir in ["otlp", "malformed"] {
        for path in files_under(&corpus.join(dir)) {
            let name = path.display().to_string();
            if name.ends_with(".json") || name.ends_with(".txt") || name.ends_with(".md") {
                continue;
            }
            // As the command reads it: malformed gzip is the decoder's to refuse.
            let bytes = std::fs::read(&path).unwrap();
            seen += usize::from(check(&name, &bytes).is_some());
        }
    }
    assert!(seen >= 12, "only {seen} v1experimental files viewed");
}

#[test]
fn views_of_corpus_pprof_as_v1experimental_hold_samples_and_indices_apart() {
    let Some(corpus) = corpus_dir() else { return };
    let (mut seen, mut as_bytes, mut apart, mut json) = (0, 0, 0, 0);
    for path in files_under(&corpus.join("pprof")) {
        let bytes = read_profile_bytes(&path);
        let Ok(decoded) = protoprof_codec::decode::<protoprof_codec::PprofProfile>(
            &bytes,
            &DecodeOptions::default(),
        ) else {
            continue;
        };
        // Labels as attributes, and kept in the deprecated `Sample.label`.
        for keep_labels in [false, true] {
            let options = ToOtlpOptions {
                profile_id: ProfileId::Fixed([7; 16]),
                keep_labels,
                ..Default::default()
            };
            let Ok(data) = pprof_to_otlp(&decoded.message, &options) else {
                continue;
            };
            let name = format!("{} (labels kept: {keep_labels})", path.display());
            if let Some(held) = check(&name, &data.write_to_bytes().unwrap()) {
                if keep_labels {
                    json += usize::from(check_json(&name, &data));
                }
                seen += 1;
                as_bytes += usize::from(held.samples_as_bytes);
                apart += usize::from(held.indices_apart);
            }
        }
    }
    assert!(seen >= 80, "only {seen} conversions viewed");
    assert_eq!(
        as_bytes, seen,
        "every plain encoding is read from the bytes"
    );
    assert!(
        apart >= seen / 2,
        "only {apart} of {seen} held location indices apart"
    );
    assert!(
        json >= seen / 3,
        "only {json} read as JSON through the view"
    );
}

/// Location indices that do not fit 32 bits (a negative one here) leave
/// the view to the whole decode, which reports them as it always did; two
/// containers are read from the view but converted whole (merged).
#[test]
fn unusual_profiles_read_validate_and_convert_as_the_whole_decode() {
    let Some(corpus) = corpus_dir() else { return };
    let path = corpus.join("otlp/v1experimental/v1experimental-go-cpu-profilesdata.pb");
    let mut data = ProfilesData::parse_from_bytes(&read_profile_bytes(&path)).unwrap();
    let container = &mut data.resource_profiles[0].scope_profiles[0].profiles[0];
    let profile = container.profile.as_mut().unwrap();
    assert!(!profile.location_indices.is_empty());
    let mut negative = data.clone();
    let profile = (negative.resource_profiles[0].scope_profiles[0].profiles[0].profile)
        .as_mut()
        .unwrap();
    profile.location_indices[0] = -1;
    let bytes = negative.write_to_bytes().unwrap();
    let held = check("negative index", &bytes).expect("a v1experimental view");
    assert!(!held.samples_as_bytes && !held.indices_apart);
    assert!(validate_profiles_data(&negative, &Options::default()).errors > 0);

    // An index past the location table stays in the view, which reports
    // it where the whole decode does.
    let mut past = data.clone();
    let profile = (past.resource_profiles[0].scope_profiles[0].profiles[0].profile)
        .as_mut()
        .unwrap();
    let last = profile.location_indices.len() - 1;
    profile.location_indices[last] = 1_000_000;
    let bytes = past.write_to_bytes().unwrap();
    let held = check("index past the locations", &bytes).expect("a v1experimental view");
    assert!(held.samples_as_bytes && held.indices_apart);
    let report = validate_profiles_data(&past, &Options::default());
    let at = format!("location_indices[{last}]");
    assert!(
        report.diagnostics.iter().any(|d| d.path.ends_with(&at)),
        "{report:?}"
    );

    let mut two = data.clone();
    let second: ProfileContainer = two.resource_profiles[0].scope_profiles[0].profiles[0].clone();
    two.resource_profiles[0].scope_profiles[0]
        .profiles
        .push(second);
    let bytes = two.write_to_bytes().unwrap();
    let held = check("two containers", &bytes).expect("a v1experimental view");
    assert!(held.samples_as_bytes && held.indices_apart);
    let view = view(&bytes).unwrap().unwrap();
    let mut buffer = Sample::new();
    let first = view.sample(1, 0, &mut buffer).clone();
    assert_eq!(
        first,
        two.resource_profiles[0].scope_profiles[0].profiles[1]
            .profile
            .sample[0]
    );
}

/// Stacks written as pprof location ids as they are read (the source
/// writes each id straight into the output,
/// `SampleSource::sample_writing_field`)
/// are written as the whole message's conversion: a stack of 2-byte ids
/// whose run takes a 2-byte length, ids that do not follow positions, and
/// every stack read from the packed table rather than decoded.
#[test]
fn stacks_written_as_they_are_read_match_the_whole_conversion() {
    use protoprof_codec::{Fields, SampleSource};
    let Some(corpus) = corpus_dir() else { return };
    let path = corpus.join("otlp/v1experimental/v1experimental-go-cpu-profilesdata.pb");
    let data = ProfilesData::parse_from_bytes(&read_profile_bytes(&path)).unwrap();
    let profile_of = |data: &mut ProfilesData| {
        let container = &mut data.resource_profiles[0].scope_profiles[0].profiles[0];
        container.profile.as_mut().unwrap().clone()
    };
    let locations = profile_of(&mut data.clone()).location.len();
    assert!(locations > 1, "{locations} locations");

    let mut long = data.clone();
    let container = &mut long.resource_profiles[0].scope_profiles[0].profiles[0];
    let profile = container.profile.as_mut().unwrap();
    let start = profile.location_indices.len() as u64;
    // 200 entries, so a run of at least 200 bytes: a 2-byte length.
    let entries = (0..200).map(|i| (i % locations) as i64);
    profile.location_indices.extend(entries);
    (
        profile.sample[0].locations_start_index,
        profile.sample[0].locations_length,
    ) = (start, 200);
    let bytes = long.write_to_bytes().unwrap();
    let held = check("a long stack", &bytes).expect("a v1experimental view");
    assert!(held.samples_as_bytes && held.indices_apart);
    let view = view(&bytes).unwrap().unwrap();
    let as_pprof = experimental_as_pprof(view.data(), &view).unwrap().unwrap();
    let source = as_pprof.value.reading(&view);
    let (mut written, mut sample) = (Vec::new(), Default::default());
    let rest = source.sample_writing_field(0, (1, &mut written), Fields::ALL, &mut sample);
    assert!(rest.is_some_and(|s| s.location_id.is_empty() && !s.value.is_empty()));
    // The tag, then a 2-byte length: the rest of what was written.
    let length = usize::from(written[1] & 0x7f) | usize::from(written[2]) << 7;
    assert_eq!((written[0], written[1] >= 0x80), (0x0a, true));
    assert_eq!((length, written[2] < 0x80), (written.len() - 3, true));
    let values = source.sample_writing_field(0, (2, &mut written), Fields::ALL, &mut sample);
    assert!(values.is_none(), "values are not made");

    // Ids that are not the positions plus one: the first two swapped.
    let mut swapped = long.clone();
    let container = &mut swapped.resource_profiles[0].scope_profiles[0].profiles[0];
    let profile = container.profile.as_mut().unwrap();
    let (first, second) = (profile.location[0].id, profile.location[1].id);
    (profile.location[0].id, profile.location[1].id) = (second, first);
    let bytes = swapped.write_to_bytes().unwrap();
    check("ids not following positions", &bytes).expect("a v1experimental view");
}
