//! The store's locks. `DIR/.lock`: writers hold it shared while they
//! flush, `compact` holds it alone while it swaps partitions, so no file
//! lands in a partition being swapped. `DIR/.write.lock`: a flush holds it
//! alone while it reads what other writers wrote and writes its files, so
//! that two writers given one profile store it once. Readers take no lock.

use std::fs::{File, OpenOptions};
use std::path::Path;

use crate::error::StoreError;

/// A held lock; released when dropped.
pub(crate) struct StoreLock(File);

impl StoreLock {
    fn open(root: &Path, name: &str) -> Result<File, StoreError> {
        let path = root.join(name);
        let io = |e: std::io::Error| StoreError::Io(format!("{}: {e}", path.display()));
        std::fs::create_dir_all(root).map_err(io)?;
        OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(io)
    }

    /// Shared with other writers; waits for a compaction to end.
    pub(crate) fn shared(root: &Path) -> Result<StoreLock, StoreError> {
        let file = StoreLock::open(root, ".lock")?;
        file.lock_shared()
            .map_err(|e| StoreError::Io(format!("locking {}: {e}", root.display())))?;
        Ok(StoreLock(file))
    }

    /// Alone; waits for writers to finish their flushes.
    pub(crate) fn exclusive(root: &Path) -> Result<StoreLock, StoreError> {
        StoreLock::alone(root, ".lock")
    }

    /// The write lock, alone; waits for other writers' flushes.
    pub(crate) fn writing(root: &Path) -> Result<StoreLock, StoreError> {
        StoreLock::alone(root, ".write.lock")
    }

    /// The lock file `name`, held alone.
    fn alone(root: &Path, name: &str) -> Result<StoreLock, StoreError> {
        let file = StoreLock::open(root, name)?;
        file.lock()
            .map_err(|e| StoreError::Io(format!("locking {}: {e}", root.display())))?;
        Ok(StoreLock(file))
    }
}

impl Drop for StoreLock {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
}
