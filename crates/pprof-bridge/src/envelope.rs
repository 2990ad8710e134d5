//! OTLP facts pprof has no field for, carried in pprof comments that start
//! with `otlp:`. OTLP -> pprof writes them; pprof -> OTLP reads them back and
//! removes them from the comments, so a round trip restores the envelope.
//!
//! Form: `otlp:<name>=<value>`. Attribute values are tagged when they are
//! not strings: `int:42`, `bool:true`, `double:1.5`, `bytes:<hex>`; a string
//! that happens to start with a tag is written `str:<text>`. Arrays and
//! key/value lists have no tag: they are written as text (with a warning).

use protoprof_model_otlp::opentelemetry::proto::common::v1::{
    any_value::Value, AnyValue, KeyValue,
};

pub const PREFIX: &str = "otlp:";

const TAGS: [&str; 5] = ["str:", "int:", "bool:", "double:", "bytes:"];

/// One `otlp:` comment, parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub name: String,
    pub value: String,
}

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

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

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
        Some(other) => (format!("{other:?}"), false),
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

pub fn key_value(key: &str, value: AnyValue) -> KeyValue {
    KeyValue {
        key: key.to_string(),
        value: protobuf::MessageField::some(value),
        ..Default::default()
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
