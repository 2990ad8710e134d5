//! Bounds on what input may make the codec do.

/// Limits applied while reading. Every one is checked before the work it
/// bounds is done, and exceeding one is a typed error, never a panic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest input accepted, in bytes (compressed size for gzip).
    pub max_input_bytes: u64,
    /// Largest size gzip input may inflate to; inflation stops there.
    pub max_inflated_bytes: u64,
    /// Deepest nesting of messages (and unknown groups) accepted.
    pub max_depth: u32,
    /// Largest single frame of a framed stream.
    pub max_frame_bytes: u64,
}

impl Limits {
    /// Defaults that fit real profiles with a wide margin (the largest real
    /// ones are tens of MB): 1 GiB of input, 512 MiB inflated (a 1 GiB gzip
    /// bomb stops there), 100 levels of nesting (as protoc and upb) and
    /// 256 MiB frames.
    pub const DEFAULT: Limits = Limits {
        max_input_bytes: 1 << 30,
        max_inflated_bytes: 512 << 20,
        max_depth: 100,
        max_frame_bytes: 256 << 20,
    };
}

impl Default for Limits {
    fn default() -> Self {
        Limits::DEFAULT
    }
}
