//! `store compact` of a store in object storage, which swaps nothing
//! atomically: each partition's merged file is put (one atomic PUT) before
//! its old files are deleted, the lock confirmed still held in between.
//! Nothing is ever lost: a crash in between leaves rows twice, which the
//! next compaction takes once; a reader between the PUT and the deletes
//! counts that partition's rows twice.
//! Each partition is compacted under the store's write lock (the lock
//! object), listed again once it is held: writers, which read the
//! `profiles` objects of the partitions they write under it, never meet an
//! object deleted under them, and two compactions never merge one
//! partition twice. Writers wait one partition at a time.

use std::collections::BTreeMap;

use crate::error::StoreError;
use crate::location::{client_runtime, Location, StoredPath};
use crate::lock::ObjectLock;
use crate::merge::{merged_rows, read_parquet, Compacted, COMPACTION_ORDER};

/// Compacts every partition of every table at `location` with more than
/// one file.
pub(crate) fn compact_objects(location: &Location) -> Result<Compacted, StoreError> {
    let runtime = client_runtime()?;
    let mut done = Compacted::default();
    for table in COMPACTION_ORDER {
        let listed = runtime.block_on(location.list(&format!("{table}/")))?;
        for (partition, files) in partitions(listed) {
            if files.len() < 2 {
                continue;
            }
            let lock = ObjectLock::writing(location)?;
            let mut parts: Vec<_> = files[0].parts().collect();
            parts.pop();
            let under = StoredPath::from_iter(parts);
            let listed = runtime.block_on(location.list_at(&under))?;
            let Some(files) = partitions(listed).remove(&partition) else {
                continue;
            };
            if files.len() < 2 {
                continue;
            }
            let merged = runtime.block_on(put_merged(location, table, &files))?;
            // A writer that took the lock from this one (stalled past its
            // lease) may be reading these files: they stay, beside the
            // merged object, until a compaction takes their rows once.
            lock.confirm()?;
            for file in &files {
                runtime.block_on(location.delete(file))?;
            }
            done.count(files.len(), merged);
        }
    }
    Ok(done)
}

/// The Parquet objects listed, by partition (their path but the file's
/// name), in the encoded form the store gives.
fn partitions(objects: Vec<StoredPath>) -> BTreeMap<Vec<String>, Vec<StoredPath>> {
    let mut by_partition: BTreeMap<Vec<String>, Vec<StoredPath>> = BTreeMap::new();
    for object in objects {
        let mut parts: Vec<String> = object.parts().map(|p| p.as_ref().to_string()).collect();
        let Some(file) = parts.pop() else { continue };
        if file.ends_with(".parquet") && !file.starts_with('.') {
            by_partition.entry(parts).or_default().push(object);
        }
    }
    by_partition
}

/// Merges `files` of one partition into a new object beside them; rows
/// before and after.
async fn put_merged(
    location: &Location,
    table: &str,
    files: &[StoredPath],
) -> Result<(usize, usize), StoreError> {
    let mut batches = Vec::new();
    for file in files {
        let bytes = location.get(file).await?;
        batches.extend(read_parquet(bytes, file.as_ref(), table)?);
    }
    let (all, merged) = merged_rows(&batches, table, files[0].as_ref())?;
    let name = format!("{}.parquet", crate::layout::batch_name());
    let mut parts: Vec<_> = files[0].parts().collect();
    parts.pop();
    parts.push(name.as_str().into());
    let merged_path = StoredPath::from_iter(parts);
    let bytes = crate::files::parquet_bytes(
        &merged,
        merged_path.as_ref(),
        crate::files::FileKind::Compacted,
    )?;
    location.put_at(&merged_path, bytes).await?;
    Ok((all, merged.num_rows()))
}
