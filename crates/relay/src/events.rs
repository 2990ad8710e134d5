//! What the relay reports as it runs: the CLI logs these, tests read them.

use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;

use crate::routes::Role;

/// One stream, as events name it.
#[derive(Debug, Clone)]
pub struct StreamInfo {
    /// Numbered from 1 in the order streams open.
    pub id: u64,
    /// Who is on the other end.
    pub role: Role,
    /// The peer's address, when the transport knows it.
    pub peer: Option<SocketAddr>,
}

impl fmt::Display for StreamInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "stream {} ({}", self.id, self.role.label())?;
        if let Some(peer) = self.peer {
            write!(f, " from {peer}")?;
        }
        write!(f, ")")
    }
}

/// Something that happened in the relay.
#[derive(Debug, Clone)]
pub enum Event {
    /// The relay accepts connections on this address.
    Listening(SocketAddr),
    /// A stream opened.
    Opened(StreamInfo),
    /// A stream ended; `error` says why when it did not end cleanly.
    Closed {
        /// The stream.
        stream: StreamInfo,
        /// The gRPC status it ended with, if not OK.
        error: Option<String>,
    },
    /// The relay refused a management server's update.
    NackSent {
        /// The management server's stream.
        stream: StreamInfo,
        /// The type URL of the refused response.
        type_url: String,
        /// The reason sent in `error_detail`.
        detail: String,
    },
    /// A proxy refused an update the relay sent.
    NackReceived {
        /// The proxy's stream.
        stream: StreamInfo,
        /// The type URL of the refused response.
        type_url: String,
        /// The proxy's `error_detail` message.
        detail: String,
    },
    /// A stream was refused before it started (a limit, an unknown method).
    Refused {
        /// The peer's address, when known.
        peer: Option<SocketAddr>,
        /// Why.
        reason: String,
    },
    /// The relay is shutting down.
    ShuttingDown,
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Event::Listening(address) => write!(f, "listening on {address}"),
            Event::Opened(stream) => write!(f, "{stream} opened"),
            Event::Closed {
                stream,
                error: None,
            } => write!(f, "{stream} closed"),
            Event::Closed {
                stream,
                error: Some(e),
            } => write!(f, "{stream} closed: {e}"),
            Event::NackSent {
                stream,
                type_url,
                detail,
            } => write!(f, "NACK to {stream} for {type_url}: {detail}"),
            Event::NackReceived {
                stream,
                type_url,
                detail,
            } => write!(f, "NACK from {stream} for {type_url}: {detail}"),
            Event::Refused { peer, reason } => match peer {
                Some(peer) => write!(f, "refused a stream from {peer}: {reason}"),
                None => write!(f, "refused a stream: {reason}"),
            },
            Event::ShuttingDown => write!(f, "shutting down"),
        }
    }
}

/// Where events go.
pub type EventSink = Arc<dyn Fn(&Event) + Send + Sync>;

/// A sink that drops every event.
pub fn ignore_events() -> EventSink {
    Arc::new(|_| {})
}
