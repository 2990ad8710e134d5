//! What the view writes on a line: a value as text, a reference with what
//! it points at, an entry of a table by the name a reader knows it by (a
//! function by its name, a location by its first line's function, a stack
//! by its frames), and a message by its fields.

use protobuf::reflect::{FieldDescriptor, ReflectValueRef, RuntimeFieldType};
use protobuf::MessageDyn;
use protoprof_model_meta::FieldRef;

use super::path::{self, Step, Target};
use super::refs::{self, IdIndexes, References};

/// Longest string written whole in a line.
const STRING_CUT: usize = 80;
/// Longest summary line.
const SUMMARY_CUT: usize = 300;
/// How many references deep a label follows (a v1development sample's
/// stack → location → function → name is four).
pub(crate) const LABEL_DEPTH: u32 = 5;

/// Fields that name what their message is, in the order tried.
const NAME_FIELDS: [&str; 4] = ["name", "name_strindex", "filename", "filename_strindex"];
/// Fields that hold addresses, written in hex.
const HEX_FIELDS: [&str; 4] = ["address", "memory_start", "memory_limit", "file_offset"];
/// Fields whose references are a message's frames.
const FRAME_FIELDS: [&str; 5] = [
    "location_id",
    "location_indices",
    "stack_index",
    "locations_start_index",
    "location_index",
];

/// Describes the values of one message, references resolved against it.
pub(crate) struct Describer<'m> {
    pub(crate) root: &'m dyn MessageDyn,
    pub(crate) references: &'m References,
    pub(crate) ids: &'m IdIndexes,
}

/// A reference resolved: the entry's path, and how it is known.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct Pointed {
    pub(crate) path: String,
    pub(crate) label: String,
}

impl Describer<'_> {
    /// The reference `field` of the message at `at` declares, if any.
    pub(crate) fn reference(
        &self,
        at_type: &str,
        field: &FieldDescriptor,
    ) -> Option<&'static FieldRef> {
        self.references.of(at_type, field.name())
    }

    /// The entry `value` of reference `r` (in the message at `at`) names.
    pub(crate) fn pointed(&self, at: &[Step], r: &FieldRef, value: i128) -> Option<Pointed> {
        self.pointed_within(at, r, value, LABEL_DEPTH)
    }

    /// [`Self::pointed`], its label following references `depth` deep.
    fn pointed_within(
        &self,
        at: &[Step],
        r: &FieldRef,
        value: i128,
        depth: u32,
    ) -> Option<Pointed> {
        let table = self.table_of(at, r)?;
        let position = refs::position(self.root, self.ids, r, &table, value)?;
        Some(Pointed {
            label: self.entry_label(&table, position, depth),
            path: format!("{table}[{position}]"),
        })
    }

    /// The whole string at `at` (an element of a string table), uncut.
    pub(crate) fn whole_string(&self, at: &str) -> Option<String> {
        let steps = path::parse(at).ok()?;
        let found = path::visit(self.root, &steps, |target| match target {
            Target::Element {
                parent,
                field,
                index,
            } => match field.get_repeated(parent).get(index) {
                ReflectValueRef::String(s) => Some(s.to_string()),
                _ => None,
            },
            _ => None,
        });
        found.ok().flatten()
    }

    /// The path of the table reference `r` (in the message at `at`) points
    /// into: its own, or the one it names for when that is empty.
    fn table_of(&self, at: &[Step], r: &FieldRef) -> Option<String> {
        let root_type = self.root.descriptor_dyn();
        let table = refs::table_path(&root_type, at, &r.table)?;
        match r.table_when_empty {
            Some(other) if refs::table_len(self.root, &table) == 0 => {
                refs::table_path(&root_type, at, &other)
            }
            _ => Some(table),
        }
    }

    /// Entry `position` of the table at `table`, as a reader knows it.
    fn entry_label(&self, table: &str, position: usize, depth: u32) -> String {
        let Ok(mut steps) = path::parse(table) else {
            return "<missing>".into();
        };
        if let Some(last) = steps.last_mut() {
            last.index = Some(position);
        }
        let label = path::visit(self.root, &steps, |target| match target {
            Target::Message(m) => self.message_label(m, &steps, depth),
            Target::Element {
                parent,
                field,
                index,
            } => {
                let value = field.get_repeated(parent).get(index);
                let parent_steps = &steps[..steps.len() - 1];
                self.scalar_with_target(parent, parent_steps, &field, &value, depth)
            }
            Target::Field { .. } => "<missing>".into(),
        });
        label.unwrap_or_else(|_| "<missing>".into())
    }

    /// A scalar, or for a reference what it points at.
    fn scalar_with_target(
        &self,
        parent: &dyn MessageDyn,
        at: &[Step],
        field: &FieldDescriptor,
        value: &ReflectValueRef,
        depth: u32,
    ) -> String {
        let parent_type = parent.descriptor_dyn();
        let r = self.reference(parent_type.full_name(), field);
        match (r, refs::integer(value)) {
            (Some(r), Some(v)) if depth > 0 => match self.pointed_within(at, r, v, depth - 1) {
                Some(pointed) => pointed.label,
                None => format!("{v} (points nowhere)"),
            },
            (_, Some(v)) if HEX_FIELDS.contains(&field.name()) => format!("{v:#x}"),
            _ => value_text(value),
        }
    }

    /// A message as a reader knows it: its name, key and value, first
    /// line, frames or address, else its first field.
    pub(crate) fn message_label(&self, m: &dyn MessageDyn, at: &[Step], depth: u32) -> String {
        let descriptor = m.descriptor_dyn();
        let text = |name: &str| {
            let field = descriptor.field_by_name(name)?;
            self.field_text(m, at, &field, depth)
                .filter(|t| !t.is_empty() && t != "\"\"")
        };
        if let Some(name) = NAME_FIELDS.iter().find_map(|f| text(f)) {
            return unquoted(&name);
        }
        if let Some(key) = text("key").or_else(|| text("key_strindex")) {
            let value = text("value").unwrap_or_default();
            return format!("{}={value}", unquoted(&key));
        }
        if let Some(function) = text("function_id").or_else(|| text("function_index")) {
            return match text("line") {
                Some(line) if line != "0" => format!("{function}:{line}"),
                _ => function,
            };
        }
        if let Some(lines) = ["line", "lines"]
            .iter()
            .find_map(|f| self.lines_label(m, at, f, depth))
        {
            return lines;
        }
        if let Some(frames) = FRAME_FIELDS.iter().find_map(|f| text(f)) {
            return frames;
        }
        if let (Some(kind), Some(unit)) = (text("type"), text("unit")) {
            return format!("{}/{}", unquoted(&kind), unquoted(&unit));
        }
        if let Some(address) = text("address").filter(|a| a != "0x0") {
            return address;
        }
        let first = descriptor
            .fields()
            .find_map(|f| self.field_text(m, at, &f, depth));
        first.unwrap_or_default()
    }

    /// A location's lines (the repeated message field `name` of `m`),
    /// innermost first, as frames.
    fn lines_label(
        &self,
        m: &dyn MessageDyn,
        at: &[Step],
        name: &str,
        depth: u32,
    ) -> Option<String> {
        let field = m.descriptor_dyn().field_by_name(name)?;
        if !field.is_repeated() {
            return None;
        }
        let lines = field.get_repeated(m);
        let labels: Vec<String> = (0..lines.len().min(64))
            .filter_map(|i| match lines.get(i) {
                ReflectValueRef::Message(line) => {
                    Some(self.message_label(&*line, &with_step(at, name, Some(i)), depth))
                }
                _ => None,
            })
            .collect();
        (!labels.is_empty()).then(|| frames(&labels))
    }

    /// A field of `m` (at `at`) as text, `None` when it is not set. A
    /// reference reads as what it points at; repeated references as
    /// frames, leaf first.
    pub(crate) fn field_text(
        &self,
        m: &dyn MessageDyn,
        at: &[Step],
        field: &FieldDescriptor,
        depth: u32,
    ) -> Option<String> {
        if !field.has_field(m) && !field.is_repeated_or_map() {
            return None;
        }
        match field.runtime_field_type() {
            RuntimeFieldType::Map(..) => Some(format!("{} entries", field.get_map(m).len())),
            RuntimeFieldType::Repeated(_) => self.repeated_text(m, at, field, depth),
            RuntimeFieldType::Singular(_) => {
                let value = field.get_singular(m)?;
                match &value {
                    ReflectValueRef::Message(sub) => {
                        let sub_steps = with_step(at, field.name(), None);
                        Some(self.message_label(&**sub, &sub_steps, depth))
                    }
                    _ => match self.slice_text(m, at, field, &value, depth) {
                        Some(frames) => Some(frames),
                        None => Some(self.scalar_with_target(m, at, field, &value, depth)),
                    },
                }
            }
        }
    }

    /// A reference that starts a slice (OTLP v1experimental's
    /// `locations_start_index` with `locations_length`): the slice's frames.
    fn slice_text(
        &self,
        m: &dyn MessageDyn,
        at: &[Step],
        field: &FieldDescriptor,
        value: &ReflectValueRef,
        depth: u32,
    ) -> Option<String> {
        let descriptor = m.descriptor_dyn();
        let r = self.reference(descriptor.full_name(), field)?;
        let length_field = descriptor.field_by_name(r.slice_length?)?;
        let length = length_field
            .get_singular(m)
            .and_then(|v| refs::integer(&v))
            .unwrap_or(0);
        let start = refs::integer(value)?;
        let table = self.table_of(at, r)?;
        let positions =
            (start..start + length.min(1 << 16)).filter_map(|p| usize::try_from(p).ok());
        let labels: Vec<String> = positions
            .map(|p| self.entry_label(&table, p, depth.saturating_sub(1)))
            .collect();
        Some(frames(&labels))
    }

    fn repeated_text(
        &self,
        m: &dyn MessageDyn,
        at: &[Step],
        field: &FieldDescriptor,
        depth: u32,
    ) -> Option<String> {
        let values = field.get_repeated(m);
        if values.is_empty() {
            return None;
        }
        let descriptor = m.descriptor_dyn();
        let is_frames = FRAME_FIELDS.contains(&field.name())
            && self.reference(descriptor.full_name(), field).is_some();
        let shown = values.len().min(if is_frames { 64 } else { 8 });
        let texts: Vec<String> = (0..shown)
            .map(|i| match values.get(i) {
                ReflectValueRef::Message(sub) => {
                    let sub_steps = with_step(at, field.name(), Some(i));
                    self.message_label(&*sub, &sub_steps, depth)
                }
                value => self.scalar_with_target(m, at, field, &value, depth),
            })
            .collect();
        let more = values.len() - shown;
        Some(match (is_frames, more) {
            (true, 0) => frames(&texts),
            (_, 0) => format!("[{}]", texts.join(", ")),
            (_, more) => format!("[{}, … {more} more]", texts.join(", ")),
        })
    }

    /// Every set field of `m` on one line: `value: [1, 10] · location_id:
    /// main.work ← main.main`.
    pub(crate) fn summary(&self, m: &dyn MessageDyn, at: &[Step]) -> String {
        let descriptor = m.descriptor_dyn();
        let mut parts = Vec::new();
        // A sample's values first: what a reader compares down the list.
        let (values, others): (Vec<_>, Vec<_>) = descriptor
            .fields()
            .partition(|f| f.is_repeated() && matches!(f.name(), "value" | "values"));
        for field in values.into_iter().chain(others) {
            if let Some(text) = self
                .field_text(m, at, &field, LABEL_DEPTH)
                .filter(|t| !t.is_empty())
            {
                parts.push(format!("{}: {text}", field.name()));
            }
        }
        cut(&parts.join(" · "), SUMMARY_CUT)
    }
}

/// A string as the view quotes it, without its quotes.
fn unquoted(text: &str) -> String {
    match text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
        Some(inner) => inner.to_string(),
        None => text.to_string(),
    }
}

/// `at` with one more step.
pub(crate) fn with_step(at: &[Step], field: &str, index: Option<usize>) -> Vec<Step> {
    let mut steps = at.to_vec();
    steps.push(Step {
        field: field.to_string(),
        index,
    });
    steps
}

/// Frames, leaf first, the middle of a long stack left out.
fn frames(labels: &[String]) -> String {
    match labels.len() {
        0 => "none".into(),
        n if n <= 6 => labels.join(" ← "),
        n => format!(
            "{} ← … {} more ← {}",
            labels[..4].join(" ← "),
            n - 5,
            labels[n - 1]
        ),
    }
}

/// A scalar as text: strings quoted and cut, bytes as hex, enums by name.
pub(crate) fn value_text(value: &ReflectValueRef) -> String {
    match value {
        ReflectValueRef::String(s) => format!("{:?}", cut(s, STRING_CUT)),
        ReflectValueRef::Bytes(b) => bytes_text(b),
        ReflectValueRef::Enum(e, n) => match e.value_by_number(*n) {
            Some(v) => v.name().to_string(),
            None => n.to_string(),
        },
        ReflectValueRef::Message(_) => "{…}".into(),
        ReflectValueRef::Bool(b) => b.to_string(),
        ReflectValueRef::F32(v) => v.to_string(),
        ReflectValueRef::F64(v) => v.to_string(),
        other => refs::integer(other)
            .map(|v| v.to_string())
            .unwrap_or_default(),
    }
}

fn bytes_text(bytes: &[u8]) -> String {
    let hex: String = bytes.iter().take(32).map(|b| format!("{b:02x}")).collect();
    match bytes.len() {
        0 => "\"\"".into(),
        n if n > 32 => format!("0x{hex}… ({n} bytes)"),
        _ => format!("0x{hex}"),
    }
}

/// `text` cut at `limit` characters, with an ellipsis.
pub(crate) fn cut(text: &str, limit: usize) -> String {
    match text.char_indices().nth(limit) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}
