//! The forms an input can be in, and what its first bytes say of it:
//! what detection, the readers and the views all name, below all of them.

/// The encodings an input can be in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// Binary protobuf (raw or gzip).
    Binary,
    /// OTLP/JSON.
    Json,
    /// Protobuf text format.
    Text,
    /// gRPC length-prefixed frames.
    GrpcFrames,
    /// Varint length-delimited messages.
    DelimitedFrames,
    /// Messages behind 4-byte big-endian lengths (the Collector's file exporter).
    FileExporterFrames,
    /// A legacy profile format `go tool pprof` reads (gperftools CPU, text
    /// heap profiles), read into the pprof model.
    Legacy,
}

impl Form {
    /// The form's name in messages, e.g. `binary protobuf`.
    pub fn name(self) -> &'static str {
        match self {
            Form::Binary => "binary protobuf",
            Form::Json => "JSON",
            Form::Text => "protobuf text format",
            Form::GrpcFrames => "gRPC frames",
            Form::DelimitedFrames => "varint-delimited messages",
            Form::FileExporterFrames => "4-byte-length-prefixed messages (Collector file exporter)",
            Form::Legacy => {
                "legacy format, not protobuf: gperftools CPU, text heap, growth, contention or \
                 thread, Go debug=1 or Java"
            }
        }
    }
}

/// JSON or text format: valid UTF-8 without control characters, starting
/// like one of them (after an optional byte order mark and white space).
pub(crate) fn textual_form(bytes: &[u8]) -> Option<Form> {
    let text = std::str::from_utf8(bytes).ok()?;
    if text
        .chars()
        .any(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t'))
    {
        return None;
    }
    textual_start(bytes)
}

/// The form the first non-blank character suggests (a BOM is skipped).
pub(crate) fn textual_start(bytes: &[u8]) -> Option<Form> {
    let bytes = bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(bytes);
    match bytes.iter().find(|b| !b.is_ascii_whitespace())? {
        b'{' | b'[' => Some(Form::Json),
        c if c.is_ascii_alphabetic() || *c == b'#' => Some(Form::Text),
        _ => None,
    }
}
