//! Field paths as validation writes them (`sample[3].location_id[0]`),
//! and what they name in a message.

use protobuf::reflect::{
    FieldDescriptor, MessageDescriptor, ReflectValueRef, RuntimeFieldType, RuntimeType,
};
use protobuf::MessageDyn;

/// One step of a path: a field, and an element's position when the field
/// is repeated (a map's entries are numbered in key order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Step {
    pub(crate) field: String,
    pub(crate) index: Option<usize>,
}

/// A path parsed into steps; the empty path is the root.
pub(crate) fn parse(path: &str) -> Result<Vec<Step>, String> {
    let path = path.trim();
    if path.is_empty() {
        return Ok(Vec::new());
    }
    path.split('.').map(parse_step).collect()
}

fn parse_step(text: &str) -> Result<Step, String> {
    let bad = || format!("{text:?} is not a path step (field or field[index])");
    let (field, index) = match text.split_once('[') {
        None => (text, None),
        Some((field, rest)) => {
            let index = rest.strip_suffix(']').ok_or_else(bad)?;
            (field, Some(index.parse::<usize>().map_err(|_| bad())?))
        }
    };
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_';
    if field.is_empty() || !field.chars().all(is_name) {
        return Err(bad());
    }
    Ok(Step {
        field: field.to_string(),
        index,
    })
}

/// Steps written back as a path.
pub(crate) fn render(steps: &[Step]) -> String {
    let step = |s: &Step| match s.index {
        Some(i) => format!("{}[{i}]", s.field),
        None => s.field.clone(),
    };
    steps.iter().map(step).collect::<Vec<_>>().join(".")
}

/// `base` with one more step.
pub(crate) fn child(base: &str, field: &str, index: Option<usize>) -> String {
    let step = match index {
        Some(i) => format!("{field}[{i}]"),
        None => field.to_string(),
    };
    match base {
        "" => step,
        base => format!("{base}.{step}"),
    }
}

/// What a path names, borrowed for the length of a visit.
pub(crate) enum Target<'m> {
    /// A message: the root, a singular message field, or an element.
    Message(&'m dyn MessageDyn),
    /// A field of `parent` as a whole (a repeated or map field without an
    /// index, or a singular scalar).
    Field {
        parent: &'m dyn MessageDyn,
        field: FieldDescriptor,
    },
    /// One element of a repeated field that is not a message.
    Element {
        parent: &'m dyn MessageDyn,
        field: FieldDescriptor,
        index: usize,
    },
}

/// Calls `f` with what `steps` names below `root`. (rust-protobuf lends a
/// nested message only for as long as the value holding it lives, so the
/// walk goes down the stack and `f` runs at the bottom.)
pub(crate) fn visit<R>(
    root: &dyn MessageDyn,
    steps: &[Step],
    f: impl FnOnce(Target<'_>) -> R,
) -> Result<R, String> {
    visit_below(root, steps, 0, f)
}

fn visit_below<R>(
    message: &dyn MessageDyn,
    steps: &[Step],
    done: usize,
    f: impl FnOnce(Target<'_>) -> R,
) -> Result<R, String> {
    let Some(step) = steps.get(done) else {
        return Ok(f(Target::Message(message)));
    };
    let at = || render(&steps[..=done]);
    let field = field_named(&message.descriptor_dyn(), &step.field)
        .map_err(|e| format!("{}: {e}", at()))?;
    let last = done + 1 == steps.len();
    match (field.runtime_field_type(), step.index) {
        (RuntimeFieldType::Singular(_), Some(_)) => Err(format!("{}: not repeated", at())),
        (RuntimeFieldType::Singular(_), None) => match field.get_singular(message) {
            Some(ReflectValueRef::Message(m)) => visit_below(&*m, steps, done + 1, f),
            _ if last => Ok(f(Target::Field {
                parent: message,
                field,
            })),
            _ => Err(format!("{}: not set", at())),
        },
        (_, None) if last => Ok(f(Target::Field {
            parent: message,
            field,
        })),
        (_, None) => Err(format!("{}: a repeated field needs an index", at())),
        (RuntimeFieldType::Map(..), Some(_)) => {
            Err(format!("{}: map entries are shown, not opened", at()))
        }
        (RuntimeFieldType::Repeated(_), Some(index)) => {
            let repeated = field.get_repeated(message);
            if index >= repeated.len() {
                return Err(format!("{}: there are {} elements", at(), repeated.len()));
            }
            match repeated.get(index) {
                ReflectValueRef::Message(m) => visit_below(&*m, steps, done + 1, f),
                _ if last => Ok(f(Target::Element {
                    parent: message,
                    field,
                    index,
                })),
                _ => Err(format!("{}: not a message", at())),
            }
        }
    }
}

/// The field `name` of `descriptor`, or why not.
pub(crate) fn field_named(
    descriptor: &MessageDescriptor,
    name: &str,
) -> Result<FieldDescriptor, String> {
    descriptor
        .field_by_name(name)
        .ok_or_else(|| format!("{} has no field {name:?}", descriptor.name()))
}

/// The message types a path passes through, root first, each with its
/// path (from the schema alone: a field that is not set still has a type).
pub(crate) fn types_along(
    root: &MessageDescriptor,
    steps: &[Step],
) -> Vec<(String, MessageDescriptor)> {
    let mut out = vec![(String::new(), root.clone())];
    let mut descriptor = root.clone();
    for (n, step) in steps.iter().enumerate() {
        let Some(field) = descriptor.field_by_name(&step.field) else {
            break;
        };
        let element = match field.runtime_field_type() {
            RuntimeFieldType::Singular(t) | RuntimeFieldType::Repeated(t) => t,
            RuntimeFieldType::Map(..) => break,
        };
        let RuntimeType::Message(next) = element else {
            break;
        };
        if field.is_repeated() && step.index.is_none() {
            break;
        }
        out.push((render(&steps[..=n]), next.clone()));
        descriptor = next;
    }
    out
}
