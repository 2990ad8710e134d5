//! A converted v1development message, written to any `io::Write` without
//! being held whole in memory.
//!
//! `ProfilesData` holds the resource (field 1, which leads to the samples)
//! before the dictionary (field 2, whose stack table is, for profiles with
//! distinct stacks, most of the message). Every length prefix is computed
//! before anything is written, so the output goes out front to back: the
//! enclosing messages' fields from their rust-protobuf encodings, each
//! Profile's samples from their encoded buffer, and the stack table straight
//! from the interned stacks, a chunk at a time.

use std::io::{self, Write};

use protobuf::Message;
use protoprof_model_meta::wire::{
    len_field_size, packed_payload, packed_size, write_len_prefix, write_packed,
};
use protoprof_model_otlp::fields::opentelemetry::proto::profiles::v1development::{
    profiles_data, profiles_dictionary, resource_profiles, scope_profiles, stack,
};
use protoprof_model_otlp::opentelemetry::proto::profiles::v1development as dev;

use crate::development_records::{int32, SampleShapes};
use crate::sample_records::split_encoding;

/// Bytes gathered before a write to the output when the stack table is
/// written.
const CHUNK: usize = 1 << 18;

/// From this many stacks on, the stack table is encoded on a second thread
/// while the rest is written.
const PARALLEL_STACKS: usize = 50_000;

/// pprof converted to v1development `ProfilesData`, ready to be written:
/// [`Self::write_to`] writes the bytes rust-protobuf writes for the message
/// `pprof_to_development` builds, while holding the samples encoded and the
/// stacks interned, never the whole encoding.
pub struct DevelopmentEncoding {
    resource: Parts,
    scope: Parts,
    /// Per Profile: its fields before the samples, its samples (occurrences
    /// of `Profile.samples`, in consecutive chunks), its fields after them.
    profiles: Vec<ProfileParts>,
    /// The dictionary's fields but the stack table (its last field).
    dictionary_head: Vec<u8>,
    shapes: SampleShapes,
    /// Per stack in the table after entry 0: its packed payload's size.
    stack_payloads: Vec<u32>,
    /// The stack table's size, every occurrence with its tag and length.
    stack_table_len: usize,
}

/// A Profile's fields before its samples, its samples, the fields after.
type ProfileParts = (Vec<u8>, Vec<Vec<u8>>, Vec<u8>);

/// An enclosing message's encoding without the field that leads to the
/// samples: the fields numbered before it and those after it.
struct Parts {
    head: Vec<u8>,
    tail: Vec<u8>,
}

/// A location position as `Stack.location_indices` holds it: one past the
/// position (entry 0 of the location table is the zero location).
fn location_index(position: &u32) -> u64 {
    int32(*position as i32 + 1)
}

impl DevelopmentEncoding {
    /// `data` — one resource and one scope, as `pprof_to_development`
    /// builds them, its Profiles' samples and its stack table left out —
    /// with `samples[k]` (from `SampleShapes::encode`, in chunks) as
    /// Profile k's samples and the stack table from `shapes`.
    pub(crate) fn new(
        mut data: dev::ProfilesData,
        shapes: SampleShapes,
        samples: Vec<Vec<Vec<u8>>>,
    ) -> Self {
        let mut resource = data.resource_profiles.pop().expect("one resource");
        let mut scope = resource.scope_profiles.pop().expect("one scope");
        let profiles = std::mem::take(&mut scope.profiles);
        let mut dictionary = data.dictionary.take().unwrap_or_default();
        dictionary.stack_table.clear();
        let dictionary_head = dictionary.write_to_bytes().expect("OTLP encodes");
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
        let profiles = (profiles.into_iter().zip(samples))
            .map(|(profile, samples)| {
                let (head, tail) = split_encoding(profile, |p| dev::Profile {
                    sample_type: std::mem::take(&mut p.sample_type),
                    ..Default::default()
                });
                (head, samples, tail)
            })
            .collect();
        let stack_payloads =
            shapes.map_stacks(|stack| packed_payload(stack.iter().map(location_index)) as u32);
        // Entry 0, the empty stack, is an empty message.
        let stack_table_len = len_field_size(profiles_dictionary::STACK_TABLE, 0)
            + (stack_payloads.iter())
                .map(|&payload| {
                    let size = packed_size(stack::LOCATION_INDICES, payload as usize);
                    len_field_size(profiles_dictionary::STACK_TABLE, size)
                })
                .sum::<usize>();
        DevelopmentEncoding {
            resource,
            scope,
            profiles,
            dictionary_head,
            shapes,
            stack_payloads,
            stack_table_len,
        }
    }

    fn profile_len((head, samples, tail): &ProfileParts) -> usize {
        head.len() + samples.iter().map(Vec::len).sum::<usize>() + tail.len()
    }

    fn scope_len(&self) -> usize {
        let profiles = (self.profiles.iter())
            .map(|p| len_field_size(scope_profiles::PROFILES, Self::profile_len(p)))
            .sum::<usize>();
        self.scope.head.len() + profiles + self.scope.tail.len()
    }

    fn resource_len(&self) -> usize {
        let scope = len_field_size(resource_profiles::SCOPE_PROFILES, self.scope_len());
        self.resource.head.len() + scope + self.resource.tail.len()
    }

    fn dictionary_len(&self) -> usize {
        self.dictionary_head.len() + self.stack_table_len
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

    /// Writes the encoding to `out`, front to back. Many small writes:
    /// give it a buffered writer.
    pub fn write_to<W: Write + ?Sized>(&self, out: &mut W) -> io::Result<()> {
        if self.stack_payloads.len() < PARALLEL_STACKS {
            self.write_head(out)?;
            return self.encode_stack_table(|chunk| out.write_all(chunk));
        }
        // The stack table is encoded on a second thread, from the start,
        // while this one writes: chunks go over a channel and come back
        // empty to be filled again.
        let (full, filled) = std::sync::mpsc::sync_channel::<Vec<u8>>(4);
        let (empty, emptied) = std::sync::mpsc::channel::<Vec<u8>>();
        std::thread::scope(|scope| {
            scope.spawn(move || {
                // An error ends the writes; the receiver is then gone, and so
                // is the reason to go on.
                let _ = self.encode_stack_table(|chunk| {
                    let next = emptied.try_recv().unwrap_or_default();
                    let chunk = std::mem::replace(chunk, next);
                    full.send(chunk).map_err(io::Error::other)
                });
            });
            let written = self.write_head(out).and_then(|()| {
                for chunk in &filled {
                    out.write_all(&chunk)?;
                    let _ = empty.send(chunk);
                }
                Ok(())
            });
            drop(filled);
            written
        })
    }

    /// Everything before the stack table.
    fn write_head<W: Write + ?Sized>(&self, out: &mut W) -> io::Result<()> {
        let mut prefix = Vec::with_capacity(16);
        let mut write_prefix = |out: &mut W, number: u32, len: usize| {
            prefix.clear();
            write_len_prefix(&mut prefix, number, len);
            out.write_all(&prefix)
        };
        write_prefix(out, profiles_data::RESOURCE_PROFILES, self.resource_len())?;
        out.write_all(&self.resource.head)?;
        write_prefix(out, resource_profiles::SCOPE_PROFILES, self.scope_len())?;
        out.write_all(&self.scope.head)?;
        for profile in &self.profiles {
            write_prefix(out, scope_profiles::PROFILES, Self::profile_len(profile))?;
            out.write_all(&profile.0)?;
            for chunk in &profile.1 {
                out.write_all(chunk)?;
            }
            out.write_all(&profile.2)?;
        }
        out.write_all(&self.scope.tail)?;
        out.write_all(&self.resource.tail)?;
        write_prefix(out, profiles_data::DICTIONARY, self.dictionary_len())?;
        out.write_all(&self.dictionary_head)
    }

    /// `ProfilesDictionary.stack_table` (field 7, the last), in the bytes
    /// rust-protobuf writes for it, handed to `emit` a chunk at a time
    /// (`emit` may take the chunk's buffer and leave another).
    fn encode_stack_table(
        &self,
        mut emit: impl FnMut(&mut Vec<u8>) -> io::Result<()>,
    ) -> io::Result<()> {
        let mut chunk = Vec::with_capacity(CHUNK + 64);
        write_len_prefix(&mut chunk, profiles_dictionary::STACK_TABLE, 0);
        for (stack, &payload) in self.shapes.stacks().zip(&self.stack_payloads) {
            let payload = payload as usize;
            let size = packed_size(stack::LOCATION_INDICES, payload);
            write_len_prefix(&mut chunk, profiles_dictionary::STACK_TABLE, size);
            let indices = stack.iter().map(location_index);
            write_packed(&mut chunk, stack::LOCATION_INDICES, payload, indices);
            if chunk.len() >= CHUNK {
                emit(&mut chunk)?;
                chunk.clear();
                chunk.reserve(CHUNK + 64);
            }
        }
        emit(&mut chunk)
    }

    /// The whole encoding in one buffer.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len());
        self.write_to(&mut out)
            .expect("writing to a Vec does not fail");
        out
    }
}
