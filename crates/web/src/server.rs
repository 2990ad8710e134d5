//! Listening and answering: one task per connection, each request's
//! analysis on a blocking thread so that a slow report does not hold the
//! others up.

use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;

use crate::cache::Cache;
use crate::http_guard::{self, Guard};
use crate::message::MessageSession;
use crate::served::Served;
use crate::state::State;
use crate::WebError;

/// Where and how the server listens.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// The address to bind; loopback (`127.0.0.1:8080`) unless told
    /// otherwise.
    pub listen: SocketAddr,
}

impl Default for ServeConfig {
    fn default() -> Self {
        ServeConfig {
            listen: SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 8080),
        }
    }
}

/// A bound server, ready to serve.
pub struct WebServer {
    listener: std::net::TcpListener,
    state: Arc<State>,
    guard: Guard,
}

impl WebServer {
    /// Binds the listen address (port 0: any free port).
    pub fn bind(config: &ServeConfig, mut served: Served) -> Result<WebServer, WebError> {
        let listen_error = |e: std::io::Error| WebError::Listen {
            address: config.listen.to_string(),
            message: e.to_string(),
        };
        let listener = std::net::TcpListener::bind(config.listen).map_err(listen_error)?;
        listener.set_nonblocking(true).map_err(listen_error)?;
        Ok(WebServer {
            listener,
            state: Arc::new(State {
                message: served.message.take().map(MessageSession::new),
                served,
                cache: Cache::default(),
                selections: Default::default(),
                one_report: Default::default(),
            }),
            guard: Guard {
                loopback_only: config.listen.ip().is_loopback(),
            },
        })
    }

    /// The bound address.
    pub fn address(&self) -> SocketAddr {
        self.listener
            .local_addr()
            .expect("a bound listener has an address")
    }

    /// The page's address.
    pub fn url(&self) -> String {
        let address = self.address();
        let host = match address.ip() {
            ip if ip.is_unspecified() => "localhost".to_string(),
            IpAddr::V6(ip) => format!("[{ip}]"),
            ip => ip.to_string(),
        };
        format!("http://{host}:{}/", address.port())
    }

    /// Whether clients other than this machine are refused.
    pub fn loopback_only(&self) -> bool {
        self.guard.loopback_only
    }

    /// Answers requests until `signal` completes (on a runtime of its own).
    pub fn serve(self, signal: impl Future<Output = ()>) -> Result<(), WebError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .map_err(|e| WebError::Listen {
                address: self.address().to_string(),
                message: e.to_string(),
            })?;
        runtime.block_on(self.accept_until(signal))
    }

    async fn accept_until(self, signal: impl Future<Output = ()>) -> Result<(), WebError> {
        self.warm_up();
        let address = self.address().to_string();
        let listener =
            tokio::net::TcpListener::from_std(self.listener).map_err(|e| WebError::Listen {
                address,
                message: e.to_string(),
            })?;
        tokio::pin!(signal);
        loop {
            let (stream, peer) = tokio::select! {
                _ = &mut signal => return Ok(()),
                accepted = listener.accept() => match accepted {
                    Ok(accepted) => accepted,
                    // A connection that failed before it was accepted.
                    Err(_) => continue,
                },
            };
            if !self.guard.admits_peer(peer) {
                continue;
            }
            let (state, guard) = (self.state.clone(), self.guard);
            tokio::spawn(async move {
                let service = service_fn(move |request| answer(state.clone(), guard, request));
                let connection = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service);
                // A client that goes away mid-answer is not the server's error.
                let _ = connection.await;
            });
        }
    }
}

impl WebServer {
    /// Starts computing what the page asks for first (the pickers, the
    /// flame graph, the top table), so that they are ready, or under way,
    /// when the browser asks.
    fn warm_up(&self) {
        // In the order the page draws them; a large profile's reports run
        // one at a time, and the flame graph comes first.
        let state = self.state.clone();
        tokio::task::spawn_blocking(move || {
            for path in ["/api/meta", "/api/flamegraph", "/api/top"] {
                crate::api::route(&state, path, "");
            }
        });
    }
}

async fn answer(
    state: Arc<State>,
    guard: Guard,
    request: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, std::convert::Infallible> {
    if !guard.admits(&request) {
        let refused = crate::api::plain(
            StatusCode::FORBIDDEN,
            "this server answers requests for localhost only",
        );
        return Ok(http_guard::secured(refused));
    }
    if request.method() == Method::POST {
        return Ok(http_guard::secured(post(state, guard, request).await));
    }
    if request.method() != Method::GET && request.method() != Method::HEAD {
        let refused = crate::api::plain(StatusCode::METHOD_NOT_ALLOWED, "only GET is answered");
        return Ok(http_guard::secured(refused));
    }
    let path = request.uri().path().to_string();
    let query = request.uri().query().unwrap_or("").to_string();
    let answered =
        tokio::task::spawn_blocking(move || crate::api::route(&state, &path, &query)).await;
    let response = answered.unwrap_or_else(|_| {
        crate::api::plain(StatusCode::INTERNAL_SERVER_ERROR, "the report failed")
    });
    Ok(http_guard::secured(response))
}

/// A POST: an edit or a save of the message view, sent by the page itself
/// (JSON, from the server's own origin), its body at most 1 MiB.
async fn post(
    state: Arc<State>,
    guard: Guard,
    request: Request<Incoming>,
) -> Response<Full<Bytes>> {
    let path = request.uri().path().to_string();
    if !crate::message::http::takes_post(&path) {
        return crate::api::plain(StatusCode::METHOD_NOT_ALLOWED, "only GET is answered here");
    }
    if let Err(why) = guard.admits_change(&request) {
        return crate::api::plain(StatusCode::FORBIDDEN, why);
    }
    let limited = http_body_util::Limited::new(request.into_body(), BODY_LIMIT);
    let body = match http_body_util::BodyExt::collect(limited).await {
        Ok(body) => body.to_bytes(),
        Err(_) => {
            return crate::api::plain(StatusCode::PAYLOAD_TOO_LARGE, "the body is over 1 MiB")
        }
    };
    let answered = tokio::task::spawn_blocking(move || {
        crate::message::http::post(state.message.as_ref(), &path, &body)
    })
    .await;
    answered.unwrap_or_else(|_| {
        crate::api::plain(StatusCode::INTERNAL_SERVER_ERROR, "the change failed")
    })
}

/// The largest POST body read.
const BODY_LIMIT: usize = 1 << 20;
