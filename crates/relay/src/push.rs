//! A management server: upstreams resources to a relay and reports whether
//! the relay accepted them.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;

use protobuf::{MessageField, MessageFull};
use protoprof_model_relay::envoy::config::core::v3::ControlPlane;
use protoprof_model_relay::envoy::service::discovery::v3::{
    DeltaDiscoveryRequest, DeltaDiscoveryResponse, DiscoveryRequest, DiscoveryResponse,
};
use sha2::{Digest, Sha256};

use crate::client::{connect, finish, open, send};
use crate::codec::FromWire;
use crate::resources::{short_hex, NamedResource};
use crate::routes::{path_of, Role, RELAY_SERVICE};
use crate::RelayError;

/// Resources to upstream, by type URL.
#[derive(Debug, Clone, Default)]
pub struct Upstream {
    /// type URL -> resources of that type, in the order added.
    pub by_type: BTreeMap<String, Vec<NamedResource>>,
}

impl Upstream {
    /// Adds a resource under its own type URL; a resource of the same type
    /// and name replaces the earlier one.
    pub fn add(&mut self, resource: NamedResource) {
        let list = self
            .by_type
            .entry(resource.type_url().to_string())
            .or_default();
        match list.iter_mut().find(|r| r.name() == resource.name()) {
            Some(existing) => *existing = resource,
            None => list.push(resource),
        }
    }

    /// How many resources, over all types.
    pub fn len(&self) -> usize {
        self.by_type.values().map(Vec::len).sum()
    }

    /// Whether there is nothing to upstream.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// How to upstream.
#[derive(Debug, Clone)]
pub struct PushOptions {
    /// The incremental method (`DeltaAggregatedResources`) instead of state of the world.
    pub delta: bool,
    /// Keep the stream open (and the resources served) until `until` completes.
    pub hold: bool,
    /// `control_plane.identifier` of the responses.
    pub identifier: String,
}

/// What happened to one upstreamed type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PushEvent {
    /// The resources of a type were sent.
    Sent {
        /// Their type URL.
        type_url: String,
        /// How many.
        resources: usize,
        /// The response's nonce.
        nonce: String,
    },
    /// The relay accepted them.
    Acked {
        /// Their type URL.
        type_url: String,
    },
    /// The relay refused them.
    Nacked {
        /// Their type URL.
        type_url: String,
        /// The relay's `error_detail`.
        detail: String,
    },
}

/// The outcome of a push: every event, in order.
#[derive(Debug, Clone, Default)]
pub struct PushReport {
    /// What happened, in order.
    pub events: Vec<PushEvent>,
}

impl PushReport {
    /// Whether the relay refused anything.
    pub fn any_nacked(&self) -> bool {
        self.events
            .iter()
            .any(|e| matches!(e, PushEvent::Nacked { .. }))
    }
}

/// The version of a set of resources: a digest of their names and versions.
fn set_version(resources: &[NamedResource]) -> String {
    let mut hash = Sha256::new();
    for r in resources {
        hash.update(r.name().as_bytes());
        hash.update([0]);
        hash.update(r.version().as_bytes());
        hash.update([0]);
    }
    short_hex(hash)
}

/// Upstreams `upstream` to the relay at `address`. Returns once every type
/// is ACKed or NACKed, or, with `hold`, when `until` completes.
pub async fn push(
    address: &str,
    upstream: &Upstream,
    options: &PushOptions,
    until: impl Future<Output = ()>,
    on_event: &mut (dyn FnMut(&PushEvent) + Send),
) -> Result<PushReport, RelayError> {
    let mut session = Session {
        report: PushReport::default(),
        pending: HashMap::new(),
        on_event,
    };
    if options.delta {
        push_as::<Delta>(address, upstream, options, until, &mut session).await?;
    } else {
        push_as::<Sotw>(address, upstream, options, until, &mut session).await?;
    }
    Ok(session.report)
}

struct Session<'a> {
    report: PushReport,
    /// nonce -> type URL of responses not yet answered.
    pending: HashMap<String, String>,
    on_event: &'a mut (dyn FnMut(&PushEvent) + Send),
}

impl Session<'_> {
    fn record(&mut self, event: PushEvent) {
        (self.on_event)(&event);
        self.report.events.push(event);
    }

    fn sent(&mut self, type_url: &str, resources: usize, nonce: String) {
        self.pending.insert(nonce.clone(), type_url.to_string());
        self.record(PushEvent::Sent {
            type_url: type_url.to_string(),
            resources,
            nonce,
        });
    }

    /// The relay's reply to one of our responses (its own first requests
    /// for a type echo no nonce of ours and are left alone).
    fn answered(&mut self, nonce: &str, error: Option<String>) {
        let Some(type_url) = self.pending.remove(nonce) else {
            return;
        };
        self.record(match error {
            None => PushEvent::Acked { type_url },
            Some(detail) => PushEvent::Nacked { type_url, detail },
        });
    }

    fn done(&self, hold: bool) -> bool {
        !hold && self.pending.is_empty()
    }
}

/// The two upstream methods differ only in their messages.
trait Form {
    type Response: MessageFull;
    type Request: FromWire + Sync;
    const ROLE: Role;
    /// A response; with no type URL, the empty one that opens the stream.
    fn response(
        options: &PushOptions,
        type_url: &str,
        resources: &[NamedResource],
        nonce: String,
    ) -> Self::Response;
    /// The nonce a request echoes and its `error_detail` message.
    fn reply(request: &Self::Request) -> (&str, Option<String>);
}

struct Sotw;
struct Delta;

fn control_plane(options: &PushOptions) -> MessageField<ControlPlane> {
    MessageField::some(ControlPlane {
        identifier: options.identifier.clone(),
        ..ControlPlane::default()
    })
}

fn version(type_url: &str, resources: &[NamedResource]) -> String {
    if type_url.is_empty() {
        String::new()
    } else {
        set_version(resources)
    }
}

impl Form for Sotw {
    type Response = DiscoveryResponse;
    type Request = DiscoveryRequest;
    const ROLE: Role = Role::UpstreamSotw;

    fn response(
        options: &PushOptions,
        type_url: &str,
        resources: &[NamedResource],
        nonce: String,
    ) -> DiscoveryResponse {
        DiscoveryResponse {
            version_info: version(type_url, resources),
            resources: resources.iter().map(|r| r.sotw.clone()).collect(),
            type_url: type_url.to_string(),
            nonce,
            control_plane: control_plane(options),
            ..DiscoveryResponse::default()
        }
    }

    fn reply(request: &DiscoveryRequest) -> (&str, Option<String>) {
        let error = request.error_detail.as_ref().map(|s| s.message.clone());
        (&request.response_nonce, error)
    }
}

impl Form for Delta {
    type Response = DeltaDiscoveryResponse;
    type Request = DeltaDiscoveryRequest;
    const ROLE: Role = Role::UpstreamDelta;

    fn response(
        options: &PushOptions,
        type_url: &str,
        resources: &[NamedResource],
        nonce: String,
    ) -> DeltaDiscoveryResponse {
        DeltaDiscoveryResponse {
            system_version_info: version(type_url, resources),
            resources: resources.iter().map(|r| r.resource.clone()).collect(),
            type_url: type_url.to_string(),
            nonce,
            control_plane: control_plane(options),
            ..DeltaDiscoveryResponse::default()
        }
    }

    fn reply(request: &DeltaDiscoveryRequest) -> (&str, Option<String>) {
        let error = request.error_detail.as_ref().map(|s| s.message.clone());
        (&request.response_nonce, error)
    }
}

async fn push_as<F: Form>(
    address: &str,
    upstream: &Upstream,
    options: &PushOptions,
    until: impl Future<Output = ()>,
    session: &mut Session<'_>,
) -> Result<(), RelayError> {
    let mut grpc = connect(address).await?;
    let path =
        path_of(RELAY_SERVICE, F::ROLE).expect("the relay service has both upstream methods");
    let (sender, mut incoming) = open::<F::Response, F::Request>(&mut grpc, &path).await?;
    send(&sender, F::response(options, "", &[], String::new())).await?;
    for (n, (type_url, resources)) in upstream.by_type.iter().enumerate() {
        let nonce = (n + 1).to_string();
        send(
            &sender,
            F::response(options, type_url, resources, nonce.clone()),
        )
        .await?;
        session.sent(type_url, resources.len(), nonce);
    }
    tokio::pin!(until);
    while !session.done(options.hold) {
        tokio::select! {
            request = incoming.message() => {
                let Some(request) = request? else {
                    return Err(RelayError::Closed("the relay ended the stream".into()));
                };
                let (nonce, error) = F::reply(&request);
                session.answered(nonce, error);
            }
            _ = &mut until => break,
        }
    }
    finish(sender, incoming).await;
    Ok(())
}
