//! One request, whichever transport brought it: checked off the async
//! threads, kept, passed on, reported, and answered.

use std::net::SocketAddr;
use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::receive::check::{check_and_read, BodyEncoding, ReadRequest, Verdict};
use crate::receive::config::{
    Event, EventSink, ReceiveConfig, RequestRecord, Transport, HTTP_PATH,
};
use crate::receive::store::Store;

/// What every connection shares.
pub struct Shared {
    /// The settings.
    pub config: ReceiveConfig,
    /// `--out`, opened.
    pub store: Option<Store>,
    /// Where events go.
    pub events: EventSink,
    /// One permit per request being read or checked.
    pub permits: Arc<Semaphore>,
    /// `--forward`: the backend's signal URL and the client for it, made
    /// once.
    pub forward: Option<Forward>,
    /// What keeps accepted requests before they are answered.
    pub keeper: Option<std::sync::Arc<dyn crate::receive::Keeper>>,
}

/// Where decoded requests are passed on.
pub struct Forward {
    url: String,
    agent: ureq::Agent,
}

impl Forward {
    /// Requests to the OTLP HTTP receiver at `base` (the signal path
    /// appended).
    pub fn new(base: &str) -> Forward {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(std::time::Duration::from_secs(10)))
            .build()
            .new_agent();
        Forward {
            url: format!("{}{HTTP_PATH}", base.trim_end_matches('/')),
            agent,
        }
    }

    /// Posts `body`; what the backend answered.
    fn post(&self, body: &[u8], encoding: BodyEncoding) -> String {
        let sent = self
            .agent
            .post(&self.url)
            .content_type(encoding.content_type())
            .send(body);
        match sent {
            Ok(response) => response.status().as_u16().to_string(),
            Err(e) => format!("{}: {e}", self.url),
        }
    }
}

/// A request as it arrived, decompressed.
pub struct Arrived {
    /// Who sent it.
    pub peer: Option<SocketAddr>,
    /// How.
    pub transport: Transport,
    /// Binary or JSON.
    pub encoding: BodyEncoding,
    /// Its `Content-Encoding` or `grpc-encoding`.
    pub compression: Option<String>,
    /// The body.
    pub body: Vec<u8>,
}

impl Shared {
    /// A permit to read and check one request: at once when fewer than the
    /// limit are being handled, else after waiting for one up to the read
    /// timeout (a waiting HTTP request's body stays in the connection, so
    /// waiting costs no memory); `None` when the wait ran out.
    pub async fn permit(&self) -> Option<OwnedSemaphorePermit> {
        let wait = self.permits.clone().acquire_owned();
        match tokio::time::timeout(self.config.limits.read_timeout, wait).await {
            Ok(Ok(permit)) => Some(permit),
            _ => None,
        }
    }

    /// Reports `event`.
    pub fn emit(&self, event: Event) {
        (self.events)(event);
    }

    /// Checks, keeps and forwards `arrived`, reports it, and returns the
    /// verdict the answer is made of.
    pub async fn handle(self: &Arc<Self>, arrived: Arrived) -> Verdict {
        let shared = self.clone();
        let work = tokio::task::spawn_blocking(move || shared.handle_blocking(arrived));
        match work.await {
            Ok(verdict) => verdict,
            Err(e) => Verdict::Undecodable {
                message: format!("the request's check failed: {e}"),
            },
        }
    }

    fn handle_blocking(&self, arrived: Arrived) -> Verdict {
        let limits = &self.config.limits.decode;
        let (summary, mut verdict, read) = check_and_read(&arrived.body, arrived.encoding, limits);
        let kept = read.and_then(|read| self.kept(&arrived, &read, &summary, &mut verdict));
        let mut record = RequestRecord {
            peer: arrived.peer,
            transport: arrived.transport,
            encoding: arrived.encoding,
            compression: arrived.compression,
            bytes: arrived.body.len(),
            summary,
            verdict: verdict.clone(),
            stored: None,
            forwarded: None,
        };
        record.stored = kept.map(Into::into);
        if let Some(store) = &self.store {
            match store.keep(&arrived.body, arrived.encoding) {
                Ok(path) => record.stored = Some(path),
                Err(e) => self.emit(Event::Trouble {
                    message: format!("could not keep a request: {e}"),
                }),
            }
        }
        let decoded = !matches!(verdict, Verdict::Undecodable { .. });
        if let (Some(forward), true) = (&self.forward, decoded) {
            record.forwarded = Some(forward.post(&arrived.body, arrived.encoding));
        }
        self.emit(Event::Request(Box::new(record)));
        verdict
    }

    /// Has the keeper keep an accepted request; where it went. A request
    /// that breaks a rule is not kept, and its answer says so, counting
    /// every profile rejected; one the keeper fails on is answered
    /// unavailable.
    fn kept(
        &self,
        arrived: &Arrived,
        read: &ReadRequest,
        summary: &crate::receive::Summary,
        verdict: &mut Verdict,
    ) -> Option<String> {
        let keeper = self.keeper.as_ref()?;
        if summary.counts.profiles == 0 {
            return None; // nothing to keep
        }
        match verdict {
            Verdict::Accepted => match keeper.keep(&crate::receive::keeper::Accepted {
                body: &arrived.body,
                encoding: arrived.encoding,
                read,
            }) {
                Ok(place) => Some(place),
                Err(e) => {
                    let message = format!("the request could not be kept: {e}");
                    *verdict = Verdict::Unavailable { message };
                    None
                }
            },
            Verdict::Rejected {
                rejected_profiles,
                error_message,
            } => {
                *rejected_profiles = (*rejected_profiles).max(summary.counts.profiles as i64);
                error_message.push_str("; nothing of the request was stored");
                None
            }
            _ => None,
        }
    }
}
