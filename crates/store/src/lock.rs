//! The store's lock (`DIR/.lock`): writers hold it shared while they
//! flush, `compact` holds it alone while it swaps partitions, so no file
//! lands in a partition being swapped. Readers take no lock.

use std::fs::{File, OpenOptions};
use std::path::Path;

use crate::error::StoreError;

/// A held lock; released when dropped.
pub(crate) struct StoreLock(File);

impl StoreLock {
    fn open(root: &Path) -> Result<File, StoreError> {
        let path = root.join(".lock");
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
        let file = StoreLock::open(root)?;
        file.lock_shared()
            .map_err(|e| StoreError::Io(format!("locking {}: {e}", root.display())))?;
        Ok(StoreLock(file))
    }

    /// Alone; waits for writers to finish their flushes.
    pub(crate) fn exclusive(root: &Path) -> Result<StoreLock, StoreError> {
        let file = StoreLock::open(root)?;
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
