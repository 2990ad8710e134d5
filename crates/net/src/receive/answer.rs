//! The bodies the receiver answers with, in the request's encoding: an
//! `ExportProfilesServiceResponse` (its `partial_success` present, empty
//! when everything was accepted, as the Collector writes it) or a
//! `google.rpc.Status`.

use protobuf::Message;
use protoprof_model_otlp::opentelemetry::proto::collector::profiles::v1development::ExportProfilesServiceResponse;
use tonic::Code;

use crate::receive::check::{BodyEncoding, Verdict};
use crate::rpc_status::{status_json, status_proto};

/// The response to a decoded request (`verdict` is not
/// [`Verdict::Undecodable`]).
pub fn export_response(verdict: &Verdict, encoding: BodyEncoding) -> Vec<u8> {
    let (rejected_profiles, error_message) = match verdict {
        Verdict::Rejected {
            rejected_profiles,
            error_message,
        } => (*rejected_profiles, error_message.as_str()),
        _ => (0, ""),
    };
    match encoding {
        BodyEncoding::Protobuf => {
            let mut response = ExportProfilesServiceResponse::new();
            let partial = response.partial_success.mut_or_insert_default();
            partial.rejected_profiles = rejected_profiles;
            partial.error_message = error_message.to_string();
            response.write_to_bytes().unwrap_or_default()
        }
        BodyEncoding::Json => partial_success_json(rejected_profiles, error_message),
    }
}

/// `{"partialSuccess":{…}}`, int64 as a string as the JSON mapping has it.
fn partial_success_json(rejected_profiles: i64, error_message: &str) -> Vec<u8> {
    let mut partial = serde_json::Map::new();
    if rejected_profiles != 0 {
        partial.insert(
            "rejectedProfiles".into(),
            rejected_profiles.to_string().into(),
        );
    }
    if !error_message.is_empty() {
        partial.insert("errorMessage".into(), error_message.into());
    }
    serde_json::json!({ "partialSuccess": partial })
        .to_string()
        .into_bytes()
}

/// A `google.rpc.Status` body in `encoding`.
pub fn status_body(code: Code, message: &str, encoding: BodyEncoding) -> Vec<u8> {
    match encoding {
        BodyEncoding::Protobuf => status_proto(code, message),
        BodyEncoding::Json => status_json(code, message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn success_reads_as_the_collectors() {
        // The Collector v0.165.0's answers to a valid request.
        assert_eq!(
            export_response(&Verdict::Accepted, BodyEncoding::Protobuf),
            b"\x0a\x00"
        );
        assert_eq!(
            export_response(&Verdict::Accepted, BodyEncoding::Json),
            br#"{"partialSuccess":{}}"#
        );
        let rejected = Verdict::Rejected {
            rejected_profiles: 2,
            error_message: "RULE at path: why".into(),
        };
        let json = String::from_utf8(export_response(&rejected, BodyEncoding::Json)).unwrap();
        assert_eq!(
            json,
            r#"{"partialSuccess":{"rejectedProfiles":"2","errorMessage":"RULE at path: why"}}"#
        );
        let parsed = ExportProfilesServiceResponse::parse_from_bytes(&export_response(
            &rejected,
            BodyEncoding::Protobuf,
        ))
        .unwrap();
        assert_eq!(parsed.partial_success.rejected_profiles, 2);
    }
}
