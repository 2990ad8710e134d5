//! Proxies subscribing to the merged configuration, in state of the world
//! (Envoy's ADS) or incrementally (Envoy's delta ADS and the relay's
//! `SubscribeDeltaResources`). Each stream reads shared snapshots when it is
//! ready to send, so a slow proxy skips to the latest state and delays no one.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use protoprof_model_relay::envoy::service::discovery::v3::{
    DeltaDiscoveryRequest, DeltaDiscoveryResponse, DiscoveryRequest, DiscoveryResponse,
};
use tonic::{Status, Streaming};

use crate::events::{Event, StreamInfo};
use crate::server::{send, Outbox, Shared};
use crate::store::Snapshot;

/// The name that subscribes to every resource of a type.
const WILDCARD: &str = "*";

fn nack_received(shared: &Shared, info: &StreamInfo, type_url: &str, detail: &str) {
    shared.emit(Event::NackReceived {
        stream: info.clone(),
        type_url: type_url.to_string(),
        detail: detail.to_string(),
    });
}

fn require_type_url(type_url: &str) -> Result<(), Status> {
    if type_url.is_empty() {
        return Err(Status::invalid_argument(
            "an aggregated xDS request must name its type_url",
        ));
    }
    Ok(())
}

/// One type URL a state-of-the-world proxy subscribes to.
#[derive(Default)]
struct SotwSubscription {
    /// Names asked for; empty means every resource.
    names: BTreeSet<String>,
    /// The version last sent, `None` until a response is due.
    sent: Option<String>,
    /// The nonce of the last response, which ACKs and NACKs must echo.
    nonce: String,
}

/// Envoy's `StreamAggregatedResources` for proxies.
pub(crate) async fn sotw(
    shared: Arc<Shared>,
    info: StreamInfo,
    mut incoming: Streaming<DiscoveryRequest>,
    out: Outbox<DiscoveryResponse>,
) -> Result<(), Status> {
    let mut subscriptions: BTreeMap<String, SotwSubscription> = BTreeMap::new();
    let mut changes = shared.store.changes();
    loop {
        for (type_url, subscription) in &mut subscriptions {
            let snapshot = shared.store.snapshot(type_url);
            if subscription.sent.as_deref() != Some(served_version(&snapshot)) {
                let response = sotw_response(&shared, type_url, subscription, &snapshot);
                send(&out, response).await?;
            }
        }
        tokio::select! {
            message = incoming.message() => {
                let Some(request) = message? else { return Ok(()) };
                on_sotw_request(&shared, &info, &mut subscriptions, request)?;
            }
            changed = changes.changed() => {
                if changed.is_err() {
                    return Ok(());
                }
            }
        }
    }
}

fn served_version(snapshot: &Snapshot) -> &str {
    if snapshot.version.is_empty() {
        "0"
    } else {
        &snapshot.version
    }
}

fn on_sotw_request(
    shared: &Shared,
    info: &StreamInfo,
    subscriptions: &mut BTreeMap<String, SotwSubscription>,
    request: DiscoveryRequest,
) -> Result<(), Status> {
    require_type_url(&request.type_url)?;
    let subscription = subscriptions
        .entry(request.type_url.clone())
        .or_insert_with(|| {
            shared.store.want(&request.type_url);
            SotwSubscription::default()
        });
    if !request.response_nonce.is_empty() && request.response_nonce != subscription.nonce {
        // A reply to an older response: xDS says to ignore it.
        return Ok(());
    }
    if let Some(status) = request.error_detail.as_ref() {
        nack_received(shared, info, &request.type_url, &status.message);
        return Ok(());
    }
    let names: BTreeSet<String> = request
        .resource_names
        .into_iter()
        .filter(|n| n != WILDCARD)
        .collect();
    if names != subscription.names {
        subscription.names = names;
        subscription.sent = None;
    }
    Ok(())
}

fn sotw_response(
    shared: &Shared,
    type_url: &str,
    subscription: &mut SotwSubscription,
    snapshot: &Snapshot,
) -> DiscoveryResponse {
    let selected =
        |name: &String| subscription.names.is_empty() || subscription.names.contains(name);
    let resources = snapshot
        .resources
        .iter()
        .filter(|(name, _)| selected(name))
        .map(|(_, resource)| resource.sotw.clone())
        .collect();
    let version = served_version(snapshot).to_string();
    subscription.sent = Some(version.clone());
    subscription.nonce = shared.nonce();
    DiscoveryResponse {
        version_info: version,
        resources,
        type_url: type_url.to_string(),
        nonce: subscription.nonce.clone(),
        control_plane: Some(shared.control_plane()).into(),
        ..DiscoveryResponse::default()
    }
}

/// One type URL an incremental proxy subscribes to.
#[derive(Default)]
struct DeltaSubscription {
    wildcard: bool,
    names: BTreeSet<String>,
    /// What the proxy holds: name -> version.
    known: HashMap<String, String>,
    /// The snapshot version last compared against, `None` when due.
    seen: Option<String>,
    /// A first response is owed even if it is empty.
    answered: bool,
}

/// Envoy's `DeltaAggregatedResources` and the relay's `SubscribeDeltaResources`.
pub(crate) async fn delta(
    shared: Arc<Shared>,
    info: StreamInfo,
    mut incoming: Streaming<DeltaDiscoveryRequest>,
    out: Outbox<DeltaDiscoveryResponse>,
) -> Result<(), Status> {
    let mut subscriptions: BTreeMap<String, DeltaSubscription> = BTreeMap::new();
    let mut changes = shared.store.changes();
    loop {
        for (type_url, subscription) in &mut subscriptions {
            let snapshot = shared.store.snapshot(type_url);
            if subscription.seen.as_deref() == Some(served_version(&snapshot)) {
                continue;
            }
            if let Some(response) = delta_response(&shared, type_url, subscription, &snapshot) {
                send(&out, response).await?;
            }
        }
        tokio::select! {
            message = incoming.message() => {
                let Some(request) = message? else { return Ok(()) };
                on_delta_request(&shared, &info, &mut subscriptions, request)?;
            }
            changed = changes.changed() => {
                if changed.is_err() {
                    return Ok(());
                }
            }
        }
    }
}

fn on_delta_request(
    shared: &Shared,
    info: &StreamInfo,
    subscriptions: &mut BTreeMap<String, DeltaSubscription>,
    request: DeltaDiscoveryRequest,
) -> Result<(), Status> {
    require_type_url(&request.type_url)?;
    if let Some(status) = request.error_detail.as_ref() {
        nack_received(shared, info, &request.type_url, &status.message);
    }
    let subscription = match subscriptions.get_mut(&request.type_url) {
        Some(subscription) => subscription,
        None => {
            shared.store.want(&request.type_url);
            let first = DeltaSubscription {
                wildcard: request.resource_names_subscribe.is_empty(),
                known: request
                    .initial_resource_versions
                    .clone()
                    .into_iter()
                    .collect(),
                ..DeltaSubscription::default()
            };
            subscriptions
                .entry(request.type_url.clone())
                .or_insert(first)
        }
    };
    for name in &request.resource_names_subscribe {
        if name == WILDCARD {
            subscription.wildcard = true;
        } else {
            subscription.names.insert(name.clone());
        }
        subscription.seen = None;
    }
    for name in &request.resource_names_unsubscribe {
        if name == WILDCARD {
            subscription.wildcard = false;
        } else {
            subscription.names.remove(name);
        }
        subscription.known.remove(name);
        subscription.seen = None;
    }
    Ok(())
}

/// What changed for the proxy since it was last answered; `None` when nothing
/// did and a first answer has been sent.
fn delta_response(
    shared: &Shared,
    type_url: &str,
    subscription: &mut DeltaSubscription,
    snapshot: &Snapshot,
) -> Option<DeltaDiscoveryResponse> {
    subscription.seen = Some(served_version(snapshot).to_string());
    let in_scope = |name: &str| subscription.wildcard || subscription.names.contains(name);
    let resources: Vec<_> = snapshot
        .resources
        .iter()
        .filter(|(name, r)| {
            in_scope(name) && subscription.known.get(*name).map(String::as_str) != Some(r.version())
        })
        .map(|(_, r)| r.resource.clone())
        .collect();
    let mut removed: Vec<String> = subscription
        .known
        .keys()
        .filter(|name| !snapshot.resources.contains_key(*name) || !in_scope(name))
        .cloned()
        .collect();
    removed.sort();
    if resources.is_empty() && removed.is_empty() && subscription.answered {
        return None;
    }
    subscription.answered = true;
    for name in &removed {
        subscription.known.remove(name);
    }
    for resource in &resources {
        subscription
            .known
            .insert(resource.name.clone(), resource.version.clone());
    }
    Some(DeltaDiscoveryResponse {
        system_version_info: served_version(snapshot).to_string(),
        resources,
        type_url: type_url.to_string(),
        nonce: shared.nonce(),
        removed_resources: removed,
        control_plane: Some(shared.control_plane()).into(),
        ..DeltaDiscoveryResponse::default()
    })
}
