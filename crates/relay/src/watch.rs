//! A proxy: subscribes to a relay and hands over each update as it arrives,
//! ACKing it afterwards.

use std::ops::ControlFlow;

use protobuf::{MessageField, MessageFull};
use protoprof_model_relay::envoy::config::core::v3::Node;
use protoprof_model_relay::envoy::service::discovery::v3::{
    DeltaDiscoveryRequest, DeltaDiscoveryResponse, DiscoveryRequest, DiscoveryResponse,
};

use crate::client::{connect, finish, open, send};
use crate::codec::{FromWire, Received};
use crate::routes::{path_of, Role, ADS_SERVICE, RELAY_SERVICE};
use crate::RelayError;

/// How to subscribe.
#[derive(Debug, Clone)]
pub struct WatchOptions {
    /// The type URLs to subscribe to (every resource of each).
    pub type_urls: Vec<String>,
    /// Incremental xDS instead of state of the world.
    pub delta: bool,
    /// With `delta`: Envoy's `DeltaAggregatedResources` instead of the
    /// relay's `SubscribeDeltaResources`.
    pub via_ads: bool,
    /// `node.id` of the requests.
    pub identifier: String,
}

/// One response from the relay, with its bytes as received.
#[derive(Debug, Clone)]
pub enum Update {
    /// A state-of-the-world response.
    Sotw(Received<DiscoveryResponse>),
    /// An incremental response.
    Delta(Received<DeltaDiscoveryResponse>),
}

impl Update {
    /// The type URL the update is for.
    pub fn type_url(&self) -> &str {
        match self {
            Update::Sotw(r) => &r.message.type_url,
            Update::Delta(r) => &r.message.type_url,
        }
    }
}

/// Subscribes to the relay at `address` and calls `on_update` with each
/// update until it returns `Break` (then `Ok`), or the stream ends (an error:
/// a proxy's subscription does not end by itself).
pub async fn watch(
    address: &str,
    options: &WatchOptions,
    on_update: &mut (dyn FnMut(&Update) -> ControlFlow<()> + Send),
) -> Result<(), RelayError> {
    if options.delta {
        watch_as::<Delta>(address, options, on_update).await
    } else {
        watch_as::<Sotw>(address, options, on_update).await
    }
}

/// The two subscription forms differ only in their messages.
trait Form {
    type Request: MessageFull;
    type Response: MessageFull;
    /// A first request for `type_url`.
    fn subscribe(node: &Node, type_url: &str) -> Self::Request;
    /// The ACK of a response.
    fn ack(node: &Node, response: &Self::Response) -> Self::Request;
    fn update(received: Received<Self::Response>) -> Update;
}

struct Sotw;
struct Delta;

impl Form for Sotw {
    type Request = DiscoveryRequest;
    type Response = DiscoveryResponse;

    fn subscribe(node: &Node, type_url: &str) -> DiscoveryRequest {
        DiscoveryRequest {
            node: MessageField::some(node.clone()),
            type_url: type_url.to_string(),
            ..DiscoveryRequest::default()
        }
    }

    fn ack(node: &Node, response: &DiscoveryResponse) -> DiscoveryRequest {
        DiscoveryRequest {
            version_info: response.version_info.clone(),
            response_nonce: response.nonce.clone(),
            ..Sotw::subscribe(node, &response.type_url)
        }
    }

    fn update(received: Received<DiscoveryResponse>) -> Update {
        Update::Sotw(received)
    }
}

impl Form for Delta {
    type Request = DeltaDiscoveryRequest;
    type Response = DeltaDiscoveryResponse;

    fn subscribe(node: &Node, type_url: &str) -> DeltaDiscoveryRequest {
        DeltaDiscoveryRequest {
            node: MessageField::some(node.clone()),
            type_url: type_url.to_string(),
            ..DeltaDiscoveryRequest::default()
        }
    }

    fn ack(node: &Node, response: &DeltaDiscoveryResponse) -> DeltaDiscoveryRequest {
        DeltaDiscoveryRequest {
            response_nonce: response.nonce.clone(),
            ..Delta::subscribe(node, &response.type_url)
        }
    }

    fn update(received: Received<DeltaDiscoveryResponse>) -> Update {
        Update::Delta(received)
    }
}

fn path<F: Form>(options: &WatchOptions) -> String {
    let (service, role) = match (options.delta, options.via_ads) {
        (false, _) => (ADS_SERVICE, Role::ProxySotw),
        (true, true) => (ADS_SERVICE, Role::ProxyDelta),
        (true, false) => (RELAY_SERVICE, Role::ProxyDelta),
    };
    path_of(service, role).expect("the schema has every subscription method")
}

async fn watch_as<F: Form>(
    address: &str,
    options: &WatchOptions,
    on_update: &mut (dyn FnMut(&Update) -> ControlFlow<()> + Send),
) -> Result<(), RelayError>
where
    Received<F::Response>: FromWire + Sync,
{
    let mut grpc = connect(address).await?;
    let (sender, mut incoming) =
        open::<F::Request, Received<F::Response>>(&mut grpc, &path::<F>(options)).await?;
    let node = Node {
        id: options.identifier.clone(),
        ..Node::default()
    };
    for type_url in &options.type_urls {
        send(&sender, F::subscribe(&node, type_url)).await?;
    }
    while let Some(received) = incoming.message().await? {
        let ack = F::ack(&node, &received.message);
        if on_update(&F::update(received)).is_break() {
            finish(sender, incoming).await;
            return Ok(());
        }
        send(&sender, ack).await?;
    }
    Err(RelayError::Closed("the relay ended the stream".into()))
}
