//! One pass over a v1experimental profile's samples for every check that
//! reads them: each sample's value count, the label and timestamp rules,
//! repeated attribute keys and the references. Each sample is read once,
//! not once per check: reading samples was most of validating a large OTLP
//! profile (docs/performance-log.md, issue 14).
//!
//! Each check reports to its own collector, which `otlp` absorbs where that
//! check's own pass used to run, so the report (caps and `fail_fast`
//! included) is the one separate passes make.

use std::collections::HashMap;
use std::ops::Range;

use protoprof_model_meta::{ProfileSetSamples, RefPath};
use protoprof_model_otlp::opentelemetry::proto::profiles::v1experimental::{Profile, Sample};
use protoprof_model_otlp::refs;

use crate::common::{self, OTLP};
use crate::references::{passes_in_halves, ReferenceTables};
use crate::report::Collector;
use crate::rules;

/// The samples of every container's profile (one list per container, in
/// message order, empty for a container without a profile), however they
/// are held; a source may hold `location_indices` too
/// ([`ProfileSetSamples::index_table`]).
pub type ExperimentalParts<'a> = dyn ProfileSetSamples<Sample = Sample> + 'a;

/// What one pass over a profile's samples found.
pub(crate) struct SamplePass {
    /// Each sample's number of values.
    pub value_counts: Vec<u32>,
    /// The label and timestamp rules' reports.
    pub rules: Collector,
    /// Repeated keys in the samples' attribute lists.
    pub attributes: Collector,
    /// The samples' references (to be absorbed where the walker reaches
    /// `Profile.sample`).
    pub references: Collector,
}

/// What the pass needs of the profile around the samples.
pub(crate) struct SampleContext<'a> {
    /// The container's `[start, end]` times (unknown when `end` is 0 or
    /// before `start`).
    pub time_range: (u64, u64),
    pub keys: &'a AttributeKeys<'a>,
    /// The profile's tables, for the references.
    pub tables: &'a ReferenceTables,
    /// The profile's path.
    pub path: &'a RefPath,
}

/// Reads list `n` of `parts` once (in halves on two threads for many) for
/// every check of its samples.
pub(crate) fn sample_pass(
    (parts, n): (&ExperimentalParts, usize),
    context: &SampleContext,
    template: &Collector,
) -> SamplePass {
    let pass = |range: Range<usize>, collectors: &mut [Collector; 3]| {
        let [rules, attributes, references] = collectors;
        let mut checker = context.tables.checker(references);
        let (mut buffer, mut path) = (Sample::new(), context.path.clone());
        let mut value_counts = Vec::with_capacity(range.len());
        for i in range {
            let s = parts.sample(n, i, &mut buffer);
            value_counts.push(u32::try_from(s.value.len()).unwrap_or(u32::MAX));
            if !rules.stopped() {
                sample_rules((s, i), context, rules);
            }
            if s.attributes.len() > 1 && !attributes.stopped() {
                let at = || context.path.with_field("sample", Some(i)) + ".attributes";
                context.keys.check_list(&s.attributes, &at, attributes);
            }
            checker.check_element(("sample", i), &mut path, |path, c| {
                refs::visit_opentelemetry_proto_profiles_v1experimental_sample(s, path, c)
            });
        }
        value_counts
    };
    let count = parts.sample_count(n);
    let ([rules, attributes, references], value_counts) = passes_in_halves(template, count, pass);
    SamplePass {
        value_counts: value_counts.concat(),
        rules,
        attributes,
        references,
    }
}

/// The label and timestamp rules on sample `i`, `s`.
fn sample_rules((s, i): (&Sample, usize), context: &SampleContext, c: &mut Collector) {
    let path = context.path;
    for (j, l) in s.label.iter().enumerate() {
        let at = || format!("{}.label[{j}]", path.with_field("sample", Some(i)));
        common::label(l.key, l.str, l.num, l.num_unit, at, &OTLP, c);
    }
    let (start, end) = context.time_range;
    if end < start || end == 0 {
        return;
    }
    for (j, &t) in s.timestamps_unix_nano.iter().enumerate() {
        if !(start..=end).contains(&t) {
            c.report(
                &rules::OTLP_TIME_SAMPLE,
                || {
                    let sample = path.with_field("sample", Some(i));
                    format!("{sample}.timestamps_unix_nano[{j}]")
                },
                Some(t.to_string()),
                || format!("outside the profile's time range [{start}, {end}]"),
            );
        }
    }
}

/// A profile's attribute keys, interned, so that a list is checked for
/// repeated keys with small integer compares.
pub(crate) struct AttributeKeys<'p> {
    profile: &'p Profile,
    /// Each attribute_table entry's key, interned.
    ids: Vec<u32>,
    /// The interned keys.
    pub names: HashMap<&'p str, u32>,
}

impl<'p> AttributeKeys<'p> {
    pub fn of(profile: &'p Profile) -> Self {
        let mut names: HashMap<&str, u32> = HashMap::new();
        let ids = (profile.attribute_table.iter())
            .map(|kv| {
                let next = names.len() as u32;
                *names.entry(kv.key.as_str()).or_insert(next)
            })
            .collect();
        AttributeKeys {
            profile,
            ids,
            names,
        }
    }

    /// Reports each index of `list` whose key an earlier index has.
    pub fn check_list(&self, list: &[u64], at: &dyn Fn() -> String, c: &mut Collector) {
        for (a, &x) in list.iter().enumerate() {
            let Some(&key) = self.ids.get(x as usize) else {
                continue; // out of range: a reference error
            };
            let earlier = list[..a]
                .iter()
                .position(|&y| self.ids.get(y as usize) == Some(&key));
            if let Some(b) = earlier {
                let name = &self.profile.attribute_table[x as usize].key;
                c.report(
                    &rules::OTLP_ATTR_DUPLICATE,
                    || format!("{}[{a}]", at()),
                    Some(format!("{name:?}")),
                    || format!("attribute key {name:?} is already selected at [{b}]"),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use protoprof_model_otlp::opentelemetry::proto::common::v1::KeyValue;
    use protoprof_model_otlp::opentelemetry::proto::profiles::v1experimental::{
        AggregationTemporality, Label, Location, ProfileContainer, ProfilesData, ResourceProfiles,
        ScopeProfiles, ValueType,
    };

    use super::*;
    use crate::references::PARALLEL_ELEMENTS;
    use crate::report::Options;

    /// Samples in each half, with one problem of every kind the pass checks
    /// placed so that each check meets its first one at a different sample.
    fn data_with(problems: &[&str]) -> ProfilesData {
        const LATER: usize = PARALLEL_ELEMENTS + 1_000;
        let count = 2 * PARALLEL_ELEMENTS + 3;
        let has = |kind: &str| problems.contains(&kind);
        let value_type = ValueType {
            aggregation_temporality: AggregationTemporality::AGGREGATION_TEMPORALITY_DELTA.into(),
            ..Default::default()
        };
        let mut samples = vec![
            Sample {
                value: vec![1, 2],
                timestamps_unix_nano: vec![150],
                ..Default::default()
            };
            count
        ];
        for (kind, at) in [
            ("values", [LATER + 5, LATER + 5]),
            ("label", [30, LATER + 7]),
            ("time", [3, LATER + 8]),
            ("attributes", [20, LATER + 9]),
            ("reference", [10, LATER + 10]),
        ] {
            for i in at.into_iter().filter(|_| has(kind)) {
                let s = &mut samples[i];
                match kind {
                    "values" => s.value.truncate(1),
                    "label" => s.label.push(Label::default()),
                    "time" => s.timestamps_unix_nano[0] = 99,
                    "attributes" => s.attributes = vec![0, 1],
                    _ => s.location_index = vec![0, 5],
                }
            }
        }
        let key = |value: &str| {
            KeyValue {
            key: "thread".into(),
            value: protobuf::MessageField::some(
                protoprof_model_otlp::opentelemetry::proto::common::v1::AnyValue {
                    value: Some(
                        protoprof_model_otlp::opentelemetry::proto::common::v1::any_value::Value::StringValue(
                            value.into(),
                        ),
                    ),
                    ..Default::default()
                },
            ),
            ..Default::default()
        }
        };
        let profile = Profile {
            sample_type: vec![value_type.clone(), value_type],
            sample: samples,
            location: vec![Location::default()],
            attribute_table: vec![key("a"), key("b")],
            string_table: vec![String::new()],
            ..Default::default()
        };
        let container = ProfileContainer {
            profile_id: vec![1; 16],
            start_time_unix_nano: 100,
            end_time_unix_nano: 200,
            profile: Some(profile).into(),
            ..Default::default()
        };
        ProfilesData {
            resource_profiles: vec![ResourceProfiles {
                scope_profiles: vec![ScopeProfiles {
                    profiles: vec![container],
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    /// Each diagnostic's code and the sample it names.
    fn found(problems: &[&str], options: Options) -> Vec<(&'static str, usize)> {
        crate::validate_profiles_data(&data_with(problems), &options).codes_by_element("sample")
    }

    /// Read in one pass, in halves, the samples are reported as one pass per
    /// check would report them: every problem, caps kept in sample order,
    /// and `fail_fast` stopping at the first error of the first check that
    /// has one (value counts, then labels and timestamps, then attribute
    /// lists, then references), not at the first sample with one.
    #[test]
    fn one_pass_reports_what_a_pass_per_check_reports() {
        const LATER: usize = PARALLEL_ELEMENTS + 1_000;
        let all = ["values", "label", "time", "attributes", "reference"];
        let every = found(&all, Options::default());
        assert_eq!(
            every,
            [
                ("OTLP-ATTR-001", 20),
                ("OTLP-ATTR-001", LATER + 9),
                ("OTLP-LABEL-001", 30),
                ("OTLP-LABEL-001", LATER + 7),
                ("OTLP-REF-001", 10),
                ("OTLP-REF-001", LATER + 10),
                ("OTLP-SAMPLE-001", LATER + 5),
                ("OTLP-TIME-002", 3),
                ("OTLP-TIME-002", LATER + 8),
            ]
        );
        let capped = Options {
            max_per_rule: 1,
            ..Options::default()
        };
        let first_of_each = [
            ("OTLP-ATTR-001", 20),
            ("OTLP-LABEL-001", 30),
            ("OTLP-REF-001", 10),
            ("OTLP-SAMPLE-001", LATER + 5),
            ("OTLP-TIME-002", 3),
        ];
        assert_eq!(found(&all, capped), first_of_each);
        let fail_fast = Options {
            fail_fast: true,
            ..Options::default()
        };
        let stops = [
            (&all[..], vec![("OTLP-SAMPLE-001", LATER + 5)]),
            (
                &all[1..],
                vec![("OTLP-LABEL-001", 30), ("OTLP-TIME-002", 3)],
            ),
            (
                &all[2..],
                vec![
                    ("OTLP-ATTR-001", 20),
                    ("OTLP-TIME-002", 3),
                    ("OTLP-TIME-002", LATER + 8),
                ],
            ),
            (&all[4..], vec![("OTLP-REF-001", 10)]),
        ];
        for (problems, expected) in stops {
            assert_eq!(found(problems, fail_fast), expected, "{problems:?}");
        }
    }
}
