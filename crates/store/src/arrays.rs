//! Arrow arrays of the store's column types, built from plain vectors.

use std::sync::Arc;

use datafusion::arrow::array::{
    ArrayRef, BooleanArray, FixedSizeBinaryArray, Int64Array, ListArray, MapArray, StringArray,
    StructArray, UInt64Array,
};
use datafusion::arrow::buffer::{NullBuffer, OffsetBuffer};
use datafusion::arrow::datatypes::{DataType, Field, Fields};

use crate::ids::Id;

/// 16-byte ids; `None` as null.
pub(crate) fn ids<'a>(values: impl Iterator<Item = Option<&'a Id>>) -> ArrayRef {
    let values: Vec<Option<&[u8]>> = values.map(|v| v.map(|id| &id[..])).collect();
    Arc::new(
        FixedSizeBinaryArray::try_from_sparse_iter_with_size(values.into_iter(), 16)
            .expect("16-byte ids"),
    )
}

/// Fixed-size binary values of `size` bytes; `None` as null.
pub(crate) fn fixed<'a>(size: i32, values: impl Iterator<Item = Option<&'a [u8]>>) -> ArrayRef {
    Arc::new(
        FixedSizeBinaryArray::try_from_sparse_iter_with_size(values, size)
            .expect("values of the column's size"),
    )
}

pub(crate) fn strings<'a>(values: impl Iterator<Item = &'a str>) -> ArrayRef {
    Arc::new(values.map(Some).collect::<StringArray>())
}

pub(crate) fn optional_strings<'a>(values: impl Iterator<Item = Option<&'a str>>) -> ArrayRef {
    Arc::new(values.collect::<StringArray>())
}

pub(crate) fn ints(values: impl Iterator<Item = i64>) -> ArrayRef {
    Arc::new(Int64Array::from_iter_values(values))
}

pub(crate) fn uints(values: impl Iterator<Item = u64>) -> ArrayRef {
    Arc::new(UInt64Array::from_iter_values(values))
}

pub(crate) fn flags(values: impl Iterator<Item = bool>) -> ArrayRef {
    Arc::new(values.map(Some).collect::<BooleanArray>())
}

/// The item field of a list of `data_type`, as the schema names it.
fn item_of(list: &DataType) -> Arc<Field> {
    match list {
        DataType::List(item) => item.clone(),
        other => panic!("not a list type: {other}"),
    }
}

/// A list column: each row's items given as the lengths of `items`' runs.
pub(crate) fn list(list_type: &DataType, lengths: Vec<usize>, items: ArrayRef) -> ArrayRef {
    let offsets = OffsetBuffer::from_lengths(lengths);
    Arc::new(ListArray::new(item_of(list_type), offsets, items, None))
}

/// A list column whose empty rows are null.
pub(crate) fn nullable_list(
    list_type: &DataType,
    lengths: Vec<usize>,
    items: ArrayRef,
) -> ArrayRef {
    let nulls = NullBuffer::from(lengths.iter().map(|&n| n > 0).collect::<Vec<bool>>());
    let offsets = OffsetBuffer::from_lengths(lengths);
    Arc::new(ListArray::new(
        item_of(list_type),
        offsets,
        items,
        Some(nulls),
    ))
}

/// A struct array of `fields` from their columns.
pub(crate) fn structs(fields: Fields, columns: Vec<ArrayRef>) -> ArrayRef {
    Arc::new(StructArray::new(fields, columns, None))
}

/// A map column of strings to strings (of [`crate::schema::string_map`]);
/// empty maps are null.
pub(crate) fn string_maps(map_type: &DataType, rows: &[&[(String, String)]]) -> ArrayRef {
    let DataType::Map(entries, sorted) = map_type else {
        panic!("not a map type: {map_type}");
    };
    let DataType::Struct(fields) = entries.data_type() else {
        panic!("map entries are a struct");
    };
    let keys = strings(rows.iter().flat_map(|r| r.iter().map(|(k, _)| k.as_str())));
    let values = strings(rows.iter().flat_map(|r| r.iter().map(|(_, v)| v.as_str())));
    let entries_array = StructArray::new(fields.clone(), vec![keys, values], None);
    let nulls = NullBuffer::from(rows.iter().map(|r| !r.is_empty()).collect::<Vec<bool>>());
    let offsets = OffsetBuffer::from_lengths(rows.iter().map(|r| r.len()));
    Arc::new(
        MapArray::try_new(
            entries.clone(),
            offsets,
            entries_array,
            Some(nulls),
            *sorted,
        )
        .expect("a map of the schema's type"),
    )
}
