//! Whole messages from binary protobuf, raw or gzip-compressed: `binary`'s
//! decoding, with a pprof `Profile` read through `pprof::samples`'s fast
//! path (which falls back to rust-protobuf's parse whenever it does not
//! apply). The fast path is chosen here, above both, so that `binary`
//! knows nothing of pprof.

use std::io::Read;

use protobuf::reflect::MessageDescriptor;
use protobuf::{MessageDyn, MessageFull};

use crate::binary::message::{decode_with, parse_into, read_bounded, DecodeOptions, Decoded};
use crate::error::CodecError;
use crate::limits::Limits;
use crate::pprof::samples as pprof_samples;
use crate::PprofProfile;

/// Decodes a message of type `M` from raw or gzip-compressed protobuf.
pub fn decode<M: MessageFull>(
    input: &[u8],
    options: &DecodeOptions,
) -> Result<Decoded<M>, CodecError> {
    decode_with(input, &M::descriptor(), options, |bytes, limits| {
        let mut message = M::new();
        parse_fast(&mut message, bytes, limits)?;
        Ok(message)
    })
}

/// Decodes a message whose type is known only at run time.
pub fn decode_dynamic(
    input: &[u8],
    descriptor: &MessageDescriptor,
    options: &DecodeOptions,
) -> Result<Decoded<Box<dyn MessageDyn>>, CodecError> {
    decode_with(input, descriptor, options, |bytes, limits| {
        let mut message = descriptor.new_instance();
        parse_fast(&mut *message, bytes, limits)?;
        Ok(message)
    })
}

/// Reads all of `reader` (at most `max_input_bytes`) and decodes it.
pub fn decode_reader<M: MessageFull>(
    reader: impl Read,
    options: &DecodeOptions,
) -> Result<Decoded<M>, CodecError> {
    let bytes = read_bounded(reader, options.limits.max_input_bytes)?;
    decode(&bytes, options)
}

/// Parses into a new `message`: a pprof `Profile` by the samples' fast
/// path where it applies, anything else by rust-protobuf.
fn parse_fast(message: &mut dyn MessageDyn, bytes: &[u8], limits: &Limits) -> protobuf::Result<()> {
    if let Some(profile) = message.downcast_mut::<PprofProfile>() {
        if let Some(fast) = pprof_samples::decode(bytes, limits) {
            *profile = fast;
            return Ok(());
        }
    }
    parse_into(message, bytes, limits)
}
