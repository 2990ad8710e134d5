//! What every stream of a relay shares: its configuration and limits, the
//! store, the event sink, counters, and the shutdown signal.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use protoprof_model_relay::envoy::config::core::v3::{ControlPlane, Node};
use tokio::sync::{mpsc, watch, Semaphore};
use tonic::Status;

use crate::events::{Event, EventSink};
use crate::store::Store;

/// Bounds on what one peer can make the relay hold.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Largest message accepted, in bytes (gRPC's limit, checked before decoding).
    pub max_message_bytes: usize,
    /// Most resources one management server may provide, over all types.
    pub max_resources_per_server: usize,
    /// Most streams open at once, management servers and proxies together.
    pub max_streams: usize,
    /// Messages queued for one peer before its stream waits (the latest
    /// state is sent when it catches up; nothing piles up).
    pub queue: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_message_bytes: 16 << 20,
            max_resources_per_server: 100_000,
            max_streams: 10_000,
            queue: 1,
        }
    }
}

/// How a relay runs.
#[derive(Debug, Clone)]
pub struct Config {
    /// Bounds on peers.
    pub limits: Limits,
    /// Type URLs management servers are asked for from the start (proxies'
    /// subscriptions add theirs).
    pub type_urls: Vec<String>,
    /// The relay's name: `node.id` of its requests upstream and
    /// `control_plane.identifier` of its responses to proxies.
    pub identifier: String,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            limits: Limits::default(),
            type_urls: crate::well_known_type_urls(),
            identifier: "protoprof-relay".into(),
        }
    }
}

/// What every stream of a relay shares.
pub(crate) struct Shared {
    pub(crate) store: Store,
    pub(crate) config: Config,
    events: EventSink,
    /// One permit per open stream.
    pub(crate) streams: Arc<Semaphore>,
    next_stream: AtomicU64,
    next_nonce: AtomicU64,
    /// Set when the relay shuts down; every stream ends then.
    pub(crate) shutdown: watch::Sender<bool>,
}

impl Shared {
    pub(crate) fn new(config: Config, events: EventSink) -> Shared {
        let store = Store::new(
            config.type_urls.iter().cloned(),
            config.limits.max_resources_per_server,
        );
        Shared {
            store,
            streams: Arc::new(Semaphore::new(config.limits.max_streams)),
            config,
            events,
            next_stream: AtomicU64::new(0),
            next_nonce: AtomicU64::new(0),
            shutdown: watch::Sender::new(false),
        }
    }

    /// Streams are numbered from 1 in the order they open.
    pub(crate) fn stream_id(&self) -> u64 {
        self.next_stream.fetch_add(1, Ordering::Relaxed) + 1
    }

    pub(crate) fn emit(&self, event: Event) {
        (self.events)(&event);
    }

    pub(crate) fn nonce(&self) -> String {
        (self.next_nonce.fetch_add(1, Ordering::Relaxed) + 1).to_string()
    }

    pub(crate) fn node(&self) -> Node {
        Node {
            id: self.config.identifier.clone(),
            ..Node::default()
        }
    }

    pub(crate) fn control_plane(&self) -> ControlPlane {
        ControlPlane {
            identifier: self.config.identifier.clone(),
            ..ControlPlane::default()
        }
    }
}

/// Where a handler sends its messages to the peer.
pub(crate) type Outbox<M> = mpsc::Sender<Result<M, Status>>;

/// Sends one message; `Err` when the peer has gone.
pub(crate) async fn send<M>(out: &Outbox<M>, message: M) -> Result<(), Status> {
    out.send(Ok(message))
        .await
        .map_err(|_| Status::cancelled("the peer went away"))
}
