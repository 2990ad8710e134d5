//! One export attempt over OTLP/gRPC: the profiles `Export` method with
//! the request's bytes, gzip when asked, headers as metadata, and the
//! status's `RetryInfo` read for the wait before a retry.

use std::str::FromStr;

use bytes::Bytes;
use http::uri::PathAndQuery;
use tonic::codec::CompressionEncoding;
use tonic::metadata::{MetadataKey, MetadataValue};
use tonic::transport::{Channel, Endpoint};

use crate::grpc_bytes::BytesCodec;
use crate::receive::config::GRPC_PATH;
use crate::rpc_status::{grpc_retryable, retry_delay};
use crate::send::attempt::{partial_of_proto, Attempt};
use crate::send::config::SendConfig;
use crate::NetError;

/// A gRPC exporter's client: a runtime and a lazily connected channel.
pub struct GrpcSender {
    runtime: tokio::runtime::Runtime,
    channel: Channel,
}

impl GrpcSender {
    /// The client for `config` (plain `http://` endpoints only).
    pub fn new(config: &SendConfig) -> Result<GrpcSender, NetError> {
        let config_error = |message: String| NetError::Config {
            variable: "endpoint".into(),
            message,
        };
        if config.endpoint.starts_with("https://") {
            return Err(config_error(format!(
                "{}: this build sends gRPC over plain HTTP/2 only; use http/protobuf for TLS",
                config.endpoint
            )));
        }
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| config_error(e.to_string()))?;
        let endpoint = Endpoint::from_shared(config.endpoint.clone())
            .map_err(|e| config_error(format!("{}: {e}", config.endpoint)))?
            .timeout(config.timeout)
            .connect_timeout(config.timeout)
            .user_agent(concat!("protoprof/", env!("CARGO_PKG_VERSION")))
            .map_err(|e| config_error(e.to_string()))?;
        let channel = {
            let _entered = runtime.enter();
            endpoint.connect_lazy()
        };
        Ok(GrpcSender { runtime, channel })
    }

    /// Sends `body` (an encoded request, not compressed: gRPC compresses
    /// the message itself).
    pub fn attempt(&self, config: &SendConfig, body: &[u8]) -> Attempt {
        let mut request = tonic::Request::new(Bytes::copy_from_slice(body));
        for (key, value) in &config.headers {
            let key = MetadataKey::from_str(&key.to_ascii_lowercase());
            if let (Ok(key), Ok(value)) = (key, MetadataValue::try_from(value.as_str())) {
                request.metadata_mut().insert(key, value);
            }
        }
        let mut client = tonic::client::Grpc::new(self.channel.clone());
        if config.gzip {
            client = client.send_compressed(CompressionEncoding::Gzip);
        }
        client = client.accept_compressed(CompressionEncoding::Gzip);
        let path = PathAndQuery::from_static(GRPC_PATH);
        let answer = self.runtime.block_on(async move {
            client
                .ready()
                .await
                .map_err(|e| tonic::Status::unavailable(format!("could not connect: {e}")))?;
            client.unary(request, path, BytesCodec).await
        });
        match answer {
            Ok(response) => match partial_of_proto(response.get_ref()) {
                Ok(partial) => Attempt::Answered(partial),
                Err(e) => Attempt::Failed {
                    status: "OK".into(),
                    message: format!("the answer is not an ExportProfilesServiceResponse: {e}"),
                    retry: None,
                },
            },
            Err(status) if !answered_as_grpc(&status) => Attempt::Failed {
                status: format!("{:?}", status.code()),
                message: format!(
                    "{} answered as a plain HTTP server, not gRPC (is it an OTLP/HTTP port? \
                     --protocol http/protobuf sends to those): {}",
                    config.endpoint,
                    status.message()
                ),
                retry: None,
            },
            Err(status) => {
                let delay = retry_delay(status.details());
                Attempt::Failed {
                    status: format!("{:?}", status.code()),
                    message: status.message().to_string(),
                    retry: grpc_retryable(status.code(), delay.is_some()).then_some(delay),
                }
            }
        }
    }
}

/// Whether a failed call's answer came from a gRPC server: one that is
/// not (an OTLP/HTTP port, any web server) answers with its own content
/// type, or with a body tonic cannot read as gRPC frames, which tonic
/// reports with the HTTP status it got.
fn answered_as_grpc(status: &tonic::Status) -> bool {
    let content_type = status.metadata().get("content-type");
    let other_type = content_type
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| !t.starts_with("application/grpc"));
    let http_status = status
        .message()
        .contains("while receiving response with status");
    !(other_type || http_status)
}
