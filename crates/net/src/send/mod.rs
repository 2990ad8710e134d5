//! An OTLP profiles exporter, as the OpenTelemetry SDKs and the
//! Collector's OTLP exporters export: configured by the
//! `OTEL_EXPORTER_OTLP_*` variables, over gRPC, HTTP with protobuf or HTTP
//! with JSON, gzip, retries with backoff, `partial_success` reported.
//!
//! - [`config`]: settings from the environment and the command line;
//! - [`payload`]: inputs (pprof, OTLP) into requests under the size limit;
//! - [`export`]: the exporter and its retries;
//! - [`http`] and [`grpc`]: one attempt on each transport;
//! - [`attempt`]: what an attempt came to.

pub mod attempt;
pub mod config;
pub mod export;
pub mod grpc;
pub mod http;
pub mod payload;

pub use attempt::PartialSuccess;
pub use config::{Protocol, RetryPolicy, SendConfig, SendOverrides};
pub use export::{Exporter, Outcome};
pub use payload::{requests_of, PayloadOptions, Request};
