//! Wire facts of the models, read through reflection, in the same shape as
//! the tables of `shared/schemas/*.md`, and a reader for those tables.

use std::collections::BTreeMap;

use protobuf::descriptor::field_descriptor_proto::{Label, Type};
use protobuf::descriptor::{DescriptorProto, FieldDescriptorProto};
use protobuf::reflect::MessageDescriptor;
use protoprof_model_meta::{RefKind, Schema};

/// One message, enum or service: its rows, each rendered as a line.
#[derive(Debug, Default, PartialEq, Eq, Clone)]
pub struct Definition {
    /// File the definition is declared in.
    pub file: String,
    pub rows: Vec<String>,
}

/// Everything the facts describe, keyed by `message X`, `enum X`, `service X`
/// or `file path`.
pub type Facts = BTreeMap<String, Definition>;

/// The schema facts of every model crate, read from reflection descriptors.
/// Support files (`protoprof/`) are left out: they declare no wire data.
pub fn facts_of(schemas: &[&Schema]) -> Facts {
    let mut facts = Facts::new();
    for schema in schemas {
        for file in schema
            .files
            .iter()
            .filter(|f| !f.path.starts_with("protoprof/"))
        {
            let descriptor = (file.descriptor)();
            facts.insert(
                format!("file {}", file.path),
                Definition {
                    file: file.path.to_string(),
                    rows: vec![format!("package {}", file.package)],
                },
            );
            for message in all_messages(descriptor.messages()) {
                let proto = message.proto();
                let mut rows: Vec<String> = proto
                    .field
                    .iter()
                    .map(|f| field_row(f, proto, &message))
                    .collect();
                rows.sort();
                rows.extend(reserved_rows(proto));
                facts.insert(
                    format!("message {}", message.full_name()),
                    Definition {
                        file: file.path.to_string(),
                        rows,
                    },
                );
                for nested in message.nested_enums() {
                    facts.insert(
                        format!("enum {}", nested.full_name()),
                        enum_definition(file.path, &nested),
                    );
                }
            }
            for e in descriptor.enums() {
                facts.insert(
                    format!("enum {}", e.full_name()),
                    enum_definition(file.path, &e),
                );
            }
        }
        for service in schema.services {
            let rows = service
                .methods
                .iter()
                .map(|m| {
                    let stream = |on: bool| if on { "stream " } else { "" };
                    format!(
                        "{} | {}{} | {}{}",
                        m.name,
                        stream(m.client_streaming),
                        m.input,
                        stream(m.server_streaming),
                        m.output
                    )
                })
                .collect();
            facts.insert(
                format!("service {}", service.full_name),
                Definition {
                    file: service.file.to_string(),
                    rows,
                },
            );
        }
    }
    facts
}

fn all_messages(top: impl Iterator<Item = MessageDescriptor>) -> Vec<MessageDescriptor> {
    let mut out = Vec::new();
    let mut pending: Vec<MessageDescriptor> = top.collect();
    pending.reverse();
    while let Some(message) = pending.pop() {
        let mut nested: Vec<_> = message.nested_messages().collect();
        nested.reverse();
        pending.extend(nested);
        if !message.is_map_entry() {
            out.push(message);
        }
    }
    out
}

fn enum_definition(file: &str, e: &protobuf::reflect::EnumDescriptor) -> Definition {
    Definition {
        file: file.to_string(),
        rows: e
            .values()
            .map(|v| format!("{} = {}", v.name(), v.value()))
            .collect(),
    }
}

fn reserved_rows(proto: &DescriptorProto) -> Vec<String> {
    let mut rows = Vec::new();
    let numbers: Vec<String> = proto
        .reserved_range
        .iter()
        .map(|r| {
            // Descriptor ranges are end-exclusive.
            if r.end() - r.start() == 1 {
                r.start().to_string()
            } else {
                format!("{}-{}", r.start(), r.end() - 1)
            }
        })
        .collect();
    if !numbers.is_empty() {
        rows.push(format!("reserved numbers: {}", numbers.join(", ")));
    }
    if !proto.reserved_name.is_empty() {
        rows.push(format!(
            "reserved names: {}",
            proto.reserved_name.join(", ")
        ));
    }
    rows
}

fn scalar_name(t: Type) -> &'static str {
    match t {
        Type::TYPE_DOUBLE => "double",
        Type::TYPE_FLOAT => "float",
        Type::TYPE_INT64 => "int64",
        Type::TYPE_UINT64 => "uint64",
        Type::TYPE_INT32 => "int32",
        Type::TYPE_FIXED64 => "fixed64",
        Type::TYPE_FIXED32 => "fixed32",
        Type::TYPE_BOOL => "bool",
        Type::TYPE_STRING => "string",
        Type::TYPE_BYTES => "bytes",
        Type::TYPE_UINT32 => "uint32",
        Type::TYPE_SFIXED32 => "sfixed32",
        Type::TYPE_SFIXED64 => "sfixed64",
        Type::TYPE_SINT32 => "sint32",
        Type::TYPE_SINT64 => "sint64",
        Type::TYPE_GROUP | Type::TYPE_MESSAGE | Type::TYPE_ENUM => "",
    }
}

fn type_name(field: &FieldDescriptorProto) -> String {
    match field.type_() {
        Type::TYPE_MESSAGE | Type::TYPE_ENUM | Type::TYPE_GROUP => {
            field.type_name().trim_start_matches('.').to_string()
        }
        scalar => scalar_name(scalar).to_string(),
    }
}

/// `name | number | type | notes`, as in the facts tables.
fn field_row(
    field: &FieldDescriptorProto,
    owner: &DescriptorProto,
    message: &MessageDescriptor,
) -> String {
    let map_entry = (field.type_() == Type::TYPE_MESSAGE)
        .then(|| {
            let entry_name = field.type_name().rsplit('.').next().unwrap_or_default();
            message
                .nested_messages()
                .find(|n| n.name() == entry_name && n.is_map_entry())
        })
        .flatten();
    let type_text = match (map_entry, field.label()) {
        (Some(entry), _) => {
            let kv: Vec<String> = entry.proto().field.iter().map(type_name).collect();
            format!("map<{}>", kv.join(", "))
        }
        (None, Label::LABEL_REPEATED) => format!("repeated {}", type_name(field)),
        (None, _) => type_name(field),
    };
    let notes = match field.oneof_index {
        Some(i) if !field.proto3_optional() => {
            format!("oneof `{}`", owner.oneof_decl[i as usize].name())
        }
        _ => String::new(),
    };
    format!(
        "{} | {} | {} | {}",
        field.name(),
        field.number(),
        type_text,
        notes
    )
}

/// Reads the message, enum, service and file headings of a facts document.
pub fn parse_facts_markdown(text: &str) -> Facts {
    let mut facts = Facts::new();
    let mut file = String::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("### file `") {
            let (path, after) = rest.split_once('`').expect("file heading");
            file = path.to_string();
            let package = after
                .split("package `")
                .nth(1)
                .and_then(|p| p.split('`').next())
                .expect("file heading names its package");
            facts.insert(
                format!("file {path}"),
                Definition {
                    file: file.clone(),
                    rows: vec![format!("package {package}")],
                },
            );
            current = None;
        } else if let Some(rest) = line.strip_prefix("#### ") {
            let (kind, name) = rest.split_once(' ').expect("definition heading");
            let key = format!("{kind} {}", name.trim_matches('`'));
            facts.insert(
                key.clone(),
                Definition {
                    file: file.clone(),
                    ..Default::default()
                },
            );
            current = Some(key);
        } else if let Some(key) = &current {
            let definition = facts.get_mut(key).expect("current definition");
            if line.starts_with("| `") {
                let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
                // Only the name cell is quoted as a whole; notes keep their backticks.
                let mut cells: Vec<String> = cells.iter().map(|c| c.to_string()).collect();
                cells[0] = cells[0].trim_matches('`').to_string();
                let row = match key.split(' ').next() {
                    Some("enum") => format!("{} = {}", cells[0], cells[1]),
                    _ => cells.join(" | "),
                };
                definition.rows.push(row);
            } else if line.starts_with("reserved ") {
                for part in line.split("; ") {
                    definition.rows.push(part.trim().to_string());
                }
            }
        }
    }
    for (key, definition) in facts.iter_mut() {
        if key.starts_with("message ") {
            let reserved = definition
                .rows
                .iter()
                .filter(|r| r.starts_with("reserved"))
                .count();
            let fields = definition.rows.len() - reserved;
            definition.rows[..fields].sort();
        }
    }
    facts
}

/// A reference as `references.md` states it: (message, field) -> (by id or
/// position, table field).
pub type ReferenceFacts = BTreeMap<(String, String), (RefKind, String)>;

/// The generated reference table of a schema in the same shape.
pub fn references_of(schema: &Schema) -> ReferenceFacts {
    schema
        .references
        .iter()
        .map(|r| {
            (
                (r.message.to_string(), r.field.to_string()),
                (r.kind, r.table.field.to_string()),
            )
        })
        .collect()
}

/// Reads the table of `references.md` under `heading` (a `## ` line prefix).
/// Paths are resolved through reflection, relative to `package`, so
/// `Sample.label[i].key` names `Label.key`.
pub fn parse_reference_markdown(
    text: &str,
    heading: &str,
    schema: &Schema,
    package: &str,
) -> ReferenceFacts {
    let mut out = ReferenceFacts::new();
    let section = text
        .split("\n## ")
        .find(|s| s.starts_with(heading))
        .unwrap_or_else(|| panic!("references.md has no section {heading}"));
    for line in section.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        // common/v1's string indices (v1.10.0) point into whichever string
        // table encloses them; the shared package cannot annotate that, so
        // validation resolves them by hand.
        if cells[0].contains("(common/v1") {
            continue;
        }
        let target = cells[1];
        let targets_by_id = target.contains("whose `id`");
        let table = if target == "string" {
            "string_table".to_string()
        } else if target.starts_with("a slice") {
            String::new() // the start field of a slice; its table is checked elsewhere
        } else {
            let first = target.split('`').nth(1).expect("a backticked target");
            let name = first
                .trim_start_matches("Profile.")
                .split('[')
                .next()
                .unwrap();
            if targets_by_id {
                name.to_lowercase()
            } else {
                name.to_string()
            }
        };
        let mut message: Option<MessageDescriptor> = None;
        for (i, token) in cells[0].split('`').enumerate() {
            if i % 2 == 0 {
                continue;
            }
            if token.ends_with(".*") {
                continue; // "every field of": listed by an earlier token
            }
            let (owner, field) = if let Some(field) = token.strip_prefix('.') {
                (
                    message.clone().expect("a field follows a message"),
                    field.to_string(),
                )
            } else if token.contains('.') {
                resolve(schema, package, token)
            } else {
                (
                    message.clone().expect("a field follows a message"),
                    token.to_string(),
                )
            };
            // `a + b` names a slice: only its start is a reference.
            let is_slice_length = cells[0].contains(&format!("+ `{token}`"));
            if !is_slice_length {
                let kind = if targets_by_id {
                    RefKind::Id
                } else {
                    RefKind::Position
                };
                out.insert(
                    (owner.full_name().to_string(), field.clone()),
                    (kind, table.clone()),
                );
            }
            message = Some(owner);
        }
    }
    out
}

/// `Message.field`, `Message.field[i]` or `Message.repeated[i].field` to the
/// message declaring the last field and that field's name.
fn resolve(schema: &Schema, package: &str, path: &str) -> (MessageDescriptor, String) {
    let mut parts = path.split('.');
    let first = parts.next().unwrap();
    let mut message = schema
        .message_by_full_name(&format!("{package}.{first}"))
        .unwrap_or_else(|| panic!("no message {package}.{first}"));
    let parts: Vec<&str> = parts.map(|p| p.split('[').next().unwrap()).collect();
    for (i, part) in parts.iter().enumerate() {
        if i + 1 == parts.len() {
            return (message, part.to_string());
        }
        let field = message
            .field_by_name(part)
            .unwrap_or_else(|| panic!("{} has no field {part}", message.full_name()));
        message = match field.runtime_field_type() {
            protobuf::reflect::RuntimeFieldType::Repeated(
                protobuf::reflect::RuntimeType::Message(m),
            )
            | protobuf::reflect::RuntimeFieldType::Singular(
                protobuf::reflect::RuntimeType::Message(m),
            ) => m,
            _ => panic!("{path}: {part} is not a message field"),
        };
    }
    panic!("{path} names no field")
}

/// A readable listing of facts, one definition per paragraph.
pub fn render(facts: &Facts) -> String {
    let mut out = String::new();
    for (key, definition) in facts {
        if key.starts_with("file ") {
            out.push_str(&format!("{key}\n"));
        } else {
            out.push_str(&format!("{key}  ({})\n", definition.file));
        }
        for row in &definition.rows {
            out.push_str(&format!("    {}\n", row.trim_end()));
        }
    }
    out
}

/// A readable listing of a reference table.
pub fn render_references(schema: &Schema) -> String {
    let mut out = String::new();
    for r in schema.references {
        let how = match r.kind {
            RefKind::Position => "position in",
            RefKind::Id => "id of",
        };
        let mut line = format!(
            "{}.{} ({}{}) -> {} {}.{}",
            r.message,
            r.field,
            if r.repeated { "repeated, " } else { "" },
            r.number,
            how,
            r.table.message,
            r.table.field
        );
        if r.zero_is_none {
            line.push_str("; 0 = none");
        }
        if r.empty_table_is_none {
            line.push_str("; empty table = none");
        }
        if let Some(length) = r.slice_length {
            line.push_str(&format!("; slice, length in {length}"));
        }
        if let Some(t) = r.table_when_empty {
            line.push_str(&format!("; else {}.{}", t.message, t.field));
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}
