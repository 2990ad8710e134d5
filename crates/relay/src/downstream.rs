//! Proxies subscribing to the merged configuration, in state of the world
//! (Envoy's ADS) or incrementally (Envoy's delta ADS and the relay's
//! `SubscribeDeltaResources`). Each stream reads shared snapshots when it is
//! ready to send, so a slow proxy skips to the latest state and delays no one.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use imbl::ordmap::DiffItem;
use protoprof_model_relay::envoy::service::discovery::v3::{
    DeltaDiscoveryRequest, DeltaDiscoveryResponse, DiscoveryRequest, DiscoveryResponse, Resource,
};
use tonic::{Status, Streaming};

use crate::events::{Event, StreamInfo};
use crate::resources::NamedResource;
use crate::shared::{send, Outbox, Shared};
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
            if subscription.sent.as_deref() != Some(snapshot.version.as_str()) {
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
    let version = snapshot.version.clone();
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
    /// What the proxy holds as of the last response. It shares structure
    /// with the snapshot it was taken from, so it costs little to keep and
    /// comparing it with the next snapshot visits only what changed.
    held: Resources,
    /// `initial_resource_versions`, until the first response.
    initial: HashMap<String, String>,
    /// The snapshot version last compared against, `None` when due.
    seen: Option<String>,
    /// A first response is owed even if it is empty.
    answered: bool,
    /// A change too large for one response, being sent in chunks.
    catching_up: Option<CatchUp>,
}

type Resources = imbl::OrdMap<String, Arc<NamedResource>>;

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
        let mut behind = false;
        for (type_url, subscription) in &mut subscriptions {
            let snapshot = shared.store.snapshot(type_url);
            if subscription.seen.as_deref() == Some(snapshot.version.as_str()) {
                continue;
            }
            if let Some(response) = delta_response(&shared, type_url, subscription, &snapshot) {
                send(&out, response).await?;
            }
            behind |= subscription.seen.as_deref() != Some(snapshot.version.as_str());
        }
        if behind {
            // More of the same change is owed: send it before waiting.
            continue;
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
                initial: request
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
    if !request.resource_names_subscribe.is_empty()
        || !request.resource_names_unsubscribe.is_empty()
    {
        settle(subscription);
    }
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
            // The proxy has dropped it: no removal is owed.
            subscription.held.remove(name);
        }
        subscription.seen = None;
    }
    Ok(())
}

/// The part of a snapshot a subscription covers.
fn in_scope(subscription: &DeltaSubscription, snapshot: &Snapshot) -> Resources {
    if subscription.wildcard {
        return snapshot.resources.clone();
    }
    subscription
        .names
        .iter()
        .filter_map(|name| Some((name.clone(), snapshot.resources.get(name)?.clone())))
        .collect()
}

/// Most resources (with removals) in one incremental response: a proxy far
/// behind (a new one, or one that was slow) catches up in responses of
/// bounded size rather than one message holding the whole set.
pub(crate) const DELTA_CHUNK: usize = 1000;

/// What changed for the proxy since it was last answered, at most
/// [`DELTA_CHUNK`] entries (then `seen` stays `None`: more is owed); `None`
/// when nothing did and a first answer has been sent.
fn delta_response(
    shared: &Shared,
    type_url: &str,
    subscription: &mut DeltaSubscription,
    snapshot: &Snapshot,
) -> Option<DeltaDiscoveryResponse> {
    subscription.seen = Some(snapshot.version.clone());
    let (resources, removed) = if subscription.answered || subscription.initial.is_empty() {
        catch_up(subscription, snapshot)
    } else {
        let view = in_scope(subscription, snapshot);
        let changes = against_initial(&std::mem::take(&mut subscription.initial), &view);
        subscription.held = view;
        changes
    };
    if resources.is_empty() && removed.is_empty() && subscription.answered {
        return None;
    }
    subscription.answered = true;
    Some(DeltaDiscoveryResponse {
        system_version_info: snapshot.version.clone(),
        resources,
        type_url: type_url.to_string(),
        nonce: shared.nonce(),
        removed_resources: removed,
        control_plane: Some(shared.control_plane()).into(),
        ..DeltaDiscoveryResponse::default()
    })
}

/// A change too large for one response: the view it leads to and what is
/// still to send, a pointer per resource (the maps share structure with the
/// snapshots, so nothing else is copied per proxy).
struct CatchUp {
    view: Resources,
    version: String,
    puts: Vec<Arc<NamedResource>>,
    removes: Vec<String>,
}

impl CatchUp {
    /// Everything between `held` and `view`, listed once.
    fn new(held: &Resources, view: Resources, version: &str) -> CatchUp {
        let (mut puts, mut removes) = (Vec::new(), Vec::new());
        for item in held.diff(&view) {
            match item {
                DiffItem::Add(_, r) | DiffItem::Update { new: (_, r), .. } => puts.push(r.clone()),
                DiffItem::Remove(name, _) => removes.push(name.clone()),
            }
        }
        // Sent from the end: reversed, they go out in name order.
        puts.reverse();
        removes.reverse();
        CatchUp {
            view,
            version: version.to_string(),
            puts,
            removes,
        }
    }

    /// Takes up to `n` removals and puts, removals first.
    fn take(&mut self, n: usize) -> (Vec<Resource>, Vec<String>) {
        let removes = self.removes.len().min(n);
        let removed: Vec<String> = self
            .removes
            .drain(self.removes.len() - removes..)
            .rev()
            .collect();
        let puts = self.puts.len().min(n - removes);
        let resources = self
            .puts
            .drain(self.puts.len() - puts..)
            .rev()
            .map(|r| r.resource.clone())
            .collect();
        (resources, removed)
    }

    fn is_done(&self) -> bool {
        self.puts.is_empty() && self.removes.is_empty()
    }
}

/// The next chunk of differences between what the proxy holds and its part
/// of `snapshot`. A change too large for one response is listed once and
/// sent in chunks; a newer snapshot is compared against once that is done.
fn catch_up(
    subscription: &mut DeltaSubscription,
    snapshot: &Snapshot,
) -> (Vec<Resource>, Vec<String>) {
    let mut target = match subscription.catching_up.take() {
        Some(target) => target,
        None => {
            let view = in_scope(subscription, snapshot);
            CatchUp::new(&subscription.held, view, &snapshot.version)
        }
    };
    let chunk = target.take(DELTA_CHUNK);
    if target.is_done() {
        subscription.seen = Some(std::mem::take(&mut target.version));
        subscription.held = target.view;
    } else {
        subscription.catching_up = Some(target);
        subscription.seen = None;
    }
    chunk
}

/// Ends a catch-up early (the subscription changed): what the proxy holds
/// is the view less what is still pending.
fn settle(subscription: &mut DeltaSubscription) {
    let Some(target) = subscription.catching_up.take() else {
        return;
    };
    let mut held = target.view;
    let pending = target
        .puts
        .iter()
        .map(|r| r.name())
        .chain(target.removes.iter().map(String::as_str));
    for name in pending {
        match subscription.held.get(name) {
            Some(before) => held.insert(name.to_string(), before.clone()),
            None => held.remove(name),
        };
    }
    subscription.held = held;
}

/// The first answer: what differs from the versions the proxy said it holds.
fn against_initial(
    initial: &HashMap<String, String>,
    now: &Resources,
) -> (Vec<Resource>, Vec<String>) {
    let resources = now
        .iter()
        .filter(|(name, r)| initial.get(*name).map(String::as_str) != Some(r.version()))
        .map(|(_, r)| r.resource.clone())
        .collect();
    let mut removed: Vec<String> = initial
        .keys()
        .filter(|name| !now.contains_key(*name))
        .cloned()
        .collect();
    removed.sort();
    (resources, removed)
}
