//! How a selection's rows are summed: by stack, label set and sample
//! type, each group's value summed and where it first appears in
//! pprof's merge order kept as one sortable string, its least
//! (`first_key`). Raw rows and a rollup's rows (`rollup_read.rs`) are
//! keyed alike, so that their sums are summed as the raw rows alone
//! would be.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, StringBuilder};
use datafusion::arrow::datatypes::{DataType, Int64Type};
use datafusion::common::DataFusionError;
use datafusion::dataframe::DataFrame;
use datafusion::functions::expr_fn::{coalesce, concat, encode, lpad, to_hex};
use datafusion::functions_aggregate::expr_fn::{min, sum};
use datafusion::logical_expr::{
    binary_expr, cast, col, lit, when, ColumnarValue, Expr, Operator, ScalarFunctionArgs,
    ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};

use crate::error::StoreError;
use crate::ids::Id;
use crate::schema::id_type;

/// A row's profile's start: `time_unix_nano` in files written before
/// `profile_time_unix_nano` was added, when it was the profile's start.
pub(crate) fn profile_time() -> Expr {
    coalesce(vec![col("profile_time_unix_nano"), col("time_unix_nano")])
}

/// The summed value and where each group first appears (pprof's merge
/// keeps samples in order of first appearance): the least [`first_key`].
pub(crate) fn aggregates() -> Result<Vec<Expr>, StoreError> {
    Ok(vec![
        sum(col("value")).alias("value"),
        min(first_key()?).alias("first_key"),
    ])
}

/// The columns a row is summed by, and its value: [`keyed`].
pub(crate) const KEYED: [&str; 5] = [
    "stack_id",
    "label_set_id",
    "sample_type",
    "sample_unit",
    "value",
];

/// `rows` as [`KEYED`] and their [`first_key`], to be summed with a
/// rollup's rows keyed alike ([`summed`]).
pub(crate) fn keyed(rows: DataFrame) -> Result<DataFrame, StoreError> {
    let mut columns: Vec<Expr> = KEYED.iter().map(|c| col(*c)).collect();
    columns.push(first_key()?.alias("first_key"));
    Ok(rows.select(columns)?)
}

/// [`aggregates`] of rows already [`keyed`].
pub(crate) fn summed() -> Vec<Expr> {
    vec![
        sum(col("value")).alias("value"),
        min(col("first_key")).alias("first_key"),
    ]
}

/// Where a row appears, as a string that orders as pprof's merge meets
/// rows: rows of value 0 last, then by the profile's start, its id, and
/// the sample's index. Fixed-width hex, each integer's sign bit flipped so
/// that the strings order as the numbers do; [`first_of`] reads it back.
/// One `min` of it takes the place of a `first_value` per column with
/// this ordering, whose state (each group's ordering as values, in each
/// of three accumulators) was most of a merged query's memory.
pub(crate) fn first_key() -> Result<Expr, StoreError> {
    let zero_last = when(col("value").eq(lit(0i64)), lit("1")).otherwise(lit("0"))?;
    Ok(first_key_of(
        zero_last,
        profile_time(),
        col("profile_id"),
        col("sample_index"),
    ))
}

/// A [`first_key`] of its parts: `"1"` for rows of value 0 (else
/// `"0"`), the profile's start, its id and the sample's index. A
/// rollup's row keeps the parts (`rollup_read.rs`).
pub(crate) fn first_key_of(zero: Expr, time: Expr, profile: Expr, index: Expr) -> Expr {
    let sortable = |number: Expr| {
        let flipped = binary_expr(number, Operator::BitwiseXor, lit(i64::MIN));
        lpad(vec![to_hex(flipped), lit(16i64), lit("0")])
    };
    concat(vec![
        zero,
        sortable(time),
        encode(cast(profile, DataType::Binary), lit("hex")),
        sortable(index),
    ])
}

/// [`first_key_of`] of a rollup's columns (`first_zero`, `first_time`,
/// `first_profile_id`, `first_sample_index`), made in one pass: the
/// same key, byte for byte, where the string functions make four arrays
/// per row on the way (a month's rollups are a million rows). Read here
/// only: a cluster's executors do not know it, and read no rollup.
pub(crate) fn first_key_of_parts(parts: Vec<Expr>) -> Expr {
    ScalarUDF::from(FirstKeyOfParts::default()).call(parts)
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct FirstKeyOfParts {
    signature: Signature,
}

impl Default for FirstKeyOfParts {
    fn default() -> Self {
        let types = vec![
            DataType::Boolean,
            DataType::Int64,
            id_type(),
            DataType::Int64,
        ];
        FirstKeyOfParts {
            signature: Signature::exact(types, Volatility::Immutable),
        }
    }
}

impl ScalarUDFImpl for FirstKeyOfParts {
    fn name(&self) -> &str {
        "protoprof_first_key"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _: &[DataType]) -> datafusion::common::Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn invoke_with_args(
        &self,
        args: ScalarFunctionArgs,
    ) -> datafusion::common::Result<ColumnarValue> {
        let arrays = ColumnarValue::values_to_arrays(&args.args)?;
        let [zero, time, profile, index] = &arrays[..] else {
            return datafusion::common::exec_err!("protoprof_first_key takes four columns");
        };
        let (zero, profile) = (zero.as_boolean(), profile.as_fixed_size_binary());
        if profile.value_length() != 16 {
            return datafusion::common::exec_err!("protoprof_first_key: ids are 16 bytes");
        }
        let time = time.as_primitive::<Int64Type>();
        let index = index.as_primitive::<Int64Type>();
        let rows = zero.len();
        let mut keys = StringBuilder::with_capacity(rows, rows * FIRST_KEY_LEN);
        let mut key = [0u8; FIRST_KEY_LEN];
        let sortable = |n: i64| ((n ^ i64::MIN) as u64).to_be_bytes();
        for row in 0..rows {
            let parts = [zero.is_null(row), time.is_null(row), profile.is_null(row)];
            if parts.into_iter().any(|null| null) || index.is_null(row) {
                keys.append_null();
                continue;
            }
            key[0] = if zero.value(row) { b'1' } else { b'0' };
            put_hex(&mut key[1..17], &sortable(time.value(row)));
            put_hex(&mut key[17..49], profile.value(row));
            put_hex(&mut key[49..], &sortable(index.value(row)));
            let text = std::str::from_utf8(&key);
            keys.append_value(text.map_err(|e| DataFusionError::External(Box::new(e)))?);
        }
        Ok(ColumnarValue::Array(Arc::new(keys.finish())))
    }
}

/// `bytes` in lowercase hex, two digits each, into `out` (twice as long).
fn put_hex(out: &mut [u8], bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for (pair, byte) in out.chunks_exact_mut(2).zip(bytes) {
        pair[0] = DIGITS[usize::from(byte >> 4)];
        pair[1] = DIGITS[usize::from(byte & 15)];
    }
}

/// The length of a [`first_key`]: a flag, two numbers and an id in hex.
const FIRST_KEY_LEN: usize = 65;

/// Where the rows of a group first appear: whether they are all 0, the
/// profile's start, its id, the sample's index (pprof's merge order: a
/// sample of zeros is no first appearance).
pub(crate) type First = (bool, i64, Id, i64);

/// What each row's [`first_key`] says, as [`first_of`] reads it.
pub(crate) fn first_values(array: &ArrayRef) -> Vec<Option<First>> {
    let cast = datafusion::arrow::compute::cast(array, &DataType::Utf8);
    let keys = cast.as_ref().ok().and_then(|a| a.as_string_opt::<i32>());
    match keys {
        Some(keys) => keys.iter().map(|key| first_of(key?)).collect(),
        None => vec![None; array.len()],
    }
}

/// What a [`first_key`] says: whether its rows are 0, the profile's
/// start, its id, the sample's index; `None` for a string that is not
/// one.
pub(crate) fn first_of(key: &str) -> Option<First> {
    let number = |hex: &str| {
        let flipped = u64::from_str_radix(hex, 16).ok()?;
        Some((flipped ^ (1 << 63)) as i64)
    };
    if key.len() != FIRST_KEY_LEN || !key.is_ascii() {
        return None;
    }
    let zero = match &key[..1] {
        "0" => false,
        "1" => true,
        _ => return None,
    };
    let time = number(&key[1..17])?;
    let profile = crate::ids::parse_hex(&key[17..49])?;
    let index = number(&key[49..65])?;
    Some((zero, time, profile, index))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use datafusion::arrow::array::{FixedSizeBinaryArray, Int64Array, RecordBatch, StringArray};
    use datafusion::prelude::SessionContext;

    use super::*;

    /// Where rows appear orders as (value 0 last, profile start, profile
    /// id, sample index), negative times included, and reads back.
    #[test]
    fn first_keys_order_as_the_rows_they_stand_for() {
        let rows: Vec<(i64, i64, u8, i64)> = vec![
            (5, 100, 1, 3),
            (0, -100, 0, 0),
            (5, -100, 2, 7),
            (5, 100, 1, 2),
            (5, i64::MAX, 0, 0),
            (5, i64::MIN, 9, i64::MAX),
            (7, 100, 0, 900),
        ];
        let id = |n: u8| [n; 16];
        let column = |f: fn(&(i64, i64, u8, i64)) -> i64| -> ArrayRef {
            Arc::new(Int64Array::from_iter_values(rows.iter().map(f)))
        };
        let ids = FixedSizeBinaryArray::try_from_iter(rows.iter().map(|r| id(r.2))).unwrap();
        let batch = RecordBatch::try_from_iter([
            ("value", column(|r| r.0)),
            ("profile_time_unix_nano", column(|r| r.1)),
            ("time_unix_nano", column(|r| r.1)),
            ("profile_id", Arc::new(ids) as ArrayRef),
            ("sample_index", column(|r| r.3)),
        ])
        .unwrap();
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let keys = runtime.block_on(async {
            let ctx = SessionContext::new();
            let frame = ctx.read_batch(batch.clone()).unwrap();
            frame
                .select(vec![first_key().unwrap()])
                .unwrap()
                .collect()
                .await
        });
        let keys = keys.unwrap();
        let read: Vec<_> = (rows.iter())
            .map(|r| Some((r.0 == 0, r.1, id(r.2), r.3)))
            .collect();
        assert_eq!(first_values(keys[0].column(0)), read);
        let keys = keys[0].column(0).as_any().downcast_ref::<StringArray>();
        let keys: Vec<String> = keys.unwrap().iter().map(|k| k.unwrap().into()).collect();
        for (key, row) in keys.iter().zip(&rows) {
            assert_eq!(first_of(key), Some((row.0 == 0, row.1, id(row.2), row.3)));
        }
        let mut by_key: Vec<_> = keys.iter().zip(&rows).collect();
        by_key.sort_by(|a, b| a.0.cmp(b.0));
        let mut by_row = rows.clone();
        by_row.sort_by_key(|r| (r.0 == 0, r.1, r.2, r.3));
        let by_key: Vec<_> = by_key.into_iter().map(|(_, r)| *r).collect();
        assert_eq!(by_key, by_row);
        assert_eq!(first_of("not a key"), None);
        // Made of a rollup's parts in one pass: the same keys.
        let parts = [
            col("value").eq(lit(0i64)),
            col("profile_time_unix_nano"),
            col("profile_id"),
            col("sample_index"),
        ];
        let of_parts = runtime.block_on(async {
            let ctx = SessionContext::new();
            let frame = ctx.read_batch(batch).unwrap();
            let key = first_key_of_parts(parts.to_vec());
            frame.select(vec![key]).unwrap().collect().await
        });
        let of_parts = of_parts.unwrap();
        let of_parts = of_parts[0].column(0).as_string::<i32>();
        let of_parts: Vec<String> = of_parts.iter().map(|k| k.unwrap().into()).collect();
        assert_eq!(of_parts, keys);
    }
}
