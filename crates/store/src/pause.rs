//! Points in a flush where a test holds one writer still, so that
//! another writer's whole flush falls between two of its steps: the
//! interleavings of two writers a test can force (`interleavings.rs`).
//! Outside tests a point is nothing.

/// Where a flush can be held.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Point {
    /// Its rows gathered, before it waits for the write locks.
    BeforeLocks,
    /// The write locks taken, before it reads what the store holds.
    Locked,
    /// What the store holds read, before it writes its files.
    HeldRead,
    /// Its dictionary and `profiles` files in place, before its `samples`
    /// files.
    BeforeSamples,
}

/// Holds the calling thread at `point` while a test asks it to.
#[cfg(not(test))]
#[inline(always)]
pub(crate) fn at(_point: Point) {}

#[cfg(test)]
pub(crate) use gates::{at, Gate};

#[cfg(test)]
mod gates {
    use std::cell::RefCell;
    use std::sync::{Arc, Condvar, Mutex};

    use super::Point;

    /// A test's hold on one thread at one point: the thread waits there
    /// until [`Gate::open`].
    #[derive(Clone, Default)]
    pub(crate) struct Gate(Arc<(Mutex<(bool, bool)>, Condvar)>);

    thread_local! {
        /// The gate this thread stops at, and where.
        static HELD: RefCell<Option<(Point, Gate)>> = const { RefCell::new(None) };
    }

    impl Gate {
        /// A gate the calling thread will stop at, at `point`.
        pub(crate) fn here(point: Point) -> Gate {
            let gate = Gate::default();
            HELD.with(|held| *held.borrow_mut() = Some((point, gate.clone())));
            gate
        }

        /// Waits until the held thread has reached its point.
        pub(crate) fn reached(&self) {
            let (state, changed) = &*self.0;
            let mut state = state.lock().unwrap();
            while !state.0 {
                state = changed.wait(state).unwrap();
            }
        }

        /// Lets the held thread go on.
        pub(crate) fn open(&self) {
            let (state, changed) = &*self.0;
            state.lock().unwrap().1 = true;
            changed.notify_all();
        }
    }

    /// Holds the calling thread at `point` if a test set a gate there for
    /// it, until the gate opens.
    pub(crate) fn at(point: Point) {
        let gate = HELD.with(|held| match &*held.borrow() {
            Some((at, gate)) if *at == point => Some(gate.clone()),
            _ => None,
        });
        let Some(Gate(inner)) = gate else { return };
        let (state, changed) = &*inner;
        let mut state = state.lock().unwrap();
        state.0 = true;
        changed.notify_all();
        while !state.1 {
            state = changed.wait(state).unwrap();
        }
    }
}
