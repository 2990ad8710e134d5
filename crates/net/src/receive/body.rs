//! A request body read whole, within the size limit, and decompressed
//! within it too (as the Collector bounds both by its body limit: a
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
