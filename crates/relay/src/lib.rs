//! A Manager Discovery Service relay over gRPC, and the clients that drive
//! and watch it.
//!
//! Management servers connect to the relay and upstream their
//! configuration (`quilkin.relay.v1alpha1.AggregatedControlPlaneDiscoveryService`,
//! xDS with the roles reversed); the relay merges what every live
//! management server provides and serves it to proxies as one aggregated
//! xDS server (the relay's `SubscribeDeltaResources` and Envoy's
//! `envoy.service.discovery.v3.AggregatedDiscoveryService`). The protocol as
//! implemented, the merge rule and the limits are in docs/relay.md.
//!
//! The gRPC layer is tonic with a codec for the generated rust-protobuf
//! messages ([`codec`]); the routes come from the generated service table
//! ([`routes`]).
//!
//! ```no_run
//! # async fn run() -> Result<(), protoprof_relay::RelayError> {
//! use protoprof_relay::{ignore_events, Config, Relay};
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! let relay = Relay::new(Config::default(), ignore_events());
//! relay.serve(listener, async { let _ = tokio::signal::ctrl_c().await; }).await
//! # }
//! ```

#![warn(missing_docs)]

mod client;
pub mod codec;
mod downstream;
mod events;
pub mod push;
pub mod resources;
pub mod routes;
mod server;
mod shared;
mod store;
mod upstream;
pub mod watch;

pub use events::{ignore_events, Event, EventSink, StreamInfo};
pub use resources::NamedResource;
pub use server::Relay;
pub use shared::{Config, Limits};
pub use store::{LimitExceeded, ServerId, Snapshot, Store};

/// Type URLs the relay asks management servers for unless told otherwise:
/// Quilkin's configuration and Envoy's main resource types.
pub const WELL_KNOWN_TYPE_URLS: &[&str] = &[
    "type.googleapis.com/quilkin.config.v1alpha1.Cluster",
    "type.googleapis.com/quilkin.config.v1alpha1.Datacenter",
    "type.googleapis.com/quilkin.config.v1alpha1.FilterChain",
    "type.googleapis.com/quilkin.config.v1alpha1.Listener",
    "type.googleapis.com/envoy.config.cluster.v3.Cluster",
    "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment",
    "type.googleapis.com/envoy.config.listener.v3.Listener",
    "type.googleapis.com/envoy.config.route.v3.RouteConfiguration",
    "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret",
];

/// [`WELL_KNOWN_TYPE_URLS`] as owned strings, the default of
/// [`Config::type_urls`] and of the CLI's `--type-url`.
pub fn well_known_type_urls() -> Vec<String> {
    WELL_KNOWN_TYPE_URLS.iter().map(|s| s.to_string()).collect()
}

/// What can go wrong running or reaching a relay.
#[derive(Debug, thiserror::Error)]
pub enum RelayError {
    /// Binding or reading the listener.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The HTTP/2 transport failed.
    #[error("transport: {0}")]
    Transport(String),
    /// The relay's address is not usable.
    #[error("bad relay address {address:?}: {reason}")]
    Address {
        /// The address given.
        address: String,
        /// Why it is not usable.
        reason: String,
    },
    /// The peer ended the stream with an error status.
    #[error("the stream ended with {code:?}: {message}")]
    Status {
        /// gRPC status code.
        code: tonic::Code,
        /// Its message.
        message: String,
    },
    /// The peer closed the stream before the work was done.
    #[error("{0}")]
    Closed(String),
}

impl From<tonic::Status> for RelayError {
    fn from(status: tonic::Status) -> Self {
        RelayError::Status {
            code: status.code(),
            message: status.message().to_string(),
        }
    }
}
