//! gRPC framing of the generated rust-protobuf messages: a tonic [`Codec`]
//! so the relay speaks with the project's own models, not a second set of
//! prost types.

use std::marker::PhantomData;

use bytes::{Buf, BufMut, Bytes};
use protobuf::MessageFull;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::Status;

/// A message as received: the decoded model and the bytes it came from
/// (kept for captures, which must hold what was on the wire).
#[derive(Debug, Clone)]
pub struct Received<M> {
    /// The decoded message.
    pub message: M,
    /// The message's bytes, exactly as framed on the wire.
    pub bytes: Bytes,
}

/// What a decoder can produce from one gRPC message's bytes.
pub trait FromWire: Sized + Send + 'static {
    /// Decodes one message; the error names the message type.
    fn from_wire(bytes: Bytes) -> Result<Self, Status>;
}

fn parse<M: MessageFull>(bytes: &[u8]) -> Result<M, Status> {
    M::parse_from_bytes(bytes).map_err(|e| {
        Status::invalid_argument(format!("not a valid {}: {e}", M::descriptor().full_name()))
    })
}

impl<M: MessageFull> FromWire for M {
    fn from_wire(bytes: Bytes) -> Result<Self, Status> {
        parse(&bytes)
    }
}

impl<M: MessageFull> FromWire for Received<M> {
    fn from_wire(bytes: Bytes) -> Result<Self, Status> {
        Ok(Received {
            message: parse(&bytes)?,
            bytes,
        })
    }
}

/// Encodes `E` and decodes `D` (a message, or a [`Received`] message).
pub struct ProtoCodec<E, D>(PhantomData<fn(E) -> D>);

impl<E, D> Default for ProtoCodec<E, D> {
    fn default() -> Self {
        ProtoCodec(PhantomData)
    }
}

/// The encoding half of [`ProtoCodec`].
pub struct ProtoEncoder<E>(PhantomData<fn(E)>);

/// The decoding half of [`ProtoCodec`].
pub struct ProtoDecoder<D>(PhantomData<fn() -> D>);

impl<E: MessageFull, D: FromWire> Codec for ProtoCodec<E, D> {
    type Encode = E;
    type Decode = D;
    type Encoder = ProtoEncoder<E>;
    type Decoder = ProtoDecoder<D>;

    fn encoder(&mut self) -> Self::Encoder {
        ProtoEncoder(PhantomData)
    }

    fn decoder(&mut self) -> Self::Decoder {
        ProtoDecoder(PhantomData)
    }
}

impl<E: MessageFull> Encoder for ProtoEncoder<E> {
    type Item = E;
    type Error = Status;

    fn encode(&mut self, item: E, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        let bytes = item.write_to_bytes().map_err(|e| {
            Status::internal(format!("encoding {}: {e}", E::descriptor().full_name()))
        })?;
        dst.put_slice(&bytes);
        Ok(())
    }
}

impl<D: FromWire> Decoder for ProtoDecoder<D> {
    type Item = D;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<D>, Status> {
        let bytes = src.copy_to_bytes(src.remaining());
        D::from_wire(bytes).map(Some)
    }
}
