//! OTLP Profiles v1experimental: the envelope (resource, scope, container)
//! and the pprof-extended profile inside each container.

use std::collections::HashMap;

use protoprof_model_meta::RefPath;
use protoprof_model_otlp::opentelemetry::proto::collector::profiles::v1experimental::ExportProfilesServiceRequest;
use protoprof_model_otlp::opentelemetry::proto::common::v1::KeyValue;
use protoprof_model_otlp::opentelemetry::proto::profiles::v1experimental::{
    Profile, ProfileContainer, ProfilesData, ResourceProfiles,
};

use crate::common::{self, hex, OTLP};
use crate::references::{report_unknown, ReferenceChecker};
use crate::report::{Collector, Options, Report};
use crate::rules;
use protoprof_model_meta::StringTable;

/// Validates OTLP `ProfilesData`: every container, profile and reference.
pub fn validate_profiles_data(data: &ProfilesData, options: &Options) -> Report {
    let mut c = Collector::new(*options);
    unknown(
        &data.special_fields,
        "ProfilesData",
        &RefPath::new(),
        &mut c,
    );
    resource_profiles(&data.resource_profiles, &mut RefPath::new(), &mut c);
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
    resource_profiles(&request.resource_profiles, &mut RefPath::new(), &mut c);
    c.finish("opentelemetry.proto.collector.profiles.v1experimental.ExportProfilesServiceRequest")
}

/// Validates one container on its own (its path starts at the container).
pub fn validate_container(container: &ProfileContainer, options: &Options) -> Report {
    let mut c = Collector::new(*options);
    check_container(container, &mut RefPath::new(), &mut c);
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

fn resource_profiles(list: &[ResourceProfiles], path: &mut RefPath, c: &mut Collector) {
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
                check_container(container, path, c);
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

fn check_container(pc: &ProfileContainer, path: &mut RefPath, c: &mut Collector) {
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
            check_profile(
                profile,
                (pc.start_time_unix_nano, pc.end_time_unix_nano),
                path,
                c,
            );
            path.pop();
        }
    }
}

fn check_profile(p: &Profile, time_range: (u64, u64), path: &mut RefPath, c: &mut Collector) {
    let rules = &OTLP;
    common::check_profile_fields!(p, rules, path, c);
    temporality(p, path, c);
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
    samples(p, time_range, path, c);
    attributes(p, path, c);
    if c.stopped() {
        return;
    }
    let mut checker = ReferenceChecker::new(&protoprof_model_otlp::SCHEMA, p, &rules.refs, c);
    protoprof_model_otlp::refs::walk_profile(p, path, &mut checker);
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

fn samples(p: &Profile, (start, end): (u64, u64), path: &RefPath, c: &mut Collector) {
    let time_known = end >= start && end != 0;
    for (i, s) in p.sample.iter().enumerate() {
        for (j, l) in s.label.iter().enumerate() {
            let at = || format!("{}.label[{j}]", path.with_field("sample", Some(i)));
            common::label(l.key, l.str, l.num, l.num_unit, at, &OTLP, c);
        }
        if time_known {
            for (j, &t) in s.timestamps_unix_nano.iter().enumerate() {
                if !(start..=end).contains(&t) {
                    c.report(
                        &rules::OTLP_TIME_SAMPLE,
                        || {
                            format!(
                                "{}.timestamps_unix_nano[{j}]",
                                path.with_field("sample", Some(i))
                            )
                        },
                        Some(t.to_string()),
                        || format!("outside the profile's time range [{start}, {end}]"),
                    );
                }
            }
        }
        if c.stopped() {
            return;
        }
    }
}

/// Keys unique in every list a sample, location or mapping selects from
/// attribute_table; attribute units name keys that exist.
fn attributes(p: &Profile, path: &RefPath, c: &mut Collector) {
    // Keys interned once, so each list is checked with small integer compares.
    let mut key_ids: HashMap<&str, u32> = HashMap::new();
    let keys: Vec<u32> = p
        .attribute_table
        .iter()
        .map(|kv| {
            let next = key_ids.len() as u32;
            *key_ids.entry(kv.key.as_str()).or_insert(next)
        })
        .collect();
    let check = |list: &[u64], at: &dyn Fn() -> String, c: &mut Collector| {
        for (a, &x) in list.iter().enumerate() {
            let Some(&kx) = keys.get(x as usize) else {
                continue;
            }; // out of range: a reference error
            if let Some(b) = list[..a]
                .iter()
                .position(|&y| keys.get(y as usize) == Some(&kx))
            {
                let key = &p.attribute_table[x as usize].key;
                c.report(
                    &rules::OTLP_ATTR_DUPLICATE,
                    || format!("{}[{a}]", at()),
                    Some(format!("{key:?}")),
                    || format!("attribute key {key:?} is already selected at [{b}]"),
                );
            }
        }
    };
    for (i, s) in p.sample.iter().enumerate() {
        if s.attributes.len() > 1 {
            check(
                &s.attributes,
                &|| path.with_field("sample", Some(i)) + ".attributes",
                c,
            );
        }
    }
    for (i, l) in p.location.iter().enumerate() {
        if l.attributes.len() > 1 {
            check(
                &l.attributes,
                &|| path.with_field("location", Some(i)) + ".attributes",
                c,
            );
        }
    }
    for (i, m) in p.mapping.iter().enumerate() {
        if m.attributes.len() > 1 {
            check(
                &m.attributes,
                &|| path.with_field("mapping", Some(i)) + ".attributes",
                c,
            );
        }
    }
    for (i, unit) in p.attribute_units.iter().enumerate() {
        let Some(key) = p.string_at(unit.attribute_key) else {
            continue;
        };
        if !key_ids.contains_key(key) {
            c.report(
                &rules::OTLP_ATTR_UNIT,
                || path.with_field("attribute_units", Some(i)) + ".attribute_key",
                Some(format!("{key:?}")),
                || "no attribute in attribute_table has this key".into(),
            );
        }
    }
}
