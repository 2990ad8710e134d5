//! The merged configuration: every live management server's resources, per
//! type URL, and for each name the copy to serve.
//!
//! The merge rule (docs/relay.md): a name that several servers provide is
//! served from the one whose copy changed most recently; the others are
//! kept, so when that server leaves (or drops the name) the next most
//! recent copy comes back. Readers take [`Snapshot`]s, shared and never
//! changed once published, so a slow proxy holds no lock and stalls no one;
//! a change copies only the path to what changed.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::watch;

use crate::resources::NamedResource;

/// A live management-server stream, as the store knows it.
pub type ServerId = u64;

/// The resources of one type URL that proxies are served.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// Changes whenever the served set changes (a counter, as text; `0`
    /// before anything was served).
    pub version: String,
    /// By name, the copy served. A persistent map: successive snapshots
    /// share what did not change, so holding many of them (one per proxy
    /// being answered) costs little, and comparing two skips what they share.
    pub resources: imbl::OrdMap<String, Arc<NamedResource>>,
}

impl Default for Snapshot {
    fn default() -> Self {
        Snapshot {
            version: "0".into(),
            resources: imbl::OrdMap::new(),
        }
    }
}

/// Why an update was refused; the relay NACKs it with this text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("relay limit: {0}")]
pub struct LimitExceeded(pub String);

#[derive(Debug, Clone)]
struct Candidate {
    server: ServerId,
    changed_at: u64,
    resource: Arc<NamedResource>,
}

#[derive(Default)]
struct TypeState {
    by_name: HashMap<String, Vec<Candidate>>,
    snapshot: Arc<Snapshot>,
}

#[derive(Default)]
struct ServerState {
    /// type URL -> names this server provides.
    names: HashMap<String, BTreeSet<String>>,
    count: usize,
}

#[derive(Default)]
struct Inner {
    clock: u64,
    next_server: ServerId,
    servers: HashMap<ServerId, ServerState>,
    types: HashMap<String, TypeState>,
}

/// The relay's state, shared by every stream.
pub struct Store {
    inner: Mutex<Inner>,
    max_resources_per_server: usize,
    generation: watch::Sender<u64>,
    wanted: watch::Sender<BTreeSet<String>>,
}

impl Store {
    /// An empty store; management servers are asked for `type_urls` from
    /// the start, and for every type a proxy subscribes to.
    pub fn new(
        type_urls: impl IntoIterator<Item = String>,
        max_resources_per_server: usize,
    ) -> Store {
        Store {
            inner: Mutex::default(),
            max_resources_per_server,
            generation: watch::Sender::new(0),
            wanted: watch::Sender::new(type_urls.into_iter().collect()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic elsewhere leaves the maps consistent (every change is
        // built before it is applied), so a poisoned lock is still usable.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Ticks whenever any served set changes.
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.generation.subscribe()
    }

    /// The type URLs management servers are asked for.
    pub fn wanted(&self) -> watch::Receiver<BTreeSet<String>> {
        self.wanted.subscribe()
    }

    /// Adds a type URL to those management servers are asked for.
    pub fn want(&self, type_url: &str) {
        self.wanted
            .send_if_modified(|set| set.insert(type_url.to_string()));
    }

    /// What proxies are served of `type_url` now.
    pub fn snapshot(&self, type_url: &str) -> Arc<Snapshot> {
        self.lock()
            .types
            .get(type_url)
            .map(|t| t.snapshot.clone())
            .unwrap_or_default()
    }

    /// A new management server, with nothing yet.
    pub fn register(&self) -> ServerId {
        let mut inner = self.lock();
        inner.next_server += 1;
        let id = inner.next_server;
        inner.servers.insert(id, ServerState::default());
        id
    }

    /// State of the world: `resources` are now all that `server` provides of
    /// `type_url`. A resource whose version is unchanged keeps its age.
    pub fn replace(
        &self,
        server: ServerId,
        type_url: &str,
        resources: Vec<NamedResource>,
    ) -> Result<(), LimitExceeded> {
        let mut inner = self.lock();
        let old = current_names(&inner, server, type_url);
        let new: BTreeSet<&str> = resources.iter().map(NamedResource::name).collect();
        let removed: Vec<String> = old
            .iter()
            .filter(|n| !new.contains(n.as_str()))
            .cloned()
            .collect();
        self.check_count(&inner, server, old.len(), resources.len())?;
        let changed = apply(&mut inner, server, type_url, resources, &removed);
        drop(inner);
        self.tick(changed);
        Ok(())
    }

    /// Incremental: `upserts` are added or replaced, `removed` names dropped.
    pub fn update(
        &self,
        server: ServerId,
        type_url: &str,
        upserts: Vec<NamedResource>,
        removed: &[String],
    ) -> Result<(), LimitExceeded> {
        let mut inner = self.lock();
        let old = current_names(&inner, server, type_url);
        let gone: HashSet<&str> = removed.iter().map(String::as_str).collect();
        let kept = old.iter().filter(|n| !gone.contains(n.as_str())).count();
        let added: HashSet<&str> = upserts
            .iter()
            .map(NamedResource::name)
            .filter(|n| !old.contains(*n) || gone.contains(n))
            .collect();
        self.check_count(&inner, server, old.len(), kept + added.len())?;
        let changed = apply(&mut inner, server, type_url, upserts, removed);
        drop(inner);
        self.tick(changed);
        Ok(())
    }

    fn tick(&self, changed: bool) {
        if changed {
            self.generation.send_modify(|g| *g += 1);
        }
    }

    fn check_count(
        &self,
        inner: &Inner,
        server: ServerId,
        before: usize,
        after: usize,
    ) -> Result<(), LimitExceeded> {
        let total = inner.servers.get(&server).map_or(0, |s| s.count) - before + after;
        if total > self.max_resources_per_server {
            return Err(LimitExceeded(format!(
                "{total} resources from one management server (at most {})",
                self.max_resources_per_server
            )));
        }
        Ok(())
    }

    /// The server's stream ended: its resources go, shadowed copies return.
    pub fn remove(&self, server: ServerId) {
        let mut inner = self.lock();
        let Some(state) = inner.servers.remove(&server) else {
            return;
        };
        inner.clock += 1;
        let clock = inner.clock;
        let mut changed = false;
        for (type_url, names) in state.names {
            let ty = inner.types.entry(type_url).or_default();
            let snapshot = Arc::make_mut(&mut ty.snapshot);
            let mut type_changed = false;
            for name in names {
                type_changed |= withdraw(&mut ty.by_name, snapshot, server, &name);
            }
            if type_changed {
                snapshot.version = clock.to_string();
            }
            changed |= type_changed;
        }
        drop(inner);
        self.tick(changed);
    }
}

/// The names `server` provides of `type_url`, borrowed (no set is copied
/// per update).
fn current_names<'a>(inner: &'a Inner, server: ServerId, type_url: &str) -> &'a BTreeSet<String> {
    static NONE: BTreeSet<String> = BTreeSet::new();
    inner
        .servers
        .get(&server)
        .and_then(|s| s.names.get(type_url))
        .unwrap_or(&NONE)
}

/// Applies upserts and removals of one server to one type, then publishes
/// the type's snapshot; whether anything served changed.
fn apply(
    inner: &mut Inner,
    server: ServerId,
    type_url: &str,
    upserts: Vec<NamedResource>,
    removed: &[String],
) -> bool {
    inner.clock += 1;
    let clock = inner.clock;
    let state = inner.servers.entry(server).or_default();
    let names = state.names.entry(type_url.to_string()).or_default();
    let ty = inner.types.entry(type_url.to_string()).or_default();
    let snapshot = Arc::make_mut(&mut ty.snapshot);
    let mut changed = false;
    for name in removed {
        if names.remove(name) {
            changed |= withdraw(&mut ty.by_name, snapshot, server, name);
        }
    }
    for resource in upserts {
        names.insert(resource.name().to_string());
        changed |= offer(&mut ty.by_name, snapshot, server, clock, resource);
    }
    state.count = state.names.values().map(BTreeSet::len).sum();
    if changed {
        snapshot.version = clock.to_string();
    }
    changed
}

/// A server's copy of a name: it becomes the served copy unless it is the
/// very copy the server already had (then nothing changes, and it keeps its age).
fn offer(
    by_name: &mut HashMap<String, Vec<Candidate>>,
    snapshot: &mut Snapshot,
    server: ServerId,
    clock: u64,
    resource: NamedResource,
) -> bool {
    let candidates = by_name.entry(resource.name().to_string()).or_default();
    if let Some(existing) = candidates.iter_mut().find(|c| c.server == server) {
        if *existing.resource == resource {
            return false;
        }
        existing.changed_at = clock;
        existing.resource = Arc::new(resource);
    } else {
        candidates.push(Candidate {
            server,
            changed_at: clock,
            resource: Arc::new(resource),
        });
    }
    publish(candidates, snapshot)
}

fn withdraw(
    by_name: &mut HashMap<String, Vec<Candidate>>,
    snapshot: &mut Snapshot,
    server: ServerId,
    name: &str,
) -> bool {
    let Some(candidates) = by_name.get_mut(name) else {
        return false;
    };
    candidates.retain(|c| c.server != server);
    if candidates.is_empty() {
        by_name.remove(name);
        snapshot.resources.remove(name).is_some()
    } else {
        publish(candidates, snapshot)
    }
}

/// Serves the most recently changed candidate of a name; whether what is
/// served changed. Another server's identical copy taking over is no change
/// (`Arc`'s equality compares pointers first, then content).
fn publish(candidates: &[Candidate], snapshot: &mut Snapshot) -> bool {
    let Some(winner) = candidates.iter().max_by_key(|c| c.changed_at) else {
        return false;
    };
    let name = winner.resource.name();
    if snapshot
        .resources
        .get(name)
        .is_some_and(|served| *served == winner.resource)
    {
        return false;
    }
    snapshot
        .resources
        .insert(name.to_string(), winner.resource.clone());
    true
}
