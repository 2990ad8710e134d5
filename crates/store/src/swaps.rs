//! Directory swaps: a directory exchanged with its replacement, written
//! beside it, in one atomic step; and how many swaps a store has seen, so
//! that a reader knows when one fell within its read. A day block (`blocks.rs`) replaces a
//! day's hour directories by its own in one swap of the day's directory;
//! a reader lists a table one directory level after another, and one that
//! listed the day's hours before the swap and looks into them after finds
//! nothing there (no error to retry). So `store compact` counts: the count
//! is odd while it swaps, even otherwise, and a reader whose count differs
//! after its read from before reads again (`Store::retried`).
//!
//! The count is a small file, `DIR/.swaps`, replaced by a rename. It is a
//! hint that does not need syncing: a compaction that dies while it swaps
//! leaves it odd, readers wait for it until it is [`SETTLE`] old and then
//! read anyway, and the next compaction makes it even again as it starts.

use std::path::{Path, PathBuf};

use crate::error::{io_at, StoreError};

/// The count's file, in the store's top directory.
const SWAPS: &str = ".swaps";

/// How long a reader waits for swaps under way to end.
const SETTLE: std::time::Duration = std::time::Duration::from_secs(2);

/// The count now: 0 where there is none.
fn count(root: &Path) -> u64 {
    std::fs::read_to_string(root.join(SWAPS))
        .ok()
        .and_then(|text| text.trim().parse().ok())
        .unwrap_or(0)
}

/// The count once no swap is under way: an odd count is waited for
/// while it is younger than [`SETTLE`] (an older one was left by a
/// compaction that died).
pub(crate) fn settled(root: &Path) -> u64 {
    loop {
        let now = count(root);
        let age = std::fs::metadata(root.join(SWAPS))
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok());
        if now.is_multiple_of(2) || age.is_none_or(|age| age > SETTLE) {
            return now;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// Makes an odd count even, under the store's exclusive lock (no
/// compaction runs but the caller's): one that died while it swapped left
/// it odd, and readers would wait [`SETTLE`] at every read until then.
pub(crate) fn recover(root: &Path) -> Result<(), StoreError> {
    let now = count(root);
    match now.is_multiple_of(2) {
        true => Ok(()),
        false => write(root, now + 1),
    }
}

/// Swaps under way: the count is odd until [`Swapping::end`].
pub(crate) struct Swapping<'r> {
    root: &'r Path,
    count: u64,
}

/// Makes the count odd: swaps begin.
pub(crate) fn begin(root: &Path) -> Result<Swapping<'_>, StoreError> {
    let now = count(root);
    // Odd already: a compaction died while it swapped.
    let count = now + if now.is_multiple_of(2) { 1 } else { 2 };
    write(root, count)?;
    Ok(Swapping { root, count })
}

impl Swapping<'_> {
    /// Makes the count even: the swaps are done.
    pub(crate) fn end(self) -> Result<(), StoreError> {
        write(self.root, self.count + 1)
    }
}

fn write(root: &Path, count: u64) -> Result<(), StoreError> {
    let hidden = root.join(format!("{SWAPS}.tmp"));
    let io = |e: std::io::Error| StoreError::Io(format!("{}: {e}", hidden.display()));
    std::fs::write(&hidden, format!("{count}\n")).map_err(io)?;
    std::fs::rename(&hidden, root.join(SWAPS)).map_err(io)
}

/// A hidden sibling of `dir`: `.service=x.compact` beside `service=x`.
pub(crate) fn sibling(dir: &Path, what: &str) -> PathBuf {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    dir.with_file_name(format!(".{name}.{what}"))
}

/// Exchanges the directories `a` and `b` atomically where the system can
/// (Linux's `renameat2`); elsewhere by two renames.
pub(crate) fn swap(a: &Path, b: &Path) -> Result<(), StoreError> {
    #[cfg(target_os = "linux")]
    {
        use std::ffi::CString;
        use std::os::unix::ffi::OsStrExt;
        let path = |p: &Path| {
            CString::new(p.as_os_str().as_bytes()).map_err(|e| StoreError::Io(e.to_string()))
        };
        let (pa, pb) = (path(a)?, path(b)?);
        // SAFETY: two valid NUL-terminated paths; renameat2 reads them only.
        let done = unsafe {
            libc::renameat2(
                libc::AT_FDCWD,
                pa.as_ptr(),
                libc::AT_FDCWD,
                pb.as_ptr(),
                libc::RENAME_EXCHANGE,
            )
        };
        if done == 0 {
            return sync_parent(a);
        }
    }
    let aside = sibling(a, "old");
    std::fs::rename(a, &aside).map_err(io_at(a))?;
    std::fs::rename(b, a).map_err(io_at(b))?;
    std::fs::rename(&aside, b).map_err(io_at(&aside))?;
    sync_parent(a)
}

fn sync_parent(dir: &Path) -> Result<(), StoreError> {
    crate::files::sync_dir(dir.parent().unwrap_or(dir))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_count_is_odd_while_swaps_are_under_way() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(super::settled(dir.path()), 0);
        let swapping = super::begin(dir.path()).unwrap();
        assert_eq!(super::count(dir.path()), 1);
        swapping.end().unwrap();
        assert_eq!(super::settled(dir.path()), 2);
        // A compaction that died while it swapped left the count odd: the
        // next one begins at the next odd count.
        std::fs::write(dir.path().join(super::SWAPS), "3\n").unwrap();
        let swapping = super::begin(dir.path()).unwrap();
        assert_eq!(super::count(dir.path()), 5);
        swapping.end().unwrap();
        assert_eq!(super::settled(dir.path()), 6);
        std::fs::write(dir.path().join(super::SWAPS), "7\n").unwrap();
        super::recover(dir.path()).unwrap();
        assert_eq!(super::count(dir.path()), 8);
        super::recover(dir.path()).unwrap();
        assert_eq!(super::count(dir.path()), 8);
    }
}
