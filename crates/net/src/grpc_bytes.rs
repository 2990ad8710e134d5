//! A tonic codec whose messages are their encoded bytes: the receiver
//! decodes and validates a request with protoprof's own codec (and keeps it
//! as it came), and the sender writes bytes the bridge already encoded.

use bytes::{Buf, BufMut, Bytes};
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::Status;

/// One gRPC message, as bytes, both ways.
#[derive(Debug, Clone, Copy, Default)]
pub struct BytesCodec;

/// The encoding half of [`BytesCodec`].
#[derive(Debug, Clone, Copy, Default)]
pub struct BytesEncoder;

/// The decoding half of [`BytesCodec`].
#[derive(Debug, Clone, Copy, Default)]
pub struct BytesDecoder;

impl Codec for BytesCodec {
    type Encode = Bytes;
    type Decode = Bytes;
    type Encoder = BytesEncoder;
    type Decoder = BytesDecoder;

    fn encoder(&mut self) -> Self::Encoder {
        BytesEncoder
    }

    fn decoder(&mut self) -> Self::Decoder {
        BytesDecoder
    }
}

impl Encoder for BytesEncoder {
    type Item = Bytes;
    type Error = Status;

    fn encode(&mut self, item: Bytes, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        dst.put(item);
        Ok(())
    }
}

impl Decoder for BytesDecoder {
    type Item = Bytes;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Bytes>, Status> {
        let length = src.remaining();
        Ok(Some(src.copy_to_bytes(length)))
    }
}
