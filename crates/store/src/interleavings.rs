//! Two writers of one store at the interleavings a test can force
//! (`pause.rs`): one writer held at each step of its flush while another
//! flushes the same profile whole, in a directory and in object storage
//! (moto's S3). The profile is stored once whichever comes first; a
//! writer held past the write locks holds the other off until it is done.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use protoprof_model_pprof::perftools::profiles::Profile;

use crate::location::Location;
use crate::pause::{Gate, Point};
use crate::test_profiles::{count, moto_location, profile, total};
use crate::{Engine, ProfileContext, Store, StoreWriter};

/// A store the two writers share: a directory, or a prefix in an object
/// store.
struct Place {
    root: PathBuf,
    location: Option<Location>,
    /// The directory, kept while the place is.
    _dir: Option<tempfile::TempDir>,
}

impl Place {
    fn directory() -> Place {
        let dir = tempfile::tempdir().unwrap();
        Place {
            root: dir.path().to_path_buf(),
            location: None,
            _dir: Some(dir),
        }
    }

    /// The store at `prefix` of moto's bucket at `address`.
    fn object(address: &str, prefix: &str) -> Place {
        Place {
            root: PathBuf::from(format!("s3://store/{prefix}")),
            location: Some(moto_location(address, prefix)),
            _dir: None,
        }
    }

    fn writer(&self) -> StoreWriter {
        match &self.location {
            Some(location) => StoreWriter::on(&self.root, location.clone()),
            None => StoreWriter::new(&self.root),
        }
    }

    fn store(&self) -> Store {
        let opened = match &self.location {
            Some(location) => Store::open_at(&self.root, location.clone(), &Engine::Local),
            None => Store::open(&self.root),
        };
        opened.unwrap()
    }

    /// Flushes `profile` in a writer of its own.
    fn flush_alone(&self, p: &Profile, context: &ProfileContext) -> crate::Flushed {
        let mut writer = self.writer();
        writer.add(p, context).unwrap();
        writer.flush().unwrap()
    }
}

/// Waits up to `within` for `thread` to finish; whether it did.
fn finishes<T>(thread: &std::thread::ScopedJoinHandle<'_, T>, within: Duration) -> bool {
    let start = Instant::now();
    while !thread.is_finished() && start.elapsed() < within {
        std::thread::sleep(Duration::from_millis(5));
    }
    thread.is_finished()
}

/// At each point of a flush, a writer of a fresh store `place` makes is
/// held while another flushes the same profile: it is stored once.
fn held_at_each_point(place: impl Fn(Point) -> Place) {
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
        let place = place(point);
        let (seed, shared) = (profile(100), profile(1));
        place.flush_alone(&seed, &context);
        let (gates, gate) = std::sync::mpsc::channel();
        std::thread::scope(|scope| {
            let held = scope.spawn(|| {
                gates.send(Gate::here(point)).unwrap();
                place.flush_alone(&shared, &context)
            });
            let gate = gate.recv().unwrap();
            gate.reached();
            let other = scope.spawn(|| place.flush_alone(&shared, &context));
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
        let store = place.store();
        assert_eq!(count(&store, "profiles"), 2, "{point:?}");
        assert_eq!(total(&store), 100 + 1, "{point:?}");
    }
}

#[test]
fn two_writers_of_a_directory_store_a_profile_once_at_every_forced_interleaving() {
    held_at_each_point(|_| Place::directory());
}

#[test]
fn two_writers_in_object_storage_store_a_profile_once_at_every_forced_interleaving() {
    let Some(python) = protoprof_tests::python_store() else {
        return;
    };
    let (mut server, address) = protoprof_tests::moto_with_bucket(&python, "store");
    held_at_each_point(|point| Place::object(&address, &format!("{point:?}")));
    let _ = server.kill();
    let _ = server.wait();
}
