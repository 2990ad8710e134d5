//! Management servers upstreaming their configuration: xDS with the roles
//! reversed. The management server opens the stream with an empty response;
//! the relay asks for each type URL it wants; each response is checked,
//! merged, and ACKed or NACKed (with `error_detail` naming the problem).

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use protoprof_model_relay::envoy::service::discovery::v3::{
    DeltaDiscoveryRequest, DeltaDiscoveryResponse, DiscoveryRequest, DiscoveryResponse,
};
use protoprof_model_relay::google::rpc::Status as RpcStatus;
use protoprof_validate::{
    validate_delta_discovery_response, validate_discovery_response, Options, Report, Severity,
};
use tonic::{Status, Streaming};

use crate::events::{Event, StreamInfo};
use crate::resources::NamedResource;
use crate::shared::{send, Outbox, Shared};
use crate::store::ServerId;

/// gRPC's INVALID_ARGUMENT, the code of every NACK the relay sends.
const INVALID_ARGUMENT: i32 = 3;

/// Removes a management server's resources when its stream ends, however it ends.
struct Registration {
    shared: Arc<Shared>,
    server: ServerId,
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.shared.store.remove(self.server);
    }
}

/// Validation for a NACK: only the first error is reported, so the walk stops there.
const FIRST_ERROR: Options = Options {
    max_per_rule: 1,
    fail_fast: true,
    duplicates_and_orphans: false,
};

/// The first error of a validation report, as a NACK's text: rule, path, message.
pub(crate) fn first_error(report: &Report) -> Option<String> {
    report
        .diagnostics
        .iter()
        .find(|d| d.severity == Severity::Error)
        .map(|d| {
            let at = if d.path.is_empty() {
                String::new()
            } else {
                format!(" at {}", d.path)
            };
            let value = d
                .value
                .as_ref()
                .map(|v| format!(" ({v})"))
                .unwrap_or_default();
            format!("{}{at}: {}{value}", d.code, d.message)
        })
}

fn rpc_status(detail: &str) -> RpcStatus {
    RpcStatus {
        code: INVALID_ARGUMENT,
        message: detail.to_string(),
        ..RpcStatus::default()
    }
}

/// What differs between the two upstream methods.
trait Form {
    type Response: Send + 'static;
    type Request;
    /// The first request for a type.
    fn request(shared: &Shared, type_url: &str) -> Self::Request;
    /// The empty response that opens a stream (or keeps it alive).
    fn is_empty(response: &Self::Response) -> bool;
    /// Checks and merges a response; the ACK or NACK to send back.
    fn accept(
        &mut self,
        shared: &Shared,
        info: &StreamInfo,
        server: ServerId,
        response: Self::Response,
    ) -> Self::Request;
}

/// State of the world: remembers the version last accepted per type, which a NACK repeats.
#[derive(Default)]
struct Sotw {
    accepted: HashMap<String, String>,
}

struct Delta;

impl Form for Sotw {
    type Response = DiscoveryResponse;
    type Request = DiscoveryRequest;

    fn request(shared: &Shared, type_url: &str) -> DiscoveryRequest {
        sotw_request(shared, type_url)
    }

    fn is_empty(response: &DiscoveryResponse) -> bool {
        response.type_url.is_empty() && response.resources.is_empty()
    }

    fn accept(
        &mut self,
        shared: &Shared,
        info: &StreamInfo,
        server: ServerId,
        response: DiscoveryResponse,
    ) -> DiscoveryRequest {
        accept_sotw(shared, info, server, response, &mut self.accepted)
    }
}

impl Form for Delta {
    type Response = DeltaDiscoveryResponse;
    type Request = DeltaDiscoveryRequest;

    fn request(shared: &Shared, type_url: &str) -> DeltaDiscoveryRequest {
        delta_request(shared, type_url)
    }

    fn is_empty(response: &DeltaDiscoveryResponse) -> bool {
        response.type_url.is_empty()
            && response.resources.is_empty()
            && response.removed_resources.is_empty()
    }

    fn accept(
        &mut self,
        shared: &Shared,
        info: &StreamInfo,
        server: ServerId,
        response: DeltaDiscoveryResponse,
    ) -> DeltaDiscoveryRequest {
        accept_delta(shared, info, server, response)
    }
}

/// State-of-the-world upstream (`AggregatedControlPlaneDiscoveryService.StreamAggregatedResources`).
pub(crate) async fn sotw(
    shared: Arc<Shared>,
    info: StreamInfo,
    incoming: Streaming<DiscoveryResponse>,
    out: Outbox<DiscoveryRequest>,
) -> Result<(), Status> {
    upstream(shared, info, incoming, out, Sotw::default()).await
}

/// Incremental upstream (`AggregatedControlPlaneDiscoveryService.DeltaAggregatedResources`).
pub(crate) async fn delta(
    shared: Arc<Shared>,
    info: StreamInfo,
    incoming: Streaming<DeltaDiscoveryResponse>,
    out: Outbox<DeltaDiscoveryRequest>,
) -> Result<(), Status> {
    upstream(shared, info, incoming, out, Delta).await
}

/// One management server's stream: after its opening message, ask for each
/// wanted type (and for types wanted later), and answer every response.
async fn upstream<F: Form>(
    shared: Arc<Shared>,
    info: StreamInfo,
    mut incoming: Streaming<F::Response>,
    out: Outbox<F::Request>,
    mut form: F,
) -> Result<(), Status> {
    let registration = Registration {
        server: shared.store.register(),
        shared: shared.clone(),
    };
    let mut wanted = shared.store.wanted();
    let mut asked = BTreeSet::new();
    let mut opened = false;
    loop {
        tokio::select! {
            message = incoming.message() => {
                let Some(response) = message? else { return Ok(()) };
                if !opened {
                    opened = true;
                    let types = wanted.borrow_and_update().clone();
                    ask(&mut asked, types, |t| F::request(&shared, t), &out).await?;
                }
                if F::is_empty(&response) {
                    continue;
                }
                let reply = form.accept(&shared, &info, registration.server, response);
                send(&out, reply).await?;
            }
            changed = wanted.changed(), if opened => {
                if changed.is_err() {
                    return Ok(());
                }
                let types = wanted.borrow_and_update().clone();
                ask(&mut asked, types, |t| F::request(&shared, t), &out).await?;
            }
        }
    }
}

/// Sends a first request for each wanted type not asked for yet.
async fn ask<M>(
    asked: &mut BTreeSet<String>,
    wanted: BTreeSet<String>,
    request: impl Fn(&str) -> M,
    out: &Outbox<M>,
) -> Result<(), Status> {
    for type_url in wanted {
        if asked.insert(type_url.clone()) {
            send(out, request(&type_url)).await?;
        }
    }
    Ok(())
}

fn sotw_request(shared: &Shared, type_url: &str) -> DiscoveryRequest {
    DiscoveryRequest {
        type_url: type_url.to_string(),
        node: Some(shared.node()).into(),
        ..DiscoveryRequest::default()
    }
}

fn accept_sotw(
    shared: &Shared,
    info: &StreamInfo,
    server: ServerId,
    response: DiscoveryResponse,
    accepted: &mut HashMap<String, String>,
) -> DiscoveryRequest {
    let mut request = sotw_request(shared, &response.type_url);
    request.response_nonce = response.nonce.clone();
    let outcome = check_sotw(&response).and_then(|resources| {
        shared
            .store
            .replace(server, &response.type_url, resources)
            .map_err(|e| e.to_string())
    });
    match outcome {
        Ok(()) => {
            accepted.insert(response.type_url.clone(), response.version_info.clone());
            request.version_info = response.version_info;
        }
        Err(detail) => {
            request.version_info = accepted
                .get(&response.type_url)
                .cloned()
                .unwrap_or_default();
            request.error_detail = Some(rpc_status(&detail)).into();
            nacked(shared, info, &response.type_url, detail);
        }
    }
    request
}

fn nacked(shared: &Shared, info: &StreamInfo, type_url: &str, detail: String) {
    shared.emit(Event::NackSent {
        stream: info.clone(),
        type_url: type_url.to_string(),
        detail,
    });
}

/// The resources of a state-of-the-world response, or why it is refused.
pub(crate) fn check_sotw(response: &DiscoveryResponse) -> Result<Vec<NamedResource>, String> {
    if response.type_url.is_empty() {
        return Err("a response with resources must have a type_url".into());
    }
    if let Some(error) = first_error(&validate_discovery_response(response, &FIRST_ERROR)) {
        return Err(error);
    }
    let resources = response
        .resources
        .iter()
        .enumerate()
        .map(|(i, any)| {
            NamedResource::from_sotw(any.clone()).map_err(|e| format!("resources[{i}]: {e}"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    unique_names(&resources)?;
    Ok(resources)
}

fn unique_names(resources: &[NamedResource]) -> Result<(), String> {
    let mut seen = BTreeSet::new();
    for (i, resource) in resources.iter().enumerate() {
        if !seen.insert(resource.name()) {
            return Err(format!(
                "resources[{i}]: the name {:?} appears twice in one response",
                resource.name()
            ));
        }
    }
    Ok(())
}

fn delta_request(shared: &Shared, type_url: &str) -> DeltaDiscoveryRequest {
    DeltaDiscoveryRequest {
        type_url: type_url.to_string(),
        node: Some(shared.node()).into(),
        ..DeltaDiscoveryRequest::default()
    }
}

fn accept_delta(
    shared: &Shared,
    info: &StreamInfo,
    server: ServerId,
    response: DeltaDiscoveryResponse,
) -> DeltaDiscoveryRequest {
    let mut request = delta_request(shared, &response.type_url);
    request.response_nonce = response.nonce.clone();
    let outcome = check_delta(&response).and_then(|resources| {
        shared
            .store
            .update(
                server,
                &response.type_url,
                resources,
                &response.removed_resources,
            )
            .map_err(|e| e.to_string())
    });
    if let Err(detail) = outcome {
        request.error_detail = Some(rpc_status(&detail)).into();
        nacked(shared, info, &response.type_url, detail);
    }
    request
}

/// The resources of an incremental response, or why it is refused.
pub(crate) fn check_delta(response: &DeltaDiscoveryResponse) -> Result<Vec<NamedResource>, String> {
    if response.type_url.is_empty() {
        return Err("a response with resources must have a type_url".into());
    }
    if let Some(error) = first_error(&validate_delta_discovery_response(response, &FIRST_ERROR)) {
        return Err(error);
    }
    let resources: Vec<NamedResource> = response
        .resources
        .iter()
        .map(|r| NamedResource::from_delta(r.clone()))
        .collect();
    unique_names(&resources)?;
    Ok(resources)
}
