//! The relay server: limits, the shared state, and the dispatcher that
//! routes each gRPC path of the service table to its handler.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use protoprof_model_relay::envoy::config::core::v3::{ControlPlane, Node};
use protoprof_model_relay::envoy::service::discovery::v3::{
    DeltaDiscoveryRequest, DeltaDiscoveryResponse, DiscoveryRequest, DiscoveryResponse,
};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch, Semaphore};
use tokio_stream::wrappers::ReceiverStream;
use tonic::body::Body;
use tonic::server::Grpc;
use tonic::{Request, Response, Status, Streaming};

use crate::codec::{FromWire, ProtoCodec};
use crate::events::{Event, EventSink, StreamInfo};
use crate::routes::{routes, Role};
use crate::store::Store;
use crate::{downstream, upstream, RelayError};

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
            type_urls: crate::WELL_KNOWN_TYPE_URLS
                .iter()
                .map(|s| s.to_string())
                .collect(),
            identifier: "protoprof-relay".into(),
        }
    }
}

/// What every stream of a relay shares.
pub(crate) struct Shared {
    pub(crate) store: Store,
    pub(crate) config: Config,
    events: EventSink,
    streams: Arc<Semaphore>,
    next_stream: AtomicU64,
    next_nonce: AtomicU64,
    shutdown: watch::Sender<bool>,
}

impl Shared {
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

/// A relay: create it, then [`Relay::serve`] it on a listener.
pub struct Relay {
    shared: Arc<Shared>,
}

impl Relay {
    /// A relay with nothing in it; events go to `events`.
    pub fn new(config: Config, events: EventSink) -> Relay {
        let store = Store::new(
            config.type_urls.iter().cloned(),
            config.limits.max_resources_per_server,
        );
        let streams = Arc::new(Semaphore::new(config.limits.max_streams));
        Relay {
            shared: Arc::new(Shared {
                store,
                config,
                events,
                streams,
                next_stream: AtomicU64::new(0),
                next_nonce: AtomicU64::new(0),
                shutdown: watch::Sender::new(false),
            }),
        }
    }

    /// The merged configuration.
    pub fn store(&self) -> &Store {
        &self.shared.store
    }

    /// Serves on `listener` until `signal` completes; then every stream is
    /// ended with `UNAVAILABLE` and the connections are closed.
    pub async fn serve(
        &self,
        listener: TcpListener,
        signal: impl Future<Output = ()>,
    ) -> Result<(), RelayError> {
        let address = listener.local_addr().map_err(RelayError::Io)?;
        self.shared.emit(Event::Listening(address));
        let dispatch = Dispatch {
            shared: self.shared.clone(),
            routes: Arc::new(routes().into_iter().map(|r| (r.path, r.role)).collect()),
        };
        let shared = self.shared.clone();
        let stop = async move {
            signal.await;
            shared.emit(Event::ShuttingDown);
            shared.shutdown.send_replace(true);
        };
        tonic::transport::Server::builder()
            .serve_with_incoming_shutdown(
                dispatch,
                tonic::transport::server::TcpIncoming::from(listener),
                stop,
            )
            .await
            .map_err(|e| RelayError::Transport(e.to_string()))
    }
}

/// Routes a request by its path to the handler of its role.
#[derive(Clone)]
struct Dispatch {
    shared: Arc<Shared>,
    routes: Arc<HashMap<String, Role>>,
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

impl tower::Service<http::Request<Body>> for Dispatch {
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<Result<http::Response<Body>, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        let shared = self.shared.clone();
        let role = self.routes.get(request.uri().path()).copied();
        let path = request.uri().path().to_string();
        Box::pin(async move {
            let Some(role) = role else {
                let reason = format!("no method {path}");
                shared.emit(Event::Refused {
                    peer: None,
                    reason: reason.clone(),
                });
                return Ok(Status::unimplemented(reason).into_http());
            };
            Ok(dispatch(shared, role, request).await)
        })
    }
}

async fn dispatch(
    shared: Arc<Shared>,
    role: Role,
    request: http::Request<Body>,
) -> http::Response<Body> {
    match role {
        Role::UpstreamSotw => {
            serve_stream::<DiscoveryResponse, DiscoveryRequest, _, _>(
                shared,
                role,
                request,
                upstream::sotw,
            )
            .await
        }
        Role::UpstreamDelta => {
            serve_stream::<DeltaDiscoveryResponse, DeltaDiscoveryRequest, _, _>(
                shared,
                role,
                request,
                upstream::delta,
            )
            .await
        }
        Role::ProxySotw => {
            serve_stream::<DiscoveryRequest, DiscoveryResponse, _, _>(
                shared,
                role,
                request,
                downstream::sotw,
            )
            .await
        }
        Role::ProxyDelta => {
            serve_stream::<DeltaDiscoveryRequest, DeltaDiscoveryResponse, _, _>(
                shared,
                role,
                request,
                downstream::delta,
            )
            .await
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

async fn serve_stream<In, Out, F, Fut>(
    shared: Arc<Shared>,
    role: Role,
    request: http::Request<Body>,
    run: F,
) -> http::Response<Body>
where
    In: FromWire + Sync + protobuf::MessageFull,
    Out: protobuf::MessageFull + Sync,
    F: FnOnce(Arc<Shared>, StreamInfo, Streaming<In>, Outbox<Out>) -> Fut + Clone + Send + 'static,
    Fut: Future<Output = Result<(), Status>> + Send + 'static,
{
    let limit = shared.config.limits.max_message_bytes;
    let service = tower::service_fn(move |request: Request<Streaming<In>>| {
        let (shared, run) = (shared.clone(), run.clone());
        async move { open::<In, Out, F, Fut>(shared, role, request, run) }
    });
    Grpc::new(ProtoCodec::<Out, In>::default())
        .max_decoding_message_size(limit)
        .max_encoding_message_size(limit)
        .streaming(service, request)
        .await
}

/// Starts a stream's handler on its own task; the response streams what the
/// handler sends, and ends with its error status if it fails.
fn open<In, Out, F, Fut>(
    shared: Arc<Shared>,
    role: Role,
    request: Request<Streaming<In>>,
    run: F,
) -> Result<Response<ReceiverStream<Result<Out, Status>>>, Status>
where
    In: Send + 'static,
    Out: Send + 'static,
    F: FnOnce(Arc<Shared>, StreamInfo, Streaming<In>, Outbox<Out>) -> Fut + Send + 'static,
    Fut: Future<Output = Result<(), Status>> + Send + 'static,
{
    let peer = request.remote_addr();
    let Ok(permit) = shared.streams.clone().try_acquire_owned() else {
        let reason = format!("{} streams open already", shared.config.limits.max_streams);
        shared.emit(Event::Refused {
            peer,
            reason: reason.clone(),
        });
        return Err(Status::resource_exhausted(reason));
    };
    let info = StreamInfo {
        id: shared.next_stream.fetch_add(1, Ordering::Relaxed) + 1,
        role,
        peer,
    };
    let (out, received) = mpsc::channel(shared.config.limits.queue);
    shared.emit(Event::Opened(info.clone()));
    tokio::spawn(async move {
        let mut shutdown = shared.shutdown.subscribe();
        let handler = run(
            shared.clone(),
            info.clone(),
            request.into_inner(),
            out.clone(),
        );
        let result = tokio::select! {
            result = handler => result,
            _ = shutdown.wait_for(|stop| *stop) => Err(Status::unavailable("the relay is shutting down")),
        };
        let error = match result {
            Ok(()) => None,
            Err(status) => {
                let text = match status.code() {
                    // What tonic reports when the peer's connection drops mid-stream.
                    tonic::Code::Unknown => format!("connection lost ({})", status.message()),
                    code => format!("{code:?}: {}", status.message()),
                };
                // The status ends the response stream; a peer that reads
                // nothing gets a moment, then its stream is dropped.
                let _ = tokio::time::timeout(Duration::from_secs(1), out.send(Err(status))).await;
                Some(text)
            }
        };
        shared.emit(Event::Closed {
            stream: info,
            error,
        });
        drop(permit);
    });
    Ok(Response::new(ReceiverStream::new(received)))
}
