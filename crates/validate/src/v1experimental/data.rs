//! OTLP Profiles v1experimental: the envelope (resource, scope, container)
//! and the pprof-extended profile inside each container, its samples (and
//! `location_indices`) read from the decoded message or from a view that
//! leaves them in the input bytes (the codec's `ExperimentalView`).

use std::collections::HashMap;

use protoprof_model_meta::{DecodedProfileSet, IndexTable, RefPath, ReferenceVisitor};
use protoprof_model_otlp::opentelemetry::proto::collector::profiles::v1experimental::ExportProfilesServiceRequest;
use protoprof_model_otlp::opentelemetry::proto::common::v1::KeyValue;
use protoprof_model_otlp::opentelemetry::proto::profiles::v1experimental::{
    Profile, ProfileContainer, ProfilesData, ResourceProfiles, Sample,
};
use protoprof_model_otlp::refs;

use crate::common::{self, hex, OTLP};
use crate::references::{report_unknown, ElementsFrom, ReferenceChecker, ReferenceTables};
use crate::report::{Collector, Options, Report};
use crate::rules;
use crate::v1experimental::samples::{
    sample_pass, AttributeKeys, ExperimentalParts, SampleContext,
};
use protoprof_model_meta::StringTable;

/// The samples of decoded containers, one list per container.
fn model_parts(list: &[ResourceProfiles]) -> DecodedProfileSet<'_, Sample, ()> {
    let profiles = list
        .iter()
        .flat_map(|r| &r.scope_profiles)
        .flat_map(|s| &s.profiles)
        .map(|c| c.profile.as_ref().map_or(&[][..], |p| &p.sample[..]))
        .collect();
    DecodedProfileSet::new(profiles, &[])
}

/// Validates OTLP `ProfilesData`: every container, profile and reference.
pub fn validate_profiles_data(data: &ProfilesData, options: &Options) -> Report {
    validate_profiles_parts(data, &model_parts(&data.resource_profiles), options)
}

/// [`validate_profiles_data`] with the samples read from `parts` (one
/// list per container, as the codec's view gives them), not from `data`,
/// and each profile's `location_indices` from `parts` when it holds them.
/// The report is the one the whole message gets.
///
/// # Panics
/// When `parts` holds fewer sample lists than `data` containers.
pub fn validate_profiles_parts(
    data: &ProfilesData,
    parts: &ExperimentalParts,
    options: &Options,
) -> Report {
    let mut c = Collector::new(*options);
    unknown(
        &data.special_fields,
        "ProfilesData",
        &RefPath::new(),
        &mut c,
    );
    resource_profiles(&data.resource_profiles, parts, &mut RefPath::new(), &mut c);
    c.finish("opentelemetry.proto.profiles.v1experimental.ProfilesData")
}

/// Validates the collector's `ExportProfilesServiceRequest` (the same checks as `ProfilesData`).
pub fn validate_export_request(
    request: &ExportProfilesServiceRequest,
    options: &Options,
) -> Report {
    let mut c = Collector::new(*options);
    unknown(
        &request.special_fields,
        "ExportProfilesServiceRequest",
        &RefPath::new(),
        &mut c,
    );
    let parts = model_parts(&request.resource_profiles);
    let list = &request.resource_profiles;
    resource_profiles(list, &parts, &mut RefPath::new(), &mut c);
    c.finish("opentelemetry.proto.collector.profiles.v1experimental.ExportProfilesServiceRequest")
}

/// Validates one container on its own (its path starts at the container).
pub fn validate_container(container: &ProfileContainer, options: &Options) -> Report {
    let mut c = Collector::new(*options);
    let samples = container
        .profile
        .as_ref()
        .map_or(&[][..], |p| &p.sample[..]);
    let parts = DecodedProfileSet::<_, ()>::new(vec![samples], &[]);
    check_container(container, (&parts, 0), &mut RefPath::new(), &mut c);
    c.finish("opentelemetry.proto.profiles.v1experimental.ProfileContainer")
}

fn unknown(special: &protobuf::SpecialFields, message: &str, path: &RefPath, c: &mut Collector) {
    let mut fields = special.unknown_fields().iter().map(|(n, _)| n).peekable();
    if fields.peek().is_none() {
        return;
    }
    let reserved = message == "ResourceProfiles" && special.unknown_fields().get(1000).is_some();
    let message = if reserved {
        "ResourceProfiles (1000 is a reserved number)"
    } else {
        message
    };
    report_unknown(
        c,
        &rules::OTLP_UNKNOWN,
        message,
        || path.to_string(),
        special.unknown_fields(),
    );
}

fn resource_profiles(
    list: &[ResourceProfiles],
    parts: &ExperimentalParts,
    path: &mut RefPath,
    c: &mut Collector,
) {
    let mut n = 0; // the container's position in message order
    for (i, rp) in list.iter().enumerate() {
        path.push("resource_profiles", Some(i));
        unknown(&rp.special_fields, "ResourceProfiles", path, c);
        if let Some(resource) = rp.resource.as_ref() {
            path.push("resource", None);
            unknown(&resource.special_fields, "Resource", path, c);
            attribute_list(
                &resource.attributes,
                resource.dropped_attributes_count,
                path,
                c,
            );
            path.pop();
        }
        for (j, sp) in rp.scope_profiles.iter().enumerate() {
            path.push("scope_profiles", Some(j));
            unknown(&sp.special_fields, "ScopeProfiles", path, c);
            if let Some(scope) = sp.scope.as_ref() {
                path.push("scope", None);
                unknown(&scope.special_fields, "InstrumentationScope", path, c);
                attribute_list(&scope.attributes, scope.dropped_attributes_count, path, c);
                path.pop();
            }
            for (k, container) in sp.profiles.iter().enumerate() {
                path.push("profiles", Some(k));
                check_container(container, (parts, n), path, c);
                n += 1;
                path.pop();
                if c.stopped() {
                    return;
                }
            }
            path.pop();
        }
        path.pop();
    }
}

/// Keys unique within a list; dropped attributes noted.
fn attribute_list(attributes: &[KeyValue], dropped: u32, path: &RefPath, c: &mut Collector) {
    let mut first: HashMap<&str, usize> = HashMap::with_capacity(attributes.len());
    for (i, kv) in attributes.iter().enumerate() {
        if let Some(j) = first.insert(kv.key.as_str(), i) {
            c.report(
                &rules::OTLP_ATTR_DUPLICATE,
                || path.with_field("attributes", Some(i)),
                Some(format!("{:?}", kv.key)),
                || format!("attributes[{j}] has the same key"),
            );
        }
    }
    if dropped > 0 {
        c.report(
            &rules::OTLP_ATTR_DROPPED,
            || path.with_field("dropped_attributes_count", None),
            Some(dropped.to_string()),
            || format!("the producer dropped {dropped} attributes"),
        );
    }
}

/// One container; its samples are list `n` of `parts`.
fn check_container(
    pc: &ProfileContainer,
    (parts, n): (&ExperimentalParts, usize),
    path: &mut RefPath,
    c: &mut Collector,
) {
    unknown(&pc.special_fields, "ProfileContainer", path, c);
    let id = &pc.profile_id;
    if id.len() != 16 {
        c.report(
            &rules::OTLP_PROFILE_ID_LENGTH,
            || path.with_field("profile_id", None),
            Some(hex(id)),
            || format!("profile_id has {} bytes; it must have 16", id.len()),
        );
    } else if id.iter().all(|b| *b == 0) {
        c.report(
            &rules::OTLP_PROFILE_ID_ZERO,
            || path.with_field("profile_id", None),
            Some(hex(id)),
            || "an all-zero profile_id is invalid".into(),
        );
    }
    if pc.end_time_unix_nano < pc.start_time_unix_nano {
        c.report(
            &rules::OTLP_TIME_ORDER,
            || path.with_field("end_time_unix_nano", None),
            Some(pc.end_time_unix_nano.to_string()),
            || format!("ends before it starts ({})", pc.start_time_unix_nano),
        );
    }
    attribute_list(&pc.attributes, pc.dropped_attributes_count, path, c);
    if !pc.original_payload.is_empty() {
        if pc.original_payload_format.is_empty() {
            c.report(
                &rules::OTLP_PAYLOAD_FORMAT,
                || path.with_field("original_payload_format", None),
                None,
                || {
                    format!(
                        "original_payload has {} bytes but no format",
                        pc.original_payload.len()
                    )
                },
            );
        } else if pc.original_payload_format.eq_ignore_ascii_case("pprof") {
            c.report(
                &rules::OTLP_PAYLOAD_PPROF,
                || path.with_field("original_payload", None),
                Some(format!("{} bytes", pc.original_payload.len())),
                || {
                    "a pprof original payload SHOULD NOT be included (the profile already holds it)"
                        .into()
                },
            );
        }
    }
    match pc.profile.as_ref() {
        None => c.report(
            &rules::OTLP_PROFILE_MISSING,
            || path.with_field("profile", None),
            None,
            || "a ProfileContainer requires a profile".into(),
        ),
        Some(profile) => {
            path.push("profile", None);
            let times = (pc.start_time_unix_nano, pc.end_time_unix_nano);
            check_profile(profile, (parts, n), times, path, c);
            path.pop();
        }
    }
}

fn check_profile(
    p: &Profile,
    (parts, n): (&ExperimentalParts, usize),
    time_range: (u64, u64),
    path: &mut RefPath,
    c: &mut Collector,
) {
    let rules = &OTLP;
    let mut tables = ReferenceTables::new(&protoprof_model_otlp::SCHEMA, p, &rules.refs);
    let indices = parts.index_table(n);
    if let Some(indices) = indices {
        tables.set_table_length("location_indices", indices.len());
    }
    let keys = AttributeKeys::of(p);
    let context = SampleContext {
        time_range,
        keys: &keys,
        tables: &tables,
        path,
    };
    let pass = sample_pass((parts, n), &context, c);
    let value_count = |i: usize| pass.value_counts[i] as usize;
    common::check_profile_fields!(p, pass.value_counts.len(), value_count, rules, path, c);
    temporality(p, path, c);
    mappings_and_links(p, path, c);
    c.absorb(pass.rules);
    attributes(p, (&keys, pass.attributes), path, c);
    if c.stopped() {
        return;
    }
    let mut walker = ElementsFrom {
        inner: tables.into_checker(c),
        walk: walk_parts(pass.references, (indices, p.location.len())),
    };
    refs::walk_profile(p, path, &mut walker);
}

/// A mapping's build id kind; a link's trace and span ids.
fn mappings_and_links(p: &Profile, path: &RefPath, c: &mut Collector) {
    for (i, m) in p.mapping.iter().enumerate() {
        let kind = m.build_id_kind.value();
        if !(0..=1).contains(&kind) {
            c.report(
                &rules::OTLP_BUILD_ID_KIND,
                || path.with_field("mapping", Some(i)) + ".build_id_kind",
                Some(kind.to_string()),
                || "not a BuildIdKind value (0 linker, 1 binary hash)".into(),
            );
        }
    }
    for (i, link) in p.link_table.iter().enumerate() {
        let at = || path.with_field("link_table", Some(i));
        if link.trace_id.len() != 16 || link.trace_id.iter().all(|b| *b == 0) {
            c.report(
                &rules::OTLP_LINK_TRACE,
                || at() + ".trace_id",
                Some(hex(&link.trace_id)),
                || "a trace_id is 16 bytes, not all zero".into(),
            );
        }
        if link.span_id.len() != 8 || link.span_id.iter().all(|b| *b == 0) {
            c.report(
                &rules::OTLP_LINK_SPAN,
                || at() + ".span_id",
                Some(hex(&link.span_id)),
                || "a span_id is 8 bytes, not all zero".into(),
            );
        }
    }
}

const PROFILE: &str = "opentelemetry.proto.profiles.v1experimental.Profile";

/// The walk over a profile's samples for `ElementsFrom`: the samples'
/// references were checked in the pass over them (`samples`), and
/// what that found, `found`, is absorbed where the walker reaches
/// `Profile.sample`. `indices`, a profile's `location_indices` held apart,
/// are checked where the walker checks the profile's own: just before its
/// sample types; entry by entry only when the largest is not below
/// `locations`, the length of the location table.
fn walk_parts<'p>(
    found: Collector,
    (indices, locations): (Option<IndexTable<'p>>, usize),
) -> impl FnMut(&mut ReferenceChecker, &'static str, &'static str, &mut RefPath) -> bool + 'p {
    let mut found = Some(found);
    move |checker, message, field, path| match (message, field) {
        (PROFILE, "sample_type") => {
            // When the largest entry is a location, every one is: none is
            // reported, and none need be visited.
            let some_out_of_range = |t: &IndexTable| t.largest() >= Some(locations as u32);
            if let Some(indices) = indices.filter(some_out_of_range) {
                let (id, r) = location_indices_reference();
                indices.for_each(|i, x| checker.reference(id, r, path, Some(i), i128::from(x)));
            }
            true
        }
        (PROFILE, "sample") => {
            if let Some(found) = found.take() {
                checker.collector().absorb(found);
            }
            false
        }
        _ => true,
    }
}

/// `Profile.location_indices` among the schema's references, and its
/// position there.
fn location_indices_reference() -> (usize, &'static protoprof_model_meta::FieldRef) {
    let references = protoprof_model_otlp::SCHEMA.references;
    references
        .iter()
        .enumerate()
        .find(|(_, r)| r.message == PROFILE && r.field == "location_indices")
        .expect("the schema annotates location_indices")
}

/// AGGREGATION_TEMPORALITY_UNSPECIFIED MUST NOT be used.
fn temporality(p: &Profile, path: &RefPath, c: &mut Collector) {
    let entries = p
        .sample_type
        .iter()
        .enumerate()
        .map(|(i, t)| (path.with_field("sample_type", Some(i)), t));
    let period = p
        .period_type
        .as_ref()
        .map(|t| (path.with_field("period_type", None), t));
    for (at, value_type) in entries.chain(period) {
        let value = value_type.aggregation_temporality.value();
        let at = || at.clone() + ".aggregation_temporality";
        match value {
            0 => c.report(
                &rules::OTLP_TEMPORALITY_UNSPECIFIED,
                at,
                Some("0".into()),
                || {
                    "AGGREGATION_TEMPORALITY_UNSPECIFIED must not be used; say DELTA or CUMULATIVE"
                        .into()
                },
            ),
            1 | 2 => {}
            other => c.report(
                &rules::OTLP_TEMPORALITY_UNKNOWN,
                at,
                Some(other.to_string()),
                || "not an AggregationTemporality value (1 delta, 2 cumulative)".into(),
            ),
        }
    }
}

/// Keys unique in every list a sample, location or mapping selects from
/// attribute_table (the samples' checked in their pass, what it found
/// absorbed here); attribute units name keys that exist.
fn attributes(
    p: &Profile,
    (keys, in_samples): (&AttributeKeys, Collector),
    path: &RefPath,
    c: &mut Collector,
) {
    c.absorb(in_samples);
    for (i, l) in p.location.iter().enumerate() {
        if l.attributes.len() > 1 {
            let at = || path.with_field("location", Some(i)) + ".attributes";
            keys.check_list(&l.attributes, &at, c);
        }
    }
    for (i, m) in p.mapping.iter().enumerate() {
        if m.attributes.len() > 1 {
            let at = || path.with_field("mapping", Some(i)) + ".attributes";
            keys.check_list(&m.attributes, &at, c);
        }
    }
    for (i, unit) in p.attribute_units.iter().enumerate() {
        let Some(key) = p.string_at(unit.attribute_key) else {
            continue;
        };
        if !keys.names.contains_key(key) {
            c.report(
                &rules::OTLP_ATTR_UNIT,
                || path.with_field("attribute_units", Some(i)) + ".attribute_key",
                Some(format!("{key:?}")),
                || "no attribute in attribute_table has this key".into(),
            );
        }
    }
}
