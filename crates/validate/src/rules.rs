//! The catalogue of rules: a stable code, a severity, what is checked, and
//! the schema sentence it comes from. `docs/validation-rules.md` lists the
//! same rules (a test keeps the two in step).

use serde::Serialize;

/// `error`: breaks a MUST of the schema or makes the data unreadable.
/// `warning`: breaks a SHOULD, or is suspicious.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Breaks a MUST of the schema or makes the data unreadable.
    Error,
    /// Breaks a SHOULD, or is suspicious.
    Warning,
}

impl Severity {
    /// `error` or `warning`.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// One rule of the catalogue.
#[derive(Debug, PartialEq, Eq)]
pub struct Rule {
    /// Stable code, e.g. `PPROF-REF-003`.
    pub code: &'static str,
    /// How serious breaking it is.
    pub severity: Severity,
    /// What the rule checks, in a few words.
    pub summary: &'static str,
    /// Where the requirement comes from.
    pub source: &'static str,
}

macro_rules! rules {
    ($($name:ident = $code:literal, $severity:ident, $summary:literal, $source:literal;)*) => {
        $(#[doc = concat!("Rule `", $code, "`; its `summary` says what it checks.")] pub const $name: Rule = Rule { code: $code, severity: Severity::$severity, summary: $summary, source: $source };)*
        /// Every rule, in catalogue order.
        pub static ALL: &[&Rule] = &[$(&$name),*];
    };
}

rules! {
    PPROF_STR_EMPTY = "PPROF-STR-001", Error, "string_table is empty", "profile.proto: string_table[0] must always be \"\"";
    PPROF_STR_FIRST = "PPROF-STR-002", Error, "string_table[0] is not the empty string", "profile.proto: string_table[0] must always be \"\"";
    PPROF_REF_RANGE = "PPROF-REF-001", Error, "string index out of range", "profile.proto: indices into string_table";
    PPROF_REF_NEGATIVE = "PPROF-REF-002", Error, "negative string index", "profile.proto: indices into string_table";
    PPROF_REF_MISSING = "PPROF-REF-003", Error, "reference to an id that no entry has", "profile.proto: ids refer to Location/Mapping/Function.id";
    PPROF_REF_ZERO = "PPROF-REF-004", Error, "reference to id 0 where one is required", "profile.proto: 0 is reserved, ids are nonzero";
    PPROF_ID_ZERO = "PPROF-ID-001", Error, "mapping, location or function with id 0", "profile.proto: unique nonzero id";
    PPROF_ID_DUPLICATE = "PPROF-ID-002", Error, "two entries of a table share an id", "profile.proto: unique nonzero id";
    PPROF_SAMPLE_VALUES = "PPROF-SAMPLE-001", Error, "sample value count differs from sample_type count", "profile.proto: the number of values must equal the number of sample types";
    PPROF_SAMPLE_TYPES = "PPROF-SAMPLE-002", Error, "samples without any sample_type", "Go profile.CheckValid: missing sample type information";
    PPROF_LABEL_KEY = "PPROF-LABEL-001", Error, "label without a key", "profile.proto: a label has a key";
    PPROF_LABEL_BOTH = "PPROF-LABEL-002", Error, "label with both str and num", "profile.proto: at most one of str and num";
    PPROF_LABEL_UNIT = "PPROF-LABEL-003", Warning, "num_unit without num", "profile.proto: num_unit should only be present when num is";
    PPROF_META_PERIOD = "PPROF-META-001", Warning, "period_type has a sample type's type in another unit", "profile.proto: period_type describes the same events as the samples";
    PPROF_META_DEFAULT = "PPROF-META-002", Warning, "default_sample_type is not the type of any sample_type", "profile.proto: default_sample_type names one of sample_type";
    PPROF_META_TIME = "PPROF-META-003", Error, "negative time_nanos", "profile.proto: time of collection (UTC) in nanoseconds past the epoch";
    PPROF_META_DURATION = "PPROF-META-004", Error, "negative duration_nanos", "profile.proto: duration of the profile";
    PPROF_LOC_ADDRESS = "PPROF-LOC-001", Warning, "location address outside its mapping's range", "profile.proto: a mapping covers [memory_start, memory_limit)";
    PPROF_FRAMES_REGEX = "PPROF-FRAMES-001", Warning, "drop_frames or keep_frames is not a valid regular expression", "profile.proto: frames matching the regular expression";
    PPROF_UNKNOWN = "PPROF-UNK-001", Warning, "fields the schema does not declare", "protobuf: unknown fields are kept, but usually mean a newer or foreign schema";

    OTLP_STR_EMPTY = "OTLP-STR-001", Error, "string_table is empty", "pprofextended.proto: string_table[0] must always be \"\"";
    OTLP_STR_FIRST = "OTLP-STR-002", Error, "string_table[0] is not the empty string", "pprofextended.proto: string_table[0] must always be \"\"";
    OTLP_REF_RANGE = "OTLP-REF-001", Error, "index out of range of its table", "pprofextended.proto: references are indices into the profile's tables";
    OTLP_REF_NEGATIVE = "OTLP-REF-002", Error, "negative index", "pprofextended.proto: references are indices";
    OTLP_REF_SLICE = "OTLP-REF-003", Error, "stack slice out of range", "pprofextended.proto: locations_start_index and locations_length address a slice";
    OTLP_ID_ZERO = "OTLP-ID-001", Error, "deprecated id 0 next to entries whose ids are set", "pprofextended.proto: when set, ids are unique and nonzero";
    OTLP_ID_DUPLICATE = "OTLP-ID-002", Error, "deprecated ids not unique", "pprofextended.proto: when set, ids are unique and nonzero";
    OTLP_SAMPLE_VALUES = "OTLP-SAMPLE-001", Error, "sample value count differs from sample_type count", "pprofextended.proto: the number of values must equal the number of sample types";
    OTLP_SAMPLE_TYPES = "OTLP-SAMPLE-002", Error, "samples without any sample_type", "pprofextended.proto: sample_type describes each value";
    OTLP_LABEL_KEY = "OTLP-LABEL-001", Error, "deprecated label without a key", "pprofextended.proto: a label has a key";
    OTLP_LABEL_BOTH = "OTLP-LABEL-002", Error, "deprecated label with both str and num", "pprofextended.proto: at most one of str and num";
    OTLP_LABEL_UNIT = "OTLP-LABEL-003", Warning, "num_unit without num", "pprofextended.proto: num_unit should only be present when num is";
    OTLP_META_PERIOD = "OTLP-META-001", Warning, "period_type has a sample type's type in another unit", "pprofextended.proto: period_type describes the same events as the samples";
    OTLP_META_DEFAULT = "OTLP-META-002", Warning, "default_sample_type is not the type of any sample_type", "pprofextended.proto: default_sample_type names one of sample_type";
    OTLP_META_TIME = "OTLP-META-003", Error, "negative time_nanos", "pprofextended.proto: time of collection in nanoseconds past the epoch";
    OTLP_META_DURATION = "OTLP-META-004", Error, "negative duration_nanos", "pprofextended.proto: duration of the profile";
    OTLP_FRAMES_REGEX = "OTLP-FRAMES-001", Warning, "drop_frames or keep_frames is not a valid regular expression", "pprofextended.proto: frames matching the regular expression";
    OTLP_UNKNOWN = "OTLP-UNK-001", Warning, "fields the schema does not declare (including reserved 1000 of ResourceProfiles)", "protobuf: unknown fields usually mean another revision of the schema";
    OTLP_PROFILE_ID_LENGTH = "OTLP-PID-001", Error, "profile_id is not 16 bytes", "profiles.proto: a profile_id is a 16-byte array; required";
    OTLP_PROFILE_ID_ZERO = "OTLP-PID-002", Error, "profile_id is all zero", "profiles.proto: an all-zero profile_id is invalid";
    OTLP_PROFILE_MISSING = "OTLP-PROF-001", Error, "ProfileContainer without a profile", "profiles.proto: profile is required, even when original_payload is present";
    OTLP_TIME_ORDER = "OTLP-TIME-001", Error, "end_time_unix_nano before start_time_unix_nano", "profiles.proto: start and end of the profile's time range";
    OTLP_TIME_SAMPLE = "OTLP-TIME-002", Warning, "sample timestamp outside the profile's time range", "pprofextended.proto: timestamps of the sample's events";
    OTLP_PAYLOAD_FORMAT = "OTLP-PAY-001", Error, "original_payload without original_payload_format", "profiles.proto: original_payload_format is required when original_payload is present";
    OTLP_PAYLOAD_PPROF = "OTLP-PAY-002", Warning, "original payload in pprof format", "profiles.proto: the original payload SHOULD NOT be included when it is pprof";
    OTLP_TEMPORALITY_UNSPECIFIED = "OTLP-TEMP-001", Error, "aggregation_temporality UNSPECIFIED", "pprofextended.proto: AGGREGATION_TEMPORALITY_UNSPECIFIED MUST NOT be used";
    OTLP_TEMPORALITY_UNKNOWN = "OTLP-TEMP-002", Error, "aggregation_temporality is not a known value", "pprofextended.proto: enum AggregationTemporality";
    OTLP_BUILD_ID_KIND = "OTLP-BUILD-001", Error, "build_id_kind is not a known value", "pprofextended.proto: enum BuildIdKind";
    OTLP_LINK_TRACE = "OTLP-LINK-001", Error, "link trace_id not 16 bytes or all zero", "pprofextended.proto: a trace_id is a 16-byte array";
    OTLP_LINK_SPAN = "OTLP-LINK-002", Error, "link span_id not 8 bytes or all zero", "pprofextended.proto: a span_id is an 8-byte array";
    OTLP_ATTR_DUPLICATE = "OTLP-ATTR-001", Error, "attribute key repeated within one attribute list", "common.proto: attribute keys MUST be unique";
    OTLP_ATTR_UNIT = "OTLP-ATTR-002", Warning, "attribute unit for a key no attribute has", "pprofextended.proto: attribute_units give the units of attribute keys";
    OTLP_ATTR_DROPPED = "OTLP-ATTR-003", Warning, "attributes were dropped by the producer", "resource.proto/common.proto: dropped_attributes_count";

    DEV_EMPTY = "OTLPDEV-EMPTY-001", Warning, "no resource_profiles, scope_profiles or profiles", "profcheck: the lists are not empty";
    DEV_DICTIONARY = "OTLPDEV-DICT-001", Error, "profiles without a dictionary", "profiles.proto (v1development): every index points into the message's ProfilesDictionary";
    DEV_STR_FIRST = "OTLPDEV-STR-001", Error, "string_table missing or string_table[0] not the empty string", "profiles.proto (v1development): string_table[0] MUST be \"\"";
    DEV_TABLE_ZERO = "OTLPDEV-ZERO-001", Error, "a dictionary table lacks its zero-value entry 0", "profiles.proto (v1development): entry 0 of each table MUST be present and be the zero value";
    DEV_REF_RANGE = "OTLPDEV-REF-001", Error, "index out of range of its dictionary table", "profiles.proto (v1development): indices into the ProfilesDictionary tables";
    DEV_REF_NEGATIVE = "OTLPDEV-REF-002", Error, "negative index", "profiles.proto (v1development): indices into the ProfilesDictionary tables";
    DEV_ATTR_DUPLICATE = "OTLPDEV-ATTR-001", Error, "attribute key repeated within one attribute list", "profiles.proto (v1development): attribute_indices MUST NOT repeat a key";
    DEV_SAMPLE_EMPTY = "OTLPDEV-SAMPLE-001", Error, "sample with neither values nor timestamps", "profiles.proto (v1development): a Sample MUST have values or timestamps_unix_nano";
    DEV_SAMPLE_LENGTHS = "OTLPDEV-SAMPLE-002", Error, "values and timestamps of different lengths", "profiles.proto (v1development): when both are present they MUST have the same length";
    DEV_SAMPLE_SHAPE = "OTLPDEV-SAMPLE-003", Warning, "samples of one profile with different shapes", "profiles.proto (v1development): all Samples of a Profile SHOULD have the same shape";
    DEV_TIME_SAMPLE = "OTLPDEV-TIME-001", Warning, "sample timestamp outside the profile's time range", "profiles.proto (v1development): timestamps SHOULD fall within [time_unix_nano, time_unix_nano + duration_nano)";
    DEV_PROFILE_ID = "OTLPDEV-PID-001", Error, "profile_id set but not 16 bytes, or all zero", "profiles.proto (v1development): profile_id is 16 bytes; all zeros is invalid";
    DEV_PAYLOAD = "OTLPDEV-PAY-001", Error, "original_payload and original_payload_format not set together", "profiles.proto (v1development): the format MUST be set when the payload is, and the other way round";
    DEV_FUNCTION_NAME = "OTLPDEV-FUNC-001", Warning, "function without name, system_name and filename", "profiles.proto (v1development): a Function MUST have at least one of them; profcheck does not check it and pprof allows it";
    DEV_MAPPING_RANGE = "OTLPDEV-MAP-001", Error, "mapping with memory_start >= memory_limit", "profiles.proto (v1development): both zero, or start < limit";
    DEV_NEGATIVE_LINE = "OTLPDEV-LINE-001", Error, "negative line, column or start_line", "profiles.proto (v1development): line numbers are >= 0";
    DEV_LINK_TRACE = "OTLPDEV-LINK-001", Error, "link trace_id not 16 bytes", "profiles.proto (v1development): trace_id is 16 bytes";
    DEV_LINK_SPAN = "OTLPDEV-LINK-002", Error, "link span_id not 8 bytes", "profiles.proto (v1development): span_id is 8 bytes";
    DEV_DUPLICATE = "OTLPDEV-DUP-001", Warning, "dictionary entry equal to an earlier one (--strict)", "profiles.proto (v1development): duplicates SHOULD NOT exist; profcheck -check-dupes";
    DEV_ORPHAN = "OTLPDEV-ORPHAN-001", Warning, "dictionary entry nothing refers to (--strict)", "profiles.proto (v1development): unreferenced entries SHOULD NOT exist; profcheck -check-orphans";
    DEV_UNKNOWN = "OTLPDEV-UNK-001", Warning, "fields the schema does not declare (another revision?)", "protobuf: unknown fields usually mean another revision of the schema";

    RELAY_TYPE_URL = "RELAY-TYPE-001", Error, "resource type URL differs from the response's type_url", "discovery.proto: type_url must equal the type URL of every resource";
    RELAY_WRAPPER = "RELAY-WRAP-001", Error, "an envoy.service.discovery.v3.Resource wrapper that does not decode", "discovery.proto: a state-of-the-world resource may be a Resource wrapping the resource itself";
    RELAY_NAME = "RELAY-NAME-001", Error, "delta resource without a name", "discovery.proto: in incremental xDS each resource is identified by its name";
    RELAY_NONCE = "RELAY-NONCE-001", Error, "delta response without a nonce", "discovery.proto: in incremental xDS the nonce is required";
    RELAY_NACK = "RELAY-NACK-001", Error, "NACK (error_detail) without response_nonce", "discovery.proto: an ACK or NACK echoes the nonce of the response";
    RELAY_UNKNOWN = "RELAY-UNK-001", Warning, "fields the schema does not declare (outside Node)", "protobuf: unknown fields usually mean another revision of the schema";
    JSON_UNKNOWN_KEY = "JSON-KEY-001", Error, "a JSON key that names no field of its message (its value is not read)", "OTLP/JSON: receivers MUST ignore unknown keys, so their data is lost to every reader";
}

/// A rule by code.
pub fn by_code(code: &str) -> Option<&'static Rule> {
    ALL.iter().copied().find(|r| r.code == code)
}
