//! Which wire revision of OTLP profiles v1development an input is.
//!
//! Every release from opentelemetry-proto v1.4.0 to v1.11.0 used the package
//! name `v1development`, and most changed the wire form; nothing in the
//! bytes names the revision. The layouts differ in ways a reader can see
//! without a schema (docs/otlp-v1development.md has the table):
//!
//! - where the tables are: inside each Profile (v1.4, v1.5), in top-level
//!   fields 3–8 (v1.6), or in a `ProfilesDictionary` in top-level field 2
//!   (v1.7 on);
//! - how a Sample is laid out: `locations_length` is a varint in field 2 up
//!   to v1.7; v1.8/v1.9 have packed `values` in 2, packed
//!   `attribute_indices` in 3 and a varint `link_index` in 4; v1.10 moved
//!   them to 4, 2 and 3. A v1.8 reader reads v1.10 values as attribute
//!   indices without any error, so the samples decide.

use crate::binary::wire::{self, WireField, LEN, VARINT};

pub use crate::wire_revision::OtlpRevision;

/// The revision of a binary v1development `ProfilesData` (or export
/// request), and what in the bytes says so.
pub fn identify(bytes: &[u8]) -> (OtlpRevision, String) {
    let top = fields(bytes);
    if top
        .iter()
        .any(|f| (3..=8).contains(&f.number) && f.wire_type == LEN)
    {
        return (
            OtlpRevision::V1_6,
            "tables in top-level fields 3 to 8 of ProfilesData".into(),
        );
    }
    let has_dictionary = top.iter().any(|f| f.number == 2 && f.wire_type == LEN);
    let mut votes = Votes::default();
    for sample in first_samples(&top, 64) {
        votes.add(&fields(sample));
    }
    match votes.verdict() {
        Some(SampleLayout::Slices) if has_dictionary => (
            OtlpRevision::V1_7,
            format!(
                "a ProfilesDictionary (top-level field 2) and samples as location slices ({})",
                votes.evidence()
            ),
        ),
        Some(SampleLayout::Slices) => (
            OtlpRevision::V1_4To1_5,
            format!(
                "no dictionary, samples as location slices ({})",
                votes.evidence()
            ),
        ),
        Some(SampleLayout::ValuesIn2) => {
            let (revision, profiles) = v1_8_or_v1_9(&top);
            (revision, format!("{}; {profiles}", votes.evidence()))
        }
        Some(SampleLayout::ValuesIn4) => (OtlpRevision::V1_10, votes.evidence()),
        None if !has_dictionary => (
            OtlpRevision::V1_4To1_5,
            "no dictionary: the tables are inside each Profile".into(),
        ),
        None => (
            OtlpRevision::V1_10,
            "a ProfilesDictionary and no sample that tells the revisions apart; read as the \
             current one"
                .into(),
        ),
    }
}

/// v1.8.0 and v1.9.0 differ only in the Profile (v1.8.0's comments in 7
/// push its later fields one higher) and in ValueType's temporality (3).
fn v1_8_or_v1_9(top: &[WireField]) -> (OtlpRevision, String) {
    let (mut v1_8, mut v1_9) = (0, 0);
    for profile in profiles(top) {
        for f in fields(profile) {
            match (f.number, f.wire_type) {
                // profile_id (bytes) in 8, attribute_indices in 12
                (8, LEN) | (12, _) => v1_8 += 1,
                // dropped_attributes_count (varint) in 8
                (8, VARINT) => v1_9 += 1,
                (1 | 5, LEN) if fields(f.value).iter().any(|v| v.number == 3) => v1_8 += 1,
                _ => {}
            }
        }
    }
    match (v1_8, v1_9) {
        (0, 0) => (
            OtlpRevision::V1_8Or1_9,
            "no Profile field that tells v1.8.0 from v1.9.0".into(),
        ),
        (a, b) if a >= b => (
            OtlpRevision::V1_8,
            format!("{a} Profile fields where v1.8.0 has them (profile_id in 8, attributes in 12, temporality)"),
        ),
        (_, b) => (
            OtlpRevision::V1_9,
            format!("{b} Profile fields where v1.9.0 has them (dropped_attributes_count in 8)"),
        ),
    }
}

/// The fields of `bytes`, up to the first that does not parse.
fn fields(bytes: &[u8]) -> Vec<WireField<'_>> {
    wire::fields(bytes).map_while(Result::ok).collect()
}

/// Every Profile payload: resource_profiles (1) → scope_profiles (2) →
/// profiles (2), the same numbers in every revision.
fn profiles<'a>(top: &'a [WireField<'a>]) -> impl Iterator<Item = &'a [u8]> + 'a {
    top.iter()
        .filter(|f| f.number == 1 && f.wire_type == LEN)
        .flat_map(|resource| message_fields(resource.value, 2))
        .flat_map(|scope| message_fields(scope, 2))
}

/// Up to `limit` Sample payloads (field 2 of a Profile in every revision).
fn first_samples<'a>(top: &'a [WireField<'a>], limit: usize) -> Vec<&'a [u8]> {
    profiles(top)
        .flat_map(|profile| message_fields(profile, 2))
        .take(limit)
        .collect()
}

fn message_fields(bytes: &[u8], number: u32) -> impl Iterator<Item = &[u8]> {
    fields(bytes)
        .into_iter()
        .filter(move |f| f.number == number && f.wire_type == LEN)
        .map(|f| f.value)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SampleLayout {
    /// Up to v1.7: `locations_start_index` 1, `locations_length` 2 (varints).
    Slices,
    /// v1.8/v1.9: values 2, attribute_indices 3 (packed), link_index 4.
    ValuesIn2,
    /// v1.10: attribute_indices 2 (packed), link_index 3, values 4 (packed).
    ValuesIn4,
}

/// What the samples' fields say, counted.
#[derive(Default)]
struct Votes {
    slices: usize,
    values_in_2: usize,
    values_in_4: usize,
}

impl Votes {
    fn add(&mut self, sample: &[WireField]) {
        let wire = |n: u32| sample.iter().find(|f| f.number == n).map(|f| f.wire_type);
        match (wire(2), wire(3), wire(4), wire(5), wire(6)) {
            (Some(VARINT), ..) | (.., Some(_)) => self.slices += 1,
            (_, Some(VARINT), ..) | (_, _, Some(LEN), ..) => self.values_in_4 += 1,
            (_, Some(LEN), ..) | (_, _, Some(VARINT), ..) => self.values_in_2 += 1,
            // values (or timestamps) are required: packed 2 alone is values.
            (Some(LEN), None, None, None, None) => self.values_in_2 += 1,
            _ => {}
        }
    }

    fn verdict(&self) -> Option<SampleLayout> {
        let counts = [
            (self.slices, SampleLayout::Slices),
            (self.values_in_2, SampleLayout::ValuesIn2),
            (self.values_in_4, SampleLayout::ValuesIn4),
        ];
        let (most, layout) = counts.iter().max_by_key(|(n, _)| *n)?;
        (*most > 0).then_some(*layout)
    }

    fn evidence(&self) -> String {
        let total = self.slices + self.values_in_2 + self.values_in_4;
        match self.verdict() {
            Some(SampleLayout::Slices) => format!(
                "{} of {total} samples have a varint field 2 (locations_length) or a field 6",
                self.slices
            ),
            Some(SampleLayout::ValuesIn2) => format!(
                "{} of {total} samples have packed values in field 2 and attributes in 3 or a \
                 link in 4, as v1.8.0/v1.9.0 wrote them",
                self.values_in_2
            ),
            Some(SampleLayout::ValuesIn4) => format!(
                "{} of {total} samples have a link in field 3 or packed values in field 4, as \
                 v1.10.0 writes them",
                self.values_in_4
            ),
            None => "no samples".into(),
        }
    }
}
