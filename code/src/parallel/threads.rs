//! Starting threads and waiting for them: `std::thread::spawn` with data moved into each
//! thread, and `std::thread::scope` with data borrowed from the caller.
//!
//! Both functions sum a slice of numbers on several threads. They compute the same thing;
//! what differs is who owns the numbers while the threads run. A thread started with
//! `spawn` may outlive the function that started it, so it can only hold data it owns: the
//! caller copies each chunk into a `Vec` and moves it in. A scoped thread cannot outlive its
//! scope, so it may borrow the caller's slice directly, with no copy at all.

use std::ops::Range;

/// What goes wrong when a parallel function is asked for an impossible split of the work.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ThreadsError {
    #[error("zero threads were asked for: at least one thread must do the work")]
    NoThreads,
}

// ANCHOR: chunk_ranges
/// Splits `0..length` into `threads` consecutive ranges whose lengths differ by at most one:
/// the first `length % threads` ranges get one item more. Every index lands in exactly one
/// range, so no item is dropped when the length is not a multiple of the thread count.
/// With fewer items than threads, the last ranges are empty.
pub fn chunk_ranges(length: usize, threads: usize) -> Result<Vec<Range<usize>>, ThreadsError> {
    if threads == 0 {
        return Err(ThreadsError::NoThreads);
    }
    let base = length / threads;
    let remainder = length % threads;
    let mut ranges = Vec::with_capacity(threads);
    let mut start = 0;
    for thread in 0..threads {
        let chunk_length = base + usize::from(thread < remainder);
        ranges.push(start..start + chunk_length);
        start += chunk_length;
    }
    Ok(ranges)
}
// ANCHOR_END: chunk_ranges

// ANCHOR: sum_with_spawned_threads
/// Sums `values` on `threads` threads started with `std::thread::spawn`. Each thread must
/// own what it reads (it could outlive this function), so each gets a copy of its chunk.
pub fn sum_with_spawned_threads(values: &[u64], threads: usize) -> Result<u64, ThreadsError> {
    let mut handles = Vec::with_capacity(threads);
    for range in chunk_ranges(values.len(), threads)? {
        // `to_vec` copies the chunk; `move` hands that copy to the new thread.
        let chunk: Vec<u64> = values[range].to_vec();
        handles.push(std::thread::spawn(move || {
            chunk
                .iter()
                .fold(0u64, |sum, value| sum.wrapping_add(*value))
        }));
    }
    // `join` waits for a thread and returns what its closure returned. It is an `Err` only
    // when the thread panicked; the closure above cannot, so passing the panic on is right.
    let mut total = 0u64;
    for handle in handles {
        let partial = handle
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        total = total.wrapping_add(partial);
    }
    Ok(total)
}
// ANCHOR_END: sum_with_spawned_threads

// ANCHOR: sum_with_scoped_threads
/// Sums `values` on `threads` scoped threads. The scope waits for every thread it started
/// before it returns, so the threads may borrow `values`: no copy.
pub fn sum_with_scoped_threads(values: &[u64], threads: usize) -> Result<u64, ThreadsError> {
    let ranges = chunk_ranges(values.len(), threads)?;
    let total = std::thread::scope(|scope| {
        let handles: Vec<_> = ranges
            .into_iter()
            .map(|range| {
                let chunk = &values[range]; // a borrow, not a copy
                scope.spawn(move || {
                    chunk
                        .iter()
                        .fold(0u64, |sum, value| sum.wrapping_add(*value))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| {
                handle
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .fold(0u64, u64::wrapping_add)
    });
    Ok(total)
}
// ANCHOR_END: sum_with_scoped_threads

/// The sequential reference the threaded sums are tested against.
pub fn sum_sequential(values: &[u64]) -> u64 {
    values
        .iter()
        .fold(0u64, |sum, value| sum.wrapping_add(*value))
}

/// `count` random values from a seeded generator: the same seed gives the same values on
/// every machine, so a failing test can be repeated.
pub fn random_values(count: usize, below: u64, seed: u64) -> Vec<u64> {
    use rand::{RngExt, SeedableRng};
    let mut generator = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    (0..count)
        .map(|_| generator.random_range(0..below))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ranges_cover_every_index_once_and_differ_by_at_most_one() {
        for length in [0, 1, 2, 7, 64, 1001] {
            for threads in [1, 2, 3, 8, 2000] {
                let ranges = chunk_ranges(length, threads).unwrap();
                assert_eq!(ranges.len(), threads);
                let mut next = 0;
                for range in &ranges {
                    assert_eq!(range.start, next, "{length} over {threads}");
                    next = range.end;
                }
                assert_eq!(next, length);
                let longest = ranges.iter().map(|range| range.len()).max().unwrap();
                let shortest = ranges.iter().map(|range| range.len()).min().unwrap();
                assert!(longest - shortest <= 1, "{length} over {threads}");
            }
        }
    }

    #[test]
    fn both_kinds_of_thread_sum_like_the_sequential_loop() {
        for (case, length) in [0usize, 1, 3, 100, 10_007].into_iter().enumerate() {
            let values = random_values(length, u64::MAX, 40 + case as u64);
            let expected = sum_sequential(&values);
            for threads in [1, 2, 3, 7, 16] {
                assert_eq!(sum_with_spawned_threads(&values, threads), Ok(expected));
                assert_eq!(sum_with_scoped_threads(&values, threads), Ok(expected));
            }
        }
    }

    #[test]
    fn zero_threads_is_an_error_with_a_readable_message() {
        let values = random_values(10, 100, 1);
        assert_eq!(
            sum_with_spawned_threads(&values, 0),
            Err(ThreadsError::NoThreads)
        );
        assert_eq!(
            sum_with_scoped_threads(&values, 0),
            Err(ThreadsError::NoThreads)
        );
        assert!(ThreadsError::NoThreads.to_string().contains("zero threads"));
    }
}
