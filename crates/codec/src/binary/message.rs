//! Binary protobuf, raw or gzip-compressed (detected by its magic bytes).
//!
//! Decoding: size check -> bounded inflation when gzip -> structural scan
//! (precise errors, warnings) -> a parse (rust-protobuf's, or one the caller
//! gives: the crate's `decode` reads pprof samples by `pprof::samples`'s fast
//! path) -> on failure, repair of invalid UTF-8 strings (or, in strict mode,
//! an error naming the first).

use std::io::{Read, Write};

use protobuf::reflect::MessageDescriptor;
use protobuf::{CodedInputStream, MessageDyn, MessageFull};
use protoprof_model_meta::threads::both;

use crate::binary::layout::Layouts;
use crate::binary::{scan, utf8};
use crate::error::{CodecError, Warning};
use crate::limits::Limits;
use crate::{gzip, PprofProfile};

/// How to read.
#[derive(Debug, Clone)]
pub struct DecodeOptions {
    /// Size, inflation, nesting and frame limits.
    pub limits: Limits,
    /// Reject strings that are not UTF-8 instead of repairing them.
    pub strict_utf8: bool,
    /// Warnings kept in full; beyond this only a count is kept.
    pub max_warnings: usize,
    /// Accept 0 bytes as an empty message. Off by default: an empty file is
    /// almost always a mistake, but in a stream an empty message can be
    /// meaningful (the relay opens with one).
    pub allow_empty: bool,
    /// Check the structure of every nested message before parsing, and warn
    /// about wire-type surprises at every depth. Off by default: the top
    /// level is checked (enough to catch truncation anywhere), nested
    /// surprises are kept as unknown fields, and a failed parse is
    /// re-checked in full to say where it broke.
    pub thorough: bool,
    /// Read binary OTLP profiles v1development as this wire revision instead
    /// of the one the bytes look like (nothing in them names it).
    pub otlp_revision: Option<crate::wire_revision::OtlpRevision>,
    /// Have a pprof view sum its samples up while it checks them: the
    /// smallest and the largest location id (`SampleSource::field_range`)
    /// and the number of values they all have
    /// (`SampleSource::common_value_count`). Validation then need not look
    /// each id up when every id between the two names a location, nor count
    /// each sample's values. A v1development view likewise finds the range
    /// of its stacks' location indices (`TableSource::sole_field_range`),
    /// decoding them instead of only scanning them. Off by default:
    /// decoding the ids makes the check slower, which only validation gains
    /// back.
    pub sample_summary: bool,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        DecodeOptions {
            limits: Limits::DEFAULT,
            strict_utf8: false,
            max_warnings: 100,
            allow_empty: false,
            thorough: false,
            otlp_revision: None,
            sample_summary: false,
        }
    }
}

/// A decoded message and what the reader noticed on the way.
#[derive(Debug)]
pub struct Decoded<T> {
    /// The message.
    pub message: T,
    /// What the reader accepted but the user should know, in input order.
    pub warnings: Vec<Warning>,
    /// Warnings past `max_warnings` that were counted, not kept.
    pub warnings_suppressed: usize,
    /// The input was gzip-compressed.
    pub gzipped: bool,
}

impl<T> Decoded<T> {
    /// The same decode with its message made into another.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Decoded<U> {
        Decoded {
            message: f(self.message),
            warnings: self.warnings,
            warnings_suppressed: self.warnings_suppressed,
            gzipped: self.gzipped,
        }
    }
}

/// How to write.
#[derive(Debug, Clone, Copy, Default)]
pub struct EncodeOptions {
    /// gzip-compress at this level (0-9); `None` writes raw protobuf.
    pub gzip_level: Option<u32>,
}

/// Reads a whole input, failing once it passes `limit` bytes.
pub fn read_bounded(reader: impl Read, limit: u64) -> Result<Vec<u8>, CodecError> {
    read_bounded_sized(reader, limit, 0)
}

/// [`read_bounded`] for a reader whose size is known (a file's length):
/// the buffer is allocated once at that size (capped by `limit`) instead of
/// grown by doubling, which copies what was read at each step and touches
/// fresh pages each time. A wrong size only costs growth.
pub fn read_bounded_sized(reader: impl Read, limit: u64, size: u64) -> Result<Vec<u8>, CodecError> {
    // One byte more, so reading to the end needs no growth to see the end.
    let capacity = size.min(limit).saturating_add(1);
    let mut bytes = Vec::with_capacity(usize::try_from(capacity).unwrap_or(0));
    reader
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(CodecError::InputTooLarge {
            size: bytes.len() as u64,
            limit,
        });
    }
    Ok(bytes)
}

/// From this size on, [`read_file`] reads the two halves of a file on two
/// threads.
const PARALLEL_READ_BYTES: u64 = 8 << 20;

/// All of `file`, at most `limit` bytes, as [`read_bounded`] reads it. A
/// large regular file is read in two halves on two threads: copying from
/// the page cache into fresh memory (a page fault per page) is a fifth of
/// validating a large profile, and it divides. A file that changes size
/// meanwhile is read again in one piece, from where `file` stands (a file
/// just opened: its start), as is anything not a regular file.
pub fn read_file(file: &std::fs::File, limit: u64) -> Result<Vec<u8>, CodecError> {
    let size = file.metadata()?.len();
    if size > limit {
        return Err(CodecError::InputTooLarge { size, limit });
    }
    #[cfg(unix)]
    if size >= PARALLEL_READ_BYTES {
        if let Some(bytes) = read_halves(file, size)? {
            return Ok(bytes);
        }
    }
    // Positioned reads leave the file's offset where it was.
    read_bounded_sized(file, limit, size)
}

/// The file's `size` bytes read in two halves at once; `None` if it is not
/// `size` bytes long any more.
#[cfg(unix)]
fn read_halves(file: &std::fs::File, size: u64) -> Result<Option<Vec<u8>>, CodecError> {
    use std::os::unix::fs::FileExt;
    let len = usize::try_from(size).map_err(|_| CodecError::InputTooLarge { size, limit: size })?;
    // Zeroed by the kernel when first touched, by the reading threads.
    let mut bytes = vec![0u8; len];
    let (first, second) = bytes.split_at_mut(len / 2);
    let read = |half: &mut [u8], offset: u64| match file.read_exact_at(half, offset) {
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(false),
        other => other.map(|()| true),
    };
    let (first, second) = both(true, || read(first, 0), || read(second, (len / 2) as u64));
    let grew = file.read_at(&mut [0u8; 1], size)? > 0;
    Ok((first? && second? && !grew).then_some(bytes))
}

/// Parses into a new `message` with rust-protobuf.
pub(crate) fn parse_into(
    message: &mut dyn MessageDyn,
    bytes: &[u8],
    limits: &Limits,
) -> protobuf::Result<()> {
    let mut stream = CodedInputStream::from_bytes(bytes);
    // The scan already bounded nesting; this only keeps rust-protobuf's own
    // limit from being the tighter one.
    stream.set_recursion_limit(limits.max_depth + 2);
    message.merge_from_dyn(&mut stream)?;
    stream.check_eof()
}

fn wire_error(bytes: &[u8], layouts: &Layouts, error: scan::ScanError) -> CodecError {
    let path = scan::path_at(bytes, layouts, error.offset);
    let path = if path.is_empty() {
        layouts.messages[Layouts::ROOT].full_name.clone()
    } else {
        path
    };
    CodecError::Wire {
        offset: error.offset as u64,
        path,
        problem: error.problem,
    }
}

pub(crate) fn decode_with<T>(
    input: &[u8],
    descriptor: &MessageDescriptor,
    options: &DecodeOptions,
    parse: impl Fn(&[u8], &Limits) -> protobuf::Result<T>,
) -> Result<Decoded<T>, CodecError> {
    let (bytes, gzipped) = crate::binary::inflate::inflate_input(input, &options.limits)?;
    decode_inflated(&bytes, gzipped, descriptor, options, parse)
}

/// Decodes already inflated pprof bytes into whatever `parse` makes of them
/// (the parts of a `PprofView`), with the checks and errors of [`decode`].
/// `parse` is called with `bytes` itself, or with a copy in which invalid
/// UTF-8 has been repaired.
pub(crate) fn decode_pprof_parts<T>(
    bytes: &[u8],
    gzipped: bool,
    options: &DecodeOptions,
    parse: impl Fn(&[u8], &Limits) -> protobuf::Result<T>,
) -> Result<Decoded<T>, CodecError> {
    decode_inflated(bytes, gzipped, &PprofProfile::descriptor(), options, parse)
}

/// The ordinary parse of a message of type `M` (pprof's fast path first),
/// nesting limited as [`decode`] limits it.
pub(crate) fn parse_message<M: MessageFull>(bytes: &[u8], limits: &Limits) -> protobuf::Result<M> {
    let mut message = M::new();
    parse_into(&mut message, bytes, limits)?;
    Ok(message)
}

/// From this many bytes on, [`decode_inflated`] parses on one thread while
/// it scans the structure on another: each walks every top-level field of
/// a large profile, tens of milliseconds at 100 MB.
const SCAN_BESIDE_PARSE_BYTES: usize = 4 << 20;

/// Decodes inflated `bytes` of `descriptor`'s type into whatever `parse`
/// makes of them: the structural scan, UTF-8 repair and errors of
/// [`decode`], for the views.
pub(crate) fn decode_inflated<T>(
    bytes: &[u8],
    gzipped: bool,
    descriptor: &MessageDescriptor,
    options: &DecodeOptions,
    parse: impl Fn(&[u8], &Limits) -> protobuf::Result<T>,
) -> Result<Decoded<T>, CodecError> {
    let beside = bytes.len() >= SCAN_BESIDE_PARSE_BYTES;
    decode_scanned((bytes, gzipped), descriptor, options, parse, beside)
}

/// [`decode_inflated`], the parse made while the scan runs when `beside`.
pub(crate) fn decode_scanned<T>(
    (bytes, gzipped): (&[u8], bool),
    descriptor: &MessageDescriptor,
    options: &DecodeOptions,
    parse: impl Fn(&[u8], &Limits) -> protobuf::Result<T>,
    beside: bool,
) -> Result<Decoded<T>, CodecError> {
    let limits = &options.limits;
    let layouts = Layouts::for_message(descriptor);
    if bytes.is_empty() && !options.allow_empty {
        return Err(CodecError::Empty);
    }
    // Structure first: the top level by default (this is what catches input
    // cut inside a nested message, which rust-protobuf would accept), every
    // level when asked to be thorough.
    let levels = if options.thorough {
        scan::ALL_LEVELS
    } else {
        scan::TOP_LEVEL
    };
    let structural = |levels| {
        let scan_options = scan::ScanOptions {
            max_depth: limits.max_depth,
            max_warnings: options.max_warnings,
            descend: levels,
            check_strings: false,
        };
        scan::scan(bytes, &layouts, &scan_options).map_err(|error| {
            if !gzipped && gzip::looks_like_zlib(bytes) {
                CodecError::Zlib
            } else {
                wire_error(bytes, &layouts, error)
            }
        })
    };
    // A large input is parsed while the scan runs beside it; the parse is
    // kept only if the scan passes.
    let (report, parsed) = match beside {
        true => {
            let (parsed, report) = both(true, || parse(bytes, limits), || structural(levels));
            (report, Some(parsed))
        }
        false => (structural(levels), None),
    };
    let report = report?;
    let warnings_suppressed = report.suppressed;
    let mut warnings: Vec<Warning> = report
        .warnings
        .into_iter()
        .map(|w| Warning {
            offset: Some(w.offset as u64),
            path: scan::path_at(bytes, &layouts, w.offset),
            kind: w.kind,
        })
        .collect();
    let message = match parsed.unwrap_or_else(|| parse(bytes, limits)) {
        Ok(message) => message,
        Err(parse_error) => {
            // Find where it broke; the repair below also needs the whole
            // structure checked (and nesting bounded) first.
            if levels != scan::ALL_LEVELS {
                structural(scan::ALL_LEVELS)?;
            }
            let (repaired, bad) = utf8::repair(bytes, &layouts);
            if bad.is_empty() {
                return Err(CodecError::Decode {
                    message: descriptor.full_name().to_string(),
                    detail: parse_error.to_string(),
                });
            }
            if options.strict_utf8 {
                return Err(utf8::error(bad.into_iter().next().expect("non-empty")));
            }
            warnings.extend(utf8::warnings(&bad));
            parse(&repaired, limits).map_err(|e| CodecError::Decode {
                message: descriptor.full_name().to_string(),
                detail: format!("{e} (after repairing invalid UTF-8)"),
            })?
        }
    };
    Ok(Decoded {
        message,
        warnings,
        warnings_suppressed,
        gzipped,
    })
}

/// Encodes a message as raw or gzip-compressed protobuf.
pub fn encode(message: &dyn MessageDyn, options: &EncodeOptions) -> Result<Vec<u8>, CodecError> {
    let raw = message
        .write_to_bytes_dyn()
        .map_err(|e| CodecError::Encode {
            message: message.descriptor_dyn().full_name().to_string(),
            detail: e.to_string(),
        })?;
    match options.gzip_level {
        Some(level) => gzip::compress(&raw, level),
        None => Ok(raw),
    }
}

/// Encodes a message into `writer`.
pub fn encode_to(
    message: &dyn MessageDyn,
    writer: &mut dyn Write,
    options: &EncodeOptions,
) -> Result<(), CodecError> {
    writer.write_all(&encode(message, options)?)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::*;

    fn file_of(bytes: &[u8]) -> tempfile::NamedTempFile {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        file.write_all(bytes).unwrap();
        file.flush().unwrap();
        file
    }

    #[test]
    fn reads_small_and_large_files_whole_in_either_way() {
        // Sizes around the parallel threshold, odd halves included.
        for size in [0, 1, 4097, PARALLEL_READ_BYTES - 1, PARALLEL_READ_BYTES + 3] {
            let bytes: Vec<u8> = (0..size).map(|i| (i * 7 + i / 4096) as u8).collect();
            let file = file_of(&bytes);
            let read = read_file(&std::fs::File::open(file.path()).unwrap(), u64::MAX).unwrap();
            assert!(read == bytes, "size {size}");
        }
    }

    #[test]
    fn a_file_past_the_limit_is_refused_with_its_size() {
        let file = file_of(&[1; 100]);
        let error = read_file(file.as_file(), 99).unwrap_err();
        assert!(
            matches!(
                error,
                CodecError::InputTooLarge {
                    size: 100,
                    limit: 99
                }
            ),
            "{error:?}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn halves_decline_a_file_whose_size_changed() {
        let file = file_of(&[5; 64]);
        let handle = std::fs::File::open(file.path()).unwrap();
        assert_eq!(read_halves(&handle, 64).unwrap(), Some(vec![5; 64]));
        // Shorter or longer than the size the read started from.
        assert_eq!(read_halves(&handle, 80).unwrap(), None);
        assert_eq!(read_halves(&handle, 32).unwrap(), None);
    }
}
