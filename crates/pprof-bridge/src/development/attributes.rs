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
use protoprof_model_meta::wire::{
    len_field_size, varint_size, write_len_prefix, write_optional, write_varint,
};
use protoprof_model_otlp::fields::opentelemetry::proto::common::v1::any_value;
use protoprof_model_otlp::fields::opentelemetry::proto::profiles::v1development::{
    key_value_and_unit, profiles_dictionary,
};
use protoprof_model_otlp::opentelemetry::proto::common::v1::{any_value::Value, AnyValue};
use protoprof_model_otlp::opentelemetry::proto::profiles::v1development as dev;

use crate::development::key_numbering::{fx_hash, KeyNumbering, Numbered};
use crate::development::records::int32;

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
    pub fn intern(&mut self, key_strindex: i32, value: &AttributeValue, unit_strindex: i32) -> i32 {
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

/// An attribute's value: a label's string or number borrowed as it is
/// (most attributes, and no `AnyValue` to build for them), or any value.
pub(crate) enum AttributeValue<'a> {
    String(&'a str),
    Int(i64),
    Any(AnyValue),
}

/// A `KeyValueAndUnit` as rust-protobuf writes it: fields in number order,
/// proto3 zeros left out, the value's one field always written.
fn encode_entry(out: &mut Vec<u8>, key_strindex: i32, value: &AttributeValue, unit_strindex: i32) {
    write_optional(out, key_value_and_unit::KEY_STRINDEX, int32(key_strindex));
    match plain_value(value) {
        Some(plain) => {
            write_len_prefix(out, key_value_and_unit::VALUE, plain.len());
            plain.write(out);
        }
        None => {
            let AttributeValue::Any(value) = value else {
                unreachable!("strings and numbers are plain")
            };
            let any = value.write_to_bytes().expect("an attribute value encodes");
            write_len_prefix(out, key_value_and_unit::VALUE, any.len());
            out.extend_from_slice(&any);
        }
    }
    write_optional(out, key_value_and_unit::UNIT_STRINDEX, int32(unit_strindex));
}

/// An `AnyValue` of one scalar field, encoded without building the message.
enum PlainValue<'a> {
    String(&'a str),
    Varint(u32, u64),
}

/// `value` as a [`PlainValue`]; `None` for one that goes through
/// rust-protobuf (arrays, lists, doubles, bytes, an empty value, and any
/// value with unknown fields, which rust-protobuf keeps).
fn plain_value<'a>(value: &'a AttributeValue) -> Option<PlainValue<'a>> {
    let any = match value {
        AttributeValue::String(s) => return Some(PlainValue::String(s)),
        AttributeValue::Int(n) => return Some(PlainValue::Varint(any_value::INT_VALUE, *n as u64)),
        AttributeValue::Any(any) => any,
    };
    if any.special_fields.unknown_fields().iter().next().is_some() {
        return None;
    }
    match &any.value {
        Some(Value::StringValue(s)) => Some(PlainValue::String(s)),
        Some(Value::IntValue(n)) => Some(PlainValue::Varint(any_value::INT_VALUE, *n as u64)),
        Some(Value::BoolValue(b)) => Some(PlainValue::Varint(any_value::BOOL_VALUE, u64::from(*b))),
        _ => None,
    }
}

impl PlainValue<'_> {
    /// The size of its encoding.
    fn len(&self) -> usize {
        match self {
            PlainValue::String(s) => len_field_size(any_value::STRING_VALUE, s.len()),
            PlainValue::Varint(number, v) => varint_size(u64::from(*number) << 3) + varint_size(*v),
        }
    }

    fn write(&self, out: &mut Vec<u8>) {
        match self {
            PlainValue::String(s) => {
                write_len_prefix(out, any_value::STRING_VALUE, s.len());
                out.extend_from_slice(s.as_bytes());
            }
            PlainValue::Varint(number, v) => {
                write_varint(out, u64::from(*number) << 3);
                write_varint(out, *v);
            }
        }
    }
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
                let attribute = &AttributeValue::Any(value.clone());
                let index = table.intern(key, attribute, unit);
                assert_eq!(index as usize, expected.len());
                assert_eq!(table.intern(key, attribute, unit), index, "interned once");
                expected.push(dev::KeyValueAndUnit {
                    key_strindex: key,
                    value: protobuf::MessageField::some(value.clone()),
                    unit_strindex: unit,
                    ..Default::default()
                });
            }
        }
        // A label's string or number borrowed is the same entry as its
        // `AnyValue`.
        let borrowed = [
            (1, AttributeValue::String("")),
            (2, AttributeValue::String(&"x".repeat(200))),
            (3, AttributeValue::Int(0)),
            (4, AttributeValue::Int(-1)),
            (5, AttributeValue::Int(1 << 40)),
        ];
        for (position, value) in borrowed {
            for (row, (key, unit)) in [(0, 0), (3, 0), (0, -2), (300, 7)].into_iter().enumerate() {
                let index = row * values.len() + position;
                assert_eq!(table.intern(key, &value, unit) as usize, index);
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
