//! Search over a message's field paths and values: every scalar whose
//! path or text holds the query, and every string reference whose string
//! does, in message order, up to a limit of hits and of values looked at.

use protobuf::reflect::{FieldDescriptor, ReflectValueRef, RuntimeFieldType};
use protobuf::MessageDyn;
use serde::Serialize;

use super::describe::{self, Describer};
use super::path;

/// Most hits sent.
const HITS: usize = 200;
/// Most values looked at: a search of a huge message stops, and says so.
const BUDGET: usize = 5_000_000;

/// What a search found.
#[derive(Debug, Default, Serialize)]
pub(crate) struct Found {
    pub(crate) hits: Vec<Hit>,
    /// Whether the search stopped before the message's end.
    pub(crate) stopped: bool,
}

/// One value found.
#[derive(Debug, Serialize)]
pub(crate) struct Hit {
    pub(crate) path: String,
    pub(crate) text: String,
}

struct Search<'d, 'm> {
    describer: &'d Describer<'m>,
    query: String,
    found: Found,
    looked: usize,
}

/// Every value of the message matching `query` (case-insensitive).
pub(crate) fn search(describer: &Describer, query: &str) -> Found {
    let mut search = Search {
        describer,
        query: query.to_lowercase(),
        found: Found::default(),
        looked: 0,
    };
    if !search.query.is_empty() {
        search.message(describer.root, "");
    }
    search.found
}

impl Search<'_, '_> {
    fn full(&mut self) -> bool {
        if self.found.hits.len() >= HITS || self.looked >= BUDGET {
            self.found.stopped = true;
        }
        self.found.stopped
    }

    fn message(&mut self, m: &dyn MessageDyn, at: &str) {
        for field in m.descriptor_dyn().fields() {
            if self.full() {
                return;
            }
            match field.runtime_field_type() {
                RuntimeFieldType::Singular(_) => {
                    if let Some(value) = field.get_singular(m) {
                        self.value(m, &field, &value, &path::child(at, field.name(), None));
                    }
                }
                RuntimeFieldType::Repeated(_) => {
                    let values = field.get_repeated(m);
                    for i in 0..values.len() {
                        if self.full() {
                            return;
                        }
                        self.value(
                            m,
                            &field,
                            &values.get(i),
                            &path::child(at, field.name(), Some(i)),
                        );
                    }
                }
                RuntimeFieldType::Map(..) => {}
            }
        }
    }

    fn value(
        &mut self,
        parent: &dyn MessageDyn,
        field: &FieldDescriptor,
        value: &ReflectValueRef,
        at: &str,
    ) {
        self.looked += 1;
        if let ReflectValueRef::Message(sub) = value {
            return self.message(&**sub, at);
        }
        let mut text = describe::value_text(value);
        // Matched whole: a shown string is cut.
        let mut whole = match value {
            ReflectValueRef::String(s) => s.to_string(),
            _ => text.clone(),
        };
        if let Some(string) = self.string_pointed(parent, field, value, at) {
            text = format!("{text} → {:?}", describe::cut(&string, 200));
            whole = string;
        }
        let matches = |t: &str| t.to_lowercase().contains(&self.query);
        if matches(&whole) || matches(at) {
            self.found.hits.push(Hit {
                path: at.to_string(),
                text,
            });
        }
    }

    /// The string a string-table reference names (others are left out:
    /// following every reference would make a search as slow as a view).
    fn string_pointed(
        &self,
        parent: &dyn MessageDyn,
        field: &FieldDescriptor,
        value: &ReflectValueRef,
        at: &str,
    ) -> Option<String> {
        let r = self
            .describer
            .reference(parent.descriptor_dyn().full_name(), field)?;
        if !r.table.field.starts_with("string") {
            return None;
        }
        let steps = path::parse(at).ok()?;
        let parent_steps = &steps[..steps.len().saturating_sub(1)];
        let pointed = self
            .describer
            .pointed(parent_steps, r, super::refs::integer(value)?)?;
        self.describer.whole_string(&pointed.path)
    }
}
