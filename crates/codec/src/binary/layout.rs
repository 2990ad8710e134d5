//! What the scanner needs to know of each message type: for every field
//! number, its name, wire type, and whether it holds a nested message.
//! Built once per root type from the reflection descriptors.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use protobuf::descriptor::field_descriptor_proto::{Label, Type};
use protobuf::reflect::{FileDescriptor, MessageDescriptor};

use crate::binary::wire::{FIXED32, FIXED64, LEN, VARINT};

/// How a field is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// A nested message: index of its layout in [`Layouts::messages`].
    Message(usize),
    String,
    Bytes,
    /// A scalar with this wire type (varint, fixed32 or fixed64).
    Scalar(u8),
}

#[derive(Debug, Clone)]
pub struct FieldLayout {
    pub name: String,
    pub kind: FieldKind,
    pub repeated: bool,
}

impl FieldLayout {
    /// The wire type a non-packed value of this field has.
    pub fn wire_type(&self) -> u8 {
        match self.kind {
            FieldKind::Scalar(wire_type) => wire_type,
            _ => LEN,
        }
    }

    /// Whether `wire_type` is acceptable for this field (packed or not).
    pub fn accepts(&self, wire_type: u8) -> bool {
        wire_type == self.wire_type() || (self.repeated && wire_type == LEN && self.is_packable())
    }

    pub fn is_packable(&self) -> bool {
        matches!(self.kind, FieldKind::Scalar(_))
    }
}

#[derive(Debug)]
pub struct MessageLayout {
    pub full_name: String,
    /// Indexed by field number; `None` for numbers the message does not declare.
    by_number: Vec<Option<FieldLayout>>,
}

impl MessageLayout {
    #[inline]
    pub fn field(&self, number: u32) -> Option<&FieldLayout> {
        self.by_number.get(number as usize).and_then(Option::as_ref)
    }
}

/// The layouts of a root message and every message reachable from it.
#[derive(Debug)]
pub struct Layouts {
    pub messages: Vec<MessageLayout>,
}

impl Layouts {
    pub const ROOT: usize = 0;

    /// Whether `self` and `other` read every input alike: the same fields,
    /// kinds and nesting at every level, whatever the messages are named
    /// (a `ProfilesData` and its collector's export request).
    pub fn same_wire_form(&self, other: &Layouts) -> bool {
        let same_field = |a: &Option<FieldLayout>, b: &Option<FieldLayout>| match (a, b) {
            (Some(a), Some(b)) => a.kind == b.kind && a.repeated == b.repeated,
            (None, None) => true,
            _ => false,
        };
        self.messages.len() == other.messages.len()
            && self.messages.iter().zip(&other.messages).all(|(a, b)| {
                a.by_number.len() == b.by_number.len()
                    && a.by_number
                        .iter()
                        .zip(&b.by_number)
                        .all(|(x, y)| same_field(x, y))
            })
    }

    /// The layouts for `root`, built on first use and shared after.
    pub fn for_message(root: &MessageDescriptor) -> Arc<Layouts> {
        // Keyed by the descriptor, not its name: a user's schema may declare
        // a message of the same name as a built-in one, with other fields.
        static CACHE: OnceLock<Mutex<HashMap<MessageDescriptor, Arc<Layouts>>>> = OnceLock::new();
        let cache = CACHE.get_or_init(Default::default);
        let mut cache = cache
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        cache
            .entry(root.clone())
            .or_insert_with(|| Arc::new(Layouts::build(root)))
            .clone()
    }

    fn build(root: &MessageDescriptor) -> Layouts {
        let registry = registry_of(root.file_descriptor());
        let mut index: HashMap<String, usize> = HashMap::new();
        let mut order: Vec<MessageDescriptor> = vec![root.clone()];
        index.insert(root.full_name().to_string(), 0);
        let mut messages = Vec::new();
        let mut next = 0;
        while next < order.len() {
            let message = order[next].clone();
            next += 1;
            let mut by_number: Vec<Option<FieldLayout>> = Vec::new();
            for field in message.fields() {
                let proto = field.proto();
                let kind = match proto.type_() {
                    Type::TYPE_MESSAGE | Type::TYPE_GROUP => {
                        let name = proto.type_name().trim_start_matches('.');
                        let nested = registry.get(name).unwrap_or_else(|| {
                            panic!("descriptor of {name} is not reachable from its file")
                        });
                        let id = *index.entry(name.to_string()).or_insert_with(|| {
                            order.push(nested.clone());
                            order.len() - 1
                        });
                        FieldKind::Message(id)
                    }
                    Type::TYPE_STRING => FieldKind::String,
                    Type::TYPE_BYTES => FieldKind::Bytes,
                    Type::TYPE_DOUBLE | Type::TYPE_FIXED64 | Type::TYPE_SFIXED64 => {
                        FieldKind::Scalar(FIXED64)
                    }
                    Type::TYPE_FLOAT | Type::TYPE_FIXED32 | Type::TYPE_SFIXED32 => {
                        FieldKind::Scalar(FIXED32)
                    }
                    _ => FieldKind::Scalar(VARINT),
                };
                let number = proto.number() as usize;
                if by_number.len() <= number {
                    by_number.resize(number + 1, None);
                }
                by_number[number] = Some(FieldLayout {
                    name: proto.name().to_string(),
                    kind,
                    repeated: proto.label() == Label::LABEL_REPEATED,
                });
            }
            messages.push(MessageLayout {
                full_name: message.full_name().to_string(),
                by_number,
            });
        }
        Layouts { messages }
    }
}

/// Every message (map entries included) of a file and its dependencies, by full name.
fn registry_of(file: &FileDescriptor) -> HashMap<String, MessageDescriptor> {
    let mut out = HashMap::new();
    let mut files = vec![file.clone()];
    let mut seen = std::collections::HashSet::new();
    while let Some(file) = files.pop() {
        if !seen.insert(file.name().to_string()) {
            continue;
        }
        files.extend(file.deps().iter().cloned());
        let mut pending: Vec<MessageDescriptor> = file.messages().collect();
        while let Some(message) = pending.pop() {
            pending.extend(message.nested_messages());
            out.insert(message.full_name().to_string(), message);
        }
    }
    out
}

#[cfg(test)]
mod wire_form_tests {
    use super::*;
    use crate::registry::message_descriptor;

    fn layouts(name: &str) -> Arc<Layouts> {
        Layouts::for_message(&message_descriptor(name).unwrap())
    }

    #[test]
    fn profiles_data_and_its_export_request_share_a_wire_form() {
        let data = layouts("opentelemetry.proto.profiles.v1development.ProfilesData");
        let request = layouts(
            "opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest",
        );
        assert!(data.same_wire_form(&request));
        let experimental = layouts("opentelemetry.proto.profiles.v1experimental.ProfilesData");
        assert!(!data.same_wire_form(&experimental));
        let pprof = layouts("perftools.profiles.Profile");
        assert!(!data.same_wire_form(&pprof));
    }
}
