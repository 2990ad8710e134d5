//! A request body read whole, within the size limit, and decompressed
//! (gzip, zlib/deflate, zstd, snappy block or framed, LZ4 frames: the
//! Collector's encodings) within it too (as the Collector bounds both by its body limit: a
//! 30 MB gzip bomb of 29 kB is "request body too large").

use std::io::Read;

/// What can refuse a body, as the Collector says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BodyError {
    /// Bigger than the limit, before or after decompression.
    TooLarge,
    /// A `Content-Encoding` the receiver does not read.
    UnsupportedEncoding(String),
    /// The compressed stream is damaged.
    Corrupt(String),
}

impl std::fmt::Display for BodyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BodyError::TooLarge => f.write_str("http: request body too large"),
            BodyError::UnsupportedEncoding(name) => {
                write!(f, "unsupported Content-Encoding: {name}")
            }
            BodyError::Corrupt(message) => f.write_str(message),
        }
    }
}

/// Decompresses `body` as `encoding` says (`None`, `identity`: as it is),
/// into at most `limit` bytes.
pub fn decompress(
    body: Vec<u8>,
    encoding: Option<&str>,
    limit: usize,
) -> Result<Vec<u8>, BodyError> {
    let encoding = encoding.map(str::trim).unwrap_or("");
    let reader: Box<dyn Read + '_> = match encoding {
        "" | "identity" => return Ok(body),
        "gzip" | "x-gzip" => Box::new(flate2::read::GzDecoder::new(&body[..])),
        // Go's zlib reader serves both names in the Collector.
        "deflate" | "zlib" => Box::new(flate2::read::ZlibDecoder::new(&body[..])),
        "zstd" => Box::new(
            ruzstd::decoding::StreamingDecoder::new(&body[..])
                .map_err(|e| BodyError::Corrupt(e.to_string()))?,
        ),
        // The Collector reads `snappy` framed when the stream starts with
        // the framing header (what it once sent), else as a block.
        "snappy" if !body.starts_with(SNAPPY_FRAMING_HEADER) => return snappy_block(&body, limit),
        "snappy" | "x-snappy-framed" => Box::new(snap::read::FrameDecoder::new(&body[..])),
        "lz4" => Box::new(lz4_flex::frame::FrameDecoder::new(&body[..])),
        other => return Err(BodyError::UnsupportedEncoding(other.to_string())),
    };
    let mut out = Vec::new();
    let read = reader
        .take(limit as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|e| BodyError::Corrupt(corrupt_message(&e)))?;
    if read > limit {
        return Err(BodyError::TooLarge);
    }
    Ok(out)
}

/// The first bytes of every snappy framed stream.
const SNAPPY_FRAMING_HEADER: &[u8] = b"\xff\x06\x00\x00sNaPpY";

/// A snappy block, its stated length checked against the limit before
/// anything is allocated.
fn snappy_block(body: &[u8], limit: usize) -> Result<Vec<u8>, BodyError> {
    let corrupt = |e: snap::Error| BodyError::Corrupt(format!("snappy: {e}"));
    if snap::raw::decompress_len(body).map_err(corrupt)? > limit {
        return Err(BodyError::TooLarge);
    }
    snap::raw::Decoder::new()
        .decompress_vec(body)
        .map_err(corrupt)
}

/// Go's words for a stream that ends early, which senders' logs show.
fn corrupt_message(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::UnexpectedEof => "unexpected EOF".to_string(),
        _ => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        protoprof_codec::gzip::compress(bytes, 6).unwrap()
    }

    #[test]
    fn a_bomb_is_too_large() {
        let bomb = gzip(&vec![0; 1 << 20]);
        assert_eq!(
            decompress(bomb.clone(), Some("gzip"), 1000),
            Err(BodyError::TooLarge)
        );
        assert_eq!(
            decompress(bomb, Some("gzip"), 1 << 20).unwrap().len(),
            1 << 20
        );
    }

    #[test]
    fn snappy_and_lz4_read_as_the_collector_reads_them() {
        let text = b"profiles ".repeat(1000);
        let block = snap::raw::Encoder::new().compress_vec(&text).unwrap();
        assert_eq!(
            decompress(block.clone(), Some("snappy"), 1 << 20).unwrap(),
            text
        );
        assert_eq!(
            decompress(block, Some("snappy"), 100),
            Err(BodyError::TooLarge)
        );
        let mut framed = snap::write::FrameEncoder::new(Vec::new());
        std::io::Write::write_all(&mut framed, &text).unwrap();
        let framed = framed.into_inner().unwrap();
        assert_eq!(
            decompress(framed.clone(), Some("snappy"), 1 << 20).unwrap(),
            text
        );
        assert_eq!(
            decompress(framed, Some("x-snappy-framed"), 1 << 20).unwrap(),
            text
        );
        let mut lz4 = lz4_flex::frame::FrameEncoder::new(Vec::new());
        std::io::Write::write_all(&mut lz4, &text).unwrap();
        let lz4 = lz4.finish().unwrap();
        assert_eq!(decompress(lz4.clone(), Some("lz4"), 1 << 20).unwrap(), text);
        assert_eq!(decompress(lz4, Some("lz4"), 100), Err(BodyError::TooLarge));
    }

    #[test]
    fn damaged_and_unknown_streams_are_named() {
        assert_eq!(
            decompress(b"x".to_vec(), Some("gzip"), 100),
            Err(BodyError::Corrupt("unexpected EOF".into()))
        );
        assert_eq!(
            decompress(b"x".to_vec(), Some("br"), 100)
                .unwrap_err()
                .to_string(),
            "unsupported Content-Encoding: br"
        );
    }
}
