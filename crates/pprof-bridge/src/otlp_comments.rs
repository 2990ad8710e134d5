//! OTLP facts pprof has no field for, carried in pprof comments that start
//! with `otlp:`: the one place that format is read ([`read_comments`]) and
//! written ([`CommentWriter`]). OTLP -> pprof writes them; pprof -> OTLP
//! reads them back and removes them from the comments, so a round trip
//! restores the envelope.
//!
//! Form: `otlp:<name>=<value>`, with the names in [`key`]. Attribute values
//! are tagged when they are not strings: `int:42`, `bool:true`,
//! `double:1.5`, `bytes:<hex>`; a string that happens to start with a tag is
//! written `str:<text>`. Arrays and key/value lists have no tag: they are
//! written as JSON (with a warning: they read back as that string).

use protoprof_model_otlp::opentelemetry::proto::common::v1::{
    any_value::Value, AnyValue, InstrumentationScope, KeyValue,
};
use protoprof_model_otlp::opentelemetry::proto::profiles::v1experimental::AggregationTemporality;

use crate::error::BridgeWarning;
use crate::interner::StringInterner;

/// The names of `otlp:` comments.
pub mod key {
    /// `ProfileContainer.profile_id`, hex.
    pub const PROFILE_ID: &str = "profile_id";
    /// `ProfileContainer.start_time_unix_nano`, when pprof's time says otherwise.
    pub const START_TIME: &str = "start_time_unix_nano";
    /// `ProfileContainer.end_time_unix_nano`, when pprof's duration says otherwise.
    pub const END_TIME: &str = "end_time_unix_nano";
    /// Each sample type's temporality, comma-separated, when not the inferred one.
    pub const TEMPORALITY: &str = "aggregation_temporality";
    /// The period type's temporality, when not the inferred one.
    pub const PERIOD_TEMPORALITY: &str = "period_type.aggregation_temporality";
    /// `Resource.dropped_attributes_count`.
    pub const RESOURCE_DROPPED: &str = "resource.dropped_attributes_count";
    /// `ResourceProfiles.schema_url`.
    pub const RESOURCE_SCHEMA_URL: &str = "resource.schema_url";
    /// `InstrumentationScope.name`.
    pub const SCOPE_NAME: &str = "scope.name";
    /// `InstrumentationScope.version`.
    pub const SCOPE_VERSION: &str = "scope.version";
    /// `InstrumentationScope.dropped_attributes_count`.
    pub const SCOPE_DROPPED: &str = "scope.dropped_attributes_count";
    /// `ScopeProfiles.schema_url`.
    pub const SCOPE_SCHEMA_URL: &str = "scope.schema_url";
    /// `ProfileContainer.dropped_attributes_count`.
    pub const CONTAINER_DROPPED: &str = "dropped_attributes_count";
    /// Prefix of a resource attribute's name.
    pub const RESOURCE_ATTRIBUTE: &str = "resource.attr:";
    /// Prefix of a scope attribute's name.
    pub const SCOPE_ATTRIBUTE: &str = "scope.attr:";
    /// Prefix of a container attribute's name.
    pub const CONTAINER_ATTRIBUTE: &str = "attr:";
}

/// What every `otlp:` comment starts with.
pub const PREFIX: &str = "otlp:";

const TAGS: [&str; 5] = ["str:", "int:", "bool:", "double:", "bytes:"];

/// One `otlp:` comment, parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The name, one of [`key`] (or a name a later version writes).
    pub name: String,
    /// The value, as text.
    pub value: String,
}

/// The text of the comment `otlp:<name>=<value>`.
pub fn write(name: &str, value: &str) -> String {
    format!("{PREFIX}{name}={value}")
}

/// Parses an `otlp:` comment; `None` for ordinary comments.
pub fn read(comment: &str) -> Option<Entry> {
    let rest = comment.strip_prefix(PREFIX)?;
    let (name, value) = rest.split_once('=')?;
    Some(Entry {
        name: name.to_string(),
        value: value.to_string(),
    })
}

/// Lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Bytes of lowercase or uppercase hex; `None` when not hex.
pub fn unhex(text: &str) -> Option<Vec<u8>> {
    if text.len() % 2 != 0 || !text.is_ascii() {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok())
        .collect()
}

/// An attribute value as comment text; `false` as second element when the
/// value is nested (array, key/value list) and cannot be read back exactly.
pub fn value_text(value: Option<&AnyValue>) -> (String, bool) {
    match value.and_then(|v| v.value.as_ref()) {
        None => (String::new(), true),
        Some(Value::StringValue(s)) if TAGS.iter().any(|t| s.starts_with(t)) => {
            (format!("str:{s}"), true)
        }
        Some(Value::StringValue(s)) => (s.clone(), true),
        Some(Value::IntValue(i)) => (format!("int:{i}"), true),
        Some(Value::BoolValue(b)) => (format!("bool:{b}"), true),
        Some(Value::DoubleValue(d)) => (format!("double:{d:?}"), true),
        Some(Value::BytesValue(b)) => (format!("bytes:{}", hex(b)), true),
        Some(_) => (crate::attribute_value_text(value, &[]), false),
    }
}

/// The value a comment's text stands for.
pub fn parse_value(text: &str) -> AnyValue {
    let tagged = |tag: &str| text.strip_prefix(tag);
    let value = if let Some(s) = tagged("str:") {
        Value::StringValue(s.to_string())
    } else if let Some(i) = tagged("int:").and_then(|s| s.parse().ok()) {
        Value::IntValue(i)
    } else if let Some(b) = tagged("bool:").and_then(|s| s.parse().ok()) {
        Value::BoolValue(b)
    } else if let Some(d) = tagged("double:").and_then(|s| s.parse().ok()) {
        Value::DoubleValue(d)
    } else if let Some(b) = tagged("bytes:").and_then(unhex) {
        Value::BytesValue(b)
    } else {
        Value::StringValue(text.to_string())
    };
    AnyValue {
        value: Some(value),
        ..Default::default()
    }
}

/// A `KeyValue`.
pub fn key_value(key: &str, value: AnyValue) -> KeyValue {
    KeyValue {
        key: key.to_string(),
        value: protobuf::MessageField::some(value),
        ..Default::default()
    }
}

/// Leaves out of `profile`'s comments the `otlp:` ones of its envelope:
/// resource and scope attributes, scope name and version, profile id.
/// Others (temporalities, profile attributes pprof has no field for, an
/// ordinary comment) stay.
pub(crate) fn drop_envelope(profile: &mut protoprof_model_pprof::perftools::profiles::Profile) {
    let envelope = |name: &str| {
        [key::RESOURCE_ATTRIBUTE, key::SCOPE_ATTRIBUTE]
            .iter()
            .any(|prefix| name.starts_with(prefix))
            || [key::SCOPE_NAME, key::SCOPE_VERSION, key::PROFILE_ID].contains(&name)
    };
    let strings = &profile.string_table;
    profile.comment.retain(|&c| {
        let text = usize::try_from(c).ok().and_then(|c| strings.get(c));
        !text
            .and_then(|t| read(t))
            .is_some_and(|entry| envelope(&entry.name))
    });
}

/// What `otlp:` comments restore.
#[derive(Default)]
pub(crate) struct Restored {
    pub profile_id: Option<Vec<u8>>,
    pub start: Option<u64>,
    pub end: Option<u64>,
    pub temporality: Vec<Option<AggregationTemporality>>,
    pub period_temporality: Option<AggregationTemporality>,
    pub resource_attributes: Vec<KeyValue>,
    pub resource_dropped: u32,
    pub resource_schema_url: String,
    pub scope: Option<InstrumentationScope>,
    pub scope_schema_url: String,
    pub container_attributes: Vec<KeyValue>,
    pub container_dropped: u32,
}

fn temporality_named(name: &str) -> Option<AggregationTemporality> {
    match name {
        "DELTA" => Some(AggregationTemporality::AGGREGATION_TEMPORALITY_DELTA),
        "CUMULATIVE" => Some(AggregationTemporality::AGGREGATION_TEMPORALITY_CUMULATIVE),
        _ => None,
    }
}

/// The name a temporality is written with.
pub(crate) fn temporality_name(value: i32) -> &'static str {
    match value {
        1 => "DELTA",
        2 => "CUMULATIVE",
        _ => "UNSPECIFIED",
    }
}

/// Splits `otlp:` comments (bridge metadata, restored) from real ones,
/// whose string indices are returned in order.
pub(crate) fn read_comments<'s>(
    comments: &[i64],
    string: impl Fn(i64) -> &'s str,
) -> (Vec<i64>, Restored) {
    let mut kept = Vec::with_capacity(comments.len());
    let mut r = Restored::default();
    for &index in comments {
        let known = read(string(index)).is_some_and(|entry| r.restore(&entry));
        if !known {
            kept.push(index); // an ordinary comment, or an otlp: one this version does not know
        }
    }
    (kept, r)
}

impl Restored {
    /// Takes in one entry; `false` when its name is not one this version knows.
    fn restore(&mut self, entry: &Entry) -> bool {
        let value = entry.value.as_str();
        match entry.name.as_str() {
            key::PROFILE_ID => self.profile_id = unhex(value).filter(|id| id.len() == 16),
            key::START_TIME => self.start = value.parse().ok(),
            key::END_TIME => self.end = value.parse().ok(),
            key::TEMPORALITY => {
                self.temporality = value.split(',').map(temporality_named).collect()
            }
            key::PERIOD_TEMPORALITY => self.period_temporality = temporality_named(value),
            key::RESOURCE_DROPPED => self.resource_dropped = value.parse().unwrap_or(0),
            key::RESOURCE_SCHEMA_URL => self.resource_schema_url = value.to_string(),
            key::SCOPE_NAME => self.scope().name = value.to_string(),
            key::SCOPE_VERSION => self.scope().version = value.to_string(),
            key::SCOPE_DROPPED => {
                self.scope().dropped_attributes_count = value.parse().unwrap_or(0)
            }
            key::SCOPE_SCHEMA_URL => self.scope_schema_url = value.to_string(),
            key::CONTAINER_DROPPED => self.container_dropped = value.parse().unwrap_or(0),
            name => return self.restore_attribute(name, value),
        }
        true
    }

    fn restore_attribute(&mut self, name: &str, value: &str) -> bool {
        let attribute = |prefix: &str| {
            name.strip_prefix(prefix)
                .map(|k| key_value(k, parse_value(value)))
        };
        if let Some(kv) = attribute(key::RESOURCE_ATTRIBUTE) {
            self.resource_attributes.push(kv);
        } else if let Some(kv) = attribute(key::SCOPE_ATTRIBUTE) {
            self.scope().attributes.push(kv);
        } else if let Some(kv) = attribute(key::CONTAINER_ATTRIBUTE) {
            self.container_attributes.push(kv);
        } else {
            return false;
        }
        true
    }

    fn scope(&mut self) -> &mut InstrumentationScope {
        self.scope.get_or_insert_with(InstrumentationScope::default)
    }
}

/// Writes `otlp:` comments into a pprof string table and comment list.
pub(crate) struct CommentWriter<'a> {
    pub strings: &'a mut StringInterner,
    pub comments: Vec<i64>,
    pub warnings: &'a mut Vec<BridgeWarning>,
}

impl CommentWriter<'_> {
    /// One `otlp:<name>=<value>` comment.
    pub fn add(&mut self, name: &str, value: &str) {
        let index = self.strings.intern(&write(name, value));
        self.comments.push(index);
    }

    /// One comment per attribute, named `<prefix><key>`; a nested value is
    /// written as text, with a warning at `at`.
    pub fn attributes(&mut self, prefix: &str, attributes: &[KeyValue], at: &str) {
        for kv in attributes {
            let (text, exact) = value_text(kv.value.as_ref());
            if !exact {
                self.warnings.push(BridgeWarning {
                    path: at.to_string(),
                    message: format!(
                        "attribute {:?} is nested; kept as text in a comment",
                        kv.key
                    ),
                });
            }
            self.add(&format!("{prefix}{}", kv.key), &text);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_round_trip() {
        for value in [
            Value::StringValue("demo".into()),
            Value::StringValue("int:not a number".into()),
            Value::IntValue(-42),
            Value::BoolValue(true),
            Value::DoubleValue(0.1 + 0.2),
            Value::BytesValue(vec![0, 255]),
        ] {
            let any = AnyValue {
                value: Some(value),
                ..Default::default()
            };
            let (text, exact) = value_text(Some(&any));
            assert!(exact);
            assert_eq!(parse_value(&text), any, "{text}");
        }
        let entry = read(&write("resource.attr:service.name", "demo")).unwrap();
        assert_eq!(
            (entry.name.as_str(), entry.value.as_str()),
            ("resource.attr:service.name", "demo")
        );
        assert_eq!(read("just a comment"), None);
    }
}
