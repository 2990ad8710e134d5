//! The relay server: the dispatcher that routes each gRPC path of the
//! service table to its handler, each stream on its own task, and shutdown.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use protoprof_model_relay::envoy::service::discovery::v3::{
    DeltaDiscoveryRequest, DeltaDiscoveryResponse, DiscoveryRequest, DiscoveryResponse,
};
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::body::Body;
use tonic::server::Grpc;
use tonic::{Request, Response, Status, Streaming};

use crate::codec::{FromWire, ProtoCodec};
use crate::events::{Event, EventSink, StreamInfo};
use crate::routes::{routes, Role};
use crate::shared::{Config, Outbox, Shared};
use crate::store::Store;
use crate::{downstream, upstream, RelayError};

/// A relay: create it, then [`Relay::serve`] it on a listener.
pub struct Relay {
    shared: Arc<Shared>,
}

impl Relay {
    /// A relay with nothing in it; events go to `events`.
    pub fn new(config: Config, events: EventSink) -> Relay {
        Relay {
            shared: Arc::new(Shared::new(config, events)),
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
        id: shared.stream_id(),
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
