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
