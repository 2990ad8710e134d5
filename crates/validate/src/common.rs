//! Rules pprof and OTLP's pprof-derived profile share, applied to plain data
//! so both models use one implementation.

use std::collections::HashMap;

use protoprof_model_meta::{RefPath, StringTable};

use crate::references::RefRules;
use crate::report::Collector;
use crate::rules::{self, Rule};

/// The rules one schema reports the shared checks under.
pub(crate) struct ProfileRules {
    pub str_empty: &'static Rule,
    pub str_first: &'static Rule,
    pub sample_values: &'static Rule,
    pub sample_types: &'static Rule,
    pub label_key: &'static Rule,
    pub label_both: &'static Rule,
    pub label_unit: &'static Rule,
    pub meta_period: &'static Rule,
    pub meta_default: &'static Rule,
    pub meta_time: &'static Rule,
    pub meta_duration: &'static Rule,
    pub frames_regex: &'static Rule,
    pub id_zero: &'static Rule,
    pub id_duplicate: &'static Rule,
    /// pprof: ids are required. OTLP: deprecated ids are optional (all zero).
    pub ids_required: bool,
    pub refs: RefRules,
}

pub(crate) static PPROF: ProfileRules = ProfileRules {
    str_empty: &rules::PPROF_STR_EMPTY,
    str_first: &rules::PPROF_STR_FIRST,
    sample_values: &rules::PPROF_SAMPLE_VALUES,
    sample_types: &rules::PPROF_SAMPLE_TYPES,
    label_key: &rules::PPROF_LABEL_KEY,
    label_both: &rules::PPROF_LABEL_BOTH,
    label_unit: &rules::PPROF_LABEL_UNIT,
    meta_period: &rules::PPROF_META_PERIOD,
    meta_default: &rules::PPROF_META_DEFAULT,
    meta_time: &rules::PPROF_META_TIME,
    meta_duration: &rules::PPROF_META_DURATION,
    frames_regex: &rules::PPROF_FRAMES_REGEX,
    id_zero: &rules::PPROF_ID_ZERO,
    id_duplicate: &rules::PPROF_ID_DUPLICATE,
    ids_required: true,
    refs: RefRules {
        range: &rules::PPROF_REF_RANGE,
        negative: &rules::PPROF_REF_NEGATIVE,
        missing: Some(&rules::PPROF_REF_MISSING),
        zero: Some(&rules::PPROF_REF_ZERO),
        slice: None,
        unknown: &rules::PPROF_UNKNOWN,
        reported_when_empty: &["string_table"],
    },
};

pub(crate) static OTLP: ProfileRules = ProfileRules {
    str_empty: &rules::OTLP_STR_EMPTY,
    str_first: &rules::OTLP_STR_FIRST,
    sample_values: &rules::OTLP_SAMPLE_VALUES,
    sample_types: &rules::OTLP_SAMPLE_TYPES,
    label_key: &rules::OTLP_LABEL_KEY,
    label_both: &rules::OTLP_LABEL_BOTH,
    label_unit: &rules::OTLP_LABEL_UNIT,
    meta_period: &rules::OTLP_META_PERIOD,
    meta_default: &rules::OTLP_META_DEFAULT,
    meta_time: &rules::OTLP_META_TIME,
    meta_duration: &rules::OTLP_META_DURATION,
    frames_regex: &rules::OTLP_FRAMES_REGEX,
    id_zero: &rules::OTLP_ID_ZERO,
    id_duplicate: &rules::OTLP_ID_DUPLICATE,
    ids_required: false,
    refs: RefRules {
        range: &rules::OTLP_REF_RANGE,
        negative: &rules::OTLP_REF_NEGATIVE,
        missing: None,
        zero: None,
        slice: Some(&rules::OTLP_REF_SLICE),
        unknown: &rules::OTLP_UNKNOWN,
        reported_when_empty: &["string_table"],
    },
};

pub(crate) fn string_table(
    strings: &[String],
    rules: &ProfileRules,
    path: &RefPath,
    c: &mut Collector,
) {
    match strings.first() {
        None => c.report(
            rules.str_empty,
            || path.with_field("string_table", None),
            None,
            || "the string table is empty; entry 0 must be the empty string".into(),
        ),
        Some(first) if !first.is_empty() => c.report(
            rules.str_first,
            || path.with_field("string_table", Some(0)),
            Some(format!("{first:?}")),
            || "string_table[0] must be the empty string".into(),
        ),
        Some(_) => {}
    }
}

/// Every sample has one value per sample type; samples need sample types.
pub(crate) fn sample_values<'a>(
    value_counts: impl ExactSizeIterator<Item = usize> + 'a,
    sample_types: usize,
    rules: &ProfileRules,
    path: &RefPath,
    c: &mut Collector,
) {
    if sample_types == 0 && value_counts.len() > 0 {
        c.report(
            rules.sample_types,
            || path.with_field("sample_type", None),
            None,
            || {
                format!(
                    "{} samples but no sample_type describes their values",
                    value_counts.len()
                )
            },
        );
        return;
    }
    for (i, count) in value_counts.enumerate() {
        if count != sample_types {
            c.report(
                rules.sample_values,
                || path.with_field("sample", Some(i)),
                Some(format!("{count} values")),
                || format!("a sample has {count} values but there are {sample_types} sample types"),
            );
            if c.stopped() {
                return;
            }
        }
    }
}

/// A label: a key, at most one of str/num, num_unit only with num.
pub(crate) fn label(
    key: i64,
    str: i64,
    num: i64,
    num_unit: i64,
    at: impl Fn() -> String,
    rules: &ProfileRules,
    c: &mut Collector,
) {
    if key == 0 {
        c.report(rules.label_key, &at, None, || {
            "a label needs a key (key is 0, the empty string)".into()
        });
    }
    if str != 0 && num != 0 {
        c.report(
            rules.label_both,
            &at,
            Some(format!("str {str}, num {num}")),
            || "a label has at most one of str and num".into(),
        );
    }
    if num_unit != 0 && num == 0 {
        c.report(
            rules.label_unit,
            &at,
            Some(format!("num_unit {num_unit}")),
            || "num_unit is set on a label without num".into(),
        );
    }
}

/// period_type, default_sample_type, time and duration.
#[allow(clippy::too_many_arguments)]
pub(crate) fn metadata(
    strings: &[String],
    sample_types: &[(i64, i64)],
    period_type: Option<(i64, i64)>,
    default_sample_type: i64,
    time_nanos: i64,
    duration_nanos: i64,
    rules: &ProfileRules,
    path: &RefPath,
    c: &mut Collector,
) {
    let name = |index: i64| strings.string(index);
    // Count-based profilers pair `samples/count` values with a `cpu/nanoseconds`
    // period, and pprof scales by it: that is consistent. A period of the same
    // type as a sample type but in another unit is not. Names that do not
    // resolve are reference errors, reported elsewhere.
    let resolve = |(t, u): (i64, i64)| Some((strings.string_at(t)?, strings.string_at(u)?));
    if let Some((period_type, period_unit)) = period_type.and_then(resolve) {
        let clash = sample_types
            .iter()
            .filter_map(|&st| resolve(st))
            .find(|(t, u)| !t.is_empty() && *t == period_type && *u != period_unit);
        if let Some((_, unit)) = clash {
            c.report(
                rules.meta_period,
                || path.with_field("period_type", None),
                Some(format!("{period_type}/{period_unit}")),
                || format!("the sample type {period_type:?} is measured in {unit:?}, the period in {period_unit:?}"),
            );
        }
    }
    if default_sample_type != 0
        && !sample_types
            .iter()
            .any(|(t, _)| name(*t) == name(default_sample_type))
    {
        c.report(
            rules.meta_default,
            || path.with_field("default_sample_type", None),
            Some(format!("{:?}", name(default_sample_type))),
            || "default_sample_type names no sample_type's type".into(),
        );
    }
    if time_nanos < 0 {
        c.report(
            rules.meta_time,
            || path.with_field("time_nanos", None),
            Some(time_nanos.to_string()),
            || "time_nanos is before the UNIX epoch".into(),
        );
    }
    if duration_nanos < 0 {
        c.report(
            rules.meta_duration,
            || path.with_field("duration_nanos", None),
            Some(duration_nanos.to_string()),
            || "duration_nanos is negative".into(),
        );
    }
}

/// drop_frames and keep_frames are regular expressions (RE2 syntax, as Go's).
pub(crate) fn frame_filters(
    strings: &[String],
    drop: i64,
    keep: i64,
    rules: &ProfileRules,
    path: &RefPath,
    c: &mut Collector,
) {
    for (field, index) in [("drop_frames", drop), ("keep_frames", keep)] {
        let Some(pattern) = strings.string_at(index).filter(|s| !s.is_empty()) else {
            continue;
        };
        if let Err(error) = regex::Regex::new(pattern) {
            let first_line = error
                .to_string()
                .lines()
                .last()
                .unwrap_or_default()
                .trim()
                .to_string();
            c.report(
                rules.frames_regex,
                || path.with_field(field, None),
                Some(format!("{pattern:?}")),
                || format!("not a valid regular expression: {first_line}"),
            );
        }
    }
}

/// Ids of one table: nonzero (pprof always; OTLP when any is set) and unique.
pub(crate) fn ids(
    ids: &[u64],
    table: &'static str,
    rules: &ProfileRules,
    path: &RefPath,
    c: &mut Collector,
) {
    if !rules.ids_required && ids.iter().all(|&id| id == 0) {
        return; // deprecated ids left unset
    }
    // Most writers (Go's among them) number entries 1, 2, 3, …: nonzero
    // and unique without a map of a few megabytes for a large profile.
    if (1..).zip(ids).all(|(position, &id)| id == position) {
        return;
    }
    let mut first_seen: HashMap<u64, usize> = HashMap::with_capacity(ids.len());
    for (i, &id) in ids.iter().enumerate() {
        if id == 0 {
            c.report(
                rules.id_zero,
                || path.with_field(table, Some(i)) + ".id",
                Some("0".into()),
                || {
                    if rules.ids_required {
                        "ids are nonzero (0 is reserved)".into()
                    } else {
                        "when ids are set they must all be nonzero".into()
                    }
                },
            );
        } else if let Some(first) = first_seen.insert(id, i) {
            c.report(
                rules.id_duplicate,
                || path.with_field(table, Some(i)) + ".id",
                Some(id.to_string()),
                || format!("{table}[{first}] has the same id"),
            );
        }
        if c.stopped() {
            return;
        }
    }
}

/// The pprof-shaped fields both profile models have, as the shared rules
/// need them.
pub(crate) struct ProfileFields<'a> {
    pub strings: &'a [String],
    pub samples: usize,
    /// Number of values of sample `i` (read lazily: no allocation per sample).
    pub value_count: &'a dyn Fn(usize) -> usize,
    pub sample_types: Vec<(i64, i64)>,
    pub period_type: Option<(i64, i64)>,
    pub default_sample_type: i64,
    pub time_nanos: i64,
    pub duration_nanos: i64,
    pub drop_frames: i64,
    pub keep_frames: i64,
    pub mapping_ids: Vec<u64>,
    pub location_ids: Vec<u64>,
    pub function_ids: Vec<u64>,
}

/// Runs [`profile_fields`] on either generated `Profile` type: the pprof and
/// the OTLP pprof-extended messages name these fields alike but are distinct
/// Rust types, so one macro reads both instead of two copies of the mapping.
/// The samples are `p.sample`, or given as a count and a value counter
/// (for samples read one at a time from a `SampleSource`).
macro_rules! check_profile_fields {
    ($p:expr, $rules:expr, $path:expr, $c:expr) => {{
        let p = $p;
        let value_count = |i: usize| p.sample[i].value.len();
        $crate::common::check_profile_fields!(p, p.sample.len(), value_count, $rules, $path, $c)
    }};
    ($p:expr, $samples:expr, $value_count:expr, $rules:expr, $path:expr, $c:expr) => {{
        let p = $p;
        let fields = $crate::common::ProfileFields {
            strings: &p.string_table,
            samples: $samples,
            value_count: &$value_count,
            sample_types: p.sample_type.iter().map(|t| (t.type_, t.unit)).collect(),
            period_type: p.period_type.as_ref().map(|t| (t.type_, t.unit)),
            default_sample_type: p.default_sample_type,
            time_nanos: p.time_nanos,
            duration_nanos: p.duration_nanos,
            drop_frames: p.drop_frames,
            keep_frames: p.keep_frames,
            mapping_ids: p.mapping.iter().map(|m| m.id).collect(),
            location_ids: p.location.iter().map(|l| l.id).collect(),
            function_ids: p.function.iter().map(|f| f.id).collect(),
        };
        $crate::common::profile_fields(&fields, $rules, $path, $c);
    }};
}
pub(crate) use check_profile_fields;

/// The rules pprof and OTLP profiles share: string table, values per
/// sample, ids, metadata and frame filters.
pub(crate) fn profile_fields(
    f: &ProfileFields,
    rules: &ProfileRules,
    path: &RefPath,
    c: &mut Collector,
) {
    string_table(f.strings, rules, path, c);
    sample_values(
        (0..f.samples).map(f.value_count),
        f.sample_types.len(),
        rules,
        path,
        c,
    );
    ids(&f.mapping_ids, "mapping", rules, path, c);
    ids(&f.location_ids, "location", rules, path, c);
    ids(&f.function_ids, "function", rules, path, c);
    metadata(
        f.strings,
        &f.sample_types,
        f.period_type,
        f.default_sample_type,
        f.time_nanos,
        f.duration_nanos,
        rules,
        path,
        c,
    );
    frame_filters(f.strings, f.drop_frames, f.keep_frames, rules, path, c);
}

/// Bytes as lowercase hex, as OTLP/JSON writes ids.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
