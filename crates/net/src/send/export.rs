//! The exporter: each request encoded for its protocol, sent, and retried
//! after a retryable failure with exponential backoff and jitter, waiting
//! as long as the receiver asked (`Retry-After`, `RetryInfo`) when it did.

use std::time::{Duration, Instant};

use protobuf::Message;
use protoprof_model_otlp::opentelemetry::proto::collector::profiles::v1development::ExportProfilesServiceRequest;
use serde::Serialize;

use crate::send::attempt::{Attempt, PartialSuccess};
use crate::send::config::{Protocol, RetryPolicy, SendConfig};
use crate::send::grpc::GrpcSender;
use crate::send::http::HttpSender;
use crate::send::payload::Request;
use crate::NetError;

/// How one request ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    /// Accepted; `rejected_profiles` is 0 when all of it was.
    Sent {
        /// The receiver's `partial_success`.
        partial_success: PartialSuccess,
        /// Attempts made.
        attempts: u32,
    },
    /// Refused, or retried until the time ran out.
    Failed {
        /// The last HTTP status or gRPC code.
        status: String,
        /// What the receiver or transport said.
        message: String,
        /// Attempts made.
        attempts: u32,
    },
}

enum Sender {
    Http(HttpSender),
    Grpc(GrpcSender),
}

/// An OTLP profiles exporter.
pub struct Exporter {
    config: SendConfig,
    sender: Sender,
}

impl Exporter {
    /// The exporter `config` describes (no connection is made yet).
    pub fn new(config: SendConfig) -> Result<Exporter, NetError> {
        let sender = match config.protocol {
            Protocol::Grpc => Sender::Grpc(GrpcSender::new(&config)?),
            _ => Sender::Http(HttpSender::new(&config)?),
        };
        Ok(Exporter { config, sender })
    }

    /// Its settings.
    pub fn config(&self) -> &SendConfig {
        &self.config
    }

    /// Sends `request`, retrying as the policy allows; `waited` hears of
    /// each wait before a retry (for the user: what failed, how long).
    pub fn export(
        &self,
        request: &Request,
        waited: &mut dyn FnMut(&str, Duration),
    ) -> Result<Outcome, NetError> {
        let body = self.body(request)?;
        let started = Instant::now();
        let mut backoff = self.config.retry.initial;
        for attempts in 1.. {
            let attempt = match &self.sender {
                Sender::Http(http) => http.attempt(&self.config, &body),
                Sender::Grpc(grpc) => grpc.attempt(&self.config, &body),
            };
            let (status, message, retry) = match attempt {
                Attempt::Answered(partial_success) => {
                    return Ok(Outcome::Sent {
                        partial_success,
                        attempts,
                    })
                }
                Attempt::Failed {
                    status,
                    message,
                    retry,
                } => (status, message, retry),
            };
            let wait = retry.map(|asked| wait(asked, backoff, &self.config.retry));
            let in_time =
                |wait: &Duration| started.elapsed() + *wait <= self.config.retry.max_elapsed;
            let Some(wait) = wait.filter(in_time) else {
                return Ok(Outcome::Failed {
                    status,
                    message,
                    attempts,
                });
            };
            waited(&format!("{status}: {message}"), wait);
            std::thread::sleep(wait);
            backoff = (backoff * 2).min(self.config.retry.max_interval);
        }
        unreachable!("the loop returns")
    }

    /// The request's bytes as the protocol sends them.
    fn body(&self, request: &Request) -> Result<Vec<u8>, NetError> {
        let fail = |message: String| NetError::Payload {
            what: "request".into(),
            message,
        };
        let encoded = match self.config.protocol {
            Protocol::HttpJson => {
                let message = ExportProfilesServiceRequest::parse_from_bytes(&request.bytes)
                    .map_err(|e| fail(e.to_string()))?;
                protoprof_codec::json::print(&message, false).into_bytes()
            }
            _ => request.bytes.clone(),
        };
        let http = self.config.protocol != Protocol::Grpc;
        match http && self.config.gzip {
            true => protoprof_codec::gzip::compress(&encoded, 6).map_err(|e| fail(e.to_string())),
            false => Ok(encoded),
        }
    }
}

/// The wait before the next attempt: what the receiver asked, else the
/// backoff with ±20% jitter.
fn wait(asked: Option<Duration>, backoff: Duration, policy: &RetryPolicy) -> Duration {
    match asked {
        Some(asked) => asked,
        None => backoff
            .mul_f64(0.8 + 0.4 * fastrand::f64())
            .min(policy.max_interval),
    }
}
