//! Files a report reads without. One damaged file (truncated by a full
//! disk, a page gone bad) would otherwise fail every report over the
//! store. A report that fails on a directory looks for the files that do
//! not read, warns of each once, and reads again without them (`--strict`
//! keeps the failure): the engine lists the store's files through
//! [`Skipping`], which leaves out those set aside. The files stay where
//! they are; `store check --repair` moves them.

use std::collections::HashSet;
use std::fmt;
use std::path::{Path as FilePath, PathBuf};
use std::sync::{Arc, RwLock};

use futures::stream::{BoxStream, StreamExt};
use object_store::local::LocalFileSystem;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    PutMultipartOptions, PutOptions, PutPayload, PutResult, Result,
};

use crate::diagnose::{problem_of, store_files, unreadable};

/// Files, as the engine names them, shared with the reader that adds to
/// them.
pub(crate) type FileSet = Arc<RwLock<HashSet<Path>>>;

/// The local file system, as the engine reads a store in a directory,
/// less the files set aside and the rollup files no longer read
/// (`rollup_sql.rs`).
#[derive(Debug)]
pub(crate) struct Skipping {
    inner: LocalFileSystem,
    /// Set aside as damaged, and stale rollups.
    left_out: [FileSet; 2],
}

impl Skipping {
    /// The file system, skipping what `skipped` and `stale` hold (added to
    /// later).
    pub(crate) fn new(skipped: FileSet, stale: FileSet) -> Skipping {
        Skipping {
            inner: LocalFileSystem::new(),
            left_out: [skipped, stale],
        }
    }

    fn keeps(left_out: &[FileSet; 2], object: &ObjectMeta) -> bool {
        let holds = |set: &FileSet| {
            let set = set.read().unwrap_or_else(|e| e.into_inner());
            set.contains(&object.location)
        };
        !left_out.iter().any(holds)
    }
}

impl fmt::Display for Skipping {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Skipping({})", self.inner)
    }
}

#[async_trait::async_trait]
impl ObjectStore for Skipping {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> Result<PutResult> {
        self.inner.put_opts(location, payload, opts).await
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> Result<Box<dyn MultipartUpload>> {
        self.inner.put_multipart_opts(location, opts).await
    }

    async fn get_opts(&self, location: &Path, options: GetOptions) -> Result<GetResult> {
        self.inner.get_opts(location, options).await
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, Result<Path>>,
    ) -> BoxStream<'static, Result<Path>> {
        self.inner.delete_stream(locations)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
        let left_out = self.left_out.clone();
        let listed = self.inner.list(prefix);
        let kept = listed.filter(move |object| {
            let keep = object
                .as_ref()
                .map_or(true, |o| Skipping::keeps(&left_out, o));
            futures::future::ready(keep)
        });
        kept.boxed()
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> Result<ListResult> {
        let mut listed = self.inner.list_with_delimiter(prefix).await?;
        (listed.objects).retain(|o| Skipping::keeps(&self.left_out, o));
        Ok(listed)
    }

    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> Result<()> {
        self.inner.copy_opts(from, to, options).await
    }
}

/// `file` as the engine names it.
pub(crate) fn object_of(file: PathBuf) -> Option<Path> {
    let absolute = std::path::absolute(&file).unwrap_or(file);
    Path::from_absolute_path(&absolute).ok()
}

/// The files of the store at `root` that do not read, not in `skipped`
/// yet, and why: first by their footers and schemas alone, else by every
/// page (only when a report has failed: it reads the whole store).
pub(crate) fn unreadable_files(
    root: &FilePath,
    skipped: &RwLock<HashSet<Path>>,
) -> Vec<(PathBuf, Path, String)> {
    let mut files = Vec::new();
    for (file, table) in store_files(root) {
        let Some(object) = object_of(file.clone()) else {
            continue;
        };
        let seen = skipped.read().unwrap_or_else(|e| e.into_inner());
        if !seen.contains(&object) {
            files.push((file, object, table));
        }
    }
    let footers: Vec<_> = (files.iter())
        .filter_map(|(file, object, table)| {
            let problem = problem_of(file, table)?;
            Some((file.clone(), object.clone(), problem))
        })
        .collect();
    if !footers.is_empty() {
        return footers;
    }
    (files.into_iter())
        .filter_map(|(file, object, _)| {
            let problem = unreadable(&file)?;
            Some((file, object, problem))
        })
        .collect()
}
