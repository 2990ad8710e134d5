//! Which partitions a time range can touch. A `samples` row is never in a
//! later partition than its time, so a range's end bounds them. Its start
//! bounds them too in a store whose rows each sit in their own time's
//! hour (`late.rs` keeps them so): such a store holds the mark [`MARK`],
//! written when a writer of this layout creates the store, and by `store
//! compact` once it has found no row past its partition's hour. A store
//! written before has none until then, and a range's start bounds nothing
//! there.

use std::path::Path;

use datafusion::functions::expr_fn::concat;
use datafusion::logical_expr::{col, lit, Expr};

use crate::error::StoreError;
use crate::layout::{Partition, DAY, DAY_BLOCK, HOUR};
use crate::location::Location;

/// The mark's name, in the store's top directory (or prefix).
pub(crate) const MARK: &str = ".layout";

/// What the mark says.
const MARK_TEXT: &str =
    "protoprof store layout 2: every samples row is in the partition of its time's hour\n";

/// Whether the store at `location` holds the mark.
pub(crate) async fn is_marked(location: &Location) -> bool {
    match location {
        Location::Local(root) => is_marked_directory(root),
        Location::Object { .. } => match location.object_path(MARK) {
            Ok(path) => location.get(&path).await.is_ok(),
            Err(_) => false,
        },
    }
}

/// Whether the store in directory `root` holds the mark.
pub(crate) fn is_marked_directory(root: &Path) -> bool {
    std::fs::read_to_string(root.join(MARK))
        .is_ok_and(|text| text.starts_with("protoprof store layout "))
}

/// Puts the mark in the store at `location` (atomically: written aside,
/// then renamed into place).
pub(crate) async fn mark(location: &Location) -> Result<(), StoreError> {
    match location {
        Location::Local(root) => {
            let hidden = root.join(format!("{MARK}.tmp"));
            let io = |e: std::io::Error| StoreError::Io(format!("{}: {e}", hidden.display()));
            std::fs::write(&hidden, MARK_TEXT).map_err(io)?;
            std::fs::rename(&hidden, root.join(MARK)).map_err(io)
        }
        Location::Object { .. } => {
            location.put(MARK, MARK_TEXT.as_bytes().to_vec()).await?;
            Ok(())
        }
    }
}

/// Whether the store at `location` has no `samples` yet: a writer that
/// finds it so makes it a store of this layout.
pub(crate) async fn is_new(location: &Location) -> bool {
    !location.has_table(crate::schema::SAMPLES).await
}

/// The partitions a range can touch, as a filter on the partition
/// columns: up to `to`'s hour, and, in a marked store, from `from`'s. A
/// day block (`hour=all`) holds its whole day: it is read when the range
/// touches its day. (Its key, `dtTall`, sorts after every hour of its
/// day, so `from`'s bound takes it as it is; `to`'s needs it named.)
pub(crate) fn partition_range(from: Option<i64>, to: Option<i64>, marked: bool) -> Expr {
    let key = || concat(vec![col("dt"), lit("T"), col("hour")]);
    let key_of = |p: &Partition| lit(format!("{}T{}", p.dt, p.hour));
    // The first partition `from` can touch (in a marked store), the last
    // `to` can.
    let first = from.filter(|_| marked).map(|f| Partition::of(f, ""));
    let last = to.map(|t| Partition::of(t.saturating_sub(1), ""));
    let mut all = lit(true);
    if let Some(last) = &last {
        let block = col("hour").eq(lit(DAY_BLOCK));
        let within = key().lt_eq(key_of(last));
        all = all.and(within.or(block.and(col("dt").lt_eq(lit(last.dt.clone())))));
    }
    if let (Some(first), Some(1..)) = (&first, from) {
        all = all.and(key().gt_eq(key_of(first)));
    }
    // A range within a day (or an hour) names its directory too: the
    // engine lists only what an equality on the leading partition columns
    // leaves, where a range of them has it list every partition first.
    if let (Some(first), Some(last)) = (first, last) {
        if first.dt == last.dt {
            all = all.and(col("dt").eq(lit(first.dt)));
            if first.hour == last.hour {
                let hours = vec![lit(first.hour), lit(DAY_BLOCK)];
                all = all.and(col("hour").in_list(hours, false));
            }
        }
    }
    all
}

/// Marks the store at `root` if no `samples` row is past its partition's
/// hour; whether it is marked. `store compact` asks.
pub(crate) fn mark_if_within(root: &Path) -> Result<bool, StoreError> {
    let location = Location::of(root)?;
    if location.block_on(is_marked(&location))? {
        return Ok(true);
    }
    // No samples: nothing lies late.
    if location.block_on(is_new(&location))? {
        return Ok(true);
    }
    let store = crate::Store::open(root)?;
    // A day block's rows lie within its day.
    let late = format!(
        "SELECT count(*) AS late FROM samples WHERE time_unix_nano >= \
         CAST(to_timestamp(concat(dt, 'T', CASE WHEN hour = '{DAY_BLOCK}' THEN '00' ELSE hour END, \
         ':00:00Z')) AS BIGINT) + CASE WHEN hour = '{DAY_BLOCK}' THEN {DAY} ELSE {HOUR} END"
    );
    let batches = store.sql(&late)?;
    let counted = batches.first().map(|b| b.column(0).clone());
    let late = counted.map_or(0, |c| {
        crate::read::int_values(&c).first().copied().unwrap_or(0)
    });
    if late > 0 {
        return Ok(false);
    }
    location.block_on(mark(&location))??;
    Ok(true)
}
