//! Two jobs on two threads: the one way the layers above (and
//! [`crate::IndexTable`]) split a read between a machine's two cores.

/// `first()` on this thread and `second()` on another when `apart` (with
/// nothing to gain from a thread, both on this one, `first` first). A
/// panic in `second` is raised again here.
///
/// ```
/// let (a, b) = protoprof_model_meta::threads::both(true, || 1 + 1, || "two");
/// assert_eq!((a, b), (2, "two"));
/// ```
pub fn both<A, B: Send>(
    apart: bool,
    first: impl FnOnce() -> A,
    second: impl FnOnce() -> B + Send,
) -> (A, B) {
    if !apart {
        return (first(), second());
    }
    std::thread::scope(|scope| {
        let second = scope.spawn(second);
        let first = first();
        let second = second
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (first, second)
    })
}
