//! The optional dictionary checks of OTLP Profiles v1development (profcheck's
//! `-check-dupes` and `-check-orphans`, protoprof's `validate --strict`):
//! entries that repeat an earlier one, and entries nothing refers to. The
//! schema says both SHOULD NOT exist and MUST NOT change meaning when they
//! do, so both are warnings.

use std::collections::HashMap;

use protobuf::Message;
use protoprof_model_meta::{FieldRef, RefPath, ReferenceVisitor};
use protoprof_model_otlp::opentelemetry::proto::common::v1::{any_value, KeyValue};
use protoprof_model_otlp::opentelemetry::proto::profiles::v1development::{
    ProfilesDictionary, ResourceProfiles,
};

use crate::report::Collector;
use crate::rules;

/// Every entry (from 1: entry 0 is the zero value) that repeats an earlier
/// one, table by table, strings compared as strings, messages by encoding.
pub(crate) fn duplicates(d: &ProfilesDictionary, c: &mut Collector) {
    fn encoded<M: Message>(table: &[M]) -> Vec<Vec<u8>> {
        table
            .iter()
            .map(|m| m.write_to_bytes().unwrap_or_default())
            .collect()
    }
    let strings: Vec<Vec<u8>> = d
        .string_table
        .iter()
        .map(|s| s.as_bytes().to_vec())
        .collect();
    let tables = [
        ("mapping_table", encoded(&d.mapping_table)),
        ("location_table", encoded(&d.location_table)),
        ("function_table", encoded(&d.function_table)),
        ("link_table", encoded(&d.link_table)),
        ("string_table", strings),
        ("attribute_table", encoded(&d.attribute_table)),
        ("stack_table", encoded(&d.stack_table)),
    ];
    for (table, entries) in &tables {
        let mut first: HashMap<&[u8], usize> = HashMap::new();
        for (i, entry) in entries.iter().enumerate().skip(1) {
            match first.get(entry.as_slice()) {
                Some(&j) => c.report(
                    &rules::DEV_DUPLICATE,
                    || format!("dictionary.{table}[{i}]"),
                    None,
                    || format!("the same as entry {j}"),
                ),
                None => {
                    first.insert(entry, i);
                }
            }
        }
    }
}

/// Records which entry of each dictionary table something refers to.
#[derive(Default)]
pub(crate) struct Referenced {
    used: HashMap<&'static str, Vec<bool>>,
}

impl Referenced {
    /// Sized for the tables of `d`.
    pub fn new(d: &ProfilesDictionary) -> Self {
        let used = [
            ("mapping_table", d.mapping_table.len()),
            ("location_table", d.location_table.len()),
            ("function_table", d.function_table.len()),
            ("link_table", d.link_table.len()),
            ("string_table", d.string_table.len()),
            ("attribute_table", d.attribute_table.len()),
            ("stack_table", d.stack_table.len()),
        ]
        .into_iter()
        .map(|(table, len)| (table, vec![false; len]))
        .collect();
        Referenced { used }
    }

    /// Marks the strings Resource and Scope attributes name by index
    /// (`key_strindex`, `string_value_strindex`), which the generated walker
    /// does not visit (common/v1 is shared with the other signals).
    pub fn mark_inline_strings(&mut self, resource_profiles: &[ResourceProfiles]) {
        let mut mark = |attributes: &[KeyValue]| {
            for kv in attributes {
                let value = kv.value.as_ref().and_then(|v| v.value.as_ref());
                let indices = [
                    Some(kv.key_strindex),
                    match value {
                        Some(any_value::Value::StringValueStrindex(i)) => Some(*i),
                        _ => None,
                    },
                ];
                for i in indices.into_iter().flatten() {
                    if let Some(used) = self
                        .used
                        .get_mut("string_table")
                        .and_then(|u| u.get_mut(usize::try_from(i).ok()?))
                    {
                        *used = true;
                    }
                }
            }
        };
        for rp in resource_profiles {
            if let Some(r) = rp.resource.as_ref() {
                mark(&r.attributes);
            }
            for sp in &rp.scope_profiles {
                if let Some(s) = sp.scope.as_ref() {
                    mark(&s.attributes);
                }
            }
        }
    }

    /// Reports every entry (from 1) nothing referred to, unless `resource_profiles`
    /// hold no profile (`OTLPDEV-EMPTY-001` says so once instead of every entry).
    pub fn report_orphans(&self, resource_profiles: &[ResourceProfiles], c: &mut Collector) {
        let profiles = resource_profiles
            .iter()
            .flat_map(|rp| &rp.scope_profiles)
            .any(|sp| !sp.profiles.is_empty());
        if !profiles {
            return;
        }
        let mut tables: Vec<_> = self.used.iter().collect();
        tables.sort_by_key(|(table, _)| **table);
        for (table, used) in tables {
            for (i, _) in used.iter().enumerate().skip(1).filter(|(_, u)| !**u) {
                c.report(
                    &rules::DEV_ORPHAN,
                    || format!("dictionary.{table}[{i}]"),
                    None,
                    || "nothing refers to this entry".into(),
                );
            }
        }
    }
}

impl ReferenceVisitor for Referenced {
    fn reference(
        &mut self,
        _id: usize,
        reference: &'static FieldRef,
        _path: &RefPath,
        _index: Option<usize>,
        value: i128,
    ) {
        let entry = self
            .used
            .get_mut(reference.table.field)
            .zip(usize::try_from(value).ok())
            .and_then(|(used, i)| used.get_mut(i));
        if let Some(used) = entry {
            *used = true;
        }
    }

    fn slice(
        &mut self,
        _id: usize,
        _reference: &'static FieldRef,
        _path: &RefPath,
        _start: u64,
        _length: u64,
    ) {
        // v1development has no slice references (stacks replaced them).
    }
}

#[cfg(test)]
mod tests {
    use protobuf::MessageField;
    use protoprof_model_otlp::opentelemetry::proto::profiles::v1development::{
        Function, Profile, ProfilesData, Sample, ScopeProfiles, Stack,
    };

    use super::*;
    use crate::report::Options;

    fn codes(data: &ProfilesData, strict: bool) -> Vec<(String, String)> {
        let options = Options {
            duplicates_and_orphans: strict,
            ..Default::default()
        };
        crate::validate_development_data(data, &options)
            .diagnostics
            .iter()
            .map(|d| (d.code.to_string(), d.path.clone()))
            .collect()
    }

    #[test]
    fn duplicates_and_orphans_only_when_asked() {
        let d = ProfilesDictionary {
            mapping_table: vec![Default::default()],
            location_table: vec![Default::default()],
            link_table: vec![Default::default()],
            attribute_table: vec![Default::default()],
            string_table: vec!["".into(), "f".into(), "f".into(), "unused".into()],
            function_table: vec![
                Function::default(),
                Function {
                    name_strindex: 1,
                    ..Default::default()
                },
                Function {
                    name_strindex: 2,
                    ..Default::default()
                },
            ],
            stack_table: vec![Stack::default()],
            ..Default::default()
        };
        let profile = Profile {
            samples: vec![Sample {
                values: vec![1],
                ..Default::default()
            }],
            ..Default::default()
        };
        let data = ProfilesData {
            resource_profiles: vec![ResourceProfiles {
                scope_profiles: vec![ScopeProfiles {
                    profiles: vec![profile],
                    ..Default::default()
                }],
                ..Default::default()
            }],
            dictionary: MessageField::some(d),
            ..Default::default()
        };
        assert_eq!(codes(&data, false), []);
        let found = codes(&data, true);
        let has = |code: &str, path: &str| found.iter().any(|(c, p)| c == code && p == path);
        assert!(
            has("OTLPDEV-DUP-001", "dictionary.string_table[2]"),
            "{found:?}"
        );
        // Functions 1 and 2 name equal strings by different indices: their
        // encodings differ, so only the strings count as duplicates.
        assert!(
            has("OTLPDEV-ORPHAN-001", "dictionary.function_table[1]"),
            "{found:?}"
        );
        assert!(
            has("OTLPDEV-ORPHAN-001", "dictionary.string_table[3]"),
            "{found:?}"
        );
        // Strings referenced by (orphan) functions count as referenced.
        assert!(
            !has("OTLPDEV-ORPHAN-001", "dictionary.string_table[1]"),
            "{found:?}"
        );
    }
}
