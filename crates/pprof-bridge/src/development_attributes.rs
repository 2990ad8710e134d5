//! v1development's attribute table as pprof → v1development fills it: each
//! distinct (key, value, unit) once, kept encoded.
//!
//! A profile with a numeric label on many samples (allocation sizes, say)
//! has an attribute per distinct number: hundreds of thousands. As
//! messages, each is a `KeyValueAndUnit` with a boxed `AnyValue`, and a map
//! entry keyed by its value; encoded, each is its 10 to 20 bytes, and the
//! encoding is also its key ([`KeyNumbering`]). Equal attributes encode
//! alike, so equal keys are exactly equal attributes.

use protobuf::Message;
use protoprof_model_meta::wire::{len_field_size, write_len_prefix, write_optional, write_varint};
use protoprof_model_otlp::fields::opentelemetry::proto::common::v1::any_value;
use protoprof_model_otlp::fields::opentelemetry::proto::profiles::v1development::{
    key_value_and_unit, profiles_dictionary,
};
use protoprof_model_otlp::opentelemetry::proto::common::v1::{any_value::Value, AnyValue};
use protoprof_model_otlp::opentelemetry::proto::profiles::v1development as dev;

use crate::development_records::int32;
use crate::key_numbering::{fx_hash, KeyNumbering, Numbered};

/// The attribute table, each distinct attribute once, encoded. Entry 0 is
/// the zero value (an empty message), never matched.
pub(crate) struct AttributeTable {
    /// Entries after entry 0: their encodings, end to end.
    encoded: Vec<u8>,
    /// Where entry k + 1 ends in `encoded`.
    ends: Vec<u32>,
    numbering: KeyNumbering,
    scratch: Vec<u8>,
}

impl Default for AttributeTable {
    fn default() -> Self {
        AttributeTable {
            encoded: Vec::new(),
            ends: Vec::new(),
            numbering: KeyNumbering::new(fx_hash),
            scratch: Vec::new(),
        }
    }
}

impl AttributeTable {
    /// The table index of (key, value, unit), added when new.
    pub fn intern(&mut self, key_strindex: i32, value: &AnyValue, unit_strindex: i32) -> i32 {
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        encode_entry(&mut scratch, key_strindex, value, unit_strindex);
        let (encoded, ends) = (&self.encoded, &self.ends);
        let same = |n: u32, key: &[u8]| entry(encoded, ends, n as usize) == key;
        let index = match self.numbering.number(&scratch, same) {
            Numbered::Seen(n) => n,
            Numbered::New(n) => {
                self.encoded.extend_from_slice(&scratch);
                // Messages are under 4 GiB, and so is the table.
                self.ends.push(self.encoded.len() as u32);
                n
            }
        };
        self.scratch = scratch;
        index as i32 + 1
    }

    /// The entries as messages, entry 0 first.
    pub fn messages(&self) -> Vec<dev::KeyValueAndUnit> {
        let entries = (0..self.ends.len()).map(|n| {
            let bytes = entry(&self.encoded, &self.ends, n);
            dev::KeyValueAndUnit::parse_from_bytes(bytes).expect("an entry this table encoded")
        });
        std::iter::once(dev::KeyValueAndUnit::default())
            .chain(entries)
            .collect()
    }

    /// The size of `ProfilesDictionary.attribute_table`, every occurrence
    /// with its tag and length.
    pub fn table_len(&self) -> usize {
        let entries = (0..self.ends.len())
            .map(|n| entry(&self.encoded, &self.ends, n).len())
            .map(|len| len_field_size(profiles_dictionary::ATTRIBUTE_TABLE, len))
            .sum::<usize>();
        len_field_size(profiles_dictionary::ATTRIBUTE_TABLE, 0) + entries
    }

    /// `ProfilesDictionary.attribute_table` as rust-protobuf writes it.
    pub fn write_table(&self, out: &mut Vec<u8>) {
        write_len_prefix(out, profiles_dictionary::ATTRIBUTE_TABLE, 0);
        for n in 0..self.ends.len() {
            let bytes = entry(&self.encoded, &self.ends, n);
            write_len_prefix(out, profiles_dictionary::ATTRIBUTE_TABLE, bytes.len());
            out.extend_from_slice(bytes);
        }
    }
}

/// Entry n + 1's encoding.
fn entry<'a>(encoded: &'a [u8], ends: &[u32], n: usize) -> &'a [u8] {
    let start = match n {
        0 => 0,
        n => ends[n - 1] as usize,
    };
    &encoded[start..ends[n] as usize]
}

/// A `KeyValueAndUnit` as rust-protobuf writes it: fields in number order,
/// proto3 zeros left out, the value's one field always written.
fn encode_entry(out: &mut Vec<u8>, key_strindex: i32, value: &AnyValue, unit_strindex: i32) {
    write_optional(out, key_value_and_unit::KEY_STRINDEX, int32(key_strindex));
    let mut any = Vec::new();
    // A value with unknown fields goes through rust-protobuf, which keeps them.
    let plain = value
        .special_fields
        .unknown_fields()
        .iter()
        .next()
        .is_none();
    match &value.value {
        Some(Value::StringValue(s)) if plain => {
            write_len_prefix(&mut any, any_value::STRING_VALUE, s.len());
            any.extend_from_slice(s.as_bytes());
        }
        Some(Value::IntValue(n)) if plain => {
            write_varint(&mut any, u64::from(any_value::INT_VALUE) << 3);
            write_varint(&mut any, *n as u64);
        }
        Some(Value::BoolValue(b)) if plain => {
            write_varint(&mut any, u64::from(any_value::BOOL_VALUE) << 3);
            write_varint(&mut any, u64::from(*b));
        }
        _ => any = value.write_to_bytes().expect("an attribute value encodes"),
    }
    write_len_prefix(out, key_value_and_unit::VALUE, any.len());
    out.extend_from_slice(&any);
    write_optional(out, key_value_and_unit::UNIT_STRINDEX, int32(unit_strindex));
}

#[cfg(test)]
mod tests {
    use super::*;
    use protoprof_model_otlp::opentelemetry::proto::common::v1::ArrayValue;

    fn any(value: Value) -> AnyValue {
        AnyValue {
            value: Some(value),
            ..Default::default()
        }
    }

    #[test]
    fn entries_are_rust_protobufs_encodings_and_equal_ones_are_interned_once() {
        let array = ArrayValue {
            values: vec![any(Value::IntValue(3))],
            ..Default::default()
        };
        let values = [
            any(Value::StringValue(String::new())),
            any(Value::StringValue("x".repeat(200))),
            any(Value::IntValue(0)),
            any(Value::IntValue(-1)),
            any(Value::IntValue(1 << 40)),
            any(Value::BoolValue(false)),
            any(Value::BoolValue(true)),
            any(Value::DoubleValue(0.5)),
            any(Value::ArrayValue(array)),
        ];
        let mut table = AttributeTable::default();
        let mut expected = vec![dev::KeyValueAndUnit::default()];
        for (key, unit) in [(0, 0), (3, 0), (0, -2), (300, 7)] {
            for value in &values {
                let index = table.intern(key, value, unit);
                assert_eq!(index as usize, expected.len());
                assert_eq!(table.intern(key, value, unit), index, "interned once");
                expected.push(dev::KeyValueAndUnit {
                    key_strindex: key,
                    value: protobuf::MessageField::some(value.clone()),
                    unit_strindex: unit,
                    ..Default::default()
                });
            }
        }
        assert_eq!(table.messages(), expected);
        let dictionary = dev::ProfilesDictionary {
            attribute_table: expected,
            ..Default::default()
        };
        let mut written = Vec::new();
        table.write_table(&mut written);
        assert_eq!(written, dictionary.write_to_bytes().unwrap());
        assert_eq!(written.len(), table.table_len());
    }
}
