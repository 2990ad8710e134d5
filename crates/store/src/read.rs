//! Values out of the Arrow arrays the engine returns. A column of an
//! unexpected type reads as nulls, and the caller says what is missing.

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BinaryArray, FixedSizeBinaryArray, Int64Array, RecordBatch,
    StringArray, UInt64Array,
};
use datafusion::arrow::datatypes::DataType;

use crate::ids::Id;

/// The values of column `name` of `batch` as `read` reads them; a default
/// for every row when the batch has no such column.
pub(crate) fn column_of<T: Clone + Default>(
    batch: &RecordBatch,
    name: &str,
    read: impl Fn(&ArrayRef) -> Vec<T>,
) -> Vec<T> {
    match batch.column_by_name(name) {
        Some(column) => read(column),
        None => vec![T::default(); batch.num_rows()],
    }
}

/// Each row's id, or `None` where null or not 16 bytes.
pub(crate) fn id_values(array: &ArrayRef) -> Vec<Option<Id>> {
    if let Some(ids) = array.as_any().downcast_ref::<BinaryArray>() {
        return ids.iter().map(|id| id?.try_into().ok()).collect();
    }
    let Some(ids) = array.as_any().downcast_ref::<FixedSizeBinaryArray>() else {
        return vec![None; array.len()];
    };
    (0..ids.len())
        .map(|i| match ids.is_null(i) {
            true => None,
            false => ids.value(i).try_into().ok(),
        })
        .collect()
}

/// Each row's string ("" where null), through any string or dictionary
/// encoding the engine chose.
pub(crate) fn string_values(array: &ArrayRef) -> Vec<String> {
    let cast = datafusion::arrow::compute::cast(array, &DataType::Utf8);
    let Some(strings) = cast
        .as_ref()
        .ok()
        .and_then(|a| a.as_any().downcast_ref::<StringArray>())
    else {
        return vec![String::new(); array.len()];
    };
    (0..strings.len())
        .map(|i| match strings.is_null(i) {
            true => String::new(),
            false => strings.value(i).to_string(),
        })
        .collect()
}

pub(crate) fn int_values(array: &ArrayRef) -> Vec<i64> {
    match array.as_any().downcast_ref::<Int64Array>() {
        Some(ints) => (0..ints.len()).map(|i| ints.value(i)).collect(),
        None => vec![0; array.len()],
    }
}

pub(crate) fn uint_values(array: &ArrayRef) -> Vec<u64> {
    match array.as_any().downcast_ref::<UInt64Array>() {
        Some(ints) => (0..ints.len()).map(|i| ints.value(i)).collect(),
        None => vec![0; array.len()],
    }
}

pub(crate) fn bool_values(array: &ArrayRef) -> Vec<bool> {
    match array.data_type() {
        DataType::Boolean => {
            let flags = array.as_boolean();
            (0..flags.len()).map(|i| flags.value(i)).collect()
        }
        _ => vec![false; array.len()],
    }
}

/// Each row's list items, `None` where null.
pub(crate) fn list_values(array: &ArrayRef) -> Vec<Option<ArrayRef>> {
    match array.data_type() {
        DataType::List(_) => {
            let lists = array.as_list::<i32>();
            (0..lists.len())
                .map(|i| (!lists.is_null(i)).then(|| lists.value(i)))
                .collect()
        }
        _ => vec![None; array.len()],
    }
}

/// The field `name` of a struct array.
pub(crate) fn struct_field(array: &ArrayRef, name: &str) -> Option<ArrayRef> {
    match array.data_type() {
        DataType::Struct(_) => array.as_struct().column_by_name(name).cloned(),
        _ => None,
    }
}

/// Each row's map entries as (key, value) pairs (empty where null).
pub(crate) fn map_values(array: &ArrayRef) -> Vec<Vec<(String, String)>> {
    let DataType::Map(_, _) = array.data_type() else {
        return vec![Vec::new(); array.len()];
    };
    let maps = array.as_map();
    (0..maps.len())
        .map(|i| {
            if maps.is_null(i) {
                return Vec::new();
            }
            let entries = maps.value(i);
            let keys = string_values(entries.column(0));
            let values = string_values(entries.column(1));
            keys.into_iter().zip(values).collect()
        })
        .collect()
}
