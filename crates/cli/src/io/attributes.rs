//! OTLP attributes from the command line (`--resource key=value`).

use protoprof_model_otlp::opentelemetry::proto::common::v1 as otlp_common;

use crate::error::{CliError, Result};

/// `--resource key=value` pairs as OTLP attributes.
pub fn resource_attributes(pairs: &[String]) -> Result<Vec<otlp_common::KeyValue>> {
    pairs
        .iter()
        .map(|pair| {
            let (key, value) = pair.split_once('=').ok_or_else(|| {
                CliError::failure(format!("--resource {pair:?}: expected key=value"))
            })?;
            Ok(string_attribute(key, value))
        })
        .collect()
}

/// An OTLP attribute of string value.
pub fn string_attribute(key: &str, value: &str) -> otlp_common::KeyValue {
    otlp_common::KeyValue {
        key: key.to_string(),
        value: protobuf::MessageField::some(otlp_common::AnyValue {
            value: Some(otlp_common::any_value::Value::StringValue(
                value.to_string(),
            )),
            ..Default::default()
        }),
        ..Default::default()
    }
}
