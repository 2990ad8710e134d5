//! Random messages of any type, built through reflection from a seed, for
//! property tests over every message of the schemas.

use protobuf::reflect::{MessageDescriptor, ReflectValueBox, RuntimeFieldType, RuntimeType};
use protobuf::MessageDyn;

pub use protoprof_synth::Rng;

/// Integers that exercise varint lengths: small, large and negative.
fn int(rng: &mut Rng) -> i64 {
    match rng.below(4) {
        0 => rng.below(10) as i64,
        1 => rng.next_u64() as i64,
        2 => -(rng.below(1000) as i64),
        _ => rng.below(1 << 20) as i64,
    }
}

const STRING_PIECES: [&str; 8] = [
    "",
    "cpu",
    "main.go",
    "é",
    "line\nbreak",
    "quote\"s\\",
    "\u{1F600}",
    "\u{1}",
];

/// A random message of `descriptor`'s type, nested at most `depth` levels.
/// With `unknown_fields`, some messages also carry unknown fields.
pub fn random_message(
    descriptor: &MessageDescriptor,
    rng: &mut Rng,
    depth: u32,
    unknown_fields: bool,
) -> Box<dyn MessageDyn> {
    let mut message = descriptor.new_instance();
    for field in descriptor.fields() {
        if rng.chance(2) {
            continue;
        }
        match field.runtime_field_type() {
            RuntimeFieldType::Singular(t) => {
                if let Some(v) = random_value(&t, rng, depth, unknown_fields) {
                    field.set_singular_field(&mut *message, v);
                }
            }
            RuntimeFieldType::Repeated(t) => {
                for _ in 0..rng.below(4) {
                    if let Some(v) = random_value(&t, rng, depth, unknown_fields) {
                        field.mut_repeated(&mut *message).push(v);
                    }
                }
            }
            RuntimeFieldType::Map(k, v) => {
                for _ in 0..rng.below(3) {
                    if let (Some(k), Some(v)) = (
                        random_value(&k, rng, depth, unknown_fields),
                        random_value(&v, rng, depth, unknown_fields),
                    ) {
                        field.mut_map(&mut *message).insert(k, v);
                    }
                }
            }
        }
    }
    if unknown_fields && rng.chance(3) {
        let unknown = message.mut_unknown_fields_dyn();
        let number = 1000 + rng.below(50) as u32;
        match rng.below(4) {
            0 => unknown.add_varint(number, rng.next_u64()),
            1 => unknown.add_fixed32(number, rng.next_u64() as u32),
            2 => unknown.add_fixed64(number, rng.next_u64()),
            _ => unknown.add_length_delimited(number, rng.next_u64().to_le_bytes().to_vec()),
        }
    }
    message
}

fn random_value(
    t: &RuntimeType,
    rng: &mut Rng,
    depth: u32,
    unknown_fields: bool,
) -> Option<ReflectValueBox> {
    Some(match t {
        RuntimeType::I32 => ReflectValueBox::I32(int(rng) as i32),
        RuntimeType::I64 => ReflectValueBox::I64(int(rng)),
        RuntimeType::U32 => ReflectValueBox::U32(int(rng) as u32),
        RuntimeType::U64 => ReflectValueBox::U64(int(rng) as u64),
        RuntimeType::F32 => ReflectValueBox::F32(int(rng) as f32 / 8.0),
        RuntimeType::F64 => ReflectValueBox::F64(match rng.below(4) {
            0 => f64::INFINITY,
            1 => 0.1 + 0.2,
            _ => int(rng) as f64 / 3.0,
        }),
        RuntimeType::Bool => ReflectValueBox::Bool(rng.chance(2)),
        RuntimeType::String => {
            let pieces = rng.below(3);
            ReflectValueBox::String((0..pieces).map(|_| STRING_PIECES[rng.below(8)]).collect())
        }
        RuntimeType::VecU8 => {
            let len = [0, 1, 8, 16][rng.below(4)];
            ReflectValueBox::Bytes((0..len).map(|_| rng.next_u64() as u8).collect())
        }
        RuntimeType::Enum(e) => {
            let values: Vec<i32> = e.values().map(|v| v.value()).collect();
            ReflectValueBox::Enum(e.clone(), values[rng.below(values.len())])
        }
        RuntimeType::Message(m) => {
            if depth == 0 {
                return None;
            }
            ReflectValueBox::Message(random_message(m, rng, depth - 1, unknown_fields))
        }
    })
}
