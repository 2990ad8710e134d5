//! Changes to the message: a scalar set, an element added to a repeated
//! field or removed from it. rust-protobuf lends repeated elements for
//! reading only, so an element on the way down is taken out, changed and
//! put back.

use protobuf::reflect::{FieldDescriptor, ReflectValueBox, RuntimeFieldType, RuntimeType};
use protobuf::MessageDyn;
use serde::Deserialize;

use super::path::{self, Step};

/// One change, as the page sends it.
#[derive(Debug, Deserialize)]
#[serde(tag = "op", rename_all = "lowercase")]
pub(crate) enum Edit {
    /// A scalar field, or an element of a repeated scalar, set to `value`
    /// (text as the view writes it, strings unquoted).
    Set { path: String, value: String },
    /// An element added at the end of the repeated field at `path`: a
    /// message with nothing set, or the scalar `value`.
    Add {
        path: String,
        #[serde(default)]
        value: String,
    },
    /// The element at `path` removed.
    Remove { path: String },
}

/// Applies `edit`; the path it changed (an added element's own).
pub(crate) fn apply(root: &mut dyn MessageDyn, edit: &Edit) -> Result<String, String> {
    let (path, value) = match edit {
        Edit::Set { path, value } | Edit::Add { path, value } => (path, value.as_str()),
        Edit::Remove { path } => (path, ""),
    };
    let steps = path::parse(path)?;
    if steps.is_empty() {
        return Err("the message itself cannot be set or removed".into());
    }
    let mut changed = path.clone();
    within(root, &steps, &mut |m, field, index| match (edit, index) {
        (Edit::Set { .. }, None) => set_field(m, field, value),
        (Edit::Set { .. }, Some(i)) => set_element(m, field, i, value),
        (Edit::Add { .. }, None) => {
            let added = add_element(m, field, value)?;
            changed = path::child("", path, Some(added));
            Ok(())
        }
        (Edit::Add { .. }, Some(_)) => Err(format!(
            "{path}: add names a repeated field, not an element"
        )),
        (Edit::Remove { .. }, Some(i)) => remove_element(m, field, i),
        (Edit::Remove { .. }, None) => {
            Err(format!("{path}: remove names an element (field[index])"))
        }
    })?;
    Ok(changed)
}

type Change<'c> =
    dyn FnMut(&mut dyn MessageDyn, &FieldDescriptor, Option<usize>) -> Result<(), String> + 'c;

/// Calls `change` with the message holding the last step's field.
fn within(m: &mut dyn MessageDyn, steps: &[Step], change: &mut Change) -> Result<(), String> {
    let descriptor = m.descriptor_dyn();
    let field = path::field_named(&descriptor, &steps[0].field)?;
    if steps.len() == 1 {
        return change(m, &field, steps[0].index);
    }
    match (field.runtime_field_type(), steps[0].index) {
        (RuntimeFieldType::Singular(RuntimeType::Message(_)), None) => {
            within(field.mut_message(m), &steps[1..], change)
        }
        (RuntimeFieldType::Repeated(RuntimeType::Message(_)), Some(i)) => {
            let mut elements = field.mut_repeated(m);
            within_bounds(&field, i, elements.len())?;
            let ReflectValueBox::Message(mut element) = elements.get(i).to_box() else {
                return Err("not a message".into());
            };
            within(&mut *element, &steps[1..], change)?;
            elements.set(i, ReflectValueBox::Message(element));
            Ok(())
        }
        _ => Err(format!(
            "{}: not a message to go into",
            path::render(&steps[..1])
        )),
    }
}

fn set_field(m: &mut dyn MessageDyn, field: &FieldDescriptor, text: &str) -> Result<(), String> {
    match field.runtime_field_type() {
        RuntimeFieldType::Singular(RuntimeType::Message(_)) => Err(format!(
            "{}: a message is edited field by field",
            field.name()
        )),
        RuntimeFieldType::Singular(t) => {
            field.set_singular_field(m, parse_value(&t, text)?);
            Ok(())
        }
        _ => Err(format!(
            "{}: a repeated field is edited element by element",
            field.name()
        )),
    }
}

fn set_element(
    m: &mut dyn MessageDyn,
    field: &FieldDescriptor,
    index: usize,
    text: &str,
) -> Result<(), String> {
    let RuntimeFieldType::Repeated(t) = field.runtime_field_type() else {
        return Err(format!("{}: not repeated", field.name()));
    };
    if matches!(t, RuntimeType::Message(_)) {
        return Err(format!(
            "{}[{index}]: a message is edited field by field",
            field.name()
        ));
    }
    let value = parse_value(&t, text)?;
    let mut elements = field.mut_repeated(m);
    within_bounds(field, index, elements.len())?;
    elements.set(index, value);
    Ok(())
}

/// Adds an element; its index.
fn add_element(
    m: &mut dyn MessageDyn,
    field: &FieldDescriptor,
    text: &str,
) -> Result<usize, String> {
    let RuntimeFieldType::Repeated(t) = field.runtime_field_type() else {
        return Err(format!(
            "{}: only a repeated field takes a new element",
            field.name()
        ));
    };
    let value = match &t {
        RuntimeType::Message(d) => ReflectValueBox::Message(d.new_instance()),
        RuntimeType::String | RuntimeType::VecU8 if text.is_empty() => parse_value(&t, "")?,
        RuntimeType::Bool if text.is_empty() => parse_value(&t, "false")?,
        t if text.is_empty() => parse_value(t, "0")?,
        t => parse_value(t, text)?,
    };
    let mut elements = field.mut_repeated(m);
    elements.push(value);
    Ok(elements.len() - 1)
}

fn remove_element(
    m: &mut dyn MessageDyn,
    field: &FieldDescriptor,
    index: usize,
) -> Result<(), String> {
    if !field.is_repeated() {
        return Err(format!("{}: not repeated", field.name()));
    }
    let mut elements = field.mut_repeated(m);
    within_bounds(field, index, elements.len())?;
    let kept: Vec<ReflectValueBox> = (0..elements.len())
        .filter(|&i| i != index)
        .map(|i| elements.get(i).to_box())
        .collect();
    elements.clear();
    for value in kept {
        elements.push(value);
    }
    Ok(())
}

/// Whether `index` is one of `field`'s `len` elements; why not.
fn within_bounds(field: &FieldDescriptor, index: usize, len: usize) -> Result<(), String> {
    match index < len {
        true => Ok(()),
        false => Err(format!(
            "{}[{index}]: there are {len} elements",
            field.name()
        )),
    }
}

/// `text` as a value of type `t`: numbers in decimal (or 0x hex), enums by
/// name or number, bytes in hex, strings as they are.
pub(crate) fn parse_value(t: &RuntimeType, text: &str) -> Result<ReflectValueBox, String> {
    let trimmed = text.trim();
    let bad = || format!("{text:?} is not a valid {}", type_word(t));
    let int = |s: &str| -> Option<i128> {
        match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
            Some(hex) => i128::from_str_radix(hex, 16).ok(),
            None => s.parse().ok(),
        }
    };
    let whole = || int(trimmed).ok_or_else(bad);
    Ok(match t {
        RuntimeType::I32 => ReflectValueBox::I32(whole()?.try_into().map_err(|_| bad())?),
        RuntimeType::I64 => ReflectValueBox::I64(whole()?.try_into().map_err(|_| bad())?),
        RuntimeType::U32 => ReflectValueBox::U32(whole()?.try_into().map_err(|_| bad())?),
        RuntimeType::U64 => ReflectValueBox::U64(whole()?.try_into().map_err(|_| bad())?),
        RuntimeType::F32 => ReflectValueBox::F32(trimmed.parse().map_err(|_| bad())?),
        RuntimeType::F64 => ReflectValueBox::F64(trimmed.parse().map_err(|_| bad())?),
        RuntimeType::Bool => ReflectValueBox::Bool(trimmed.parse().map_err(|_| bad())?),
        RuntimeType::String => ReflectValueBox::String(text.to_string()),
        RuntimeType::VecU8 => ReflectValueBox::Bytes(hex_bytes(trimmed).ok_or_else(bad)?),
        RuntimeType::Enum(e) => {
            let value = e.value_by_name(trimmed).map(|v| v.value());
            let value = value.or_else(|| trimmed.parse().ok()).ok_or_else(bad)?;
            ReflectValueBox::Enum(e.clone(), value)
        }
        RuntimeType::Message(_) => return Err(bad()),
    })
}

fn hex_bytes(text: &str) -> Option<Vec<u8>> {
    let digits: String = text
        .trim_start_matches("0x")
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    if digits.len() % 2 != 0 {
        return None;
    }
    (0..digits.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(digits.get(i..i + 2)?, 16).ok())
        .collect()
}

fn type_word(t: &RuntimeType) -> String {
    match t {
        RuntimeType::Enum(e) => format!("value of {}", e.name()),
        RuntimeType::VecU8 => "hex string of bytes".into(),
        RuntimeType::Bool => "bool (true or false)".into(),
        RuntimeType::I32 => "int32".into(),
        RuntimeType::I64 => "int64".into(),
        RuntimeType::U32 => "uint32".into(),
        RuntimeType::U64 => "uint64".into(),
        RuntimeType::F32 => "float".into(),
        RuntimeType::F64 => "double".into(),
        RuntimeType::String => "string".into(),
        RuntimeType::Message(m) => format!("message {}", m.name()),
    }
}
