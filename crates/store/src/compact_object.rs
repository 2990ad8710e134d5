//! `store compact` of a store in object storage, which swaps nothing
//! atomically: each partition's merged file is put (one atomic PUT) before
//! its old files are deleted, the lock confirmed still held in between.
//! Nothing is ever lost: a crash in between leaves rows twice, which the
//! next compaction takes once; a reader between the PUT and the deletes
//! counts that partition's rows twice.
//! Each partition is compacted, in every table at once, under the store's
//! write lock (the lock object), listed again once it is held. Its merged
//! objects take one name in every table, as a flush's do, so that writers
//! know the profiles they hold stored (`held.rs`). Writers, which read the
//! `profiles` objects of the partitions they write under the lock, never
//! meet an object deleted under them, and two compactions never merge one
//! partition twice. Writers wait one partition at a time.

use std::collections::{BTreeMap, BTreeSet};

use crate::error::StoreError;
use crate::location::{client_runtime, Location, StoredPath};
use crate::lock::ObjectLock;
use crate::merge::{merged_rows, read_parquet, Compacted, PartitionNames, COMPACTION_ORDER};

/// Compacts every partition at `location` that has more than one file
/// in some table: its files of every table, under one lock, each table's
/// merged into one object of the same name in every table.
pub(crate) fn compact_objects(location: &Location) -> Result<Compacted, StoreError> {
    let runtime = client_runtime()?;
    let mut done = Compacted::default();
    let mut several = BTreeSet::new();
    for table in COMPACTION_ORDER {
        let listed = partitions(runtime.block_on(location.list(&format!("{table}/")))?);
        for (partition, files) in listed {
            if files.len() > 1 {
                several.insert(below_table(&partition));
            }
        }
    }
    for below in several {
        let lock = ObjectLock::writing(location)?;
        // Listed again once the lock is held: a writer may have added files.
        let mut tables = Vec::new();
        let mut names = PartitionNames::default();
        for table in COMPACTION_ORDER {
            let under = location.object_path(&format!("{table}/{below}"))?;
            let listed = runtime.block_on(location.list_at(&under))?;
            let files: Vec<StoredPath> = partitions(listed).into_values().flatten().collect();
            for file in &files {
                names.note(below.clone(), stem(file));
            }
            tables.push((table, files));
        }
        let name = names.merged(&below);
        let mut old = Vec::new();
        for (table, files) in tables.into_iter().filter(|(_, f)| !f.is_empty()) {
            let merged = runtime.block_on(put_merged(location, table, &files, &name))?;
            done.count(files.len(), merged);
            old.extend(files);
        }
        // A writer that took the lock from this one (stalled past its
        // lease) may be reading these files: they stay, beside the
        // merged objects, until a compaction takes their rows once.
        lock.confirm()?;
        for file in &old {
            runtime.block_on(location.delete(file))?;
        }
    }
    Ok(done)
}

/// A partition's path below its table (`dt=…/hour=…/service=…`), from
/// its parts.
fn below_table(partition: &[String]) -> String {
    let at = partition.len().saturating_sub(3);
    partition[at..].join("/")
}

/// An object's name without `.parquet`.
fn stem(object: &StoredPath) -> String {
    let name = object.filename().unwrap_or_default();
    name.strip_suffix(".parquet").unwrap_or(name).to_string()
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
    name: &str,
) -> Result<(usize, usize), StoreError> {
    let mut batches = Vec::new();
    for file in files {
        let bytes = location.get(file).await?;
        batches.extend(read_parquet(bytes, file.as_ref(), table)?);
    }
    let (all, merged) = merged_rows(&batches, table, files[0].as_ref())?;
    let name = format!("{name}.parquet");
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
