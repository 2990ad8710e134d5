//! Two writers of one store directory at the interleavings a test can
//! force (`pause.rs`): one writer held at each step of its flush while
//! another flushes the same profile whole. The profile is stored once
//! whichever comes first; a writer held past the write locks holds the
//! other off until it is done.

use std::time::{Duration, Instant};

use protoprof_model_pprof::perftools::profiles::Profile;

use crate::pause::{Gate, Point};
use crate::test_profiles::{count, profile, total};
use crate::{ProfileContext, Store, StoreWriter};

/// Flushes `profile` in a writer of its own.
fn flush_alone(root: &std::path::Path, p: &Profile, context: &ProfileContext) -> crate::Flushed {
    let mut writer = StoreWriter::new(root);
    writer.add(p, context).unwrap();
    writer.flush().unwrap()
}

/// Waits up to `within` for `thread` to finish; whether it did.
fn finishes<T>(thread: &std::thread::ScopedJoinHandle<'_, T>, within: Duration) -> bool {
    let start = Instant::now();
    while !thread.is_finished() && start.elapsed() < within {
        std::thread::sleep(Duration::from_millis(5));
    }
    thread.is_finished()
}

#[test]
fn two_writers_store_a_profile_once_at_every_forced_interleaving() {
    let context = ProfileContext {
        service_name: "s".into(),
        ..Default::default()
    };
    let points = [
        Point::BeforeLocks,
        Point::Locked,
        Point::HeldRead,
        Point::BeforeSamples,
    ];
    for point in points {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let (seed, shared) = (profile(100), profile(1));
        flush_alone(root, &seed, &context);
        let (gates, gate) = std::sync::mpsc::channel();
        std::thread::scope(|scope| {
            let held = scope.spawn(|| {
                gates.send(Gate::here(point)).unwrap();
                flush_alone(root, &shared, &context)
            });
            let gate = gate.recv().unwrap();
            gate.reached();
            let other = scope.spawn(|| flush_alone(root, &shared, &context));
            // Held before the locks, it holds no one off; past them, it
            // holds off the other's flush until it goes on.
            let locked = point != Point::BeforeLocks;
            let wait = match locked {
                true => Duration::from_millis(300),
                false => Duration::from_secs(60),
            };
            let finished = finishes(&other, wait);
            // (Open before any assertion: a held thread never let go
            // would keep the scope, and the test, waiting.)
            gate.open();
            assert_eq!(finished, !locked, "{point:?}");
            let (held, other) = (held.join().unwrap(), other.join().unwrap());
            let (first, second) = match locked {
                true => (held, other),
                false => (other, held),
            };
            assert_eq!((first.profiles, first.repeats), (1, 0), "{point:?}");
            assert_eq!((second.profiles, second.repeats), (0, 1), "{point:?}");
        });
        let store = Store::open(root).unwrap();
        assert_eq!(count(&store, "profiles"), 2, "{point:?}");
        assert_eq!(total(&store), 100 + 1, "{point:?}");
    }
}
