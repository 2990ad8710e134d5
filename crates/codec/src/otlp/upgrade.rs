//! OTLP profiles v1development of opentelemetry-proto v1.8.0 and v1.9.0,
//! rewritten on the wire into the current revision (v1.10.0), which
//! protoprof's model is. Older revisions (v1.4.0 to v1.7.0) differ in
//! structure and are rebuilt in `early_revisions.rs`; [`upgrade`] takes all.
//!
//! The dictionary is the same in all three. What differs:
//! - Sample (all of v1.8.0/v1.9.0): `values` 2 → 4, `attribute_indices`
//!   3 → 2, `link_index` 4 → 3 (v1.10.0 renumbered them);
//! - Profile (v1.8.0 only): `comment_strindices` 7 is gone, `profile_id`,
//!   `dropped_attributes_count`, `original_payload_format`,
//!   `original_payload` and `attribute_indices` move from 8–12 to 7–11;
//! - ValueType (v1.8.0 only): `aggregation_temporality` 3 is gone.
//!
//! What the current schema cannot hold (comments, temporality) is dropped
//! and counted in the result, so the caller can warn; nothing else changes.

use std::borrow::Cow;

use crate::binary::wire::{self, WireField, LEN};
use crate::error::{CodecError, Warning, WarningKind};
use crate::otlp::revision::{self, OtlpRevision};

/// The upgraded bytes and what had to be dropped.
pub struct Upgraded {
    /// The input as the current revision.
    pub bytes: Vec<u8>,
    /// `Profile.comment_strindices` fields dropped (v1.8.0).
    pub comments_dropped: usize,
    /// `ValueType.aggregation_temporality` fields dropped (v1.4.0–v1.8.0).
    pub temporalities_dropped: usize,
    /// Timestamp lists dropped from samples whose values they did not pair
    /// with (v1.4.0–v1.7.0).
    pub timestamp_lists_dropped: usize,
    /// Samples whose location slice lay outside their profile's
    /// `location_indices` (v1.4.0–v1.7.0): given a stack index out of range.
    pub slices_out_of_range: usize,
}

/// Rewrites a `ProfilesData` (or export request) of `revision` into the
/// current revision. `None` for revisions this does not upgrade.
pub fn upgrade(bytes: &[u8], revision: OtlpRevision) -> Option<Result<Upgraded, CodecError>> {
    let profile_v1_8 = match revision {
        OtlpRevision::V1_8 => true,
        OtlpRevision::V1_9 | OtlpRevision::V1_8Or1_9 => false,
        OtlpRevision::V1_4To1_5 | OtlpRevision::V1_6 | OtlpRevision::V1_7 => {
            return Some(
                crate::otlp::early_revisions::upgrade(bytes, revision).map(|r| Upgraded {
                    bytes: r.bytes,
                    comments_dropped: 0,
                    temporalities_dropped: r.temporalities_dropped,
                    timestamp_lists_dropped: r.timestamp_lists_dropped,
                    slices_out_of_range: r.slices_out_of_range,
                }),
            )
        }
        _ => return None,
    };
    let mut up = Upgrader {
        profile_v1_8,
        comments_dropped: 0,
        temporalities_dropped: 0,
    };
    Some(up.envelope(bytes, 0).map(|bytes| Upgraded {
        bytes,
        comments_dropped: up.comments_dropped,
        temporalities_dropped: up.temporalities_dropped,
        timestamp_lists_dropped: 0,
        slices_out_of_range: 0,
    }))
}

impl Upgraded {
    /// The warning a read of upgraded input carries.
    pub fn warning(&self, from: OtlpRevision) -> Warning {
        Warning {
            offset: None,
            path: String::new(),
            kind: WarningKind::RevisionUpgraded {
                from: from.releases(),
                comments_dropped: self.comments_dropped,
                temporalities_dropped: self.temporalities_dropped,
                timestamp_lists_dropped: self.timestamp_lists_dropped,
                slices_out_of_range: self.slices_out_of_range,
            },
        }
    }
}

/// The bytes of a binary v1development message as the current revision:
/// unchanged, or rewritten from v1.8.0/v1.9.0 with the warning to show; an
/// error naming older revisions. For callers that know the type already
/// (frames of a stream); `decode_any` does this after detection.
pub fn to_current(bytes: &[u8]) -> Result<(Cow<'_, [u8]>, Option<Warning>), CodecError> {
    let (revision, evidence) = revision::identify(bytes);
    if revision.is_current() {
        return Ok((Cow::Borrowed(bytes), None));
    }
    match upgrade(bytes, revision) {
        Some(upgraded) => {
            let upgraded = upgraded?;
            let warning = upgraded.warning(revision);
            Ok((Cow::Owned(upgraded.bytes), Some(warning)))
        }
        None => Err(CodecError::UnsupportedVersion {
            found: format!(
                "OTLP profiles v1development of opentelemetry-proto {}",
                revision.releases()
            ),
            evidence,
        }),
    }
}

struct Upgrader {
    profile_v1_8: bool,
    comments_dropped: usize,
    temporalities_dropped: usize,
}

impl Upgrader {
    /// Levels of the envelope: 0 ProfilesData, 1 ResourceProfiles, 2
    /// ScopeProfiles; field 1, 2, 2 lead one level down, and ScopeProfiles'
    /// field 2 holds the Profiles.
    fn envelope(&mut self, bytes: &[u8], level: u8) -> Result<Vec<u8>, CodecError> {
        let mut out = Vec::with_capacity(bytes.len());
        for field in wire::all_fields(bytes, "")? {
            let inner = match (level, field.number, field.wire_type) {
                (0, 1, LEN) | (1, 2, LEN) => Some(self.envelope(field.value, level + 1)?),
                (2, 2, LEN) => Some(self.profile(field.value)?),
                _ => None,
            };
            write(&mut out, field.number, &field, inner.as_deref());
        }
        Ok(out)
    }

    fn profile(&mut self, bytes: &[u8]) -> Result<Vec<u8>, CodecError> {
        let mut out = Vec::with_capacity(bytes.len());
        for field in wire::all_fields(bytes, "")? {
            let number = match (self.profile_v1_8, field.number) {
                (true, 7) => {
                    self.comments_dropped += 1;
                    continue;
                }
                (true, 8..=12) => field.number - 1,
                _ => field.number,
            };
            let inner = match (field.number, field.wire_type) {
                (2, LEN) => Some(sample(field.value)?),
                (1 | 5, LEN) if self.profile_v1_8 => Some(self.value_type(field.value)?),
                _ => None,
            };
            write(&mut out, number, &field, inner.as_deref());
        }
        Ok(out)
    }

    fn value_type(&mut self, bytes: &[u8]) -> Result<Vec<u8>, CodecError> {
        let mut out = Vec::with_capacity(bytes.len());
        for field in wire::all_fields(bytes, "")? {
            if field.number == 3 {
                self.temporalities_dropped += 1;
                continue;
            }
            write(&mut out, field.number, &field, None);
        }
        Ok(out)
    }
}

/// A v1.8.0/v1.9.0 Sample with v1.10.0's field numbers.
fn sample(bytes: &[u8]) -> Result<Vec<u8>, CodecError> {
    let mut out = Vec::with_capacity(bytes.len());
    for field in wire::all_fields(bytes, "")? {
        let number = match field.number {
            2 => 4, // values
            3 => 2, // attribute_indices
            4 => 3, // link_index
            n => n,
        };
        write(&mut out, number, &field, None);
    }
    Ok(out)
}

/// Writes `field` as field `number`, with `payload` instead of its own
/// bytes when given (a rewritten message).
fn write(out: &mut Vec<u8>, number: u32, field: &WireField, payload: Option<&[u8]>) {
    use protoprof_model_meta::wire::{write_len_prefix, write_tag};
    if field.wire_type == LEN {
        let payload = payload.unwrap_or(field.value);
        write_len_prefix(out, number, payload.len());
        out.extend_from_slice(payload);
    } else {
        write_tag(out, number, field.wire_type);
        out.extend_from_slice(field.value);
    }
}

#[cfg(test)]
mod tests {
    use protobuf::Message;
    use protoprof_model_meta::wire::{write_len_prefix, write_tag, write_varint, VARINT};
    use protoprof_model_otlp::opentelemetry::proto::profiles::v1development::ProfilesData;

    use super::*;

    fn len(out: &mut Vec<u8>, number: u32, payload: &[u8]) {
        write_len_prefix(out, number, payload.len());
        out.extend_from_slice(payload);
    }

    fn varint(out: &mut Vec<u8>, number: u32, value: u64) {
        write_tag(out, number, VARINT);
        write_varint(out, value);
    }

    /// A v1.8.0 message written field by field from v1.8.0's schema.
    fn v1_8_message() -> Vec<u8> {
        let mut value_type = Vec::new();
        varint(&mut value_type, 1, 1);
        varint(&mut value_type, 2, 2);
        varint(&mut value_type, 3, 1); // aggregation_temporality: DELTA
        let mut sample = Vec::new();
        varint(&mut sample, 1, 1); // stack_index
        len(&mut sample, 2, &[7, 8]); // values
        len(&mut sample, 3, &[1]); // attribute_indices
        varint(&mut sample, 4, 1); // link_index
        let mut profile = Vec::new();
        len(&mut profile, 1, &value_type);
        len(&mut profile, 2, &sample);
        len(&mut profile, 7, &[3, 4]); // comment_strindices
        len(&mut profile, 8, &[9; 16]); // profile_id
        varint(&mut profile, 9, 2); // dropped_attributes_count
        len(&mut profile, 12, &[1]); // attribute_indices
        let (mut scope, mut resource, mut data) = (Vec::new(), Vec::new(), Vec::new());
        len(&mut scope, 2, &profile);
        len(&mut resource, 2, &scope);
        len(&mut data, 1, &resource);
        data
    }

    #[test]
    fn v1_8_fields_land_where_v1_10_has_them() {
        let upgraded = upgrade(&v1_8_message(), OtlpRevision::V1_8)
            .expect("v1.8.0 is upgraded")
            .unwrap();
        assert_eq!(
            (upgraded.comments_dropped, upgraded.temporalities_dropped),
            (1, 1)
        );
        let data = ProfilesData::parse_from_bytes(&upgraded.bytes).unwrap();
        let profile = &data.resource_profiles[0].scope_profiles[0].profiles[0];
        assert!(profile
            .special_fields
            .unknown_fields()
            .iter()
            .next()
            .is_none());
        assert_eq!(profile.profile_id, vec![9; 16]);
        assert_eq!(profile.dropped_attributes_count, 2);
        assert_eq!(profile.attribute_indices, vec![1]);
        let t = profile.sample_type.as_ref().unwrap();
        assert_eq!((t.type_strindex, t.unit_strindex), (1, 2));
        assert!(t.special_fields.unknown_fields().iter().next().is_none());
        let sample = &profile.samples[0];
        assert_eq!(sample.stack_index, 1);
        assert_eq!(sample.values, vec![7, 8]);
        assert_eq!(sample.attribute_indices, vec![1]);
        assert_eq!(sample.link_index, 1);
    }

    #[test]
    fn v1_9_keeps_the_profile_and_renumbers_only_samples() {
        let upgraded = upgrade(&v1_8_message(), OtlpRevision::V1_9)
            .unwrap()
            .unwrap();
        assert_eq!(
            (upgraded.comments_dropped, upgraded.temporalities_dropped),
            (0, 0)
        );
        let data = ProfilesData::parse_from_bytes(&upgraded.bytes).unwrap();
        let profile = &data.resource_profiles[0].scope_profiles[0].profiles[0];
        // Read as v1.9.0, field 7 is the profile id (here v1.8's comments).
        assert_eq!(profile.profile_id, vec![3, 4]);
        assert_eq!(profile.samples[0].values, vec![7, 8]);
        assert!(upgrade(&v1_8_message(), OtlpRevision::V1_10).is_none());
    }

    #[test]
    fn the_revision_of_the_hand_written_v1_8_message_is_told() {
        let (revision, evidence) = crate::otlp::revision::identify(&v1_8_message());
        assert_eq!(revision, OtlpRevision::V1_8, "{evidence}");
    }
}
