//! Checks shared between two threads: the views check every sample (and
//! stack) they leave in the bytes when they are built, and on large
//! profiles that is a tenth to a fifth of reading them.

use protoprof_model_meta::threads::both;

/// From this many items on, [`all_in_halves`] checks the second half on a
/// second thread (and a view reads its locations beside its parse).
pub(crate) const PARALLEL_ITEMS: usize = protoprof_model_meta::threads::PARALLEL_ITEMS;

/// Whether `check` holds for every item; on two threads for many items.
/// Each thread passes `check` scratch space of its own, made by `scratch`
/// (a buffer to read into, reused from item to item).
pub(crate) fn all_in_halves<T: Sync, S: Send>(
    items: &[T],
    scratch: impl Fn() -> S + Sync,
    check: impl Fn(&mut S, &T) -> bool + Sync,
) -> bool {
    fold_in_halves(items, scratch, check, |first, _| first).is_some()
}

/// [`all_in_halves`] that also gathers what the checks find: each thread
/// starts from `start()`, `check` adds an item's findings to it, and
/// `join` puts the two threads' together. `None` when a check fails.
pub(crate) fn fold_in_halves<T: Sync, A: Send>(
    items: &[T],
    start: impl Fn() -> A + Sync,
    check: impl Fn(&mut A, &T) -> bool + Sync,
    join: impl FnOnce(A, A) -> A,
) -> Option<A> {
    let fold = |items: &[T]| {
        let mut found = start();
        items
            .iter()
            .all(|item| check(&mut found, item))
            .then_some(found)
    };
    if items.len() < PARALLEL_ITEMS {
        return fold(items);
    }
    let (first, second) = items.split_at(items.len() / 2);
    let (first, second) = both(true, || fold(first), || fold(second));
    Some(join(first?, second?))
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
