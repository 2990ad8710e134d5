//! Random messages of any type, built through reflection from a seed, for
//! property tests over every message of the schemas.

use protobuf::reflect::{MessageDescriptor, ReflectValueBox, RuntimeFieldType, RuntimeType};
use protobuf::MessageDyn;

/// A small deterministic generator (xorshift64*).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    fn chance(&mut self, one_in: u64) -> bool {
        self.below(one_in) == 0
    }

    /// Integers that exercise varint lengths: small, large and negative.
    fn int(&mut self) -> i64 {
        match self.below(4) {
            0 => self.below(10) as i64,
            1 => self.next_u64() as i64,
            2 => -(self.below(1000) as i64),
            _ => (self.below(1 << 20)) as i64,
        }
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
        RuntimeType::I32 => ReflectValueBox::I32(rng.int() as i32),
        RuntimeType::I64 => ReflectValueBox::I64(rng.int()),
        RuntimeType::U32 => ReflectValueBox::U32(rng.int() as u32),
        RuntimeType::U64 => ReflectValueBox::U64(rng.int() as u64),
        RuntimeType::F32 => ReflectValueBox::F32(rng.int() as f32 / 8.0),
        RuntimeType::F64 => ReflectValueBox::F64(match rng.below(4) {
            0 => f64::INFINITY,
            1 => 0.1 + 0.2,
            _ => rng.int() as f64 / 3.0,
        }),
        RuntimeType::Bool => ReflectValueBox::Bool(rng.chance(2)),
        RuntimeType::String => {
            let pieces = rng.below(3);
            ReflectValueBox::String(
                (0..pieces)
                    .map(|_| STRING_PIECES[rng.below(8) as usize])
                    .collect(),
            )
        }
        RuntimeType::VecU8 => {
            let len = [0, 1, 8, 16][rng.below(4) as usize];
            ReflectValueBox::Bytes((0..len).map(|_| rng.next_u64() as u8).collect())
        }
        RuntimeType::Enum(e) => {
            let values: Vec<i32> = e.values().map(|v| v.value()).collect();
            ReflectValueBox::Enum(e.clone(), values[rng.below(values.len() as u64) as usize])
        }
        RuntimeType::Message(m) => {
            if depth == 0 {
                return None;
            }
            ReflectValueBox::Message(random_message(m, rng, depth - 1, unknown_fields))
        }
    })
}
