//! One export attempt over OTLP/HTTP: `POST` to the signal's URL, binary
//! or JSON, gzip when asked, the answer read as the specification says
//! (`partial_success` on 200, a `google.rpc.Status` otherwise,
//! `Retry-After` in seconds or as a date).

use std::time::{Duration, SystemTime};

use crate::receive::check::BodyEncoding;
use crate::rpc_status::{http_retryable, status_message};
use crate::send::attempt::{partial_of_json, partial_of_proto, Attempt};
use crate::send::config::{Protocol, SendConfig};
use crate::tls::{self, TlsFiles};
use crate::NetError;

/// The largest answer read.
const MAX_ANSWER_BYTES: u64 = 1 << 20;

/// An HTTP exporter's client.
pub struct HttpSender {
    agent: ureq::Agent,
    encoding: BodyEncoding,
}

impl HttpSender {
    /// The client for `config`.
    pub fn new(config: &SendConfig) -> Result<HttpSender, NetError> {
        let files = TlsFiles {
            ca: config.certificate.clone(),
            cert: config.client_certificate.clone(),
            key: config.client_key.clone(),
        };
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(config.timeout))
            .http_status_as_error(false)
            .tls_config(tls::config(&files, true)?)
            .user_agent(concat!("protoprof/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        Ok(HttpSender {
            agent,
            encoding: match config.protocol {
                Protocol::HttpJson => BodyEncoding::Json,
                _ => BodyEncoding::Protobuf,
            },
        })
    }

    /// Posts `body` (already encoded, and compressed when `gzip`).
    pub fn attempt(&self, config: &SendConfig, body: &[u8]) -> Attempt {
        let mut request = self
            .agent
            .post(&config.endpoint)
            .header("Content-Type", self.encoding.content_type());
        if config.gzip {
            request = request.header("Content-Encoding", "gzip");
        }
        for (key, value) in &config.headers {
            request = request.header(key, value);
        }
        let mut response = match request.send(body) {
            Ok(response) => response,
            Err(e) => {
                return Attempt::Failed {
                    status: "no answer".into(),
                    message: e.to_string(),
                    retry: Some(None),
                }
            }
        };
        let status = response.status().as_u16();
        let header = |name: &str| {
            let value = response.headers().get(name)?.to_str().ok()?;
            Some(value.to_string())
        };
        let (answer_type, retry_after) = (header("Content-Type"), header("Retry-After"));
        let body = response
            .body_mut()
            .with_config()
            .limit(MAX_ANSWER_BYTES)
            .read_to_vec()
            .unwrap_or_default();
        let json = answer_type.as_deref().is_some_and(|t| t.contains("json"));
        if status == 200 {
            let partial = if json {
                partial_of_json(&body)
            } else {
                partial_of_proto(&body)
            };
            return match partial {
                Ok(partial) => Attempt::Answered(partial),
                Err(e) => Attempt::Failed {
                    status: "200".into(),
                    message: format!("the answer is not an ExportProfilesServiceResponse: {e}"),
                    retry: None,
                },
            };
        }
        Attempt::Failed {
            status: status.to_string(),
            message: error_message(&body, answer_type.as_deref()),
            retry: http_retryable(status).then(|| retry_after.and_then(|v| retry_after_delay(&v))),
        }
    }
}

/// The message of an error answer: a `google.rpc.Status` in the answer's
/// encoding, or its text.
fn error_message(body: &[u8], content_type: Option<&str>) -> String {
    let content_type = content_type.unwrap_or("");
    let from_status = if content_type.contains("json") {
        serde_json::from_slice::<serde_json::Value>(body)
            .ok()
            .and_then(|v| v["message"].as_str().map(str::to_string))
    } else if content_type.contains("protobuf") {
        status_message(body)
    } else {
        None
    };
    from_status.unwrap_or_else(|| String::from_utf8_lossy(body).trim().to_string())
}

/// `Retry-After`: seconds, or an HTTP date.
pub fn retry_after_delay(value: &str) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(when.duration_since(SystemTime::now()).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_reads_seconds_and_dates() {
        assert_eq!(retry_after_delay("3"), Some(Duration::from_secs(3)));
        let later = SystemTime::now() + Duration::from_secs(120);
        let delay = retry_after_delay(&httpdate::fmt_http_date(later)).unwrap();
        assert!(delay > Duration::from_secs(100) && delay <= Duration::from_secs(120));
        assert_eq!(retry_after_delay("soon"), None);
    }

    #[test]
    fn error_bodies_are_read_in_their_encoding() {
        let proto = crate::rpc_status::status_proto(tonic::Code::InvalidArgument, "bad");
        assert_eq!(error_message(&proto, Some("application/x-protobuf")), "bad");
        assert_eq!(
            error_message(br#"{"code":3,"message":"bad"}"#, Some("application/json")),
            "bad"
        );
        assert_eq!(
            error_message(b"415 unsupported\n", Some("text/plain")),
            "415 unsupported"
        );
    }
}
