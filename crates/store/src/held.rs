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
//! stored again). A store in object storage is not read here.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::ids::Id;
use crate::layout::{table_directory, Partition};
use crate::schema::{PROFILES, SAMPLES};

/// Ids of profiles a store holds, and the files they were read from.
#[derive(Debug, Default)]
pub(crate) struct HeldProfiles {
    ids: HashSet<Id>,
    /// The `profiles` files read (or written) so far: each is read once.
    read: HashSet<PathBuf>,
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
        for partition in partitions {
            let profiles = table_directory(root, PROFILES).join(partition.directory());
            let samples = table_directory(root, SAMPLES).join(partition.directory());
            self.read_files(&profiles, &samples);
        }
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
            if hidden || !samples.join(relative).is_file() {
                continue;
            }
            if let Some(ids) = profile_ids_in(&file) {
                self.ids.extend(ids);
                self.read.insert(file);
            }
        }
    }

    /// Notes the profiles a flush wrote to `file`.
    pub(crate) fn wrote(&mut self, file: PathBuf, ids: impl Iterator<Item = Id>) {
        self.ids.extend(ids);
        self.read.insert(file);
    }
}

/// The ids of the profiles the store at `root` holds (see the module's
/// documentation for which files count).
pub fn stored_ids(root: &Path) -> HashSet<Id> {
    let mut held = HeldProfiles::default();
    if let Ok(crate::location::Location::Local(root)) = crate::location::Location::of(root) {
        held.read_all(&root);
    }
    held.ids
}

/// The `profile_id` column of a `profiles` file.
fn profile_ids_in(file: &Path) -> Option<Vec<Id>> {
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use parquet::arrow::ProjectionMask;
    let builder = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(file).ok()?).ok()?;
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
