//! Two jobs on two threads: the one way the layers above (and
//! [`crate::IndexTable`]) split a read between a machine's two cores; and
//! many independent jobs (binaries to read, files to write and sync) on a
//! few threads, their results in order.

/// From this many items on (samples, stacks, table entries), splitting
/// their work between two threads gains more than starting one costs: the
/// threshold every layer's two-thread paths share.
pub const PARALLEL_ITEMS: usize = 50_000;

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

/// Hands `write` the bytes of every piece, in order: those `as_is` gives
/// as they are, the others as `encode` appends them to an empty buffer.
/// When `apart`, every other piece to encode is encoded on a second
/// thread, which runs a few pieces ahead while this one encodes its own
/// and writes them all. Both stop at `write`'s first error, which is
/// returned; a panic in either is raised here.
///
/// ```
/// let pieces = [1u8, 2, 3, 4, 5];
/// let mut out = Vec::new();
/// protoprof_model_meta::threads::write_in_order(
///     true,
///     &pieces,
///     |_| None,
///     |&p, buffer| buffer.extend(std::iter::repeat(p).take(usize::from(p))),
///     &mut |bytes| Ok(out.extend_from_slice(bytes)),
/// )
/// .unwrap();
/// assert_eq!(out, [1, 2, 2, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 5]);
/// ```
pub fn write_in_order<P: Sync>(
    apart: bool,
    pieces: &[P],
    as_is: impl Fn(&P) -> Option<&[u8]> + Sync,
    encode: impl Fn(&P, &mut Vec<u8>) + Sync,
    write: &mut dyn FnMut(&[u8]) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let (as_is, encode) = (&as_is, &encode);
    let mut chunk = Vec::new();
    let mut write_own = |piece: &P, write: &mut dyn FnMut(&[u8]) -> std::io::Result<()>| {
        chunk.clear();
        encode(piece, &mut chunk);
        write(&chunk)
    };
    if !apart {
        return pieces.iter().try_for_each(|piece| match as_is(piece) {
            Some(bytes) => write(bytes),
            None => write_own(piece, write),
        });
    }
    let (full, filled) = std::sync::mpsc::sync_channel::<Vec<u8>>(4);
    let (empty, emptied) = std::sync::mpsc::channel::<Vec<u8>>();
    std::thread::scope(|scope| {
        scope.spawn(move || {
            let to_encode = pieces.iter().filter(|p| as_is(p).is_none());
            for piece in to_encode.skip(1).step_by(2) {
                let mut chunk = emptied.try_recv().unwrap_or_default();
                chunk.clear();
                encode(piece, &mut chunk);
                // The writer stopped at an error: nothing more to do.
                if full.send(chunk).is_err() {
                    break;
                }
            }
        });
        let mut encoded = 0;
        let written = pieces.iter().try_for_each(|piece| {
            if let Some(bytes) = as_is(piece) {
                return write(bytes);
            }
            encoded += 1;
            if encoded % 2 == 1 {
                return write_own(piece, write);
            }
            let theirs = filled.recv().map_err(std::io::Error::other)?;
            write(&theirs)?;
            let _ = empty.send(theirs);
            Ok(())
        });
        drop(filled);
        written
    })
}

/// `work` done on each of `items` on up to `most_threads` threads, each
/// taking the next item not yet taken; the results in the items' order.
/// A panic in any is raised here.
///
/// ```
/// let doubled = protoprof_model_meta::threads::map_in_order(&[1, 2, 3], 2, |&i| i * 2);
/// assert_eq!(doubled, [2, 4, 6]);
/// ```
pub fn map_in_order<T: Sync, R: Send>(
    items: &[T],
    most_threads: usize,
    work: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let threads = most_threads.min(items.len());
    if threads < 2 {
        return items.iter().map(work).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let worker = || {
        let mut mine = Vec::new();
        loop {
            let at = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some(item) = items.get(at) else {
                break mine;
            };
            mine.push((at, work(item)));
        }
    };
    let mut results: Vec<(usize, R)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads).map(|_| scope.spawn(worker)).collect();
        (workers.into_iter())
            .flat_map(|w| w.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    results.sort_by_key(|(at, _)| *at);
    results.into_iter().map(|(_, r)| r).collect()
}

#[cfg(test)]
mod tests {
    use super::{map_in_order, write_in_order};

    /// Pieces as they are and encoded, on one thread and two: the same
    /// bytes in the same order, and the first write error stops both.
    #[test]
    fn pieces_are_written_in_order_until_an_error() {
        let pieces: Vec<u32> = (0..1000).collect();
        fn as_is(p: &u32) -> Option<&[u8]> {
            (p % 7 == 0).then_some(b"|")
        }
        let encode = |p: &u32, out: &mut Vec<u8>| out.extend_from_slice(&p.to_le_bytes());
        let written = |apart: bool, fail_after: usize| {
            let (mut out, mut writes) = (Vec::new(), 0);
            let result = write_in_order(apart, &pieces, as_is, encode, &mut |bytes| {
                writes += 1;
                if writes > fail_after {
                    return Err(std::io::Error::other("full"));
                }
                out.extend_from_slice(bytes);
                Ok(())
            });
            (result.map_err(|e| e.to_string()), out)
        };
        let (result, alone) = written(false, usize::MAX);
        assert!(result.is_ok());
        assert_eq!(alone.len(), 1000 / 7 + 1 + (1000 - (1000 / 7 + 1)) * 4);
        assert_eq!(written(true, usize::MAX), (Ok(()), alone.clone()));
        for fail_after in [0, 1, 2, 500, 998] {
            let (result, out) = written(true, fail_after);
            assert_eq!(result, Err("full".to_string()));
            assert_eq!(out, written(false, fail_after).1);
        }
    }

    /// Results come back in the items' order, on one thread or several.
    #[test]
    fn jobs_on_threads_come_back_in_order() {
        let items: Vec<usize> = (0..50).collect();
        for threads in [1, 3, 8] {
            let doubled = map_in_order(&items, threads, |&i| i * 2);
            assert_eq!(doubled, (0..50).map(|i| i * 2).collect::<Vec<_>>());
        }
    }
}
