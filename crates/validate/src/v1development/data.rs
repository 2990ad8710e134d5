//! OTLP Profiles v1development (opentelemetry-proto v1.10/v1.11): every
//! MUST and SHOULD of the schema's comments, and what profcheck checks.
//!
//! Every profile of a message points into one `ProfilesDictionary`; the
//! generated walker (`refs::walk_profiles_data`) visits every index of the
//! dictionary and of the profiles, and the checker measures the
//! dictionary's tables. What the index annotations cannot say (the zero
//! entries, sample shape, key uniqueness, common/v1's string indices) is
//! checked here, one function per kind of record.

use std::collections::HashMap;

use protobuf::reflect::{ReflectFieldRef, ReflectValueRef};
use protobuf::MessageDyn;
use protoprof_model_meta::{RefPath, StringTable};
use protoprof_model_otlp::opentelemetry::proto::collector::profiles::v1development::ExportProfilesServiceRequest;
use protoprof_model_otlp::opentelemetry::proto::common::v1::{any_value, KeyValue};
use protoprof_model_otlp::opentelemetry::proto::profiles::v1development::{
    Profile, ProfilesData, ProfilesDictionary, ResourceProfiles, Sample, Stack,
};
use protoprof_model_otlp::refs;

use crate::common::hex;
use crate::references::{passes_in_halves, ElementsFrom, RefRules, ReferenceTables};
use crate::report::{Collector, Options, Report};
use crate::rules;
use crate::v1development::parts::{model_parts, walk_parts, DevelopmentParts};
use crate::v1development::tables::{self as tables, Referenced};

static REFS: RefRules = RefRules {
    range: &rules::DEV_REF_RANGE,
    negative: &rules::DEV_REF_NEGATIVE,
    missing: None,
    zero: None,
    slice: None,
    unknown: &rules::DEV_UNKNOWN,
    // An empty table lacks its zero entry, which DEV_TABLE_ZERO reports.
    reported_when_empty: &[
        "mapping_table",
        "location_table",
        "function_table",
        "link_table",
        "string_table",
        "attribute_table",
        "stack_table",
    ],
};

/// Validates v1development `ProfilesData`.
pub fn validate_development_data(data: &ProfilesData, options: &Options) -> Report {
    let empty = ProfilesDictionary::default();
    let dictionary = data.dictionary.as_ref().unwrap_or(&empty);
    let parts = model_parts(&data.resource_profiles, dictionary);
    validate_development_parts(data, &parts, options)
}

/// Validates v1development `ProfilesData` whose samples and stacks are
/// read from `parts` (the codec's `DevelopmentView`, which leaves them in
/// the input bytes): the checks and report of [`validate_development_data`]
/// on the whole message. `data`'s own samples and stack table are not read.
///
/// `options.duplicates_and_orphans` compares every entry with every other,
/// so it needs the whole message: those checks run only when `data` holds
/// its samples and stacks (as many as `parts`); validate the decoded
/// message for them.
pub fn validate_development_parts(
    data: &ProfilesData,
    parts: &DevelopmentParts,
    options: &Options,
) -> Report {
    let mut c = Collector::new(*options);
    let empty = ProfilesDictionary::default();
    let dictionary = data.dictionary.as_ref().unwrap_or(&empty);
    let message = (&data.resource_profiles[..], data.dictionary.is_some());
    let mut tables = ReferenceTables::new(&protoprof_model_otlp::SCHEMA, dictionary, &REFS);
    tables.set_table_length("stack_table", parts.entry_count());
    let found = check_message(message, dictionary, (parts, &tables), &mut c);
    if !c.stopped() {
        let mut walker = ElementsFrom {
            inner: tables.into_checker(&mut c),
            walk: walk_parts(parts, found),
        };
        refs::walk_profiles_data(data, &mut RefPath::new(), &mut walker);
    }
    let held: usize = model_parts(&data.resource_profiles, dictionary).total_samples();
    let whole = dictionary.stack_table.len() == parts.entry_count()
        && held
            == (0..parts.profile_count())
                .map(|n| parts.sample_count(n))
                .sum::<usize>();
    if options.duplicates_and_orphans && whole && !c.stopped() {
        let mut referenced = Referenced::new(dictionary);
        refs::walk_profiles_data(data, &mut RefPath::new(), &mut referenced);
        referenced.mark_inline_strings(&data.resource_profiles);
        tables::duplicates(dictionary, &mut c);
        referenced.report_orphans(&data.resource_profiles, &mut c);
    }
    c.finish("opentelemetry.proto.profiles.v1development.ProfilesData")
}

/// Validates the v1development collector's export request (the same checks).
pub fn validate_development_request(
    request: &ExportProfilesServiceRequest,
    options: &Options,
) -> Report {
    let mut c = Collector::new(*options);
    let empty = ProfilesDictionary::default();
    let dictionary = request.dictionary.as_ref().unwrap_or(&empty);
    let parts = model_parts(&request.resource_profiles, dictionary);
    let message = (&request.resource_profiles[..], request.dictionary.is_some());
    let tables = ReferenceTables::new(&protoprof_model_otlp::SCHEMA, dictionary, &REFS);
    let found = check_message(message, dictionary, (&parts, &tables), &mut c);
    if !c.stopped() {
        let mut walker = ElementsFrom {
            inner: tables.into_checker(&mut c),
            walk: walk_parts(&parts, found),
        };
        refs::walk_export_profiles_service_request(request, &mut RefPath::new(), &mut walker);
    }
    if options.duplicates_and_orphans && !c.stopped() {
        let mut referenced = Referenced::new(dictionary);
        refs::walk_export_profiles_service_request(request, &mut RefPath::new(), &mut referenced);
        referenced.mark_inline_strings(&request.resource_profiles);
        tables::duplicates(dictionary, &mut c);
        referenced.report_orphans(&request.resource_profiles, &mut c);
    }
    c.finish("opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest")
}

/// Everything but the indices the walker checks, except the samples':
/// those are checked as the samples are read for their other rules
/// (`tables` measures the dictionary), and what that found comes back, one
/// collector per profile in message order, for the walker to absorb.
fn check_message(
    (resource_profiles, has_dictionary): (&[ResourceProfiles], bool),
    dictionary: &ProfilesDictionary,
    (parts, tables): (&DevelopmentParts, &ReferenceTables),
    c: &mut Collector,
) -> Vec<Option<Collector>> {
    let mut found = Vec::new();
    let mut path = RefPath::new();
    let profiles = resource_profiles
        .iter()
        .flat_map(|rp| &rp.scope_profiles)
        .map(|sp| sp.profiles.len())
        .sum::<usize>();
    if profiles == 0 {
        c.report(
            &rules::DEV_EMPTY,
            || "resource_profiles".into(),
            None,
            || "the message holds no profile".into(),
        );
    } else if !has_dictionary {
        c.report(
            &rules::DEV_DICTIONARY,
            || "dictionary".into(),
            None,
            || format!("{profiles} profiles and no dictionary for their indices"),
        );
    }
    if has_dictionary {
        path.push("dictionary", None);
        check_dictionary(dictionary, parts, &path, c);
        path.pop();
    }
    let keys = AttributeKeys::of(dictionary);
    let mut n = 0; // the profile's position in message order
    for (i, rp) in resource_profiles.iter().enumerate() {
        path.push("resource_profiles", Some(i));
        if let Some(resource) = rp.resource.as_ref() {
            path.push("resource", None);
            inline_attributes(&resource.attributes, dictionary, &path, c);
            path.pop();
        }
        for (j, sp) in rp.scope_profiles.iter().enumerate() {
            path.push("scope_profiles", Some(j));
            if let Some(scope) = sp.scope.as_ref() {
                path.push("scope", None);
                inline_attributes(&scope.attributes, dictionary, &path, c);
                path.pop();
            }
            for (k, profile) in sp.profiles.iter().enumerate() {
                path.push("profiles", Some(k));
                let context = SampleContext {
                    keys: &keys,
                    tables,
                    path: &path,
                };
                found.push(Some(check_profile((profile, n), parts, &context, c)));
                n += 1;
                path.pop();
                if c.stopped() {
                    return found;
                }
            }
            path.pop();
        }
        path.pop();
    }
    found
}

/// Entry 0 of every table is its zero value; the records' own rules.
fn check_dictionary(
    d: &ProfilesDictionary,
    parts: &DevelopmentParts,
    path: &RefPath,
    c: &mut Collector,
) {
    if d.string_table.first().is_none_or(|s| !s.is_empty()) {
        c.report(
            &rules::DEV_STR_FIRST,
            || path.with_field("string_table", Some(0)),
            d.string_table.first().map(|s| format!("{s:?}")),
            || "string_table[0] must be the empty string".into(),
        );
    }
    // 16 and 8 zero bytes are the link's zero value as well as empty ids.
    let zero_link = d.link_table.first().map(|l| {
        l.trace_id.iter().chain(&l.span_id).all(|b| *b == 0)
            && l.special_fields.unknown_fields().iter().next().is_none()
    });
    let zero_entries = [
        (
            "mapping_table",
            d.mapping_table.first().map(|m| is_zero_value(m)),
        ),
        (
            "location_table",
            d.location_table.first().map(|l| is_zero_value(l)),
        ),
        (
            "function_table",
            d.function_table.first().map(|f| is_zero_value(f)),
        ),
        ("link_table", zero_link),
        (
            "attribute_table",
            d.attribute_table.first().map(|a| is_zero_value(a)),
        ),
        (
            "stack_table",
            (parts.entry_count() > 0).then(|| is_zero_value(parts.entry(0, &mut Stack::new()))),
        ),
    ];
    for (table, zero) in zero_entries {
        if zero != Some(true) {
            c.report(
                &rules::DEV_TABLE_ZERO,
                || path.with_field(table, Some(0)),
                None,
                || match zero {
                    None => format!("{table} is empty; entry 0 must be the zero value"),
                    Some(_) => format!("{table}[0] must be the zero value (all fields unset)"),
                },
            );
        }
    }
    mappings(d, path, c);
    functions_and_lines(d, path, c);
    links(d, path, c);
}

/// Every field unset, where a message field that is present but itself
/// all unset counts as unset: Go's producers write `value: {}` in
/// `attribute_table[0]`, which has the same meaning as no value.
fn is_zero_value(message: &dyn MessageDyn) -> bool {
    if message
        .special_fields_dyn()
        .unknown_fields()
        .iter()
        .next()
        .is_some()
    {
        return false;
    }
    let descriptor = message.descriptor_dyn();
    let all_unset = descriptor
        .fields()
        .all(|field| match field.get_reflect(message) {
            ReflectFieldRef::Repeated(list) => list.is_empty(),
            ReflectFieldRef::Map(map) => map.is_empty(),
            // proto3 scalars read as unset when they hold their default.
            ReflectFieldRef::Optional(_) => match field.get_singular(message) {
                None => true,
                Some(ReflectValueRef::Message(inner)) => is_zero_value(&*inner),
                Some(_) => false,
            },
        });
    all_unset
}

fn mappings(d: &ProfilesDictionary, path: &RefPath, c: &mut Collector) {
    for (i, m) in d.mapping_table.iter().enumerate() {
        let both_zero = m.memory_start == 0 && m.memory_limit == 0;
        if !both_zero && m.memory_start >= m.memory_limit {
            c.report(
                &rules::DEV_MAPPING_RANGE,
                || path.with_field("mapping_table", Some(i)) + ".memory_limit",
                Some(m.memory_limit.to_string()),
                || format!("memory_start {} is not below memory_limit", m.memory_start),
            );
        }
    }
}

fn functions_and_lines(d: &ProfilesDictionary, path: &RefPath, c: &mut Collector) {
    for (i, f) in d.function_table.iter().enumerate().skip(1) {
        if f.name_strindex == 0 && f.system_name_strindex == 0 && f.filename_strindex == 0 {
            c.report(
                &rules::DEV_FUNCTION_NAME,
                || path.with_field("function_table", Some(i)),
                None,
                || "a function needs a name, system_name or filename".into(),
            );
        }
        negative(
            f.start_line,
            || path.with_field("function_table", Some(i)) + ".start_line",
            c,
        );
    }
    for (i, location) in d.location_table.iter().enumerate() {
        for (j, line) in location.lines.iter().enumerate() {
            let at = || format!("{}.lines[{j}]", path.with_field("location_table", Some(i)));
            negative(line.line, || at() + ".line", c);
            negative(line.column, || at() + ".column", c);
        }
    }
}

fn negative(value: i64, at: impl FnOnce() -> String, c: &mut Collector) {
    if value < 0 {
        c.report(
            &rules::DEV_NEGATIVE_LINE,
            at,
            Some(value.to_string()),
            || "line numbers are 0 (unknown) or positive".into(),
        );
    }
}

/// From entry 1 on (entry 0 is the zero value), ids have their lengths.
fn links(d: &ProfilesDictionary, path: &RefPath, c: &mut Collector) {
    for (i, link) in d.link_table.iter().enumerate().skip(1) {
        if link.trace_id.len() != 16 {
            c.report(
                &rules::DEV_LINK_TRACE,
                || path.with_field("link_table", Some(i)) + ".trace_id",
                Some(hex(&link.trace_id)),
                || format!("{} bytes; a trace_id has 16", link.trace_id.len()),
            );
        }
        if link.span_id.len() != 8 {
            c.report(
                &rules::DEV_LINK_SPAN,
                || path.with_field("link_table", Some(i)) + ".span_id",
                Some(hex(&link.span_id)),
                || format!("{} bytes; a span_id has 8", link.span_id.len()),
            );
        }
    }
}

/// Resource and scope attributes: unique keys, and the string indices
/// v1.10.0 allows in place of inline strings within the string table.
fn inline_attributes(
    attributes: &[KeyValue],
    d: &ProfilesDictionary,
    path: &RefPath,
    c: &mut Collector,
) {
    let mut first: HashMap<&str, usize> = HashMap::new();
    for (i, kv) in attributes.iter().enumerate() {
        let at = || path.with_field("attributes", Some(i));
        let key = if kv.key.is_empty() && kv.key_strindex != 0 {
            string_index(kv.key_strindex, d, || at() + ".key_strindex", c)
        } else {
            Some(kv.key.as_str())
        };
        if let Some(Some(any_value::Value::StringValueStrindex(index))) =
            kv.value.as_ref().map(|v| v.value.as_ref())
        {
            string_index(*index, d, || at() + ".value.string_value_strindex", c);
        }
        if let Some(key) = key {
            if let Some(j) = first.insert(key, i) {
                c.report(
                    &rules::DEV_ATTR_DUPLICATE,
                    at,
                    Some(format!("{key:?}")),
                    || format!("attributes[{j}] has the same key"),
                );
            }
        }
    }
}

/// The string at `index`, or a reported range error.
fn string_index<'d>(
    index: i32,
    d: &'d ProfilesDictionary,
    at: impl FnOnce() -> String,
    c: &mut Collector,
) -> Option<&'d str> {
    let found = d.string_at(i64::from(index));
    if found.is_none() {
        let len = d.string_table.len();
        c.report(&rules::DEV_REF_RANGE, at, Some(index.to_string()), || {
            format!("index {index} out of range: string_table has {len} entries")
        });
    }
    found
}

/// What a profile's checks need of the message around it.
struct SampleContext<'a> {
    keys: &'a AttributeKeys<'a>,
    /// The dictionary's tables, for the references.
    tables: &'a ReferenceTables,
    /// The profile's path.
    path: &'a RefPath,
}

/// The profile's own rules, and its samples' in one pass over them; the
/// samples' references, checked in the same pass, are returned.
fn check_profile(
    (p, n): (&Profile, usize),
    parts: &DevelopmentParts,
    context: &SampleContext,
    c: &mut Collector,
) -> Collector {
    let (keys, path) = (context.keys, context.path);
    if !p.profile_id.is_empty()
        && (p.profile_id.len() != 16 || p.profile_id.iter().all(|b| *b == 0))
    {
        c.report(
            &rules::DEV_PROFILE_ID,
            || path.with_field("profile_id", None),
            Some(hex(&p.profile_id)),
            || {
                format!(
                    "{} bytes; a profile_id is 16 bytes, not all zero",
                    p.profile_id.len()
                )
            },
        );
    }
    if p.original_payload.is_empty() != p.original_payload_format.is_empty() {
        c.report(
            &rules::DEV_PAYLOAD,
            || path.with_field("original_payload_format", None),
            Some(format!("{:?}", p.original_payload_format)),
            || {
                format!(
                    "original_payload has {} bytes; both or neither must be set",
                    p.original_payload.len()
                )
            },
        );
    }
    keys.check_list(
        &p.attribute_indices,
        || path.with_field("attribute_indices", None),
        c,
    );
    let ([rules, references], shapes) = sample_pass((p, n), parts, context, c);
    c.absorb(rules);
    if c.stopped() {
        return references;
    }
    if shapes[1..].iter().filter(|&&n| n > 0).count() > 1 {
        c.report(
            &rules::DEV_SAMPLE_SHAPE,
            || path.with_field("samples", None),
            Some(format!(
                "{} values only, {} timestamps only, {} both",
                shapes[1], shapes[2], shapes[3]
            )),
            || "the samples of one profile should all have the same shape".into(),
        );
    }
    references
}

/// Reads profile `n`'s samples once (in halves on two threads for many)
/// for their rules and their references, each reported to its own
/// collector forked from `template`; counts the samples of each shape.
fn sample_pass(
    (p, n): (&Profile, usize),
    parts: &DevelopmentParts,
    context: &SampleContext,
    template: &Collector,
) -> ([Collector; 2], [usize; 4]) {
    let end = p.time_unix_nano.checked_add(p.duration_nano);
    let pass = |range: std::ops::Range<usize>, collectors: &mut [Collector; 2]| {
        let [c, references] = collectors;
        let mut checker = context.tables.checker(references);
        let (mut buffer, mut counted) = (Sample::new(), [0usize; 4]);
        let mut path = context.path.clone();
        for i in range {
            let s = parts.sample(n, i, &mut buffer);
            if !c.stopped() {
                let at = || context.path.with_field("samples", Some(i));
                counted[sample_shape(s)] += 1;
                check_sample(s, at, c);
                (context.keys).check_list(&s.attribute_indices, || at() + ".attribute_indices", c);
                if let (Some(end), true) = (end, p.time_unix_nano != 0) {
                    sample_times(s, (p.time_unix_nano, end), at, c);
                }
            }
            checker.check_element(("samples", i), &mut path, |path, c| {
                refs::visit_opentelemetry_proto_profiles_v1development_sample(s, path, c)
            });
        }
        counted
    };
    let (collectors, counts) = passes_in_halves(template, parts.sample_count(n), pass);
    let shapes = counts.iter().fold([0; 4], |sum, counted| {
        std::array::from_fn(|shape| sum[shape] + counted[shape])
    });
    (collectors, shapes)
}

/// 0 neither, 1 values only, 2 timestamps only, 3 both.
fn sample_shape(s: &Sample) -> usize {
    usize::from(!s.values.is_empty()) + 2 * usize::from(!s.timestamps_unix_nano.is_empty())
}

fn check_sample(s: &Sample, at: impl Fn() -> String, c: &mut Collector) {
    match (s.values.len(), s.timestamps_unix_nano.len()) {
        (0, 0) => c.report(&rules::DEV_SAMPLE_EMPTY, &at, None, || {
            "a sample needs values or timestamps_unix_nano".into()
        }),
        (v, t) if v != 0 && t != 0 && v != t => c.report(
            &rules::DEV_SAMPLE_LENGTHS,
            || at() + ".timestamps_unix_nano",
            Some(format!("{v} values, {t} timestamps")),
            || "values and timestamps_unix_nano pair up, so their lengths must agree".into(),
        ),
        _ => {}
    }
}

fn sample_times(s: &Sample, (start, end): (u64, u64), at: impl Fn() -> String, c: &mut Collector) {
    for (j, &t) in s.timestamps_unix_nano.iter().enumerate() {
        if !(start..end.max(start + 1)).contains(&t) {
            c.report(
                &rules::DEV_TIME_SAMPLE,
                || format!("{}.timestamps_unix_nano[{j}]", at()),
                Some(t.to_string()),
                || match t == end {
                    // The eBPF profiler stamps its last sample with the
                    // profile's end; opentelemetry-proto's range is
                    // half-open, so say which end it is.
                    true => format!(
                        "at the profile's end, which its time range [{start}, {end}) excludes"
                    ),
                    false => format!("outside the profile's time range [{start}, {end})"),
                },
            );
        }
    }
}

/// The attribute table's keys, interned, so that lists are checked for
/// repeated keys with small integer compares.
struct AttributeKeys<'d> {
    dictionary: &'d ProfilesDictionary,
    ids: Vec<u32>,
}

impl<'d> AttributeKeys<'d> {
    fn of(dictionary: &'d ProfilesDictionary) -> Self {
        let mut interned: HashMap<&str, u32> = HashMap::new();
        let ids = dictionary
            .attribute_table
            .iter()
            .map(|a| {
                let key = dictionary.string(i64::from(a.key_strindex));
                let next = interned.len() as u32;
                *interned.entry(key).or_insert(next)
            })
            .collect();
        AttributeKeys { dictionary, ids }
    }

    /// Reports each index whose key an earlier index of `list` has.
    fn check_list(&self, list: &[i32], at: impl Fn() -> String, c: &mut Collector) {
        if list.len() < 2 {
            return;
        }
        for (a, &x) in list.iter().enumerate() {
            let Some(&key) = usize::try_from(x).ok().and_then(|x| self.ids.get(x)) else {
                continue; // out of range: the walker reports it
            };
            let earlier = list[..a]
                .iter()
                .position(|&y| usize::try_from(y).ok().and_then(|y| self.ids.get(y)) == Some(&key));
            if let Some(b) = earlier {
                let name = self.key_name(x as usize);
                c.report(
                    &rules::DEV_ATTR_DUPLICATE,
                    || format!("{}[{a}]", at()),
                    Some(format!("{name:?}")),
                    || format!("attribute key {name:?} is already selected at [{b}]"),
                );
            }
        }
    }

    fn key_name(&self, index: usize) -> &str {
        let key = self.dictionary.attribute_table[index].key_strindex;
        self.dictionary.string(i64::from(key))
    }
}

#[cfg(test)]
mod tests {
    use protoprof_model_otlp::opentelemetry::proto::profiles::v1development::{
        KeyValueAndUnit, ScopeProfiles,
    };

    use super::*;
    use crate::references::PARALLEL_ELEMENTS;

    const LATER: usize = PARALLEL_ELEMENTS + 1_000;

    /// Samples in each half, with problems of each kind the sample pass
    /// checks placed so that each check meets its first one at a different
    /// sample.
    fn data_with(problems: &[&str]) -> ProfilesData {
        let has = |kind: &str| problems.contains(&kind);
        let sample = Sample {
            values: vec![1],
            timestamps_unix_nano: vec![150],
            ..Default::default()
        };
        let mut samples = vec![sample; 2 * PARALLEL_ELEMENTS + 3];
        for (kind, at) in [
            ("empty", [30, LATER + 7]),
            ("time", [3, LATER + 8]),
            ("attributes", [20, LATER + 9]),
            ("reference", [10, LATER + 10]),
        ] {
            for i in at.into_iter().filter(|_| has(kind)) {
                let s = &mut samples[i];
                match kind {
                    "empty" => *s = Sample::default(),
                    "time" => s.timestamps_unix_nano[0] = 99,
                    "attributes" => s.attribute_indices = vec![1, 2],
                    _ => s.stack_index = 5,
                }
            }
        }
        let key_a = KeyValueAndUnit {
            key_strindex: 1,
            ..Default::default()
        };
        let dictionary = ProfilesDictionary {
            mapping_table: vec![Default::default()],
            location_table: vec![Default::default()],
            function_table: vec![Default::default()],
            link_table: vec![Default::default()],
            string_table: vec![String::new(), "a".into()],
            attribute_table: vec![Default::default(), key_a.clone(), key_a],
            stack_table: vec![Default::default()],
            ..Default::default()
        };
        let profile = Profile {
            samples,
            time_unix_nano: 100,
            duration_nano: 100,
            ..Default::default()
        };
        ProfilesData {
            resource_profiles: vec![ResourceProfiles {
                scope_profiles: vec![ScopeProfiles {
                    profiles: vec![profile],
                    ..Default::default()
                }],
                ..Default::default()
            }],
            dictionary: Some(dictionary).into(),
            ..Default::default()
        }
    }

    /// Each diagnostic's code and the sample it names.
    fn found(problems: &[&str], options: Options) -> Vec<(&'static str, usize)> {
        validate_development_data(&data_with(problems), &options).codes_by_element("samples")
    }

    /// Read once for their rules and references, in halves, samples are
    /// reported as a pass for the rules and the walker's own pass report
    /// them: every problem, and `fail_fast` stopping at the first error of
    /// the rules before any reference, not at the first sample with one.
    #[test]
    fn one_pass_reports_what_the_rules_then_the_walker_report() {
        let all = ["empty", "time", "attributes", "reference"];
        assert_eq!(
            found(&all, Options::default()),
            [
                ("OTLPDEV-ATTR-001", 20),
                ("OTLPDEV-ATTR-001", LATER + 9),
                ("OTLPDEV-REF-001", 10),
                ("OTLPDEV-REF-001", LATER + 10),
                ("OTLPDEV-SAMPLE-001", 30),
                ("OTLPDEV-SAMPLE-001", LATER + 7),
                ("OTLPDEV-TIME-001", 3),
                ("OTLPDEV-TIME-001", LATER + 8),
            ]
        );
        let fail_fast = Options {
            fail_fast: true,
            ..Options::default()
        };
        let stops = [
            (
                &all[..],
                vec![("OTLPDEV-ATTR-001", 20), ("OTLPDEV-TIME-001", 3)],
            ),
            (
                &["empty", "reference"][..],
                vec![("OTLPDEV-SAMPLE-001", 30)],
            ),
            (
                &all[1..2],
                vec![("OTLPDEV-TIME-001", 3), ("OTLPDEV-TIME-001", LATER + 8)],
            ),
            (&all[3..], vec![("OTLPDEV-REF-001", 10)]),
            (
                &["time", "reference"][..],
                vec![
                    ("OTLPDEV-REF-001", 10),
                    ("OTLPDEV-TIME-001", 3),
                    ("OTLPDEV-TIME-001", LATER + 8),
                ],
            ),
        ];
        for (problems, expected) in stops {
            assert_eq!(found(problems, fail_fast), expected, "{problems:?}");
        }
    }
}
