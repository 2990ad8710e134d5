//! The profiles a store holds, by id, read from its `profiles` files: so
//! that a profile is written once, whichever writer (a `receive` retried,
//! a second receiver, `store add` beside them) is given it again.
//!
//! A profiles file counts only when the `samples` file of its flush (the
//! same name in the same partition) is there. A flush renames its samples
//! files last, so a profile counted here was written whole; one whose
//! writer died before (its `profiles` row alone) is written again, whole,
//! when it is sent again. Hidden files (being written or compacted) are
//! not read, nor are files that do not read (their profiles may then be
//! stored again).
//!
//! A writer reads a partition at each flush, and a busy receiver's
//! partition holds a file per flush: listing it each time would cost more
//! as it grows. So each flush, under the write lock, appends its batch
//! name to the partition's flush log (`profiles/<partition>/.flushes`),
//! and a writer that has listed the partition reads the log from where it
//! stopped instead. It lists the partition again when the log is not the
//! one it read (a compaction swaps the directory, log and all), is gone,
//! is shorter, or names a file that is not there.
//!
//! A profile sent again for a day `store compact` has made a block
//! (`blocks.rs`) is headed for one of its hours: a writer reads the day's
//! block of each partition it writes too.
//!
//! In object storage, where nothing is appended, each flush lists the
//! partitions it writes and reads the `profiles` objects it has not read.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use parquet::file::reader::ChunkReader;

use crate::error::StoreError;
use crate::ids::Id;
use crate::layout::{table_directory, Partition};
use crate::location::{client_runtime, Location, StoredPath};
use crate::schema::{PROFILES, SAMPLES};

/// The flush log's name, in each partition's `profiles` directory.
const FLUSH_LOG: &str = ".flushes";

/// Ids of profiles a store holds, and the files they were read from.
#[derive(Debug, Default)]
pub(crate) struct HeldProfiles {
    ids: HashSet<Id>,
    /// The `profiles` files read (or written) so far: each is read once.
    read: HashSet<PathBuf>,
    /// Each partition listed (its `profiles` directory): its flush log
    /// as read so far.
    logs: HashMap<PathBuf, LogRead>,
}

/// How much of which flush log has been read.
#[derive(Debug, Clone, PartialEq, Eq)]
struct LogRead {
    /// The log's first line, a batch name no other log has: a
    /// compaction's new directory has a log of its own.
    first: String,
    /// Bytes read, up to the end of a line.
    offset: u64,
}

impl HeldProfiles {
    /// Whether the store holds the profile `id`, as last read.
    pub(crate) fn contains(&self, id: &Id) -> bool {
        self.ids.contains(id)
    }

    /// Reads the `profiles` files of `partitions` not read before. A
    /// profile is stored in the partition of its start and service, so a
    /// profile written again would be in the partition it is headed for.
    pub(crate) fn read_partitions<'p>(
        &mut self,
        root: &Path,
        partitions: impl Iterator<Item = &'p Partition>,
    ) {
        for partition in with_day_blocks(partitions) {
            let profiles = table_directory(root, PROFILES).join(partition.directory());
            let samples = table_directory(root, SAMPLES).join(partition.directory());
            let logged = self.logs.get(&profiles).cloned();
            if !logged.is_some_and(|at| self.read_log(&profiles, &samples, at)) {
                // Listed whole, then the log from its end.
                let log = log_end(&profiles.join(FLUSH_LOG));
                self.read_files(&profiles, &samples);
                match log {
                    Some(at) => self.logs.insert(profiles, at),
                    None => self.logs.remove(&profiles),
                };
            }
        }
    }

    /// Reads the files the flush log of `profiles` names past `at`;
    /// whether the log allowed it (else the partition is to be listed).
    fn read_log(&mut self, profiles: &Path, samples: &Path, at: LogRead) -> bool {
        let Some(end) = log_end(&profiles.join(FLUSH_LOG)) else {
            return false;
        };
        if end.first != at.first || end.first.is_empty() || end.offset < at.offset {
            return false;
        }
        let Ok(text) = read_from(&profiles.join(FLUSH_LOG), at.offset, end.offset) else {
            return false;
        };
        // A line cut short (a writer that died appending) is read later.
        let whole = text.rfind('\n').map_or(0, |i| i + 1);
        for batch in text[..whole].lines() {
            let name = format!("{batch}.parquet");
            let file = profiles.join(&name);
            if self.read.contains(&file) {
                continue;
            }
            if !self.read_file(&file, &samples.join(&name)) {
                return false;
            }
        }
        let offset = at.offset + whole as u64;
        self.logs
            .insert(profiles.to_path_buf(), LogRead { offset, ..end });
        true
    }

    /// Reads every `profiles` file of the store at `root` not read before.
    fn read_all(&mut self, root: &Path) {
        self.read_files(
            &table_directory(root, PROFILES),
            &table_directory(root, SAMPLES),
        );
    }

    /// Reads the profiles files under `profiles` whose samples file is in
    /// the same place under `samples`.
    fn read_files(&mut self, profiles: &Path, samples: &Path) {
        for file in crate::diagnose::parquet_files(profiles) {
            if self.read.contains(&file) {
                continue;
            }
            let relative = file.strip_prefix(profiles).unwrap_or(&file);
            let hidden =
                (relative.components()).any(|c| c.as_os_str().to_string_lossy().starts_with('.'));
            if !hidden {
                self.read_file(&file, &samples.join(relative));
            }
        }
    }

    /// Reads the profiles file `file` if its flush's samples file
    /// `samples` is there; whether it was read.
    fn read_file(&mut self, file: &Path, samples: &Path) -> bool {
        if !samples.is_file() {
            return false;
        }
        let Some(ids) = std::fs::File::open(file).ok().and_then(profile_ids_in) else {
            return false;
        };
        self.ids.extend(ids);
        self.read.insert(file.to_path_buf());
        true
    }

    /// Reads the `profiles` objects of `partitions` not read before, in a
    /// store in object storage: each partition is listed.
    pub(crate) fn read_object_partitions<'p>(
        &mut self,
        location: &Location,
        partitions: impl Iterator<Item = &'p Partition>,
    ) -> Result<(), StoreError> {
        let runtime = client_runtime()?;
        for partition in with_day_blocks(partitions) {
            let under = |table: &str| format!("{table}/{}", partition.object_path());
            runtime.block_on(self.read_objects(location, &under(PROFILES), &under(SAMPLES)))?;
        }
        Ok(())
    }

    /// Reads the `profiles` objects under `profiles` (a path under the
    /// store) not read before whose flush's samples object is in the same
    /// place under `samples`.
    async fn read_objects(
        &mut self,
        location: &Location,
        profiles: &str,
        samples: &str,
    ) -> Result<(), StoreError> {
        let samples_base = location.object_path(samples)?;
        let written: HashSet<String> = parquet_names(&samples_base, location.list(samples).await?)
            .into_iter()
            .map(|(name, _)| name)
            .collect();
        let profiles_base = location.object_path(profiles)?;
        for (name, object) in parquet_names(&profiles_base, location.list(profiles).await?) {
            let key = PathBuf::from(object.as_ref());
            if self.read.contains(&key) || !written.contains(&name) {
                continue;
            }
            if let Some(ids) = profile_ids_in(location.get(&object).await?) {
                self.ids.extend(ids);
                self.read.insert(key);
            }
        }
        Ok(())
    }

    /// Notes the profiles a flush put at `object` in object storage (every
    /// table's object of its partition in place).
    pub(crate) fn put(&mut self, object: &StoredPath, ids: impl Iterator<Item = Id>) {
        self.ids.extend(ids);
        self.read.insert(PathBuf::from(object.as_ref()));
    }

    /// Notes the profiles a flush wrote to `file` (every table's file of
    /// its partition in place), and logs its batch in the partition's
    /// flush log. Under the write lock.
    pub(crate) fn wrote(&mut self, file: PathBuf, ids: impl Iterator<Item = Id>) {
        self.ids.extend(ids);
        if let (Some(dir), Some(batch)) = (file.parent(), file.file_stem()) {
            let log = dir.join(FLUSH_LOG);
            let before = log_end(&log);
            let appended = append_line(&log, &batch.to_string_lossy()).is_ok();
            // Nothing else was logged meanwhile (the write lock): what
            // was read stays read, and this flush's line with it.
            match (self.logs.get(dir).cloned(), before, log_end(&log)) {
                (Some(at), Some(before), Some(after)) if appended && at == before => {
                    self.logs.insert(dir.to_path_buf(), after);
                }
                (None, None, Some(after)) if appended => {
                    self.logs.insert(dir.to_path_buf(), after);
                }
                _ => {}
            }
        }
        self.read.insert(file);
    }
}

/// `partitions` and the day blocks of their days and services: a profile
/// sent again for a day `store compact` has made a block is there.
fn with_day_blocks<'p>(partitions: impl Iterator<Item = &'p Partition>) -> Vec<Partition> {
    let mut all = std::collections::BTreeSet::new();
    for partition in partitions {
        all.insert(partition.day_block());
        all.insert(partition.clone());
    }
    all.into_iter().collect()
}

/// The ids of the profiles the store at `root` holds (see the module's
/// documentation for which files count).
pub fn stored_ids(root: &Path) -> HashSet<Id> {
    let mut held = HeldProfiles::default();
    match Location::of(root) {
        Ok(Location::Local(root)) => held.read_all(&root),
        // What cannot be read now is read by each flush, under the lock,
        // in the partitions it writes.
        Ok(location) => {
            let read_all = |runtime: tokio::runtime::Runtime| {
                runtime.block_on(held.read_objects(&location, PROFILES, SAMPLES))
            };
            let _ = client_runtime().and_then(read_all);
        }
        Err(_) => {}
    }
    held.ids
}

/// The Parquet objects of `objects` (listed under `base`) that are not
/// hidden, each with its name below `base`: `dt=…/hour=…/service=…/NAME`,
/// or `NAME` when `base` is a partition.
fn parquet_names(base: &StoredPath, objects: Vec<StoredPath>) -> Vec<(String, StoredPath)> {
    let depth = base.parts().count();
    let name = |object: &StoredPath| {
        let parts: Vec<String> = (object.parts().skip(depth))
            .map(|p| p.as_ref().to_string())
            .collect();
        parts.join("/")
    };
    (objects.into_iter())
        .map(|object| (name(&object), object))
        .filter(|(name, _)| {
            name.ends_with(".parquet") && !name.split('/').any(|p| p.starts_with('.'))
        })
        .collect()
}

/// Where the log at `path` ends, and which log it is; `None` when there
/// is none.
fn log_end(path: &Path) -> Option<LogRead> {
    use std::io::{BufRead, BufReader, Read};
    let file = std::fs::File::open(path).ok()?;
    let offset = file.metadata().ok()?.len();
    let mut first = String::new();
    BufReader::new(file.take(256)).read_line(&mut first).ok()?;
    let first = first.strip_suffix('\n').unwrap_or_default().to_string();
    Some(LogRead { first, offset })
}

/// The text of `path` from byte `from` to byte `to`.
fn read_from(path: &Path, from: u64, to: u64) -> std::io::Result<String> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = std::fs::File::open(path)?;
    file.seek(SeekFrom::Start(from))?;
    let mut text = String::new();
    file.take(to - from).read_to_string(&mut text)?;
    Ok(text)
}

/// Appends `line` and a newline to `path` in one write.
fn append_line(path: &Path, line: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    file.write_all(format!("{line}\n").as_bytes())
}

/// The `profile_id` column of a `profiles` file (or object's bytes).
fn profile_ids_in(file: impl ChunkReader + 'static) -> Option<Vec<Id>> {
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use parquet::arrow::ProjectionMask;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).ok()?;
    let at = (builder.schema().fields().iter()).position(|f| f.name() == "profile_id")?;
    let mask = ProjectionMask::roots(builder.parquet_schema(), [at]);
    let mut ids = Vec::new();
    for batch in builder.with_projection(mask).build().ok()? {
        let batch = batch.ok()?;
        ids.extend(
            crate::read::id_values(batch.column(0))
                .into_iter()
                .flatten(),
        );
    }
    Some(ids)
}
