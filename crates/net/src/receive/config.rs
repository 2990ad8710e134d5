//! What a receiver is told (listeners, limits, where requests go) and what
//! it tells back: one [`Event`] per listener opened, request answered or
//! request refused.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use protoprof_codec::Limits;
use serde::Serialize;

use crate::receive::check::{BodyEncoding, Summary, Verdict};
use crate::receive::store::Output;

/// The OTLP HTTP path of profiles.
pub const HTTP_PATH: &str = "/v1development/profiles";

/// The gRPC method of profiles.
pub const GRPC_PATH: &str =
    "/opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export";

/// A receiver's settings.
#[derive(Debug, Clone)]
pub struct ReceiveConfig {
    /// The gRPC listener (the Collector's default port is 4317).
    pub grpc: Option<SocketAddr>,
    /// The HTTP listener (4318).
    pub http: Option<SocketAddr>,
    /// Sizes, concurrency and time.
    pub limits: ReceiveLimits,
    /// Where requests are kept.
    pub out: Option<Output>,
    /// A backend every decoded request is passed on to: an OTLP HTTP base
    /// URL (`http://host:4318`), the signal path appended.
    pub forward: Option<String>,
}

/// What a receiver accepts at most.
#[derive(Debug, Clone, Copy)]
pub struct ReceiveLimits {
    /// An HTTP body, compressed or not (the Collector's 20 MiB).
    pub http_body_bytes: usize,
    /// A gRPC message (the Collector's 4 MiB).
    pub grpc_message_bytes: usize,
    /// Requests being read or checked at once; more wait for their turn
    /// (their bodies unread) up to `read_timeout`, then are answered
    /// `UNAVAILABLE` (HTTP 503) so exporters back off: with the two sizes
    /// above, this bounds the memory requests take.
    pub concurrent_requests: usize,
    /// How long a client may take to send a request's headers and body.
    pub read_timeout: Duration,
    /// The decoder's limits (nesting, strings).
    pub decode: Limits,
}

impl Default for ReceiveLimits {
    fn default() -> Self {
        ReceiveLimits {
            http_body_bytes: 20 << 20,
            grpc_message_bytes: 4 << 20,
            concurrent_requests: 16,
            read_timeout: Duration::from_secs(30),
            decode: Limits::DEFAULT,
        }
    }
}

/// The transport a request came by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    /// OTLP/gRPC.
    Grpc,
    /// OTLP/HTTP.
    Http,
}

/// One request answered.
#[derive(Debug, Clone, Serialize)]
pub struct RequestRecord {
    /// Who sent it.
    pub peer: Option<SocketAddr>,
    /// How.
    pub transport: Transport,
    /// Binary or JSON.
    pub encoding: BodyEncoding,
    /// The compression it came with (`gzip`, …), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compression: Option<String>,
    /// Its size once decompressed.
    pub bytes: usize,
    /// What it held.
    #[serde(flatten)]
    pub summary: Summary,
    /// The answer.
    #[serde(flatten)]
    pub verdict: Verdict,
    /// Where `--out` kept it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stored: Option<PathBuf>,
    /// What the `--forward` backend answered (`200`, or the error).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forwarded: Option<String>,
}

/// What a receiver reports.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// A listener is open.
    Listening {
        /// Its transport.
        transport: Transport,
        /// Its address.
        address: SocketAddr,
    },
    /// A request was read and answered.
    Request(Box<RequestRecord>),
    /// A request was refused before its body was read as a request.
    Refused {
        /// Who sent it.
        peer: Option<SocketAddr>,
        /// How.
        transport: Transport,
        /// The HTTP status (gRPC: the one its code maps to).
        status: u16,
        /// Why.
        message: String,
    },
    /// Storing or forwarding failed; the request was still answered.
    Trouble {
        /// What went wrong.
        message: String,
    },
}

/// Where events go; called from the receiver's tasks.
pub type EventSink = Arc<dyn Fn(Event) + Send + Sync>;
