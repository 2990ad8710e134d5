//! What one attempt to export a request came to, whichever transport
//! carried it, and how the answer's body is read.

use std::time::Duration;

use protobuf::Message;
use protoprof_model_otlp::opentelemetry::proto::collector::profiles::v1development::ExportProfilesServiceResponse;
use serde::Serialize;

/// The receiver's `partial_success`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PartialSuccess {
    /// `rejected_profiles`.
    pub rejected_profiles: i64,
    /// `error_message`.
    pub error_message: String,
}

/// One attempt's end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Attempt {
    /// The receiver took the request (some of it, perhaps).
    Answered(PartialSuccess),
    /// The receiver refused, or nothing answered.
    Failed {
        /// The HTTP status or gRPC code, or `no answer`.
        status: String,
        /// What the receiver or the transport said.
        message: String,
        /// `Some` when the failure is retryable: the delay the receiver
        /// asked for, if any.
        retry: Option<Option<Duration>>,
    },
}

/// `partial_success` of a binary response (empty: nothing rejected).
pub fn partial_of_proto(body: &[u8]) -> Result<PartialSuccess, String> {
    let response =
        ExportProfilesServiceResponse::parse_from_bytes(body).map_err(|e| e.to_string())?;
    let partial = response.partial_success.get_or_default();
    Ok(PartialSuccess {
        rejected_profiles: partial.rejected_profiles,
        error_message: partial.error_message.clone(),
    })
}

/// `partialSuccess` of a JSON response (int64 as a string or a number).
pub fn partial_of_json(body: &[u8]) -> Result<PartialSuccess, String> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(PartialSuccess::default());
    }
    let value: serde_json::Value = serde_json::from_slice(body).map_err(|e| e.to_string())?;
    let partial = &value["partialSuccess"];
    let rejected = match &partial["rejectedProfiles"] {
        serde_json::Value::String(s) => s.parse().map_err(|_| format!("rejectedProfiles {s:?}"))?,
        serde_json::Value::Number(n) => n.as_i64().unwrap_or_default(),
        _ => 0,
    };
    Ok(PartialSuccess {
        rejected_profiles: rejected,
        error_message: partial["errorMessage"].as_str().unwrap_or("").to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_encodings_of_partial_success_read() {
        assert_eq!(
            partial_of_proto(b"\x0a\x00").unwrap(),
            PartialSuccess::default()
        );
        let json = br#"{"partialSuccess":{"rejectedProfiles":"3","errorMessage":"why"}}"#;
        let partial = partial_of_json(json).unwrap();
        assert_eq!(
            (partial.rejected_profiles, partial.error_message.as_str()),
            (3, "why")
        );
        assert_eq!(partial_of_json(b"{}").unwrap(), PartialSuccess::default());
        assert!(partial_of_json(b"garbage").is_err());
    }
}
