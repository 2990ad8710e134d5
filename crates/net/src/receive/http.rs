//! OTLP/HTTP as the Collector's `otlpreceiver` serves it: `POST
//! /v1development/profiles`, binary or JSON, compressed or not, answered
//! in the request's encoding with the Collector's status codes and bodies.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http::{header, Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use tonic::Code;

use crate::receive::answer::{export_response, status_body};
use crate::receive::body::{decompress, BodyError};
use crate::receive::check::{BodyEncoding, Verdict};
use crate::receive::config::{Event, Transport, HTTP_PATH};
use crate::receive::handle::{Arrived, Shared};
use crate::rpc_status::http_status_of;

type Answer = Response<Full<Bytes>>;

/// Answers one HTTP request.
pub async fn serve(
    shared: Arc<Shared>,
    peer: SocketAddr,
    request: Request<Incoming>,
) -> Result<Answer, Infallible> {
    let outcome = match encoding_accepted(&request) {
        Err(failure) => Err(failure),
        Ok(encoding) => receive(&shared, peer, (request, encoding)).await,
    };
    Ok(match outcome {
        Ok(answer) => answer,
        Err(failure) => {
            shared.emit(Event::Refused {
                peer: Some(peer),
                transport: Transport::Http,
                status: failure.http.as_u16(),
                message: failure.message.clone(),
            });
            failure.into_answer()
        }
    })
}

/// A request refused: its status and why, answered as plain text (before
/// the body's encoding is known) or as a `google.rpc.Status`.
struct Failure {
    http: StatusCode,
    /// `None`: a plain-text answer.
    status: Option<(Code, BodyEncoding)>,
    message: String,
    retry_after: bool,
}

impl Failure {
    fn plain(http: StatusCode, message: &str) -> Failure {
        Failure {
            http,
            status: None,
            message: message.to_string(),
            retry_after: false,
        }
    }

    /// A `google.rpc.Status` answer, its HTTP status mapped from `code`.
    fn status(code: Code, message: &str, encoding: BodyEncoding) -> Failure {
        let http =
            StatusCode::from_u16(http_status_of(code)).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        Failure {
            http,
            status: Some((code, encoding)),
            message: message.to_string(),
            retry_after: false,
        }
    }

    fn into_answer(self) -> Answer {
        let mut answer = match self.status {
            None => respond(self.http, "text/plain", self.message.into()),
            Some((code, encoding)) => typed(
                self.http,
                status_body(code, &self.message, encoding),
                encoding,
            ),
        };
        if self.retry_after {
            let one = header::HeaderValue::from_static("1");
            answer.headers_mut().insert(header::RETRY_AFTER, one);
        }
        answer
    }
}

/// The body's encoding, or what the Collector answers before it reads the
/// body: a wrong path, method or media type.
fn encoding_accepted(request: &Request<Incoming>) -> Result<BodyEncoding, Failure> {
    if request.uri().path() != HTTP_PATH {
        return Err(Failure::plain(
            StatusCode::NOT_FOUND,
            "404 page not found\n",
        ));
    }
    if request.method() != Method::POST {
        let body = "405 method not allowed, supported: [POST]";
        return Err(Failure::plain(StatusCode::METHOD_NOT_ALLOWED, body));
    }
    encoding_of(request).ok_or_else(|| {
        let body =
            "415 unsupported media type, supported: [application/json, application/x-protobuf]";
        Failure::plain(StatusCode::UNSUPPORTED_MEDIA_TYPE, body)
    })
}

/// The body's encoding by its media type.
fn encoding_of<B>(request: &Request<B>) -> Option<BodyEncoding> {
    let value = request.headers().get(header::CONTENT_TYPE)?.to_str().ok()?;
    BodyEncoding::of_content_type(value)
}

async fn receive(
    shared: &Arc<Shared>,
    peer: SocketAddr,
    (request, encoding): (Request<Incoming>, BodyEncoding),
) -> Result<Answer, Failure> {
    let Some(_permit) = shared.permit().await else {
        let message = "too many requests at once; retry later";
        let mut failure = Failure::status(Code::Unavailable, message, encoding);
        failure.retry_after = true;
        return Err(failure);
    };
    let compression = request
        .headers()
        .get(header::CONTENT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let body = read_body(shared, request, encoding).await?;
    let limit = shared.config.limits.http_body_bytes;
    let invalid = |e: BodyError| Failure::status(Code::InvalidArgument, &e.to_string(), encoding);
    let body = decompress(body.into(), compression.as_deref(), limit).map_err(invalid)?;
    let arrived = Arrived {
        peer: Some(peer),
        transport: Transport::Http,
        encoding,
        compression,
        body,
    };
    match shared.handle(arrived).await {
        // Reported already, as a request.
        Verdict::Undecodable { message } => {
            Ok(Failure::status(Code::InvalidArgument, &message, encoding).into_answer())
        }
        Verdict::Unavailable { message } => {
            Ok(Failure::status(Code::Unavailable, &message, encoding).into_answer())
        }
        verdict => Ok(typed(
            StatusCode::OK,
            export_response(&verdict, encoding),
            encoding,
        )),
    }
}

/// The whole body, within the size limit and the read timeout.
async fn read_body(
    shared: &Shared,
    request: Request<Incoming>,
    encoding: BodyEncoding,
) -> Result<Bytes, Failure> {
    let limits = shared.config.limits;
    let limited = Limited::new(request.into_body(), limits.http_body_bytes);
    match tokio::time::timeout(limits.read_timeout, limited.collect()).await {
        Err(_) => {
            let message = "the request body took too long to arrive";
            let mut failure = Failure::status(Code::DeadlineExceeded, message, encoding);
            failure.http = StatusCode::REQUEST_TIMEOUT;
            Err(failure)
        }
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => {
            let message = BodyError::TooLarge.to_string();
            Err(Failure::status(Code::InvalidArgument, &message, encoding))
        }
        Ok(Err(e)) => Err(Failure::status(
            Code::InvalidArgument,
            &e.to_string(),
            encoding,
        )),
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
    }
}

fn typed(status: StatusCode, body: Vec<u8>, encoding: BodyEncoding) -> Answer {
    respond(status, encoding.content_type(), body.into())
}

fn respond(status: StatusCode, content_type: &'static str, body: Bytes) -> Answer {
    let mut answer = Response::new(Full::new(body));
    *answer.status_mut() = status;
    answer.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static(content_type),
    );
    answer
}
