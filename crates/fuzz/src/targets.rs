//! One fuzz target per decoder, validator and bridge direction. A target may
//! fail on its input; it must never panic, and where two paths must agree
//! (view and model, text out and back in, a valid profile's round trip) it
//! asserts that they do.

use protoprof_codec::detect::detect;
use protoprof_codec::frame::{FrameReader, Framing};
use protoprof_codec::{
    decode, decode_any, decode_pprof_view, json, raw, registry, text, DecodeOptions, Fields,
    Limits, OtlpProfilesData, PprofProfile, SampleSource,
};
use protoprof_model_pprof::fields::perftools::profiles::sample;
use protoprof_pprof_bridge::{
    otlp_to_pprof, pprof_to_otlp, pprof_to_otlp_bytes, semantic, ProfileId, ToOtlpOptions,
};
use protoprof_validate as validate;

/// Limits small enough that a fuzz run's memory stays low.
pub const LIMITS: Limits = Limits {
    max_input_bytes: 8 << 20,
    max_inflated_bytes: 16 << 20,
    max_depth: 100,
    max_frame_bytes: 1 << 20,
};

fn options() -> DecodeOptions {
    DecodeOptions {
        limits: LIMITS,
        allow_empty: true,
        ..Default::default()
    }
}

/// A target under test: it may fail, never panic.
pub type Target = fn(&[u8]);

/// Every target, by name.
pub const TARGETS: &[(&str, Target)] = &[
    ("pprof", pprof),
    ("otlp", otlp),
    ("relay", relay),
    ("pprof_view", pprof_view),
    ("detect", |b| drop(detect(b, &LIMITS))),
    ("decode_any", |b| drop(decode_any(b, None, &options()))),
    ("raw", raw_fields),
    ("text", text_round_trip),
    ("json", json_otlp),
    ("frames", frames),
    ("validate", validate_any),
    ("to_otlp", to_otlp),
    ("to_development", to_development),
    ("to_pprof", to_pprof),
    ("v1development", v1development),
    ("development_view", development_view),
    ("experimental_view", experimental_view),
    ("json_direct", json_direct),
];

/// The target called `name`.
pub fn target(name: &str) -> Option<Target> {
    TARGETS.iter().find(|(n, _)| *n == name).map(|&(_, t)| t)
}

fn pprof(b: &[u8]) {
    drop(decode::<PprofProfile>(b, &options()));
}

fn otlp(b: &[u8]) {
    drop(decode::<OtlpProfilesData>(b, &options()));
}

fn relay(b: &[u8]) {
    let descriptor =
        registry::message_descriptor("envoy.service.discovery.v3.DeltaDiscoveryRequest").unwrap();
    drop(protoprof_codec::decode_dynamic(b, &descriptor, &options()));
}

/// Differential: the view reads every sample, and holds what the model
/// decode reads.
fn pprof_view(b: &[u8]) {
    let summing_up = DecodeOptions {
        sample_summary: true,
        ..options()
    };
    let Ok(decoded) = decode_pprof_view(b, &summing_up) else {
        return;
    };
    let view = decoded.message;
    let mut buffer = Default::default();
    for i in 0..view.sample_count() {
        view.sample_fields(i, Fields::only(&[sample::LABEL]), &mut buffer);
        view.value_count(i);
    }
    let model =
        decode::<PprofProfile>(b, &options()).expect("what the view decodes, the model decodes");
    if view.samples_are_bytes() {
        let ids = model
            .message
            .sample
            .iter()
            .flat_map(|s| s.location_id.iter().copied());
        let bounds = ids.clone().min().unwrap_or(u64::MAX)..=ids.max().unwrap_or(0);
        let noted = view.field_range(sample::LOCATION_ID);
        assert!(noted == Some(bounds), "location id bounds differ");
        let mut counts = model.message.sample.iter().map(|s| s.value.len());
        let first = counts.next();
        let common = first.filter(|&first| counts.all(|count| count == first));
        assert!(
            view.common_value_count() == common,
            "common value counts differ"
        );
    }
    assert!(
        view.into_profile() == model.message,
        "view and model differ"
    );
}

fn raw_fields(b: &[u8]) {
    drop(raw::decode_raw(b, LIMITS.max_depth).map(|fields| raw::render(&fields)));
}

/// What the text parser reads, the printer prints and the parser reads back.
fn text_round_trip(b: &[u8]) {
    let Ok(s) = std::str::from_utf8(b) else {
        return;
    };
    let descriptor = registry::message_descriptor("perftools.profiles.Profile").unwrap();
    if let Ok(message) = text::parse(s, &descriptor, LIMITS.max_depth) {
        text::parse(&text::print(&*message), &descriptor, LIMITS.max_depth)
            .expect("own text output reads back");
    }
}

fn json_otlp(b: &[u8]) {
    let Ok(s) = std::str::from_utf8(b) else {
        return;
    };
    let descriptor =
        registry::message_descriptor("opentelemetry.proto.profiles.v1experimental.ProfilesData")
            .unwrap();
    drop(json::parse(s, &descriptor, LIMITS.max_depth).map(|m| json::print(&*m, false)));
}

fn frames(b: &[u8]) {
    for framing in [Framing::Grpc, Framing::VarintDelimited] {
        FrameReader::new(b, framing, LIMITS.max_frame_bytes)
            .take(1000)
            .for_each(drop);
    }
}

/// Validation of whatever the input decodes as: pprof through the view (as
/// the CLI does), everything else through the message.
fn validate_any(b: &[u8]) {
    let rules = validate::Options::default();
    if let Ok(view) = decode_pprof_view(b, &options()) {
        drop(validate::validate_pprof(&view.message, &rules));
    }
    if let Ok(decoded) = decode_any(b, None, &options()) {
        drop(validate::validate_message(
            &*decoded.decoded.message,
            &rules,
        ));
    }
}

/// pprof → OTLP, both encoders, which must write the same message; and for a
/// profile validation accepts, the round trip back gives the same profile.
fn to_otlp(b: &[u8]) {
    let Ok(decoded) = decode::<PprofProfile>(b, &options()) else {
        return;
    };
    let profile = decoded.message;
    // A fixed id: the default is random, and the two encoders must agree.
    let bridge_options = ToOtlpOptions {
        profile_id: ProfileId::Fixed([7; 16]),
        ..Default::default()
    };
    let Ok(data) = pprof_to_otlp(&profile, &bridge_options) else {
        return;
    };
    let bytes = pprof_to_otlp_bytes(&profile, &bridge_options).expect("both encoders convert");
    let reread = decode::<OtlpProfilesData>(&bytes, &options()).expect("own OTLP output reads");
    assert!(reread.message == data, "the two OTLP encoders differ");
    let report = validate::validate_pprof(&profile, &validate::Options::default());
    if report.is_valid() {
        let back = otlp_to_pprof(&data).expect("own OTLP output converts back");
        if let Err(difference) = semantic::pprof_equal(&back.value[0], &profile) {
            panic!("round trip of a valid profile differs: {}", difference.0);
        }
    }
}

/// pprof → v1development three ways, which must write the same bytes:
/// the message, the direct encoding from the model, and the direct
/// encoding from the view, which compares stacks and label lists as the
/// input holds them (packed or not, in their shortest form or not, side by
/// side or not). Errors alike.
fn to_development(b: &[u8]) {
    use protobuf::Message;
    use protoprof_pprof_bridge::{pprof_to_development, pprof_to_development_bytes};
    let (Ok(model), Ok(view)) = (
        decode::<PprofProfile>(b, &options()),
        decode_pprof_view(b, &options()),
    ) else {
        return;
    };
    let bridge_options = protoprof_pprof_bridge::ToDevelopmentOptions {
        profile_id: ProfileId::Fixed([7; 16]),
        ..Default::default()
    };
    match (
        pprof_to_development(&model.message, &bridge_options),
        pprof_to_development_bytes(&model.message, &bridge_options),
        pprof_to_development_bytes(&view.message, &bridge_options),
    ) {
        (Ok(message), Ok(direct), Ok(from_view)) => {
            let encoded = message.value.write_to_bytes().expect("OTLP encodes");
            assert!(direct.value == encoded, "the direct encoding differs");
            assert!(
                from_view.value == encoded,
                "the encoding from the view differs"
            );
        }
        (Err(a), Err(b), Err(c)) => {
            assert_eq!(a.to_string(), b.to_string());
            assert_eq!(a.to_string(), c.to_string());
        }
        (a, b, c) => panic!(
            "the conversions disagree: {:?} {:?} {:?}",
            a.err(),
            b.err(),
            c.err()
        ),
    }
}

/// OTLP → pprof; from OTLP that validation accepts, what comes out passes
/// validation too (invalid input may give invalid output: it is reported
/// where it is read, not repaired).
fn to_pprof(b: &[u8]) {
    let Ok(decoded) = decode::<OtlpProfilesData>(b, &options()) else {
        return;
    };
    let Ok(converted) = otlp_to_pprof(&decoded.message) else {
        return;
    };
    if !validate::validate_profiles_data(&decoded.message, &validate::Options::default()).is_valid()
    {
        return;
    }
    for profile in &converted.value {
        let report = validate::validate_pprof(profile, &validate::Options::default());
        assert!(report.is_valid(), "converted pprof is invalid");
    }
}

/// OTLP v1development: revision identification on anything; decode,
/// validation, and for a message validation accepts, a pprof conversion
/// that validates too.
fn v1development(b: &[u8]) {
    use protoprof_model_otlp::opentelemetry::proto::profiles::v1development::ProfilesData;
    drop(protoprof_codec::otlp::revision::identify(b));
    let Ok(decoded) = decode::<ProfilesData>(b, &options()) else {
        return;
    };
    let report =
        validate::validate_development_data(&decoded.message, &validate::Options::default());
    let converted = protoprof_pprof_bridge::development_to_pprof(&decoded.message);
    if report.is_valid() {
        let profile = converted.expect("a valid message converts").value;
        let pprof_report = validate::validate_pprof(&profile, &validate::Options::default());
        assert!(
            pprof_report.is_valid(),
            "converted pprof is invalid: {}",
            pprof_report.render_human()
        );
    }
}

/// The v1development view (samples and stacks left in the bytes) holds,
/// validates and converts as the whole decode does.
fn development_view(b: &[u8]) {
    use protobuf::Message;
    use protoprof_codec::{AutoView, EncodedSamples, ProfileSetSamples, TableSource};
    let Ok(AutoView::Development(view)) = protoprof_codec::decode_any_view(b, None, &options())
    else {
        return;
    };
    let view = view.message;
    let (mut sample, mut stack) = Default::default();
    for n in 0..view.profile_count() {
        for i in 0..view.sample_count(n) {
            view.sample(n, i, &mut sample);
        }
    }
    for i in 0..view.entry_count() {
        view.entry(i, &mut stack);
    }
    let options_here = validate::Options::default();
    let report = validate::validate_development_parts(view.data(), &view, &options_here);
    let mut samples = EncodedSamples::new();
    let streamed =
        protoprof_pprof_bridge::development_to_pprof_with(view.data(), &view, &mut |s| {
            samples.push(s)
        })
        .map(|c| samples.into_view(c.value).encode().expect("encodes"));
    if let Ok(written) = &streamed {
        assert!(
            read_as_converted(&view) == *written,
            "converted as read writes other bytes"
        );
    }
    let whole = view.into_data();
    assert!(
        report == validate::validate_development_data(&whole, &options_here),
        "view and model validate differently"
    );
    let converted = protoprof_pprof_bridge::development_to_pprof(&whole)
        .map(|c| c.value.write_to_bytes().expect("encodes"));
    match (streamed, converted) {
        (Ok(a), Ok(b)) => assert!(a == b, "view and model convert differently"),
        (Err(_), Err(_)) => {}
        _ => panic!("only one of view and model converts"),
    }
}

/// The pprof bytes of `view` as `protoprof convert --to pprof` writes
/// them: the samples converted as they are read, the dictionary shed
/// first; each sample also read without its labels, as `top` reads it.
fn read_as_converted(view: &protoprof_codec::DevelopmentView) -> Vec<u8> {
    use protoprof_codec::{Fields, SampleSource};
    let converted = protoprof_pprof_bridge::development_as_pprof(view.data(), view)
        .expect("converts, as the sink path did")
        .value;
    let mut shed = view.clone();
    shed.shed_dictionary();
    let source = converted.reading(&shed);
    let (mut all, mut some) = Default::default();
    for i in 0..source.sample_count() {
        let stack_and_values = Fields::only(&[1, 2]);
        let partial = source.sample_fields(i, stack_and_values, &mut some).clone();
        let whole = source.sample(i, &mut all);
        assert!(partial.location_id == whole.location_id && partial.value == whole.value);
    }
    let mut out = Vec::new();
    protoprof_codec::write_pprof_source(&source, &mut out).expect("writes to memory");
    out
}

/// The v1experimental view (samples left in the bytes, location indices
/// in 32 bits) holds, validates and converts as the whole decode does; the
/// samples converted as read (tables shed) write what the whole converts to.
fn experimental_view(b: &[u8]) {
    use protobuf::Message;
    use protoprof_codec::{AutoView, ProfileSetSamples};
    let Ok(AutoView::Experimental(view)) = protoprof_codec::decode_any_view(b, None, &options())
    else {
        return;
    };
    let view = view.message;
    let mut sample = Default::default();
    for n in 0..view.profile_count() {
        for i in 0..view.sample_count(n) {
            view.sample(n, i, &mut sample);
        }
    }
    let options_here = validate::Options::default();
    let report = validate::validate_profiles_parts(view.data(), &view, &options_here);
    let as_read = protoprof_pprof_bridge::experimental_as_pprof(view.data(), &view).map(|c| {
        c.map(|c| {
            let mut shed = view.clone();
            shed.shed_tables();
            let mut out = Vec::new();
            let source = c.value.reading(&shed);
            protoprof_codec::write_pprof_source(&source, &mut out).expect("writes to memory");
            out
        })
    });
    let whole = view.into_data();
    assert!(
        report == validate::validate_profiles_data(&whole, &options_here),
        "view and model validate differently"
    );
    let converted = protoprof_pprof_bridge::otlp_to_pprof_merged(&whole)
        .map(|c| c.value.write_to_bytes().expect("encodes"));
    match (as_read, converted) {
        (None, _) | (Some(Err(_)), Err(_)) => {}
        (Some(Ok(a)), Ok(b)) => assert!(a == b, "view and model convert differently"),
        _ => panic!("only one of view and model converts"),
    }
}

/// OTLP/JSON read straight into protobuf bytes is what `json::parse` reads.
fn json_direct(b: &[u8]) {
    use protobuf::MessageDyn;
    let Ok(s) = std::str::from_utf8(b) else {
        return;
    };
    let descriptor =
        registry::message_descriptor("opentelemetry.proto.profiles.v1development.ProfilesData")
            .unwrap();
    let direct = protoprof_codec::decode_json(s, &descriptor, &options());
    let tree = json::parse(s, &descriptor, LIMITS.max_depth);
    let bytes = |m: Box<dyn MessageDyn>| m.write_to_bytes_dyn().expect("encodes");
    match (direct, tree) {
        (Ok(a), Ok(b)) => assert!(bytes(a.message) == bytes(b), "the JSON readers differ"),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
        (a, b) => panic!("JSON readers disagree: {:?} vs {:?}", a.err(), b.err()),
    }
}
