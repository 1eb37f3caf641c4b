//! One counter shared by several threads, three ways: behind a `Mutex`, as an `AtomicU64`,
//! and not shared at all (each thread counts on its own; the counts are added at the end).
//!
//! The task is to count the values below a threshold. Every counted value is one update of
//! the counter, so the time per value is the cost of one update: a lock and an unlock, one
//! atomic read-modify-write, or one addition to a local variable.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::parallel::threads::{ThreadsError, chunk_ranges};

/// How the threads combine their counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CounterStrategy {
    /// One `Mutex<u64>`, locked for every update.
    Mutex,
    /// One `AtomicU64`, one `fetch_add` per update.
    Atomic,
    /// A local count per thread, added up after the threads have finished.
    PartialCounts,
}

impl CounterStrategy {
    pub const ALL: [CounterStrategy; 3] = [
        CounterStrategy::Mutex,
        CounterStrategy::Atomic,
        CounterStrategy::PartialCounts,
    ];

    /// The name the tables and figures use.
    pub fn name(self) -> &'static str {
        match self {
            CounterStrategy::Mutex => "mutex",
            CounterStrategy::Atomic => "atomic",
            CounterStrategy::PartialCounts => "partial counts",
        }
    }
}

/// Counts the values of `values` below `threshold` on `threads` threads.
pub fn count_below(
    values: &[u64],
    threshold: u64,
    threads: usize,
    strategy: CounterStrategy,
) -> Result<u64, ThreadsError> {
    match strategy {
        CounterStrategy::Mutex => count_with_mutex(values, threshold, threads),
        CounterStrategy::Atomic => count_with_atomic(values, threshold, threads),
        CounterStrategy::PartialCounts => count_with_partial_counts(values, threshold, threads),
    }
}

// ANCHOR: count_with_mutex
/// Every thread locks the one counter for every value it counts.
pub fn count_with_mutex(
    values: &[u64],
    threshold: u64,
    threads: usize,
) -> Result<u64, ThreadsError> {
    let ranges = chunk_ranges(values.len(), threads)?;
    let counter = Mutex::new(0u64);
    std::thread::scope(|scope| {
        for range in ranges {
            let (chunk, counter) = (&values[range], &counter);
            scope.spawn(move || {
                for value in chunk {
                    if *value < threshold {
                        // `lock` waits until no other thread holds the lock. It fails only
                        // if a thread panicked while holding it; the count is still a
                        // plain number then, so taking it over is safe.
                        let mut count = counter
                            .lock()
                            .unwrap_or_else(|poisoned| poisoned.into_inner());
                        *count += 1;
                    } // the guard is dropped here, which unlocks
                }
            });
        }
    });
    Ok(counter
        .into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner()))
}
// ANCHOR_END: count_with_mutex

// ANCHOR: count_with_atomic
/// Every thread adds to one atomic counter: one indivisible read-modify-write per value.
pub fn count_with_atomic(
    values: &[u64],
    threshold: u64,
    threads: usize,
) -> Result<u64, ThreadsError> {
    let ranges = chunk_ranges(values.len(), threads)?;
    let counter = AtomicU64::new(0);
    std::thread::scope(|scope| {
        for range in ranges {
            let (chunk, counter) = (&values[range], &counter);
            scope.spawn(move || {
                for value in chunk {
                    if *value < threshold {
                        // `Relaxed`: only the count matters, not its order relative to other
                        // memory; joining the threads makes the final value visible.
                        counter.fetch_add(1, Ordering::Relaxed);
                    }
                }
            });
        }
    });
    Ok(counter.into_inner())
}
// ANCHOR_END: count_with_atomic

// ANCHOR: count_with_partial_counts
/// Every thread counts into its own local variable; nothing is shared until the end.
pub fn count_with_partial_counts(
    values: &[u64],
    threshold: u64,
    threads: usize,
) -> Result<u64, ThreadsError> {
    let ranges = chunk_ranges(values.len(), threads)?;
    let total = std::thread::scope(|scope| {
        let handles: Vec<_> = ranges
            .into_iter()
            .map(|range| {
                let chunk = &values[range];
                scope.spawn(move || chunk.iter().filter(|value| **value < threshold).count() as u64)
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| {
                handle
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .sum()
    });
    Ok(total)
}
// ANCHOR_END: count_with_partial_counts

/// The sequential reference.
pub fn count_sequential(values: &[u64], threshold: u64) -> u64 {
    values.iter().filter(|value| **value < threshold).count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parallel::threads::random_values;

    #[test]
    fn every_strategy_counts_like_the_sequential_loop() {
        for (case, length) in [0usize, 1, 5, 999, 20_000].into_iter().enumerate() {
            let values = random_values(length, 1000, 70 + case as u64);
            for threshold in [0, 1, 500, 1000] {
                let expected = count_sequential(&values, threshold);
                for threads in [1, 2, 3, 8] {
                    for strategy in CounterStrategy::ALL {
                        assert_eq!(
                            count_below(&values, threshold, threads, strategy),
                            Ok(expected),
                            "{} with {threads} threads, {length} values below {threshold}",
                            strategy.name()
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn the_threshold_matters() {
        // Guards the test above against a counter that always returns the length or zero.
        let values = random_values(10_000, 1000, 5);
        let half = count_sequential(&values, 500);
        assert!(half > 4000 && half < 6000, "{half}");
    }

    #[test]
    fn zero_threads_is_an_error() {
        for strategy in CounterStrategy::ALL {
            assert_eq!(
                count_below(&[1, 2], 5, 0, strategy),
                Err(ThreadsError::NoThreads)
            );
        }
    }
}
