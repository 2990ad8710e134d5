//! Checks shared between two threads: the views check every sample (and
//! stack) they leave in the bytes when they are built, and on large
//! profiles that is a tenth to a fifth of reading them.

/// From this many items on, [`all_in_halves`] checks the second half on a
/// second thread.
const PARALLEL_ITEMS: usize = 50_000;

/// Whether `check` holds for every item; on two threads for many items.
/// Each thread passes `check` scratch space of its own, made by `scratch`
/// (a buffer to read into, reused from item to item).
pub(crate) fn all_in_halves<T: Sync, S>(
    items: &[T],
    scratch: impl Fn() -> S + Sync,
    check: impl Fn(&mut S, &T) -> bool + Sync,
) -> bool {
    let all = |items: &[T]| {
        let mut scratch = scratch();
        items.iter().all(|item| check(&mut scratch, item))
    };
    if items.len() < PARALLEL_ITEMS {
        return all(items);
    }
    let (first, second) = items.split_at(items.len() / 2);
    std::thread::scope(|scope| {
        let second = scope.spawn(|| all(second));
        let first = all(first);
        second.join().expect("a check does not panic") && first
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_failure_in_either_half() {
        for n in [0, 10, PARALLEL_ITEMS, 3 * PARALLEL_ITEMS + 1] {
            let items: Vec<usize> = (0..n).collect();
            assert!(all_in_halves(&items, || (), |_, _| true), "{n}");
            for bad in [0, n / 2, n.saturating_sub(1)] {
                if n > 0 {
                    assert!(!all_in_halves(&items, || (), |_, &i| i != bad), "{n} {bad}");
                }
            }
        }
    }
}
