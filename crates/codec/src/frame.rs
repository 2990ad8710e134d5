//! Framed streams: gRPC's length-prefixed messages and varint-delimited
//! sequences, as found in captures of relay streams and OTLP exports.

use std::borrow::Cow;

use crate::binary::wire::{read_varint, write_varint};
use crate::error::CodecError;

/// How messages are framed in a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// gRPC: 1-byte compressed flag, 4-byte big-endian length, payload.
    Grpc,
    /// A varint length before each message (`writeDelimitedTo`).
    VarintDelimited,
    /// A 4-byte big-endian length before each message: the OpenTelemetry
    /// Collector file exporter's protobuf form, in which the profiling SIG
    /// publishes benchmark data.
    FileExporter,
}

/// One frame of a stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame<'a> {
    /// The frame's position in the stream (0 for the first).
    pub index: usize,
    /// Byte offset of the frame's header in the stream.
    pub offset: u64,
    /// The payload was gzip-compressed on the wire (gRPC flag 1); `payload`
    /// is already inflated.
    pub compressed: bool,
    /// The message bytes.
    pub payload: Cow<'a, [u8]>,
}

/// Reads frames one by one; stops at the first broken frame with an error.
pub struct FrameReader<'a> {
    bytes: &'a [u8],
    pos: usize,
    index: usize,
    framing: Framing,
    max_frame: u64,
    failed: bool,
}

impl<'a> FrameReader<'a> {
    /// Frames of `bytes` in `framing`; a frame over `max_frame` bytes is an error.
    pub fn new(bytes: &'a [u8], framing: Framing, max_frame: u64) -> Self {
        FrameReader {
            bytes,
            pos: 0,
            index: 0,
            framing,
            max_frame,
            failed: false,
        }
    }

    fn error(&mut self, offset: usize, detail: String) -> Option<Result<Frame<'a>, CodecError>> {
        self.failed = true;
        Some(Err(CodecError::Frame {
            index: self.index,
            offset: offset as u64,
            detail,
        }))
    }
}

impl<'a> Iterator for FrameReader<'a> {
    type Item = Result<Frame<'a>, CodecError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.pos >= self.bytes.len() {
            return None;
        }
        let start = self.pos;
        let rest = &self.bytes[start..];
        let (header, length, compressed) = match self.framing {
            Framing::Grpc => {
                if rest.len() < 5 {
                    return self.error(
                        start,
                        format!("gRPC frame header needs 5 bytes, {} left", rest.len()),
                    );
                }
                let compressed = match rest[0] {
                    0 => false,
                    1 => true,
                    flag => {
                        return self
                            .error(start, format!("gRPC compressed flag is {flag}, not 0 or 1"))
                    }
                };
                (
                    5,
                    u64::from(u32::from_be_bytes(rest[1..5].try_into().unwrap())),
                    compressed,
                )
            }
            Framing::VarintDelimited => {
                let mut pos = 0;
                match read_varint(rest, &mut pos, rest.len()) {
                    Ok(length) => (pos, length, false),
                    Err(problem) => return self.error(start, format!("length prefix: {problem}")),
                }
            }
            Framing::FileExporter => {
                let Some(prefix) = rest.get(..4) else {
                    return self.error(
                        start,
                        format!("length prefix needs 4 bytes, {} left", rest.len()),
                    );
                };
                let length = u32::from_be_bytes(prefix.try_into().expect("4 bytes"));
                (4, u64::from(length), false)
            }
        };
        if length > self.max_frame {
            self.failed = true;
            return Some(Err(CodecError::FrameTooLarge {
                index: self.index,
                offset: start as u64,
                length,
                limit: self.max_frame,
            }));
        }
        let available = (rest.len() - header) as u64;
        if length > available {
            return self.error(
                start,
                format!("frame claims {length} bytes but only {available} are left"),
            );
        }
        let payload = &rest[header..header + length as usize];
        let payload = if compressed {
            let no_check = |_: &[u8]| Ok(());
            match crate::gzip::inflate(payload, self.max_frame, &no_check) {
                Ok(inflated) => Cow::Owned(inflated),
                Err(e) => return self.error(start, format!("compressed payload: {e}")),
            }
        } else {
            Cow::Borrowed(payload)
        };
        self.pos = start + header + length as usize;
        let frame = Frame {
            index: self.index,
            offset: start as u64,
            compressed,
            payload,
        };
        self.index += 1;
        Some(Ok(frame))
    }
}

/// Appends one framed message. gRPC frames are gzip-compressed (flag 1) when
/// `gzip_level` is given.
pub fn write_frame(
    out: &mut Vec<u8>,
    framing: Framing,
    payload: &[u8],
    gzip_level: Option<u32>,
) -> Result<(), CodecError> {
    match framing {
        Framing::Grpc => {
            let (flag, body) = match gzip_level {
                Some(level) => (1u8, Cow::Owned(crate::gzip::compress(payload, level)?)),
                None => (0u8, Cow::Borrowed(payload)),
            };
            let length = u32::try_from(body.len()).map_err(|_| CodecError::Encode {
                message: "gRPC frame".into(),
                detail: format!("{} bytes do not fit a 4-byte length", body.len()),
            })?;
            out.push(flag);
            out.extend_from_slice(&length.to_be_bytes());
            out.extend_from_slice(&body);
        }
        Framing::VarintDelimited => {
            write_varint(out, payload.len() as u64);
            out.extend_from_slice(payload);
        }
        Framing::FileExporter => {
            let length = u32::try_from(payload.len()).map_err(|_| CodecError::Encode {
                message: "file-exporter frame".into(),
                detail: format!("{} bytes do not fit a 4-byte length", payload.len()),
            })?;
            out.extend_from_slice(&length.to_be_bytes());
            out.extend_from_slice(payload);
        }
    }
    Ok(())
}

/// Whether all of `bytes` splits cleanly into at least one frame.
pub fn is_framed(bytes: &[u8], framing: Framing, max_frame: u64) -> bool {
    let mut frames = 0;
    for frame in FrameReader::new(bytes, framing, max_frame) {
        if frame.is_err() {
            return false;
        }
        frames += 1;
    }
    frames > 0
}
