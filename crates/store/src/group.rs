//! Group commit: one [`StoreWriter`] shared by concurrent callers, as
//! `receive --store` has them. Each call makes its profiles' rows on its
//! own thread, then adds them at once (all of them or none), and returns
//! when a flush has written them. Calls that arrive while a flush runs
//! wait and are written together by the next one, so a busy receiver
//! writes one file per table and partition per flush, not per request,
//! and each flush is bounded: past [`GroupWriter::new`]'s row bound,
//! callers wait for the running flush before adding.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex, MutexGuard};

use protoprof_model_pprof::perftools::profiles::Profile;

use crate::error::StoreError;
use crate::ids::Id;
use crate::rows::ProfileContext;
use crate::write::StoreWriter;

/// A writer many threads add to; see the module's documentation.
pub struct GroupWriter {
    root: PathBuf,
    max_rows: usize,
    state: Mutex<Group>,
    changed: Condvar,
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
            }),
            changed: Condvar::new(),
        }
    }

    /// Adds `profiles` (all or none) and returns once they are written
    /// and synced, with their ids; or why they are not.
    pub fn write(&self, profiles: &[(&Profile, &ProfileContext)]) -> Result<Vec<Id>, StoreError> {
        // The rows are made before the lock is taken: callers make theirs
        // at once, and only gathering them is one at a time.
        let mut rows = StoreWriter::new(&self.root);
        let ids = rows.add_all(profiles)?;
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
                return outcome.map(|_| ids).map_err(StoreError::Io);
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
        let outcome = writer
            .flush()
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
    use protoprof_model_pprof::perftools::profiles::{Location, Sample, ValueType};

    /// A profile of one sample at one location, its value `value`.
    fn profile(value: i64) -> Profile {
        let mut p = Profile::new();
        p.string_table = vec!["".into(), "cpu".into(), "nanoseconds".into()];
        let mut t = ValueType::new();
        (t.type_, t.unit) = (1, 2);
        p.sample_type.push(t);
        let mut l = Location::new();
        l.id = 1;
        p.location.push(l);
        let mut s = Sample::new();
        s.location_id = vec![1];
        s.value = vec![value];
        p.sample.push(s);
        p.time_nanos = 1_795_757_400_000_000_000;
        p
    }

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
        let count = |table: &str| {
            let batches = store.sql(&format!("SELECT count(*) FROM {table}")).unwrap();
            let column = batches[0].column(0).as_any();
            let counts = column.downcast_ref::<datafusion::arrow::array::Int64Array>();
            counts.unwrap().value(0)
        };
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
}
