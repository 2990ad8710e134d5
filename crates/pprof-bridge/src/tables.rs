//! The lookup tables pprof -> OTLP fills for every sample; kept lean because
//! they run once per frame and per label of a million-sample profile.

use rustc_hash::FxHashMap;

use protoprof_model_otlp::opentelemetry::proto::common::v1::{
    any_value::Value, AnyValue, KeyValue,
};
use protoprof_model_otlp::opentelemetry::proto::profiles::v1experimental as otlp;

use crate::error::BridgeError;

/// Position of each id in its table: a vector indexed by id when the ids
/// are dense (the usual 1..=n), a hash map otherwise.
pub enum IdPositions {
    Dense(Vec<u32>),
    Sparse(FxHashMap<u64, u32>),
}

const ABSENT: u32 = u32::MAX;

impl IdPositions {
    /// Fails on a repeated id.
    pub fn new(ids: &[u64], table: &str) -> Result<IdPositions, BridgeError> {
        let duplicate = |i: usize, id: u64| BridgeError::DuplicateId {
            path: format!("{table}[{i}].id"),
            id,
        };
        let max = ids.iter().copied().max().unwrap_or(0);
        if max <= 4 * ids.len() as u64 + 1024 {
            let mut dense = vec![ABSENT; max as usize + 1];
            for (i, &id) in ids.iter().enumerate() {
                if dense[id as usize] != ABSENT {
                    return Err(duplicate(i, id));
                }
                dense[id as usize] = i as u32;
            }
            Ok(IdPositions::Dense(dense))
        } else {
            let mut sparse = FxHashMap::default();
            for (i, &id) in ids.iter().enumerate() {
                if sparse.insert(id, i as u32).is_some() {
                    return Err(duplicate(i, id));
                }
            }
            Ok(IdPositions::Sparse(sparse))
        }
    }

    #[inline]
    pub fn get(&self, id: u64) -> Option<usize> {
        match self {
            IdPositions::Dense(dense) => dense
                .get(id as usize)
                .copied()
                .filter(|&p| p != ABSENT)
                .map(|p| p as usize),
            IdPositions::Sparse(sparse) => sparse.get(&id).map(|&p| p as usize),
        }
    }
}

/// Stacks laid end to end; identical stacks share one slice. Positions are
/// kept as u32 while interning (half the memory to compare against, so more
/// of it stays in cache) and widened once at the end.
#[derive(Default)]
pub struct StackTable {
    flat: Vec<u32>,
    /// Hash of a stack -> the (start, length) of the first stack with that
    /// hash; further stacks with the same hash (rare) in `collisions`.
    first: FxHashMap<u64, (u32, u32)>,
    collisions: FxHashMap<u64, Vec<(u32, u32)>>,
}

impl StackTable {
    pub fn with_capacity(stacks: usize) -> Self {
        StackTable {
            first: FxHashMap::with_capacity_and_hasher(stacks, Default::default()),
            ..Default::default()
        }
    }

    /// The (start, length) of `stack` in the table, adding it when new.
    pub fn intern(&mut self, stack: &[u32]) -> (u64, u64) {
        use std::hash::{Hash, Hasher};
        if stack.is_empty() {
            return (0, 0);
        }
        let mut hasher = rustc_hash::FxHasher::default();
        stack.hash(&mut hasher);
        let hash = hasher.finish();
        let same = |flat: &[u32], (start, length): (u32, u32)| {
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

    /// The stack at a slot [`Self::intern`] returned.
    pub fn stack(&self, (start, length): (u64, u64)) -> &[u32] {
        &self.flat[start as usize..(start + length) as usize]
    }

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
                AttrValue::Str(i) => {
                    Value::StringValue(strings.get(i as usize).cloned().unwrap_or_default())
                }
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

/// What a string-table entry is, for the label keys and units the bridge
/// treats specially; computed once per entry instead of once per label.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum StringClass {
    Plain,
    TraceId,
    SpanId,
    Timestamp,
    Nanoseconds,
}

pub fn classify(strings: &[String]) -> Vec<StringClass> {
    strings
        .iter()
        .map(|s| match s.as_str() {
            crate::to_otlp::TRACE_ID_LABEL => StringClass::TraceId,
            crate::to_otlp::SPAN_ID_LABEL => StringClass::SpanId,
            crate::to_otlp::TIMESTAMP_LABEL => StringClass::Timestamp,
            "nanoseconds" => StringClass::Nanoseconds,
            _ => StringClass::Plain,
        })
        .collect()
}
