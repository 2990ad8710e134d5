//! What can go wrong, with where it went wrong.

use std::fmt;

/// A problem found at one place of the protobuf wire format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WireProblem {
    /// The input ends inside a varint.
    TruncatedVarint,
    /// A varint runs past the 10 bytes a 64-bit value needs.
    VarintTooLong,
    /// A 10-byte varint whose value does not fit in 64 bits.
    VarintOverflow,
    /// Field number 0 is reserved.
    FieldNumberZero,
    /// Field numbers stop at 2^29 - 1.
    FieldNumberTooLarge(u64),
    /// Wire types 6 and 7 do not exist.
    InvalidWireType(u8),
    /// An end-group tag with no group open (or for another field).
    UnexpectedEndGroup(u32),
    /// A group that is never closed.
    UnterminatedGroup(u32),
    /// A length prefix claims more bytes than its enclosing message has left.
    LengthExceedsInput {
        /// Bytes the prefix claims.
        claimed: u64,
        /// Bytes left in the enclosing message.
        available: u64,
    },
    /// A fixed-width value cut short.
    TruncatedFixed {
        /// The value's width (4 or 8).
        needed: u8,
        /// Bytes left.
        available: u64,
    },
    /// A packed field whose payload ends inside a value.
    TruncatedPacked,
    /// Messages (or groups) nest deeper than the limit.
    DepthExceeded {
        /// The nesting limit in force.
        limit: u32,
    },
}

impl fmt::Display for WireProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WireProblem::TruncatedVarint => write!(f, "input ends inside a varint"),
            WireProblem::VarintTooLong => write!(f, "varint longer than 10 bytes"),
            WireProblem::VarintOverflow => write!(f, "10-byte varint overflows 64 bits"),
            WireProblem::FieldNumberZero => write!(f, "field number 0 (reserved, never valid)"),
            WireProblem::FieldNumberTooLarge(n) => write!(f, "field number {n} is above the maximum 536870911"),
            WireProblem::InvalidWireType(t) => write!(f, "wire type {t} does not exist"),
            WireProblem::UnexpectedEndGroup(n) => write!(f, "end-group tag for field {n} with no matching start"),
            WireProblem::UnterminatedGroup(n) => write!(f, "group of field {n} is never closed"),
            WireProblem::LengthExceedsInput { claimed, available } => write!(
                f,
                "length prefix claims {claimed} bytes but only {available} are left in the enclosing message"
            ),
            WireProblem::TruncatedFixed { needed, available } => {
                write!(f, "a {needed}-byte fixed value with only {available} bytes left")
            }
            WireProblem::TruncatedPacked => write!(f, "packed field ends inside a value"),
            WireProblem::DepthExceeded { limit } => write!(f, "nesting deeper than the limit of {limit}"),
        }
    }
}

/// Errors of every reader and writer of this crate.
#[derive(Debug, thiserror::Error)]
pub enum CodecError {
    /// The input has no bytes (and the reader does not allow that).
    #[error("empty input (0 bytes)")]
    Empty,
    /// The input is larger than the size limit.
    #[error("input is {size} bytes, over the limit of {limit}")]
    InputTooLarge {
        /// The input's size.
        size: u64,
        /// The limit in force.
        limit: u64,
    },
    /// gzip data inflates past the limit.
    #[error("gzip data inflates past the limit of {limit} bytes (stopped after {compressed_read} compressed bytes)")]
    InflatedTooLarge {
        /// The limit in force.
        limit: u64,
        /// Compressed bytes read when inflating stopped.
        compressed_read: u64,
    },
    /// gzip data ends before its stream does.
    #[error("gzip data is truncated: it ends at compressed byte {offset} after {inflated} inflated bytes, before the end of the stream")]
    GzipTruncated {
        /// Where the compressed data ends.
        offset: u64,
        /// Bytes inflated until then.
        inflated: u64,
    },
    /// A gzip member whose CRC or size does not match its data.
    #[error(
        "gzip member {member} (starting at byte {offset}) fails its integrity check: {detail}"
    )]
    GzipChecksum {
        /// Where the member starts in the compressed input.
        offset: u64,
        /// The member's position (0 for the first).
        member: usize,
        /// What the check found.
        detail: String,
    },
    /// gzip data that does not inflate.
    #[error("corrupt gzip data in member {member} (starting at byte {offset}): {detail}")]
    GzipCorrupt {
        /// Where the member starts in the compressed input.
        offset: u64,
        /// The member's position (0 for the first).
        member: usize,
        /// What the inflater said.
        detail: String,
    },
    /// Bytes after the last gzip member that are not another member.
    #[error(
        "{len} bytes of trailing data after the gzip stream, at byte {offset} (not a gzip member)"
    )]
    GzipTrailingData {
        /// Where they start.
        offset: u64,
        /// How many there are.
        len: u64,
    },
    /// A zlib stream where gzip was expected.
    #[error("this is a zlib stream, not gzip; gzip starts with 1f 8b")]
    Zlib,
    /// The protobuf wire format is broken.
    #[error("malformed protobuf at byte {offset}{}: {problem}", in_path(.path))]
    Wire {
        /// Byte offset in the (inflated) input.
        offset: u64,
        /// Field path, e.g. `sample[3].location_id`.
        path: String,
        /// What is wrong.
        problem: WireProblem,
    },
    /// A string field that is not UTF-8, in strict mode.
    #[error("invalid UTF-8 in string field {path} at byte {offset} (strict mode; the default repairs it)")]
    InvalidUtf8 {
        /// Byte offset in the (inflated) input.
        offset: u64,
        /// Field path of the string.
        path: String,
    },
    /// rust-protobuf's decoder refused the message.
    #[error("decoding {message}: {detail}")]
    Decode {
        /// Full name of the message type.
        message: String,
        /// What the decoder said.
        detail: String,
    },
    /// rust-protobuf's encoder refused the message.
    #[error("encoding {message}: {detail}")]
    Encode {
        /// Full name of the message type.
        message: String,
        /// What the encoder said.
        detail: String,
    },
    /// A problem with the user's schemas (a type they do not declare).
    #[error("{0}")]
    Schema(String),
    /// A message type that is not in protoprof's schemas.
    #[error("unknown message type `{0}` (not in protoprof's schemas)")]
    UnknownMessageType(String),
    /// A format detection recognises but protoprof does not read.
    #[error("this looks like {found}, which protoprof does not read: {evidence}")]
    UnsupportedVersion {
        /// What the input looks like.
        found: String,
        /// Why detection thinks so.
        evidence: String,
    },
    /// Detection found no message type that explains the input.
    #[error("cannot tell what this input is: {0}")]
    Undetected(String),
    /// Input that is most plausibly one message type, broken: other types
    /// fit it only after repairs (strings that are not text, singular
    /// fields given several times).
    #[error("this looks like {message}, malformed at byte {offset}{}: {problem}", in_path(.path))]
    Malformed {
        /// Full name of the most plausible message type.
        message: String,
        /// Byte offset in the (inflated) input.
        offset: u64,
        /// Field path, empty at the top level.
        path: String,
        /// What is wrong.
        problem: WireProblem,
    },
    /// OTLP/JSON that does not parse or does not fit the schema.
    #[error("JSON{}: {detail}", at_json(.path, *.line, *.column))]
    Json {
        /// Field path, empty when unknown.
        path: String,
        /// 1-based line, 0 when unknown.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        detail: String,
    },
    /// Protobuf text format that does not parse or does not fit the schema.
    #[error("text format at line {line} column {column}: {detail}")]
    Text {
        /// 1-based line.
        line: u32,
        /// 1-based column.
        column: u32,
        /// What is wrong.
        detail: String,
    },
    /// A framed stream whose frame cannot be read.
    #[error("frame {index} at byte {offset}: {detail}")]
    Frame {
        /// The frame's position in the stream (0 for the first).
        index: usize,
        /// Byte offset of its header.
        offset: u64,
        /// What is wrong.
        detail: String,
    },
    /// A frame larger than the frame-size limit.
    #[error(
        "frame {index} at byte {offset}: frame of {length} bytes exceeds the limit of {limit}"
    )]
    FrameTooLarge {
        /// The frame's position in the stream (0 for the first).
        index: usize,
        /// Byte offset of its header.
        offset: u64,
        /// The length its header claims.
        length: u64,
        /// The limit in force.
        limit: u64,
    },
    /// Reading the input failed.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
}

fn in_path(path: &str) -> String {
    match path {
        "" => String::new(),
        path => format!(" in {}", shown_path(path)),
    }
}

/// A field path short enough for one line: a path through deep nesting
/// keeps its start and end, and says how many levels it has.
fn shown_path(path: &str) -> String {
    const KEEP: usize = 60;
    if path.len() <= 3 * KEEP {
        return path.to_string();
    }
    let start = path.char_indices().nth(KEEP).map_or(path.len(), |(i, _)| i);
    let end = path.char_indices().rev().nth(KEEP).map_or(0, |(i, _)| i);
    let levels = path.matches('.').count() + 1;
    format!("{}…{} ({levels} levels)", &path[..start], &path[end..])
}

fn at_json(path: &str, line: usize, column: usize) -> String {
    match (path.is_empty(), line) {
        (true, 0) => String::new(),
        (true, _) => format!(" at line {line} column {column}"),
        (false, 0) => format!(" at {path}"),
        (false, _) => format!(" at {path} (line {line} column {column})"),
    }
}

/// Something the reader accepted but the user should know about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// Byte offset in the (inflated) input, when known.
    pub offset: Option<u64>,
    /// Field path, e.g. `string_table[3]`; empty for the whole input.
    pub path: String,
    /// What was accepted.
    pub kind: WarningKind,
}

/// The kinds of [`Warning`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WarningKind {
    /// A string that was not UTF-8 was replaced lossily (U+FFFD per bad sequence).
    InvalidUtf8Repaired,
    /// A known field arrived with another wire type; it was kept as an unknown field.
    WrongWireType {
        /// The field number.
        field: u32,
        /// The wire type the schema gives it.
        expected: u8,
        /// The wire type in the input.
        found: u8,
    },
    /// A singular field appeared more than once; the last value wins.
    RepeatedSingularField {
        /// The field number.
        field: u32,
        /// How many times it appears.
        count: u32,
    },
    /// A group (deprecated wire types 3/4): rust-protobuf skips groups, so it is not kept.
    GroupDropped {
        /// The field number.
        field: u32,
    },
    /// OTLP profiles v1development of an older revision, rewritten into the
    /// current one before it was read.
    RevisionUpgraded {
        /// The revision read, e.g. `v1.8.0`.
        from: &'static str,
        /// `Profile.comment_strindices` fields the current schema cannot hold.
        comments_dropped: usize,
        /// `ValueType.aggregation_temporality` fields the current schema cannot hold.
        temporalities_dropped: usize,
        /// Samples of v1.4.0–v1.7.0 whose timestamps did not pair with their
        /// values (the current schema pairs them): values kept, timestamps dropped.
        timestamp_lists_dropped: usize,
        /// Samples of v1.4.0–v1.7.0 whose location slice lay outside their
        /// profile's `location_indices`: their stack index is out of range.
        slices_out_of_range: usize,
    },
    /// A JSON key that names no field of its message: its value was dropped.
    UnknownJsonKey {
        /// The full name of the message the key was in.
        message: String,
    },
    /// Input of a named type that looks like text format (or JSON) but does
    /// not parse as it, and parses as binary protobuf: read as binary.
    ReadAsBinary {
        /// Why it is not text format (or JSON).
        not_text: String,
    },
    /// OTLP/JSON with the key names of OTLP profiles v1development v1.8.0
    /// (`sample`, `line`), read as the fields v1.9.0 renamed them to.
    JsonKeysOfOlderRevision {
        /// The older keys seen.
        keys: Vec<&'static str>,
    },
}

impl WarningKind {
    /// Whether the input held data that was not read: a validator must not
    /// call such input valid.
    pub fn is_data_dropped(&self) -> bool {
        matches!(self, WarningKind::UnknownJsonKey { .. })
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = match self.offset {
            Some(offset) => format!(" (byte {offset})"),
            None => String::new(),
        };
        let path = if self.path.is_empty() {
            "input"
        } else {
            &self.path
        };
        match &self.kind {
            WarningKind::InvalidUtf8Repaired => {
                write!(f, "{path}{at}: invalid UTF-8 replaced with U+FFFD")
            }
            WarningKind::WrongWireType { field, expected, found } => write!(
                f,
                "{path}{at}: field {field} has wire type {found}, the schema says {expected}; kept as an unknown field"
            ),
            WarningKind::GroupDropped { field } => write!(
                f,
                "{path}{at}: field {field} is a group (deprecated wire types 3 and 4); groups are skipped, \
                 so it is not kept and will be missing when the message is written again"
            ),
            WarningKind::RevisionUpgraded {
                from,
                comments_dropped,
                temporalities_dropped,
                timestamp_lists_dropped,
                slices_out_of_range,
            } => {
                // One short line: every report on an older export prints it.
                write!(f, "{path}: OTLP of opentelemetry-proto {from}, read as v1.10.0")?;
                let dropped: Vec<String> = [
                    (*comments_dropped, "profile comment list", "profile comment lists"),
                    (*temporalities_dropped, "aggregation temporality", "aggregation temporalities"),
                    (*timestamp_lists_dropped, "sample's unpaired timestamps", "samples' unpaired timestamps"),
                ]
                .iter()
                .filter(|(n, _, _)| *n > 0)
                .map(|&(n, one, many)| format!("{n} {}", if n == 1 { one } else { many }))
                .collect();
                if !dropped.is_empty() {
                    write!(f, " (dropped: {})", dropped.join(", "))?;
                }
                if *slices_out_of_range > 0 {
                    write!(
                        f,
                        "; {slices_out_of_range} samples' location slices lie outside their \
                         profile's location_indices (their stack_index is set out of range)"
                    )?;
                }
                Ok(())
            }
            WarningKind::UnknownJsonKey { message } => write!(
                f,
                "{path}: key is not a field of {message}; its value was dropped"
            ),
            WarningKind::ReadAsBinary { not_text } => write!(
                f,
                "{path}: looks like text but is not text format ({not_text}); read as binary protobuf"
            ),
            WarningKind::JsonKeysOfOlderRevision { keys } => write!(
                f,
                "OTLP/JSON with the key names of opentelemetry-proto v1.8.0 ({}), read as the \
                 fields v1.9.0 renamed them to (the current revision, v1.10.0, has them so)",
                keys.join(", ")
            ),
            WarningKind::RepeatedSingularField { field, count } => write!(
                f,
                "{path}{at}: singular field {field} appears {count} times; the last value wins \
                 (Go's pprof rejects this as concatenated profiles)"
            ),
        }
    }
}
