//! The wire revisions of OTLP profiles v1development, by name: what the
//! decode options can force and every reader names. Which revision bytes
//! are is [`crate::otlp::revision::identify`]'s to say.

/// A wire revision of `opentelemetry.proto.profiles.v1development`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum OtlpRevision {
    /// v1.4.0 and v1.5.0: the tables inside each Profile.
    V1_4To1_5,
    /// v1.6.0: the tables in top-level fields of `ProfilesData`.
    V1_6,
    /// v1.7.0: a `ProfilesDictionary`, samples as location slices.
    V1_7,
    /// v1.8.0: stacks, one sample type per Profile, Sample values in field
    /// 2; Profile comments in 7 (so its later fields sit one higher) and
    /// aggregation temporality in ValueType.
    V1_8,
    /// v1.9.0: v1.8.0 without comments and temporality (Profile as v1.10).
    V1_9,
    /// v1.8.0 or v1.9.0: an input with none of the fields that differ
    /// between the two reads the same in both.
    V1_8Or1_9,
    /// v1.10.0 and v1.11.0 (the Alpha): Sample values in field 4. The
    /// revision protoprof's model is.
    V1_10,
}

impl OtlpRevision {
    /// The opentelemetry-proto releases that wrote it, e.g. `v1.8.0/v1.9.0`.
    pub fn releases(self) -> &'static str {
        match self {
            OtlpRevision::V1_4To1_5 => "v1.4.0/v1.5.0",
            OtlpRevision::V1_6 => "v1.6.0",
            OtlpRevision::V1_7 => "v1.7.0",
            OtlpRevision::V1_8 => "v1.8.0",
            OtlpRevision::V1_9 => "v1.9.0",
            OtlpRevision::V1_8Or1_9 => "v1.8.0/v1.9.0",
            OtlpRevision::V1_10 => "v1.10.0/v1.11.0",
        }
    }

    /// The revision a release wrote: `1.7`, `v1.7.0` and the like; `None`
    /// for releases outside v1.4 to v1.11.
    pub fn from_release(text: &str) -> Option<Self> {
        let text = text.trim().trim_start_matches('v');
        let text = text.strip_suffix(".0").unwrap_or(text);
        Some(match text {
            "1.4" | "1.5" => OtlpRevision::V1_4To1_5,
            "1.6" => OtlpRevision::V1_6,
            "1.7" => OtlpRevision::V1_7,
            "1.8" => OtlpRevision::V1_8,
            "1.9" => OtlpRevision::V1_9,
            "1.10" | "1.11" => OtlpRevision::V1_10,
            _ => return None,
        })
    }

    /// Whether protoprof's v1development model reads it as it is.
    pub fn is_current(self) -> bool {
        self == OtlpRevision::V1_10
    }

    /// Whether the codec rewrites it into the current revision
    /// ([`crate::otlp::upgrade`]).
    pub fn is_upgradable(self) -> bool {
        matches!(
            self,
            OtlpRevision::V1_4To1_5
                | OtlpRevision::V1_6
                | OtlpRevision::V1_7
                | OtlpRevision::V1_8
                | OtlpRevision::V1_9
                | OtlpRevision::V1_8Or1_9
        )
    }
}
