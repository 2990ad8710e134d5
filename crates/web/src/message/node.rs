//! One node of the message as the page opens it: a message's fields, or a
//! page of a repeated field's elements, each on one line with its value
//! or summary and, for a reference, what it points at.

use protobuf::reflect::{FieldDescriptor, ReflectValueRef, RuntimeFieldType};
use protobuf::MessageDyn;
use serde::Serialize;

use super::describe::{self, with_step, Describer, Pointed};
use super::path::{self, Step, Target};
use super::refs;

/// Elements of a repeated field sent at once.
pub(crate) const PAGE: usize = 100;

/// A node and its children.
#[derive(Debug, Serialize)]
pub(crate) struct Node {
    pub(crate) path: String,
    /// `message`, `repeated`, `map` or `scalar`.
    pub(crate) kind: &'static str,
    /// The message type, or the field's type.
    pub(crate) r#type: String,
    /// Elements in a repeated or map field.
    pub(crate) count: usize,
    /// The first child's position among the elements.
    pub(crate) offset: usize,
    pub(crate) children: Vec<Line>,
}

/// One child of a node, on one line.
#[derive(Debug, Serialize)]
pub(crate) struct Line {
    /// The field's name, or the element's `[index]`.
    pub(crate) name: String,
    pub(crate) path: String,
    /// `message`, `repeated`, `map`, `scalar` or `unset`.
    pub(crate) kind: &'static str,
    /// The field's type as the schema names it.
    pub(crate) r#type: String,
    /// A scalar's value, a message's summary, a repeated field's preview.
    pub(crate) text: String,
    /// Elements, for repeated and map fields.
    pub(crate) count: usize,
    /// Where a reference points.
    pub(crate) points_to: Option<Pointed>,
    /// Whether it can be opened.
    pub(crate) opens: bool,
}

/// The node at `steps`, its elements from `offset` when it is repeated.
pub(crate) fn node(d: &Describer, steps: &[Step], offset: usize) -> Result<Node, String> {
    let at = path::render(steps);
    path::visit(d.root, steps, |target| match target {
        Target::Message(m) => Node {
            kind: "message",
            r#type: m.descriptor_dyn().full_name().to_string(),
            count: 0,
            offset: 0,
            children: m
                .descriptor_dyn()
                .fields()
                .map(|f| field_line(d, m, steps, &f))
                .collect(),
            path: at.clone(),
        },
        Target::Field { parent, field } => match field.runtime_field_type() {
            RuntimeFieldType::Repeated(_) => elements(d, parent, steps, &field, offset, at.clone()),
            RuntimeFieldType::Map(..) => map_entries(parent, &field, at.clone()),
            RuntimeFieldType::Singular(_) => scalar_node(d, parent, steps, &field, at.clone()),
        },
        Target::Element {
            parent,
            field,
            index,
        } => {
            let value = field.get_repeated(parent).get(index);
            let mut node = scalar_node(d, parent, steps, &field, at.clone());
            node.children[0].text = describe::value_text(&value);
            node
        }
    })
}

/// A field of `m` (at `steps`) on one line.
fn field_line(d: &Describer, m: &dyn MessageDyn, steps: &[Step], field: &FieldDescriptor) -> Line {
    let path = path::child(&path::render(steps), field.name(), None);
    let mut line = Line {
        name: field.name().to_string(),
        path,
        kind: "scalar",
        r#type: type_name(field),
        text: String::new(),
        count: 0,
        points_to: None,
        opens: false,
    };
    let preview = |line: &mut Line| {
        line.text = d
            .field_text(m, steps, field, describe::LABEL_DEPTH)
            .unwrap_or_default()
    };
    match field.runtime_field_type() {
        RuntimeFieldType::Repeated(element) => {
            line.count = field.get_repeated(m).len();
            (line.kind, line.opens) = ("repeated", line.count > 0);
            // A long list of messages is its count; their lines are a click away.
            if !matches!(element, protobuf::reflect::RuntimeType::Message(_)) || line.count <= 8 {
                preview(&mut line);
            }
        }
        RuntimeFieldType::Map(..) => {
            line.count = field.get_map(m).len();
            (line.kind, line.opens) = ("map", line.count > 0);
        }
        RuntimeFieldType::Singular(_) if !field.has_field(m) => {
            line.kind = "unset";
            line.text = describe::value_text(&field.get_singular_field_or_default(m));
        }
        RuntimeFieldType::Singular(_) => match field.get_singular(m) {
            Some(ReflectValueRef::Message(sub)) => {
                let sub_steps = with_step(steps, field.name(), None);
                line.text = d.summary(&*sub, &sub_steps);
                (line.kind, line.opens) = ("message", true);
            }
            Some(value) => {
                preview(&mut line);
                line.points_to = pointed(d, m, steps, field, &value);
                if line.points_to.is_some() {
                    line.text = describe::value_text(&value);
                }
            }
            None => {}
        },
    }
    line
}

/// A page of a repeated field's elements.
fn elements(
    d: &Describer,
    parent: &dyn MessageDyn,
    steps: &[Step],
    field: &FieldDescriptor,
    offset: usize,
    at: String,
) -> Node {
    let values = field.get_repeated(parent);
    let parent_steps = &steps[..steps.len() - 1];
    let children = (offset..values.len().min(offset.saturating_add(PAGE)))
        .map(|i| {
            let value = values.get(i);
            let path = format!("{at}[{i}]");
            let (kind, text, points_to) = match &value {
                ReflectValueRef::Message(sub) => {
                    let sub_steps = with_step(parent_steps, field.name(), Some(i));
                    ("message", d.summary(&**sub, &sub_steps), None)
                }
                value => (
                    "scalar",
                    describe::value_text(value),
                    pointed(d, parent, parent_steps, field, value),
                ),
            };
            let r#type = type_name(field).trim_start_matches("repeated ").to_string();
            Line {
                name: format!("[{i}]"),
                path,
                kind,
                r#type,
                text,
                count: 0,
                points_to,
                opens: kind == "message",
            }
        })
        .collect();
    Node {
        path: at,
        kind: "repeated",
        r#type: type_name(field),
        count: values.len(),
        offset,
        children,
    }
}

/// A map's entries, in key order (a map's order on the wire is not kept).
fn map_entries(parent: &dyn MessageDyn, field: &FieldDescriptor, at: String) -> Node {
    let map = field.get_map(parent);
    let mut entries: Vec<(String, String)> = map
        .into_iter()
        .map(|(k, v)| (describe::value_text(&k), describe::value_text(&v)))
        .collect();
    entries.sort();
    let children = entries
        .into_iter()
        .take(PAGE * 10)
        .map(|(key, value)| Line {
            name: key,
            path: at.clone(),
            kind: "scalar",
            r#type: String::new(),
            text: value,
            count: 0,
            points_to: None,
            opens: false,
        })
        .collect();
    Node {
        path: at,
        kind: "map",
        r#type: type_name(field),
        count: map.len(),
        offset: 0,
        children,
    }
}

fn scalar_node(
    d: &Describer,
    parent: &dyn MessageDyn,
    steps: &[Step],
    field: &FieldDescriptor,
    at: String,
) -> Node {
    let parent_steps = &steps[..steps.len() - 1];
    let line = field_line(d, parent, parent_steps, field);
    Node {
        path: at,
        kind: "scalar",
        r#type: type_name(field),
        count: 0,
        offset: 0,
        children: vec![line],
    }
}

/// Where a scalar of `field` in `m` points, when `field` is a reference.
fn pointed(
    d: &Describer,
    m: &dyn MessageDyn,
    steps: &[Step],
    field: &FieldDescriptor,
    value: &ReflectValueRef,
) -> Option<Pointed> {
    let r = d.reference(m.descriptor_dyn().full_name(), field)?;
    d.pointed(steps, r, refs::integer(value)?)
}

/// A field's type as a .proto file writes it.
pub(crate) fn type_name(field: &FieldDescriptor) -> String {
    use protobuf::reflect::RuntimeType as T;
    let one = |t: &T| match t {
        T::Message(m) => m.full_name().to_string(),
        T::Enum(e) => e.full_name().to_string(),
        T::I32 => "int32".into(),
        T::I64 => "int64".into(),
        T::U32 => "uint32".into(),
        T::U64 => "uint64".into(),
        T::F32 => "float".into(),
        T::F64 => "double".into(),
        T::Bool => "bool".into(),
        T::String => "string".into(),
        T::VecU8 => "bytes".into(),
    };
    match field.runtime_field_type() {
        RuntimeFieldType::Singular(t) => one(&t),
        RuntimeFieldType::Repeated(t) => format!("repeated {}", one(&t)),
        RuntimeFieldType::Map(k, v) => format!("map<{}, {}>", one(&k), one(&v)),
    }
}
