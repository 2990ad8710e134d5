//! A converted v1development message, written to any `io::Write` without
//! being held whole in memory.
//!
//! `ProfilesData` holds the resource (field 1, which leads to the samples)
//! before the dictionary (field 2, whose stack table is, for profiles with
//! distinct stacks, most of the message). Every length prefix is computed
//! before anything is written, so the output goes out front to back: the
//! enclosing messages' fields from their rust-protobuf encodings, each
//! Profile's samples and the stack table encoded from the pprof source as
//! they are written, a chunk at a time.

use std::borrow::Cow;
use std::io::{self, Write};

use protobuf::Message;
use protoprof_model_meta::threads;
use protoprof_model_meta::wire::{len_field_size, write_len_prefix};
use protoprof_model_otlp::fields::opentelemetry::proto::profiles::v1development::{
    profiles_data, profiles_dictionary, resource_profiles, scope_profiles,
};
use protoprof_model_otlp::opentelemetry::proto::profiles::v1development as dev;
use protoprof_model_pprof::perftools::profiles as pprof;
use protoprof_model_pprof::samples::ProfileSamples;

use crate::development::attributes::AttributeTable;
use crate::development::records::SampleShapes;
use crate::experimental::records::split_encoding;

/// Samples encoded in one piece, one write to the output.
const SAMPLES_PER_PIECE: usize = 8192;

/// Stack table entries encoded in one piece.
const STACKS_PER_PIECE: usize = 4096;

/// From this many samples or stacks on, pieces are encoded on two threads.
const PARALLEL_SAMPLES: usize = threads::PARALLEL_ITEMS;

/// A run of the encoding, in order.
enum Piece<'a> {
    /// Made up front: length prefixes, the enclosing messages' other fields.
    Bytes(Cow<'a, [u8]>),
    /// Profile `.0`'s samples `.1`.
    Samples(usize, std::ops::Range<usize>),
    /// Stack table entries (1 is the first after the empty stack).
    Stacks(std::ops::Range<usize>),
}

/// What pprof -> v1development's conversion leaves out of the message: its
/// Profiles' samples (their shapes, which hold the stacks), the attribute
/// table, encoded, and when asked, the dictionary's first three tables,
/// encoded.
pub(crate) struct LeftOut {
    pub shapes: SampleShapes,
    pub attributes: AttributeTable,
    /// The mapping, location and function tables (fields 1 to 3), when
    /// encoded before the samples are read, so that their messages are
    /// gone while the samples' tables grow.
    pub first_tables: Option<Vec<u8>>,
}

/// pprof converted to v1development `ProfilesData`, ready to be written:
/// [`Self::write_to`] writes the bytes rust-protobuf writes for the message
/// `pprof_to_development` builds. It holds each sample's stack index and
/// label set and each stack's first sample, and reads values and stacks
/// from the source as it writes: neither the encoding nor a copy of the
/// stacks is held.
pub struct DevelopmentEncoding<'s, S> {
    source: &'s S,
    resource: Parts,
    scope: Parts,
    /// Per Profile: its fields before the samples and those after them.
    profiles: Vec<Parts>,
    /// Per Profile: the size of its samples (occurrences of
    /// `Profile.samples`).
    samples_len: Vec<usize>,
    /// The dictionary's fields before the attribute table (its last two
    /// fields are the attribute and stack tables).
    dictionary_head: Vec<u8>,
    attributes: AttributeTable,
    shapes: SampleShapes,
    /// The stack table's size, every occurrence with its tag and length.
    stack_table_len: usize,
}

/// An enclosing message's encoding without the field that leads to the
/// samples: the fields numbered before it and those after it.
struct Parts {
    head: Vec<u8>,
    tail: Vec<u8>,
}

impl<'s, S: ProfileSamples> DevelopmentEncoding<'s, S> {
    /// `data` — one resource and one scope, as `pprof_to_development`
    /// builds them, with what `left_out` holds left out — with the samples
    /// and stacks of `left_out`, read from `source`.
    pub(crate) fn new(mut data: dev::ProfilesData, left_out: LeftOut, source: &'s S) -> Self {
        let LeftOut {
            shapes,
            attributes,
            first_tables,
        } = left_out;
        let mut resource = data.resource_profiles.pop().expect("one resource");
        let mut scope = resource.scope_profiles.pop().expect("one scope");
        let profiles = std::mem::take(&mut scope.profiles);
        let dictionary = data.dictionary.take().unwrap_or_default();
        // Fields in number order: the first tables, then the rest.
        let mut dictionary_head = first_tables.unwrap_or_default();
        (dictionary.write_to_vec(&mut dictionary_head)).expect("OTLP encodes");
        // ResourceProfiles and ScopeProfiles: field 1, the child (2), field 3.
        let (head, tail) = split_encoding(resource, |r| dev::ResourceProfiles {
            resource: std::mem::take(&mut r.resource),
            ..Default::default()
        });
        let resource = Parts { head, tail };
        let (head, tail) = split_encoding(scope, |s| dev::ScopeProfiles {
            scope: std::mem::take(&mut s.scope),
            ..Default::default()
        });
        let scope = Parts { head, tail };
        // Profile: sample_type (1), the samples (2), the rest.
        let profiles: Vec<Parts> = (profiles.into_iter())
            .map(|profile| {
                let (head, tail) = split_encoding(profile, |p| dev::Profile {
                    sample_type: std::mem::take(&mut p.sample_type),
                    ..Default::default()
                });
                Parts { head, tail }
            })
            .collect();
        let samples_len = shapes.samples_lens(source);
        DevelopmentEncoding {
            source,
            resource,
            scope,
            profiles,
            samples_len,
            dictionary_head,
            attributes,
            stack_table_len: shapes.stack_table_len(),
            shapes,
        }
    }

    fn profile_len(&self, k: usize) -> usize {
        let parts = &self.profiles[k];
        parts.head.len() + self.samples_len[k] + parts.tail.len()
    }

    fn scope_len(&self) -> usize {
        let profiles = (0..self.profiles.len())
            .map(|k| len_field_size(scope_profiles::PROFILES, self.profile_len(k)))
            .sum::<usize>();
        self.scope.head.len() + profiles + self.scope.tail.len()
    }

    fn resource_len(&self) -> usize {
        let scope = len_field_size(resource_profiles::SCOPE_PROFILES, self.scope_len());
        self.resource.head.len() + scope + self.resource.tail.len()
    }

    fn dictionary_len(&self) -> usize {
        self.dictionary_head.len() + self.attributes.table_len() + self.stack_table_len
    }

    /// The size of the encoding in bytes.
    pub fn len(&self) -> usize {
        len_field_size(profiles_data::RESOURCE_PROFILES, self.resource_len())
            + len_field_size(profiles_data::DICTIONARY, self.dictionary_len())
    }

    /// Whether the encoding is empty (it never is: it has a resource).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The encoding in order: bytes made up front, and runs of samples and
    /// of stack table entries to encode.
    fn pieces(&self) -> Vec<Piece<'_>> {
        let prefix = |number: u32, len: usize| {
            let mut prefix = Vec::with_capacity(16);
            write_len_prefix(&mut prefix, number, len);
            Piece::Bytes(Cow::Owned(prefix))
        };
        let mut pieces = vec![
            prefix(profiles_data::RESOURCE_PROFILES, self.resource_len()),
            Piece::Bytes(Cow::Borrowed(&self.resource.head)),
            prefix(resource_profiles::SCOPE_PROFILES, self.scope_len()),
            Piece::Bytes(Cow::Borrowed(&self.scope.head)),
        ];
        let samples = self.shapes.len();
        for (k, profile) in self.profiles.iter().enumerate() {
            pieces.push(prefix(scope_profiles::PROFILES, self.profile_len(k)));
            pieces.push(Piece::Bytes(Cow::Borrowed(&profile.head)));
            for start in (0..samples).step_by(SAMPLES_PER_PIECE) {
                let end = (start + SAMPLES_PER_PIECE).min(samples);
                pieces.push(Piece::Samples(k, start..end));
            }
            pieces.push(Piece::Bytes(Cow::Borrowed(&profile.tail)));
        }
        pieces.push(Piece::Bytes(Cow::Borrowed(&self.scope.tail)));
        pieces.push(Piece::Bytes(Cow::Borrowed(&self.resource.tail)));
        pieces.push(prefix(profiles_data::DICTIONARY, self.dictionary_len()));
        pieces.push(Piece::Bytes(Cow::Borrowed(&self.dictionary_head)));
        let mut attribute_table = Vec::with_capacity(self.attributes.table_len());
        self.attributes.write_table(&mut attribute_table);
        pieces.push(Piece::Bytes(Cow::Owned(attribute_table)));
        // `stack_table` (field 7, the dictionary's last): entry 0, the empty
        // stack, is an empty message.
        pieces.push(prefix(profiles_dictionary::STACK_TABLE, 0));
        let stacks = self.shapes.stack_count();
        for start in (1..=stacks).step_by(STACKS_PER_PIECE) {
            pieces.push(Piece::Stacks(
                start..(start + STACKS_PER_PIECE).min(stacks + 1),
            ));
        }
        pieces
    }

    /// A piece of samples or stacks, appended to `out`.
    fn encode(&self, piece: &Piece, out: &mut Vec<u8>) {
        let mut buffer = pprof::Sample::new();
        match piece {
            Piece::Bytes(bytes) => out.extend_from_slice(bytes),
            Piece::Samples(k, samples) => {
                (self.shapes).write_samples(out, self.source, *k, samples.clone(), &mut buffer)
            }
            Piece::Stacks(entries) => (self.shapes).write_stacks(out, self.source, entries.clone()),
        }
    }

    /// Writes the encoding to `out`, front to back. Many small writes:
    /// give it a buffered writer. A large profile's pieces are encoded on
    /// two threads ([`threads::write_in_order`]).
    pub fn write_to<W: Write + ?Sized>(&self, out: &mut W) -> io::Result<()> {
        let apart =
            self.shapes.len() >= PARALLEL_SAMPLES || self.shapes.stack_count() >= PARALLEL_SAMPLES;
        let encode = |piece: &Piece<'_>, chunk: &mut Vec<u8>| self.encode(piece, chunk);
        let write = &mut |bytes: &[u8]| out.write_all(bytes);
        threads::write_in_order(apart, &self.pieces(), made_bytes, encode, write)
    }

    /// The whole encoding in one buffer.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len());
        self.write_to(&mut out)
            .expect("writing to a Vec does not fail");
        out
    }
}

/// The bytes of a piece made up front; `None` for one to encode.
fn made_bytes<'p>(piece: &'p Piece<'_>) -> Option<&'p [u8]> {
    match piece {
        Piece::Bytes(bytes) => Some(bytes),
        _ => None,
    }
}
