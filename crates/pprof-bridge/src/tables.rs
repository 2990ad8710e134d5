//! The tables pprof -> OTLP fills for every sample (stacks, attributes,
//! links) and the id lookups it resolves references with; kept lean because
//! they run once per frame and per label of a million-sample profile.

use protoprof_model_meta::{DuplicateId, IdIndex, StringTable};
use rustc_hash::FxHashMap;

use protoprof_model_otlp::opentelemetry::proto::common::v1::{
    any_value::Value, AnyValue, KeyValue,
};
use protoprof_model_otlp::opentelemetry::proto::profiles::v1experimental as otlp;

use crate::error::BridgeError;

/// The position of each id in its table; fails on a repeated id.
pub(crate) fn id_positions(
    ids: impl Iterator<Item = u64>,
    table: &str,
) -> Result<IdIndex<u32>, BridgeError> {
    match IdIndex::positions(ids) {
        (index, None) => Ok(index),
        (_, Some(DuplicateId { position, id })) => Err(BridgeError::DuplicateId {
            path: format!("{table}[{position}].id"),
            id,
        }),
    }
}

/// Slices laid end to end; identical slices share one: the stacks of
/// pprof -> v1experimental ([`StackTable`]), whose `location_indices` are
/// this table.
#[derive(Default)]
pub struct SliceTable<T> {
    flat: Vec<T>,
    /// Hash of a stack -> the (start, length) of the first stack with that
    /// hash; further stacks with the same hash (rare) in `collisions`.
    first: FxHashMap<u64, (u32, u32)>,
    collisions: FxHashMap<u64, Vec<(u32, u32)>>,
}

/// Stacks: location positions are kept as u32 while interning (half the
/// memory to compare against, so more of it stays in cache) and widened
/// once at the end.
pub type StackTable = SliceTable<u32>;

impl<T: std::hash::Hash + Eq + Copy + Default> SliceTable<T> {
    pub fn with_capacity(stacks: usize) -> Self {
        SliceTable {
            first: FxHashMap::with_capacity_and_hasher(stacks, Default::default()),
            ..Default::default()
        }
    }

    /// The (start, length) of `stack` in the table, adding it when new;
    /// the empty slice is (0, 0).
    pub fn intern(&mut self, stack: &[T]) -> (u64, u64) {
        use std::hash::{Hash, Hasher};
        if stack.is_empty() {
            return (0, 0);
        }
        let mut hasher = rustc_hash::FxHasher::default();
        stack.hash(&mut hasher);
        let hash = hasher.finish();
        let same = |flat: &[T], (start, length): (u32, u32)| {
            &flat[start as usize..(start + length) as usize] == stack
        };
        let widen = |(start, length): (u32, u32)| (u64::from(start), u64::from(length));
        match self.first.get(&hash) {
            Some(&slot) if same(&self.flat, slot) => return widen(slot),
            Some(_) => {
                if let Some(&slot) = self
                    .collisions
                    .get(&hash)
                    .and_then(|c| c.iter().find(|&&slot| same(&self.flat, slot)))
                {
                    return widen(slot);
                }
            }
            None => {}
        }
        let slot = (self.flat.len() as u32, stack.len() as u32);
        self.flat.extend_from_slice(stack);
        match self.first.entry(hash) {
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(slot);
            }
            std::collections::hash_map::Entry::Occupied(_) => {
                self.collisions.entry(hash).or_default().push(slot)
            }
        }
        widen(slot)
    }

    /// The slice at a slot [`Self::intern`] returned.
    pub fn stack(&self, (start, length): (u64, u64)) -> &[T] {
        &self.flat[start as usize..(start + length) as usize]
    }
}

impl StackTable {
    /// `Profile.location_indices`.
    pub fn into_indices(self) -> Vec<i64> {
        self.flat.into_iter().map(i64::from).collect()
    }
}

/// An attribute's identity, by string-table index (no allocation per
/// lookup). Equal strings at two indices make two equal entries: harmless.
#[derive(Hash, PartialEq, Eq, Clone, Copy)]
pub enum AttrValue {
    Str(i64),
    Int(i64),
    Bool(bool),
}

/// The attribute table, de-duplicated.
#[derive(Default)]
pub struct AttributeTable {
    pub table: Vec<KeyValue>,
    index: FxHashMap<(i64, AttrValue), u64>,
}

impl AttributeTable {
    /// The position of (key, value); `key` and string values by their index
    /// in `strings`, except keys not in the table (pass `-1` and `key_text`).
    pub fn intern(
        &mut self,
        key: i64,
        key_text: &str,
        value: AttrValue,
        strings: &[String],
    ) -> u64 {
        let table = &mut self.table;
        *self.index.entry((key, value)).or_insert_with(|| {
            let value = match value {
                AttrValue::Str(i) => Value::StringValue(strings.string(i).to_string()),
                AttrValue::Int(i) => Value::IntValue(i),
                AttrValue::Bool(b) => Value::BoolValue(b),
            };
            table.push(KeyValue {
                key: key_text.to_string(),
                value: protobuf::MessageField::some(AnyValue {
                    value: Some(value),
                    ..Default::default()
                }),
                ..Default::default()
            });
            table.len() as u64 - 1
        })
    }
}

/// Links, de-duplicated.
#[derive(Default)]
pub struct LinkTable {
    pub table: Vec<otlp::Link>,
    index: FxHashMap<(Vec<u8>, Vec<u8>), u64>,
}

impl LinkTable {
    pub fn intern(&mut self, (trace_id, span_id): (Vec<u8>, Vec<u8>)) -> u64 {
        let table = &mut self.table;
        *self
            .index
            .entry((trace_id.clone(), span_id.clone()))
            .or_insert_with(|| {
                table.push(otlp::Link {
                    trace_id,
                    span_id,
                    ..Default::default()
                });
                table.len() as u64 - 1
            })
    }
}
