//! OTLP/gRPC as the Collector's `otlpreceiver` serves it: the profiles
//! `Export` method, gzip accepted, messages bounded, undecodable requests
//! answered `INVALID_ARGUMENT`.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use tonic::body::Body;
use tonic::codec::CompressionEncoding;
use tonic::server::Grpc;
use tonic::{Code, Request, Response, Status};

use crate::grpc_bytes::BytesCodec;
use crate::receive::answer::export_response;
use crate::receive::check::{BodyEncoding, Verdict};
use crate::receive::config::{Event, Transport, GRPC_PATH};
use crate::receive::handle::{Arrived, Shared};
use crate::rpc_status::http_status_of;

/// The gRPC side's router: one method, everything else `UNIMPLEMENTED`.
#[derive(Clone)]
pub struct ProfilesService {
    /// What every request shares.
    pub shared: Arc<Shared>,
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

impl tower::Service<http::Request<Body>> for ProfilesService {
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<Result<http::Response<Body>, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        let shared = self.shared.clone();
        Box::pin(async move {
            if request.uri().path() != GRPC_PATH {
                let message = format!("unknown method {}", request.uri().path());
                return Ok(refuse(&shared, None, Status::unimplemented(message)).into_http());
            }
            Ok(export(shared, request).await)
        })
    }
}

async fn export(shared: Arc<Shared>, request: http::Request<Body>) -> http::Response<Body> {
    let limit = shared.config.limits.grpc_message_bytes;
    let reporter = shared.clone();
    let service = tower::service_fn(move |request: Request<Bytes>| {
        let shared = shared.clone();
        async move { unary(shared, request).await }
    });
    let mut response = Grpc::new(BytesCodec)
        .accept_compressed(CompressionEncoding::Gzip)
        .send_compressed(CompressionEncoding::Gzip)
        .max_decoding_message_size(limit)
        .unary(service, request)
        .await;
    if too_large_is_resource_exhausted(&mut response) {
        let message = format!("a message larger than the limit of {limit} bytes");
        refuse(&reporter, None, Status::resource_exhausted(message));
    }
    response
}

/// tonic refuses a message over the limit with `OUT_OF_RANGE`, which an
/// exporter retries; grpc-go (the Collector) says `RESOURCE_EXHAUSTED`,
/// which it does not. The handler never answers `OUT_OF_RANGE` itself, so
/// the code in a trailers-only answer is tonic's refusal. Whether it was.
fn too_large_is_resource_exhausted(response: &mut http::Response<Body>) -> bool {
    let out_of_range = (Code::OutOfRange as i32).to_string();
    let headers = response.headers_mut();
    let refused = headers
        .get("grpc-status")
        .is_some_and(|v| v.as_bytes() == out_of_range.as_bytes());
    if refused {
        let exhausted = (Code::ResourceExhausted as i32).to_string();
        if let Ok(value) = http::HeaderValue::from_str(&exhausted) {
            headers.insert("grpc-status", value);
        }
    }
    refused
}

async fn unary(shared: Arc<Shared>, request: Request<Bytes>) -> Result<Response<Bytes>, Status> {
    let peer = request.remote_addr();
    let Some(_permit) = shared.permit().await else {
        let status = Status::unavailable("too many requests at once; retry later");
        return Err(refuse(&shared, peer, status));
    };
    let compression = request
        .metadata()
        .get("grpc-encoding")
        .and_then(|v| v.to_str().ok())
        .filter(|v| *v != "identity")
        .map(str::to_string);
    let arrived = Arrived {
        peer,
        transport: Transport::Grpc,
        encoding: BodyEncoding::Protobuf,
        compression,
        body: request.into_inner().to_vec(),
    };
    match shared.handle(arrived).await {
        Verdict::Undecodable { message } => Err(Status::invalid_argument(message)),
        Verdict::Unavailable { message } => Err(Status::unavailable(message)),
        verdict => Ok(Response::new(
            export_response(&verdict, BodyEncoding::Protobuf).into(),
        )),
    }
}

/// Reports `status` as a refusal, and gives it back to answer with.
fn refuse(shared: &Shared, peer: Option<std::net::SocketAddr>, status: Status) -> Status {
    shared.emit(Event::Refused {
        peer,
        transport: Transport::Grpc,
        status: http_status_of(status.code()),
        message: status.message().to_string(),
    });
    status
}
