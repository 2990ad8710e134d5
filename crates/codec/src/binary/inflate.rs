//! Gzip input inflated, within the size limits, before anything reads it
//! as protobuf: the first step of every binary reader, below detection.

use std::borrow::Cow;

use crate::binary::wire::read_tag;
use crate::error::{CodecError, WireProblem};
use crate::form::textual_start;
use crate::gzip;
use crate::limits::Limits;

/// [`inflate_input`] of input that may be owned: owned input that is not
/// gzip is passed on without a copy, and gzip input that is owned is freed
/// once inflated, so the compressed and the inflated bytes are not both
/// held while the input is read.
pub fn inflate_owned<'a>(
    input: Cow<'a, [u8]>,
    limits: &Limits,
) -> Result<(Cow<'a, [u8]>, bool), CodecError> {
    let vec = match input {
        Cow::Borrowed(slice) => return inflate_input(slice, limits),
        Cow::Owned(vec) => vec,
    };
    let (inflated, gzipped) = inflate_input(&vec, limits)?;
    if !gzipped {
        drop(inflated);
        return Ok((Cow::Owned(vec), false));
    }
    Ok((Cow::Owned(inflated.into_owned()), true))
}

/// The input's bytes, inflated when gzip, after the size checks. Inflation
/// stops early when the first bytes can start neither a message nor text.
pub fn inflate_input<'a>(
    input: &'a [u8],
    limits: &Limits,
) -> Result<(Cow<'a, [u8]>, bool), CodecError> {
    if input.len() as u64 > limits.max_input_bytes {
        return Err(CodecError::InputTooLarge {
            size: input.len() as u64,
            limit: limits.max_input_bytes,
        });
    }
    if !gzip::is_gzip(input) {
        return Ok((Cow::Borrowed(input), false));
    }
    let check_start = |start: &[u8]| {
        let mut pos = 0;
        match read_tag(start, &mut pos, start.len()) {
            Err(problem)
                if problem != WireProblem::TruncatedVarint && textual_start(start).is_none() =>
            {
                Err(CodecError::Wire {
                    offset: 0,
                    path: "(inflated gzip data)".into(),
                    problem,
                })
            }
            _ => Ok(()),
        }
    };
    Ok((
        Cow::Owned(gzip::inflate(
            input,
            limits.max_inflated_bytes,
            &check_start,
        )?),
        true,
    ))
}
