//! An OTLP attribute value as the text a person writes it in, for the
//! places that hold attribute values as strings (a profile store's
//! `resource_attributes`, `otlp:` comments of nested values): strings as
//! they are; ints, doubles and bools as text; arrays and key-value lists
//! as JSON; bytes as base64, OTLP/JSON's form for them. Never a debug
//! format: what a store writes, its users read for good.

use base64::Engine as _;
use protoprof_model_otlp::opentelemetry::proto::common::v1::{any_value::Value, AnyValue};
use serde_json::Value as Json;

/// `value` as text (see the module documentation), a string index
/// resolved against `strings` (v1development's dictionary); an unset value
/// (or a kind of value this version does not know) is "".
pub fn attribute_value_text(value: Option<&AnyValue>, strings: &[String]) -> String {
    match json(value.and_then(|v| v.value.as_ref()), strings) {
        Json::Null => String::new(),
        Json::String(s) => s,
        Json::Number(n) => n.to_string(),
        other => other.to_string(),
    }
}

/// A double as text: Rust's shortest form that reads back exactly, with
/// OTLP/JSON's names for what JSON has no number for.
fn double_text(d: f64) -> String {
    match d {
        _ if d.is_nan() => "NaN".into(),
        f64::INFINITY => "Infinity".into(),
        f64::NEG_INFINITY => "-Infinity".into(),
        _ => d.to_string(),
    }
}

/// A value as JSON: what it is written as inside an array or key-value
/// list, and, but for strings and numbers, alone.
fn json(value: Option<&Value>, strings: &[String]) -> Json {
    match value {
        None => Json::Null,
        Some(Value::StringValue(s)) => Json::String(s.clone()),
        Some(Value::StringValueStrindex(i)) => {
            let at = usize::try_from(*i).ok();
            Json::String(at.and_then(|i| strings.get(i)).cloned().unwrap_or_default())
        }
        Some(Value::IntValue(i)) => Json::from(*i),
        Some(Value::BoolValue(b)) => Json::Bool(*b),
        Some(Value::DoubleValue(d)) => serde_json::Number::from_f64(*d)
            .map_or_else(|| Json::String(double_text(*d)), Json::Number),
        Some(Value::BytesValue(b)) => {
            Json::String(base64::engine::general_purpose::STANDARD.encode(b))
        }
        Some(Value::ArrayValue(a)) => Json::Array(
            a.values
                .iter()
                .map(|v| json(v.value.as_ref(), strings))
                .collect(),
        ),
        Some(Value::KvlistValue(kv)) => Json::Object(
            kv.values
                .iter()
                .map(|kv| {
                    let v = kv.value.as_ref().and_then(|v| v.value.as_ref());
                    (kv.key.clone(), json(v, strings))
                })
                .collect(),
        ),
        // The oneof is non-exhaustive: a kind of value added later.
        Some(_) => Json::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use protoprof_model_otlp::opentelemetry::proto::common::v1::{
        ArrayValue, KeyValue, KeyValueList,
    };

    fn any(value: Value) -> AnyValue {
        AnyValue {
            value: Some(value),
            ..Default::default()
        }
    }

    #[test]
    fn every_kind_of_value_reads_as_written() {
        let array = ArrayValue {
            values: vec![
                any(Value::IntValue(0)),
                any(Value::StringValue("a\"b".into())),
                any(Value::DoubleValue(1.5)),
                any(Value::BoolValue(true)),
                any(Value::BytesValue(vec![0xff, 0])),
                AnyValue::default(),
            ],
            ..Default::default()
        };
        let list = KeyValueList {
            values: vec![KeyValue {
                key: "k".into(),
                value: protobuf::MessageField::some(any(Value::ArrayValue(ArrayValue {
                    values: vec![any(Value::IntValue(-3))],
                    ..Default::default()
                }))),
                ..Default::default()
            }],
            ..Default::default()
        };
        let strings = ["".to_string(), "eu-1".to_string()];
        let text = |v: Value| attribute_value_text(Some(&any(v)), &strings);
        assert_eq!(text(Value::StringValue("checkout".into())), "checkout");
        assert_eq!(text(Value::IntValue(-42)), "-42");
        assert_eq!(text(Value::DoubleValue(0.1)), "0.1");
        assert_eq!(text(Value::DoubleValue(f64::NAN)), "NaN");
        assert_eq!(text(Value::BoolValue(false)), "false");
        assert_eq!(text(Value::BytesValue(b"hi!".to_vec())), "aGkh");
        assert_eq!(
            text(Value::ArrayValue(array)),
            r#"[0,"a\"b",1.5,true,"/wA=",null]"#
        );
        assert_eq!(text(Value::KvlistValue(list)), r#"{"k":[-3]}"#);
        assert_eq!(text(Value::StringValueStrindex(1)), "eu-1");
        assert_eq!(text(Value::StringValueStrindex(9)), "");
        assert_eq!(attribute_value_text(None, &strings), "");
    }
}
