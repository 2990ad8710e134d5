//! An OTLP profiles receiver that answers as the Collector's
//! `otlpreceiver` does on the wire (gRPC `Export` and `POST
//! /v1development/profiles`, binary and JSON, compressed, bounded), and
//! validates every request: a broken rule is answered with
//! `partial_success`, naming the rule and path.
//!
//! - [`config`]: settings, limits and the events it reports;
//! - [`serve`]: the listeners and their connections;
//! - [`http`] and [`grpc`]: the two transports;
//! - [`body`]: bounded reading and decompression of HTTP bodies;
//! - [`handle`]: one request, whichever transport brought it;
//! - [`check`]: decoding, validation and the verdict;
//! - [`answer`]: response and error bodies;
//! - [`store`]: where `--out` keeps requests;
//! - [`keeper`]: what keeps accepted requests durably before the answer.

pub mod answer;
pub mod body;
pub mod check;
pub mod config;
pub mod grpc;
pub mod handle;
pub mod http;
pub mod keeper;
pub mod serve;
pub mod store;

pub use check::{BodyEncoding, ReadRequest, Summary, Verdict};
pub use config::{Event, EventSink, ReceiveConfig, ReceiveLimits, RequestRecord, Transport};
pub use keeper::{Accepted, Keeper};
pub use serve::Receiver;
pub use store::Output;
