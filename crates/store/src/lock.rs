//! The store's locks. `DIR/.lock`: writers hold it shared while they
//! flush, `compact` holds it alone while it swaps partitions, so no file
//! lands in a partition being swapped. `DIR/.write.lock`: a flush holds it
//! alone while it reads what other writers wrote and writes its files, so
//! that two writers given one profile store it once. Readers take no lock.
//!
//! A store in object storage has no file to lock: its write lock is the
//! object `.write.lock`, put only where none is (a conditional PUT), kept
//! fresh while the flush runs, confirmed still this writer's before the
//! writes that make its flush count, and deleted once it is done, if it is
//! still the one put ([`ObjectLock`]).

use std::fs::{File, OpenOptions};
use std::path::Path;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::error::StoreError;
use crate::location::{client_runtime, version_of, Location, StoredPath, Version};

/// How old a lock object is when a writer takes it as left by one that
/// died: far longer than a flush takes.
const OBJECT_LEASE: Duration = Duration::from_secs(60);
/// How long a flush waits for another writer's lock object.
const OBJECT_WAIT: Duration = Duration::from_secs(180);

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

/// What a flush holds while it reads what other writers wrote and writes:
/// a directory's store lock (shared) and write lock, or the lock object of
/// a store in object storage. Released when dropped.
pub(crate) enum WriteLocks {
    /// A directory's: its store lock and its write lock.
    Directory {
        _store: StoreLock,
        _writing: StoreLock,
    },
    /// A store's in object storage: its lock object.
    Object { lock: ObjectLock },
}

impl WriteLocks {
    /// Waits for the locks a flush to `location` holds, and takes them.
    pub(crate) fn take(location: &Location) -> Result<WriteLocks, StoreError> {
        Ok(match location {
            Location::Local(root) => WriteLocks::Directory {
                _store: StoreLock::shared(root)?,
                _writing: StoreLock::writing(root)?,
            },
            Location::Object { .. } => WriteLocks::Object {
                lock: ObjectLock::writing(location)?,
            },
        })
    }

    /// That the locks are still held, before what two writers must not do
    /// at once: a directory's always are (the system holds them for the
    /// process); a lock object is confirmed ([`ObjectLock::confirm`]).
    pub(crate) fn confirm(&self) -> Result<(), StoreError> {
        match self {
            WriteLocks::Directory { .. } => Ok(()),
            WriteLocks::Object { lock } => lock.confirm(),
        }
    }
}

/// The write lock of a store in object storage, held. Its holder puts it
/// again (a conditional PUT) every quarter of the lease, so that no other
/// writer takes a live writer's lock for a dead one's, however long its
/// flush; [`Self::confirm`] does so at once, before what must not be done
/// by two writers. It is deleted when dropped, unless another writer holds
/// it by then (this one stalled past the lease).
pub(crate) struct ObjectLock {
    /// The lock object as this holder knows it, shared with the thread
    /// that keeps it fresh.
    held: Arc<Held>,
    /// Stops the thread that keeps the lock object fresh, which then
    /// deletes it if it is still this holder's.
    holding: Option<(Sender<()>, JoinHandle<()>)>,
}

impl ObjectLock {
    /// Puts the lock object, waiting while another writer's is there. One
    /// older than [`OBJECT_LEASE`] was left by a writer that died: it is
    /// replaced, if no one has replaced it meanwhile.
    pub(crate) fn writing(location: &Location) -> Result<ObjectLock, StoreError> {
        ObjectLock::writing_within(location, OBJECT_LEASE, OBJECT_WAIT)
    }

    /// [`Self::writing`], a lock older than `lease` taken as left, waiting
    /// up to `wait`.
    fn writing_within(
        location: &Location,
        lease: Duration,
        wait: Duration,
    ) -> Result<ObjectLock, StoreError> {
        let path = location.object_path(".write.lock")?;
        let runtime = client_runtime()?;
        let started = Instant::now();
        let mut pause = Duration::from_millis(10);
        // Who holds it, for whoever looks; unique, so that its version
        // (ETag) is this holder's alone.
        let holder = format!(
            "pid {} {}\n",
            std::process::id(),
            crate::layout::batch_name()
        );
        loop {
            let mine = match runtime.block_on(location.head(&path))? {
                None => runtime.block_on(location.put_if_absent(&path, holder.clone().into()))?,
                Some(other) if age(&other) > lease => {
                    let other = version_of(other);
                    let put = location.replace_if_unchanged(&path, holder.clone().into(), other);
                    runtime.block_on(put)?
                }
                Some(_) => None,
            };
            if let Some(mine) = mine {
                let (stop, stopped) = std::sync::mpsc::channel();
                let held = Arc::new(Held {
                    location: location.clone(),
                    path,
                    holder,
                    lease,
                    mine: Mutex::new(mine),
                });
                let (every, holder) = (lease / 4, Arc::clone(&held));
                let holding = std::thread::spawn(move || holder.hold(every, stopped));
                return Ok(ObjectLock {
                    held,
                    holding: Some((stop, holding)),
                });
            }
            if started.elapsed() > wait {
                return Err(StoreError::Io(format!(
                    "{path}: another writer has held the store's write lock for over {} s",
                    wait.as_secs_f64()
                )));
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(200));
        }
    }

    /// Puts the lock object again at once, if it is still this holder's,
    /// which gives the holder a whole lease from now; else an error: a
    /// writer that stalled past its lease (the process paused, the store
    /// unreachable) may have lost the lock to another, and must not go on
    /// as if it held it.
    pub(crate) fn confirm(&self) -> Result<(), StoreError> {
        let runtime = client_runtime()?;
        match self.held.renew(&runtime) {
            true => Ok(()),
            false => Err(StoreError::Io(format!(
                "{}: the store's write lock was lost to another writer (this one stalled past \
                 its {} s lease); nothing more is written under it",
                self.held.path,
                self.held.lease.as_secs_f64()
            ))),
        }
    }
}

/// How long ago an object was last written, by the object store's clock
/// against this machine's.
fn age(meta: &object_store::ObjectMeta) -> Duration {
    let now = chrono::DateTime::<chrono::Utc>::from(std::time::SystemTime::now());
    let age = now.signed_duration_since(meta.last_modified);
    age.to_std().unwrap_or_default()
}

/// A lock object put, as its holder knows it.
struct Held {
    location: Location,
    path: StoredPath,
    /// What the object says.
    holder: String,
    /// How long after its last put another writer takes it.
    lease: Duration,
    /// Its version as last put (as the PUT's answer says, not as a later
    /// look would: another writer may put between); held across each
    /// renewal, so that one is never taken for another holder's.
    mine: Mutex<Version>,
}

impl Held {
    /// Puts the lock object again ([`Self::renew`]) every `every` until
    /// told to stop (or the sender is gone), then deletes it if it is
    /// still this holder's: a writer that took it meanwhile (this one stalled past
    /// the lease, or the object store did not answer) keeps it.
    fn hold(&self, every: Duration, stop: Receiver<()>) {
        let Ok(runtime) = client_runtime() else {
            return;
        };
        while let Err(RecvTimeoutError::Timeout) = stop.recv_timeout(every) {
            if !self.renew(&runtime) {
                return;
            }
        }
        let mine = self.mine.lock().unwrap_or_else(|e| e.into_inner());
        let now = runtime.block_on(self.location.head(&self.path));
        if matches!(now, Ok(Some(meta)) if meta.e_tag == mine.e_tag) {
            let _ = runtime.block_on(self.location.delete(&self.path));
        }
    }

    /// Puts the lock object again if it is still the version this holder
    /// put; whether it was (and is now put again).
    fn renew(&self, runtime: &tokio::runtime::Runtime) -> bool {
        let mut mine = self.mine.lock().unwrap_or_else(|e| e.into_inner());
        let again = self.holder.clone().into_bytes();
        let put = self
            .location
            .replace_if_unchanged(&self.path, again, mine.clone());
        match runtime.block_on(put) {
            Ok(Some(now)) => {
                *mine = now;
                true
            }
            _ => false,
        }
    }
}

impl Drop for ObjectLock {
    fn drop(&mut self) {
        if let Some((stop, holding)) = self.holding.take() {
            drop(stop);
            let _ = holding.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer waits while another's lock object is there, and takes it
    /// once it is older than the lease (its writer died); a live writer's
    /// lock stays its own however long it holds it, and is confirmed; a
    /// lock taken over is not confirmed, nor deleted by the writer it was
    /// taken from; a lock released is taken at once.
    #[test]
    fn a_lock_object_is_waited_for_until_its_lease_ends() {
        let Some(python) = protoprof_tests::python_store() else {
            return;
        };
        let (mut server, location) = crate::test_profiles::moto_store(&python);
        let runtime = client_runtime().unwrap();
        let path = location.object_path(".write.lock").unwrap();
        let long = Duration::from_secs(60);
        // A writer that died left its lock object.
        let created = Instant::now();
        let dead = runtime.block_on(location.put_if_absent(&path, b"pid 1\n".to_vec()));
        assert!(dead.unwrap().is_some());
        let refused = ObjectLock::writing_within(&location, long, Duration::from_millis(300));
        let refused = refused.err().expect("held by another writer").to_string();
        assert!(refused.contains("write lock"), "{refused}");
        let lease = Duration::from_secs(3);
        let taken = ObjectLock::writing_within(&location, lease, long).unwrap();
        // Object stores keep whole seconds.
        let waited = created.elapsed();
        assert!(waited >= lease - Duration::from_secs(1), "{waited:?}");
        // Held past its lease, it is refreshed: no one takes it.
        let started = Instant::now();
        let refused = ObjectLock::writing_within(&location, lease, 2 * lease);
        assert!(refused.is_err() && started.elapsed() >= 2 * lease);
        taken.confirm().unwrap();
        taken.confirm().unwrap();
        // Taken over (as if its writer had stalled past the lease), it is
        // no longer confirmed, and its release leaves the new holder's lock.
        let other = b"pid 2\n".to_vec();
        runtime
            .block_on(location.put_at(&path, other.clone()))
            .unwrap();
        let lost = taken.confirm().unwrap_err().to_string();
        assert!(
            lost.contains("write lock was lost to another writer"),
            "{lost}"
        );
        drop(taken);
        let left = runtime.block_on(location.get(&path)).unwrap();
        assert_eq!(left.to_vec(), other);
        runtime.block_on(location.delete(&path)).unwrap();
        // A lock released is taken at once.
        drop(ObjectLock::writing_within(&location, long, long).unwrap());
        let started = Instant::now();
        let again = ObjectLock::writing_within(&location, long, long).unwrap();
        assert!(started.elapsed() < Duration::from_secs(1));
        drop(again);
        let _ = server.kill();
        let _ = server.wait();
    }
}
