//! Connecting to a relay and opening a bidirectional stream on it.

use http::uri::PathAndQuery;
use protobuf::MessageFull;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::client::Grpc;
use tonic::transport::{Channel, Endpoint};
use tonic::{Request, Streaming};

use crate::codec::{FromWire, ProtoCodec};
use crate::RelayError;

/// Largest message a client accepts, as the relay's default limit.
const MAX_MESSAGE_BYTES: usize = 16 << 20;

/// A connection to `address` (`127.0.0.1:PORT`, or a `http://` URI).
pub(crate) async fn connect(address: &str) -> Result<Grpc<Channel>, RelayError> {
    let uri = if address.contains("://") {
        address.to_string()
    } else {
        format!("http://{address}")
    };
    let bad = |reason: String| RelayError::Address {
        address: address.to_string(),
        reason,
    };
    let endpoint = Endpoint::from_shared(uri).map_err(|e| bad(e.to_string()))?;
    let channel = endpoint
        .connect()
        .await
        .map_err(|e| bad(format!("cannot connect: {}", source_chain(&e))))?;
    Ok(Grpc::new(channel)
        .max_decoding_message_size(MAX_MESSAGE_BYTES)
        .max_encoding_message_size(MAX_MESSAGE_BYTES))
}

fn source_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(inner) = source {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        source = inner.source();
    }
    text
}

/// A stream on `path`: what is sent on the returned sender goes to the
/// relay; the relay's messages arrive on the returned stream.
pub(crate) async fn open<Out, In>(
    grpc: &mut Grpc<Channel>,
    path: &str,
) -> Result<(mpsc::Sender<Out>, Streaming<In>), RelayError>
where
    Out: MessageFull,
    In: FromWire + Sync,
{
    let path = PathAndQuery::try_from(path).map_err(|e| RelayError::Transport(e.to_string()))?;
    grpc.ready()
        .await
        .map_err(|e| RelayError::Transport(source_chain(&e)))?;
    let (sender, outgoing) = mpsc::channel(16);
    let response = grpc
        .streaming(
            Request::new(ReceiverStream::new(outgoing)),
            path,
            ProtoCodec::<Out, In>::default(),
        )
        .await?;
    Ok((sender, response.into_inner()))
}

/// Sends on a client stream; the relay having gone is an error.
pub(crate) async fn send<M>(sender: &mpsc::Sender<M>, message: M) -> Result<(), RelayError> {
    sender
        .send(message)
        .await
        .map_err(|_| RelayError::Closed("the relay closed the stream".into()))
}

/// Ends a stream cleanly: our side is closed, and the relay's end is awaited
/// for a moment, so the relay sees a stream that ended rather than a
/// connection that was lost.
pub(crate) async fn finish<Out, In>(sender: mpsc::Sender<Out>, mut incoming: Streaming<In>) {
    drop(sender);
    let drain = async { while let Ok(Some(_)) = incoming.message().await {} };
    let _ = tokio::time::timeout(std::time::Duration::from_secs(2), drain).await;
}
