//! Group commit: one [`StoreWriter`] shared by concurrent callers, as
//! `receive --store` has them. Each call makes its profiles' rows on its
//! own thread, then adds them at once (all of them or none), and returns
//! when a flush has written them. Calls that arrive while a flush runs
//! wait and are written together by the next one, so a busy receiver
//! writes one file per table and partition per flush, not per request,
//! and each flush is bounded: past [`GroupWriter::new`]'s row bound,
//! callers wait for the running flush before adding.
//!
//! A profile is written once: one whose id the store already holds (a
//! request retried after its answer was lost, or sent again after a
//! restart) is not written again, and one another call is writing is
//! waited for, then written only if that call's flush failed. The ids the
//! store holds are read from its `profiles` files at the first call; each
//! flush then reads those other writers added to the partitions it writes
//! (`StoreWriter::flush`), so that two receivers given one profile store it
//! once.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex, MutexGuard};

use protoprof_model_pprof::perftools::profiles::Profile;

use crate::error::StoreError;
use crate::held::{stored_ids, HeldProfiles};
use crate::ids::Id;
use crate::rows::ProfileContext;
use crate::write::StoreWriter;

/// A writer many threads add to; see the module's documentation.
pub struct GroupWriter {
    root: PathBuf,
    max_rows: usize,
    state: Mutex<Group>,
    changed: Condvar,
    /// What the flushes know the store holds (one flush runs at a time).
    held: Mutex<HeldProfiles>,
}

/// Profiles' rows made by [`GroupWriter::rows_sharing`], not yet written.
pub struct PendingRows {
    rows: StoreWriter,
    ids: Vec<Id>,
}

/// What the callers share.
struct Group {
    /// The rows added since the running flush started.
    writer: StoreWriter,
    /// The calls whose rows `writer` holds.
    waiting: Vec<u64>,
    /// Whether a caller is flushing (without the lock).
    flushing: bool,
    next_call: u64,
    /// Each finished call's outcome, until it collects it.
    outcomes: HashMap<u64, Result<usize, String>>,
    /// The ids of the profiles the store holds (`None` until read).
    stored: Option<HashSet<Id>>,
    /// The ids of the profiles calls are writing.
    writing: HashSet<Id>,
}

impl GroupWriter {
    /// A group writer to the store at `root`; callers wait before adding
    /// while `max_rows` sample rows are pending and a flush runs.
    pub fn new(root: &Path, max_rows: usize) -> GroupWriter {
        GroupWriter {
            root: root.to_path_buf(),
            max_rows,
            state: Mutex::new(Group {
                writer: StoreWriter::new(root),
                waiting: Vec::new(),
                flushing: false,
                next_call: 0,
                outcomes: HashMap::new(),
                stored: None,
                writing: HashSet::new(),
            }),
            changed: Condvar::new(),
            held: Mutex::new(HeldProfiles::default()),
        }
    }

    /// Adds `profiles` (all or none) and returns once they are written
    /// and synced, with their ids; or why they are not. Those the store
    /// holds already are not written again.
    pub fn write(&self, profiles: &[(&Profile, &ProfileContext)]) -> Result<Vec<Id>, StoreError> {
        // The rows are made before the lock is taken: callers make theirs
        // at once, and only gathering them is one at a time.
        let mut rows = StoreWriter::new(&self.root);
        let ids = rows.add_all(profiles)?;
        self.write_rows(rows, ids)
    }

    /// [`Self::write`] for profiles sharing `dictionary`
    /// ([`StoreWriter::add_sharing`]).
    pub fn write_sharing(
        &self,
        dictionary: &Profile,
        profiles: &[(&Profile, &ProfileContext)],
    ) -> Result<Vec<Id>, StoreError> {
        self.commit(self.rows_sharing(dictionary, profiles)?)
    }

    /// The rows of `profiles`, sharing `dictionary`, made on this thread
    /// and not written yet: the caller can let go of the profiles while
    /// [`Self::commit`] waits for a flush.
    pub fn rows_sharing(
        &self,
        dictionary: &Profile,
        profiles: &[(&Profile, &ProfileContext)],
    ) -> Result<PendingRows, StoreError> {
        let mut rows = StoreWriter::new(&self.root);
        let ids = rows.add_sharing(dictionary, profiles)?;
        Ok(PendingRows { rows, ids })
    }

    /// Writes `pending` as [`Self::write`] writes its profiles: returns
    /// once they are written and synced, with their ids.
    pub fn commit(&self, pending: PendingRows) -> Result<Vec<Id>, StoreError> {
        self.write_rows(pending.rows, pending.ids)
    }

    /// Writes the profiles of `rows` (their ids `ids`) that the store does
    /// not hold and no other call is writing.
    fn write_rows(&self, mut rows: StoreWriter, ids: Vec<Id>) -> Result<Vec<Id>, StoreError> {
        let fresh = self.claim(&ids);
        if fresh.is_empty() {
            return Ok(ids);
        }
        let chosen: HashSet<Id> = fresh.iter().map(|&i| ids[i]).collect();
        rows.keep_only(&chosen);
        let outcome = self.write_claimed(rows);
        let mut group = self.lock();
        for id in &chosen {
            group.writing.remove(id);
        }
        if outcome.is_ok() {
            group
                .stored
                .get_or_insert_with(HashSet::new)
                .extend(&chosen);
        }
        self.changed.notify_all();
        outcome.map(|_| ids)
    }

    /// The positions of `ids` to write: not held by the store, nor by an
    /// earlier position; each marked as being written. Waits while another
    /// call writes any of them.
    fn claim(&self, ids: &[Id]) -> Vec<usize> {
        let mut group = self.lock();
        if group.stored.is_none() {
            group.stored = Some(stored_ids(&self.root));
        }
        while ids.iter().any(|id| group.writing.contains(id)) {
            group = self.wait(group);
        }
        let mut fresh = Vec::new();
        for (i, id) in ids.iter().enumerate() {
            let held = group.stored.as_ref().is_some_and(|s| s.contains(id));
            if !held && group.writing.insert(*id) {
                fresh.push(i);
            }
        }
        fresh
    }

    /// Writes `rows` (their profiles claimed) with the other waiting
    /// calls' rows, returning once a flush has written them.
    fn write_claimed(&self, rows: StoreWriter) -> Result<(), StoreError> {
        let mut group = self.lock();
        while group.flushing && group.writer.pending_rows() >= self.max_rows {
            group = self.wait(group);
        }
        group.writer.absorb(rows);
        let call = group.next_call;
        group.next_call += 1;
        group.waiting.push(call);
        loop {
            if let Some(outcome) = group.outcomes.remove(&call) {
                return outcome.map(|_| ()).map_err(StoreError::Io);
            }
            if group.flushing {
                group = self.wait(group);
                continue;
            }
            group = self.flush_waiting(group);
        }
    }

    /// Flushes what the waiting calls added, without the lock held, and
    /// gives each of them the outcome.
    fn flush_waiting<'a>(&'a self, mut group: MutexGuard<'a, Group>) -> MutexGuard<'a, Group> {
        group.flushing = true;
        let mut writer = std::mem::replace(&mut group.writer, StoreWriter::new(&self.root));
        let calls = std::mem::take(&mut group.waiting);
        drop(group);
        let outcome = {
            let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
            writer.flush_against(&mut held)
        };
        let outcome = outcome
            .map(|flushed| flushed.profiles)
            .map_err(|e| e.to_string());
        let mut group = self.lock();
        for call in calls {
            group.outcomes.insert(call, outcome.clone());
        }
        group.flushing = false;
        self.changed.notify_all();
        group
    }

    fn lock(&self) -> MutexGuard<'_, Group> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn wait<'a>(&self, group: MutexGuard<'a, Group>) -> MutexGuard<'a, Group> {
        self.changed.wait(group).unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_profiles::{count, profile, total};

    #[test]
    fn concurrent_calls_are_all_written_before_they_return() {
        let dir = tempfile::tempdir().unwrap();
        let group = GroupWriter::new(dir.path(), 1_000);
        let start = std::sync::Barrier::new(16);
        std::thread::scope(|scope| {
            for n in 0..16 {
                let (group, root, start) = (&group, dir.path(), &start);
                scope.spawn(move || {
                    start.wait();
                    let p = profile(n + 1);
                    let context = ProfileContext {
                        service_name: "s".into(),
                        ..Default::default()
                    };
                    let ids = group.write(&[(&p, &context)]).unwrap();
                    // Returned: readable now.
                    let store = crate::Store::open(root).unwrap();
                    let back = store.get(ids[0]).unwrap().profile;
                    assert_eq!(back.sample[0].value, vec![n + 1]);
                });
            }
        });
        let store = crate::Store::open(dir.path()).unwrap();
        let all = store.select(&crate::Query::default()).unwrap().profile;
        let total: i64 = all.sample.iter().map(|s| s.value[0]).sum();
        assert_eq!(total, (1..=16).sum::<i64>());
        // Calls that waited on a flush were written together: fewer files
        // than one per table and call.
        let files = crate::diagnose::parquet_files(dir.path()).len();
        assert!(files < 16 * crate::TABLES.len(), "{files} files");
    }

    #[test]
    fn a_profile_the_store_holds_is_not_written_again() {
        let dir = tempfile::tempdir().unwrap();
        let context = ProfileContext {
            service_name: "s".into(),
            ..Default::default()
        };
        let (one, two, three) = (profile(1), profile(2), profile(3));
        let group = GroupWriter::new(dir.path(), 1_000);
        let first = group.write(&[(&one, &context)]).unwrap();
        // A retried request, with one profile more.
        let again = group.write(&[(&one, &context), (&two, &context)]).unwrap();
        assert_eq!(again[0], first[0]);
        // Retried at once by many exporters: written once.
        std::thread::scope(|scope| {
            for _ in 0..8 {
                scope.spawn(|| group.write(&[(&three, &context)]).unwrap());
            }
        });
        // A restarted receiver reads what the store holds.
        let restarted = GroupWriter::new(dir.path(), 1_000);
        restarted
            .write(&[(&two, &context), (&three, &context)])
            .unwrap();
        let store = crate::Store::open(dir.path()).unwrap();
        assert_eq!(count(&store, "profiles"), 3);
        assert_eq!(total(&store), 1 + 2 + 3);
    }

    #[test]
    fn a_profile_whose_samples_never_landed_is_written_again() {
        let dir = tempfile::tempdir().unwrap();
        let context = ProfileContext {
            service_name: "s".into(),
            ..Default::default()
        };
        let one = profile(7);
        GroupWriter::new(dir.path(), 1_000)
            .write(&[(&one, &context)])
            .unwrap();
        // The writer died after renaming its dictionaries and profiles
        // files, before its samples file.
        let samples = crate::layout::table_directory(dir.path(), crate::schema::SAMPLES);
        for file in crate::diagnose::parquet_files(&samples) {
            std::fs::remove_file(file).unwrap();
        }
        assert!(stored_ids(dir.path()).is_empty());
        GroupWriter::new(dir.path(), 1_000)
            .write(&[(&one, &context)])
            .unwrap();
        let store = crate::Store::open(dir.path()).unwrap();
        let all = store.select(&crate::Query::default()).unwrap().profile;
        let values: Vec<i64> = all.sample.iter().map(|s| s.value[0]).collect();
        assert_eq!(values, [7]);
        assert_eq!(stored_ids(dir.path()).len(), 1);
    }

    #[test]
    fn rows_made_apart_keep_each_dictionary_row_once() {
        let dir = tempfile::tempdir().unwrap();
        let context = ProfileContext {
            service_name: "s".into(),
            ..Default::default()
        };
        let mut gathered = StoreWriter::new(dir.path());
        gathered.add(&profile(1), &context).unwrap();
        let mut apart = StoreWriter::new(dir.path());
        apart.add(&profile(2), &context).unwrap();
        gathered.absorb(apart);
        assert_eq!(gathered.pending_rows(), 2);
        assert_eq!(gathered.flush().unwrap().profiles, 2);
        let store = crate::Store::open(dir.path()).unwrap();
        let count = |table: &str| count(&store, table);
        assert_eq!((count("samples"), count("profiles")), (2, 2));
        assert_eq!((count("stacks"), count("locations")), (1, 1));
        let all = store.select(&crate::Query::default()).unwrap().profile;
        let values: Vec<i64> = all.sample.iter().map(|s| s.value[0]).collect();
        assert_eq!(values.iter().sum::<i64>(), 3);
    }

    #[test]
    fn a_refused_call_adds_nothing_and_the_others_are_written() {
        let dir = tempfile::tempdir().unwrap();
        let group = GroupWriter::new(dir.path(), 1_000);
        let context = ProfileContext::default();
        let good = profile(5);
        let mut bad = profile(7);
        bad.sample[0].location_id = vec![9];
        let refused = group
            .write(&[(&good, &context), (&bad, &context)])
            .unwrap_err();
        assert!(
            refused
                .to_string()
                .contains("profile 1: sample[0]: location 9"),
            "{refused}"
        );
        group.write(&[(&profile(3), &context)]).unwrap();
        let store = crate::Store::open(dir.path()).unwrap();
        let all = store.select(&crate::Query::default()).unwrap().profile;
        let values: Vec<i64> = all.sample.iter().map(|s| s.value[0]).collect();
        assert_eq!(
            values,
            vec![3],
            "the refused call's first profile is not there"
        );
    }

    #[test]
    fn two_receivers_given_one_profile_store_it_once() {
        let dir = tempfile::tempdir().unwrap();
        let context = ProfileContext {
            service_name: "s".into(),
            ..Default::default()
        };
        let (seed, one, two) = (profile(100), profile(1), profile(2));
        let (a, b) = (
            GroupWriter::new(dir.path(), 1_000),
            GroupWriter::new(dir.path(), 1_000),
        );
        // Both have looked at the store: what each knows it holds is read.
        a.write(&[(&seed, &context)]).unwrap();
        b.write(&[(&seed, &context)]).unwrap();
        a.write(&[(&one, &context)]).unwrap();
        // `one` reached both (an exporter retrying on another replica).
        let ids = b.write(&[(&one, &context), (&two, &context)]).unwrap();
        assert_eq!(ids.len(), 2);
        // `a` reads what `b` wrote since from the partition's flush log.
        a.write(&[(&two, &context)]).unwrap();
        let store = crate::Store::open(dir.path()).unwrap();
        assert_eq!(count(&store, "profiles"), 3);
        assert_eq!(total(&store), 100 + 1 + 2);
    }

    #[test]
    fn writers_flushing_at_once_store_each_profile_once() {
        let dir = tempfile::tempdir().unwrap();
        let context = ProfileContext {
            service_name: "s".into(),
            ..Default::default()
        };
        let profiles: Vec<Profile> = (1..=4).map(profile).collect();
        let start = std::sync::Barrier::new(4);
        std::thread::scope(|scope| {
            for _ in 0..4 {
                let (profiles, context, start) = (&profiles, &context, &start);
                let root = dir.path();
                scope.spawn(move || {
                    let mut writer = StoreWriter::new(root);
                    for p in profiles {
                        // Gathered twice, too: written once.
                        writer.add(p, context).unwrap();
                        writer.add(p, context).unwrap();
                    }
                    start.wait();
                    let flushed = writer.flush().unwrap();
                    assert_eq!(flushed.profiles + flushed.repeats, 8);
                });
            }
        });
        let store = crate::Store::open(dir.path()).unwrap();
        assert_eq!(count(&store, "profiles"), 4);
        assert_eq!(total(&store), 1 + 2 + 3 + 4);
    }

    #[test]
    fn a_writer_lists_again_a_partition_compacted_since() {
        let dir = tempfile::tempdir().unwrap();
        let context = ProfileContext {
            service_name: "s".into(),
            ..Default::default()
        };
        let [seed, one, two, four, five, six] = [100, 1, 2, 4, 5, 6].map(profile);
        let (a, b) = (
            GroupWriter::new(dir.path(), 1_000),
            GroupWriter::new(dir.path(), 1_000),
        );
        let compact = || {
            let compacted = crate::compact(dir.path()).unwrap();
            assert!(compacted.files.0 > compacted.files.1, "{compacted:?}");
        };
        a.write(&[(&seed, &context)]).unwrap();
        b.write(&[(&one, &context)]).unwrap();
        b.write(&[(&two, &context)]).unwrap();
        // The partition's files merged, its flush log gone with them.
        compact();
        a.write(&[(&one, &context)]).unwrap();
        let profiles = || count(&crate::Store::open(dir.path()).unwrap(), "profiles");
        assert_eq!(profiles(), 3);
        // A log as long as the one `a` read, but another.
        a.write(&[(&four, &context)]).unwrap();
        b.write(&[(&five, &context)]).unwrap();
        compact();
        b.write(&[(&six, &context)]).unwrap();
        a.write(&[(&six, &context)]).unwrap();
        assert_eq!(profiles(), 6);
        let store = crate::Store::open(dir.path()).unwrap();
        assert_eq!(total(&store), 100 + 1 + 2 + 4 + 5 + 6);
    }
}
