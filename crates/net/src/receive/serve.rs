//! The receiver: both listeners bound, then served until a signal, each
//! connection on its own task; at the signal the listeners close and
//! requests being answered finish.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio::sync::{watch, Semaphore};

use crate::receive::config::{Event, EventSink, ReceiveConfig, Transport};
use crate::receive::grpc::ProfilesService;
use crate::receive::handle::{Forward, Shared};
use crate::receive::store::Store;
use crate::NetError;

/// A receiver with its listeners bound.
pub struct Receiver {
    shared: Arc<Shared>,
    grpc: Option<TcpListener>,
    http: Option<TcpListener>,
}

impl Receiver {
    /// Opens `--out` and binds the listeners (port 0: any free port; see
    /// [`Receiver::addresses`]).
    pub async fn bind(config: ReceiveConfig, events: EventSink) -> Result<Receiver, NetError> {
        Receiver::bind_keeping(config, events, None).await
    }

    /// [`Receiver::bind`], with `keeper` keeping every accepted request
    /// before it is answered.
    pub async fn bind_keeping(
        config: ReceiveConfig,
        events: EventSink,
        keeper: Option<Arc<dyn crate::receive::Keeper>>,
    ) -> Result<Receiver, NetError> {
        let store = match &config.out {
            Some(output) => Some(Store::open(output.clone()).map_err(|e| NetError::Listen {
                what: format!("--out {output:?}"),
                message: e.to_string(),
            })?),
            None => None,
        };
        let grpc = bind(config.grpc).await?;
        let http = bind(config.http).await?;
        let permits = Arc::new(Semaphore::new(config.limits.concurrent_requests));
        let forward = config.forward.as_deref().map(Forward::new);
        let shared = Arc::new(Shared {
            config,
            store,
            events,
            permits,
            forward,
            keeper,
        });
        Ok(Receiver { shared, grpc, http })
    }

    /// The bound addresses: gRPC, HTTP.
    pub fn addresses(&self) -> (Option<SocketAddr>, Option<SocketAddr>) {
        let address = |l: &Option<TcpListener>| l.as_ref().and_then(|l| l.local_addr().ok());
        (address(&self.grpc), address(&self.http))
    }

    /// Serves until `signal` completes.
    pub async fn serve(self, signal: impl Future<Output = ()>) -> Result<(), NetError> {
        let (stop, stopped) = watch::channel(false);
        let mut tasks = Vec::new();
        if let Some(listener) = self.grpc {
            announce(&self.shared, Transport::Grpc, &listener);
            let shared = self.shared.clone();
            tasks.push(tokio::spawn(serve_grpc(shared, listener, stopped.clone())));
        }
        if let Some(listener) = self.http {
            announce(&self.shared, Transport::Http, &listener);
            let shared = self.shared.clone();
            tasks.push(tokio::spawn(serve_http(shared, listener, stopped)));
        }
        signal.await;
        stop.send_replace(true);
        for task in tasks {
            match task.await {
                Ok(result) => result?,
                Err(e) => {
                    return Err(NetError::Listen {
                        what: "a listener".into(),
                        message: e.to_string(),
                    })
                }
            }
        }
        Ok(())
    }
}

async fn bind(address: Option<SocketAddr>) -> Result<Option<TcpListener>, NetError> {
    let Some(address) = address else {
        return Ok(None);
    };
    TcpListener::bind(address)
        .await
        .map(Some)
        .map_err(|e| NetError::Listen {
            what: address.to_string(),
            message: e.to_string(),
        })
}

fn announce(shared: &Shared, transport: Transport, listener: &TcpListener) {
    if let Ok(address) = listener.local_addr() {
        shared.emit(Event::Listening { transport, address });
    }
}

async fn serve_grpc(
    shared: Arc<Shared>,
    listener: TcpListener,
    mut stopped: watch::Receiver<bool>,
) -> Result<(), NetError> {
    let service = ProfilesService { shared };
    tonic::transport::Server::builder()
        .serve_with_incoming_shutdown(
            service,
            tonic::transport::server::TcpIncoming::from(listener),
            async move {
                let _ = stopped.wait_for(|s| *s).await;
            },
        )
        .await
        .map_err(|e| NetError::Listen {
            what: "the gRPC listener".into(),
            message: e.to_string(),
        })
}

async fn serve_http(
    shared: Arc<Shared>,
    listener: TcpListener,
    mut stopped: watch::Receiver<bool>,
) -> Result<(), NetError> {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(shared.config.limits.read_timeout);
    let graceful = GracefulShutdown::new();
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                // Out of descriptors and the like: the next accept may do.
                Err(_) => continue,
            },
            _ = stopped.wait_for(|s| *s) => break,
        };
        let shared = shared.clone();
        let service =
            service_fn(move |request| crate::receive::http::serve(shared.clone(), peer, request));
        let connection = builder.serve_connection(TokioIo::new(stream), service);
        let connection = graceful.watch(connection.into_owned());
        tokio::spawn(connection);
    }
    graceful.shutdown().await;
    Ok(())
}
