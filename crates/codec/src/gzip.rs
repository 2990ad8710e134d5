//! gzip, pprof's on-disk form: bounded inflation of every member, precise
//! errors for truncation, checksums and trailing data.

use std::io::{Read, Write};

use flate2::bufread::GzDecoder;

use crate::error::CodecError;

/// gzip's magic number.
pub const MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Whether `bytes` start like gzip.
pub fn is_gzip(bytes: &[u8]) -> bool {
    bytes.starts_with(&MAGIC)
}

/// A zlib (RFC 1950) header: deflate method, and a check value that makes
/// the first two bytes a multiple of 31.
pub fn looks_like_zlib(bytes: &[u8]) -> bool {
    bytes.len() >= 2
        && bytes[0] & 0x0f == 8
        && (u16::from(bytes[0]) << 8 | u16::from(bytes[1])) % 31 == 0
}

const CHUNK: usize = 256 << 10;

/// Inflates every gzip member of `input`, stopping as soon as the output
/// would pass `max_inflated`. `check_start` sees the first inflated bytes
/// (up to 256 KiB) before more is inflated, so hopeless input (a bomb of
/// zeros is not protobuf) fails early.
pub fn inflate(
    input: &[u8],
    max_inflated: u64,
    check_start: &dyn Fn(&[u8]) -> Result<(), CodecError>,
) -> Result<Vec<u8>, CodecError> {
    let mut out: Vec<u8> = Vec::new();
    let mut rest = input;
    let mut member = 0usize;
    let mut checked = false;
    let mut chunk = vec![0u8; CHUNK];
    while !rest.is_empty() {
        let offset = (input.len() - rest.len()) as u64;
        if member > 0 && !is_gzip(rest) {
            return Err(CodecError::GzipTrailingData {
                offset,
                len: rest.len() as u64,
            });
        }
        let mut decoder = GzDecoder::new(rest);
        loop {
            let n = match decoder.read(&mut chunk) {
                Ok(n) => n,
                Err(err) => {
                    return Err(gzip_error(err, input, &decoder, offset, member, out.len()))
                }
            };
            if n == 0 {
                break;
            }
            if out.len() as u64 + n as u64 > max_inflated {
                let compressed_read = input.len() as u64 - decoder.get_ref().len() as u64;
                return Err(CodecError::InflatedTooLarge {
                    limit: max_inflated,
                    compressed_read,
                });
            }
            grow_within(&mut out, n, max_inflated);
            out.extend_from_slice(&chunk[..n]);
            if !checked {
                checked = true;
                check_start(&out)?;
            }
        }
        rest = decoder.into_inner();
        member += 1;
    }
    Ok(out)
}

/// Reserves room for `more` bytes, doubling but never past `limit`.
fn grow_within(out: &mut Vec<u8>, more: usize, limit: u64) {
    let needed = out.len() + more;
    if needed > out.capacity() {
        let doubled = (out.capacity() * 2).max(needed).max(CHUNK);
        let target = (doubled as u64).min(limit) as usize;
        out.reserve_exact(target.max(needed) - out.len());
    }
}

fn gzip_error(
    err: std::io::Error,
    input: &[u8],
    decoder: &GzDecoder<&[u8]>,
    offset: u64,
    member: usize,
    inflated: usize,
) -> CodecError {
    let detail = err.to_string();
    let at_end = decoder.get_ref().is_empty();
    if detail.contains("checksum") {
        CodecError::GzipChecksum {
            offset,
            member,
            detail,
        }
    } else if err.kind() == std::io::ErrorKind::UnexpectedEof
        || detail.contains("incomplete")
        || at_end
    {
        CodecError::GzipTruncated {
            offset: input.len() as u64,
            inflated: inflated as u64,
        }
    } else {
        CodecError::GzipCorrupt {
            offset,
            member,
            detail,
        }
    }
}

/// gzip-compresses `bytes` at `level` (0-9).
pub fn compress(bytes: &[u8], level: u32) -> Result<Vec<u8>, CodecError> {
    let mut encoder =
        flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(level.min(9)));
    encoder.write_all(bytes)?;
    Ok(encoder.finish()?)
}

/// Writes gzip to `out`: what `write` writes, compressed at `level` (0-9)
/// as it is written, so the uncompressed bytes are never held whole.
pub fn compress_into(
    out: &mut dyn Write,
    level: u32,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let encoder = flate2::write::GzEncoder::new(out, flate2::Compression::new(level.min(9)));
    // Whole blocks to the compressor: fed a few bytes at a time (a field
    // prefix, then a sample), it compresses worse.
    let mut buffered = std::io::BufWriter::with_capacity(1 << 18, encoder);
    write(&mut buffered)?;
    let encoder = buffered.into_inner().map_err(|e| e.into_error())?;
    encoder.finish()?;
    Ok(())
}
