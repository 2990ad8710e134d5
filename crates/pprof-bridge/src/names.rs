//! Names the bridge gives to what one format has and the other lacks: the
//! attribute and label keys of docs/pprof-bridge.md. A leaf module, so
//! both directions and the semantic comparison read the same names.

/// Marks the mapping that stands for "no mapping" (see docs/pprof-bridge.md).
pub const NO_MAPPING_ATTRIBUTE: &str = "protoprof.no_mapping";
/// pprof's doc_url, which OTLP has no field for, as a container attribute.
pub const DOC_URL_ATTRIBUTE: &str = "pprof.doc_url";
/// Label key that carries a sample's trace id.
pub const TRACE_ID_LABEL: &str = "trace_id";
/// Label key that carries a sample's span id.
pub const SPAN_ID_LABEL: &str = "span_id";
/// Numeric label (unit [`NANOSECONDS`]) that carries a sample timestamp.
pub const TIMESTAMP_LABEL: &str = "timestamp";
/// The unit of timestamp labels.
pub const NANOSECONDS: &str = "nanoseconds";

/// The pprof attributes of the OpenTelemetry semantic conventions
/// (`model/pprof/registry.yaml`), which pprof -> v1development writes where
/// OTLP has no field for what pprof has, and v1development -> pprof reads.
pub mod semconv {
    /// Scope, int[]: element k is the position, among the scope's profiles,
    /// of the Profile that holds pprof's sample type k.
    pub const SAMPLE_TYPE_ORDER: &str = "pprof.scope.sample_type_order";
    /// Scope, string: pprof's `default_sample_type`.
    pub const DEFAULT_SAMPLE_TYPE: &str = "pprof.scope.default_sample_type";
    /// Profile, string[]: pprof's comments.
    pub const COMMENT: &str = "pprof.profile.comment";
    /// Profile, string: pprof's `drop_frames`.
    pub const DROP_FRAMES: &str = "pprof.profile.drop_frames";
    /// Profile, string: pprof's `keep_frames`.
    pub const KEEP_FRAMES: &str = "pprof.profile.keep_frames";
    /// Profile, string: pprof's `doc_url`.
    pub const DOC_URL: &str = "pprof.profile.doc_url";
    /// Profile, int[]: pairs (k, start_line) for each pprof function k
    /// (0-based) whose `start_line` is negative, which OTLP cannot hold
    /// (its Function carries 0).
    pub const NEGATIVE_START_LINES: &str = "pprof.profile.negative_start_lines";
    /// Profile, int[]: quadruples (k, j, line, column) for each line j of
    /// pprof location k (0-based) whose line or column is negative, which
    /// OTLP cannot hold (its Line carries 0 for each).
    pub const NEGATIVE_LINES: &str = "pprof.profile.negative_lines";
    /// Location, boolean: pprof's `is_folded`.
    pub const IS_FOLDED: &str = "pprof.location.is_folded";
    /// Mapping, boolean: pprof's `has_functions`.
    pub const HAS_FUNCTIONS: &str = "pprof.mapping.has_functions";
    /// Mapping, boolean: pprof's `has_filenames`.
    pub const HAS_FILENAMES: &str = "pprof.mapping.has_filenames";
    /// Mapping, boolean: pprof's `has_line_numbers`.
    pub const HAS_LINE_NUMBERS: &str = "pprof.mapping.has_line_numbers";
    /// Mapping, boolean: pprof's `has_inline_frames`.
    pub const HAS_INLINE_FRAMES: &str = "pprof.mapping.has_inline_frames";
    /// Mapping, string: a GNU build id (hex), from pprof's `build_id`.
    pub const BUILD_ID_GNU: &str = "process.executable.build_id.gnu";
    /// Mapping, string: any other build id (Go's, ...), from pprof's `build_id`.
    pub const BUILD_ID_GO: &str = "process.executable.build_id.go";
    /// What every build-id attribute key starts with.
    pub const BUILD_ID_PREFIX: &str = "process.executable.build_id";
}
