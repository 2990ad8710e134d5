//! Which integer fields point into which tables (the schemas' reference
//! annotations), where the table of a reference is in the message, and
//! which entry a value names: by position, or by the entry's `id`.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use protobuf::reflect::{MessageDescriptor, ReflectValueRef, RuntimeFieldType, RuntimeType};
use protobuf::MessageDyn;
use protoprof_model_meta::{FieldRef, RefKind, TableRef};

use super::path::{self, Step, Target};

/// Every reference field of protoprof's schemas, by message and field.
pub(crate) struct References {
    by_field: HashMap<(&'static str, &'static str), &'static FieldRef>,
}

impl References {
    /// The references of the pprof and OTLP schemas.
    pub(crate) fn of_profiles() -> References {
        let schemas = [
            &protoprof_model_pprof::SCHEMA,
            &protoprof_model_otlp::SCHEMA,
        ];
        let by_field = schemas
            .iter()
            .flat_map(|s| s.references)
            .map(|r| ((r.message, r.field), r))
            .collect();
        References { by_field }
    }

    /// The reference `field` of `message` (full name) declares, if any.
    pub(crate) fn of(&self, message: &str, field: &str) -> Option<&'static FieldRef> {
        self.by_field.get(&(message, field)).copied()
    }
}

/// Id → position, per table path: built the first time a table is
/// addressed by id, dropped when the message changes.
#[derive(Default)]
pub(crate) struct IdIndexes {
    tables: RefCell<HashMap<String, Arc<HashMap<i128, usize>>>>,
}

impl IdIndexes {
    /// Forgets every index (the message changed).
    pub(crate) fn clear(&self) {
        self.tables.borrow_mut().clear();
    }

    fn position(&self, root: &dyn MessageDyn, table: &str, id: i128) -> Option<usize> {
        let known = self.tables.borrow().get(table).cloned();
        let index = match known {
            Some(index) => index,
            None => {
                let index = Arc::new(ids_of(root, table));
                self.tables
                    .borrow_mut()
                    .insert(table.to_string(), index.clone());
                index
            }
        };
        index.get(&id).copied()
    }
}

/// The `id` of each entry of the table at `table`, to its position (the
/// first entry of a repeated id wins, as validation reports the others).
fn ids_of(root: &dyn MessageDyn, table: &str) -> HashMap<i128, usize> {
    let Ok(steps) = path::parse(table) else {
        return HashMap::new();
    };
    let found = path::visit(root, &steps, |target| {
        let mut ids = HashMap::new();
        let Target::Field { parent, field } = target else {
            return ids;
        };
        let entries = field.get_repeated(parent);
        for position in 0..entries.len() {
            if let ReflectValueRef::Message(entry) = entries.get(position) {
                let id = entry.descriptor_dyn().field_by_name("id");
                let id = id
                    .and_then(|f| f.get_singular(&*entry))
                    .and_then(|v| integer(&v));
                if let Some(id) = id {
                    ids.entry(id).or_insert(position);
                }
            }
        }
        ids
    });
    found.unwrap_or_default()
}

/// An integer value, widened.
pub(crate) fn integer(value: &ReflectValueRef) -> Option<i128> {
    Some(match value {
        ReflectValueRef::I32(v) => i128::from(*v),
        ReflectValueRef::I64(v) => i128::from(*v),
        ReflectValueRef::U32(v) => i128::from(*v),
        ReflectValueRef::U64(v) => i128::from(*v),
        _ => return None,
    })
}

/// The path of the table `table` names, for a reference in the message at
/// `at`: the nearest message on the way from the root that is the table's
/// holder, or holds it in a singular field (OTLP's dictionary, beside the
/// profiles that point into it).
pub(crate) fn table_path(
    root: &MessageDescriptor,
    at: &[Step],
    table: &TableRef,
) -> Option<String> {
    for (base, descriptor) in path::types_along(root, at).iter().rev() {
        if descriptor.full_name() == table.message {
            return Some(path::child(base, table.field, None));
        }
        for field in descriptor.fields() {
            let RuntimeFieldType::Singular(RuntimeType::Message(holder)) =
                field.runtime_field_type()
            else {
                continue;
            };
            if holder.full_name() == table.message {
                let holder_path = path::child(base, field.name(), None);
                return Some(path::child(&holder_path, table.field, None));
            }
        }
    }
    None
}

/// The position in its table of the entry `value` names, when it names
/// one (0 is no entry for ids that say so).
pub(crate) fn position(
    root: &dyn MessageDyn,
    ids: &IdIndexes,
    reference: &FieldRef,
    table: &str,
    value: i128,
) -> Option<usize> {
    match reference.kind {
        RefKind::Position => usize::try_from(value).ok(),
        RefKind::Id if value == 0 && reference.zero_is_none => None,
        RefKind::Id => ids.position(root, table, value),
    }
}

/// How many entries the table at `table` has (0 when it is not there).
pub(crate) fn table_len(root: &dyn MessageDyn, table: &str) -> usize {
    let Ok(steps) = path::parse(table) else {
        return 0;
    };
    let len = path::visit(root, &steps, |target| match target {
        Target::Field { parent, field } if field.is_repeated() => field.get_repeated(parent).len(),
        _ => 0,
    });
    len.unwrap_or(0)
}
