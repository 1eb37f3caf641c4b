//! False sharing: threads that never touch each other's data, and still slow each other down.
//!
//! Every thread increments its own counter, so no counter is shared. But the caches do not
//! move single counters; they move 64-byte *cache lines*. Eight `u64` counters side by side
//! fill one line, and a core may only write to a line it holds alone, so every write by one
//! thread takes the line away from all the others. Padding each counter to a line of its own
//! (`crossbeam::utils::CachePadded`) ends the tug of war without changing a single result.

use std::sync::atomic::{AtomicU64, Ordering};

use crossbeam::utils::CachePadded;

use crate::parallel::threads::ThreadsError;

/// Where the per-thread counters live.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CounterLayout {
    /// `[AtomicU64]`: eight counters per 64-byte cache line.
    SideBySide,
    /// `[CachePadded<AtomicU64>]`: one counter per cache line (128 bytes on x86-64, where
    /// the prefetcher fetches lines in pairs).
    Padded,
}

impl CounterLayout {
    pub const ALL: [CounterLayout; 2] = [CounterLayout::SideBySide, CounterLayout::Padded];

    pub fn name(self) -> &'static str {
        match self {
            CounterLayout::SideBySide => "side by side",
            CounterLayout::Padded => "padded",
        }
    }
}

// ANCHOR: increment_own_counter
/// One thread's work: add one to its own counter, `increments` times. No other thread
/// touches this counter. It is atomic only so that every increment really goes to memory:
/// a plain `u64` would be kept in a register and written once at the end, and the compiler
/// folds even a relaxed load-and-store loop into a single addition.
fn increment_own_counter(counter: &AtomicU64, increments: u64) {
    for _ in 0..increments {
        counter.fetch_add(1, Ordering::Relaxed);
    }
}
// ANCHOR_END: increment_own_counter

// ANCHOR: count_per_thread
/// Every one of `threads` threads increments its own counter `increments` times; returns
/// the counters.
pub fn count_per_thread(
    threads: usize,
    increments: u64,
    layout: CounterLayout,
) -> Result<Vec<u64>, ThreadsError> {
    if threads == 0 {
        return Err(ThreadsError::NoThreads);
    }
    match layout {
        CounterLayout::SideBySide => {
            let counters: Vec<AtomicU64> = (0..threads).map(|_| AtomicU64::new(0)).collect();
            std::thread::scope(|scope| {
                for counter in &counters {
                    scope.spawn(move || increment_own_counter(counter, increments));
                }
            });
            Ok(counters.into_iter().map(AtomicU64::into_inner).collect())
        }
        CounterLayout::Padded => {
            let counters: Vec<CachePadded<AtomicU64>> = (0..threads)
                .map(|_| CachePadded::new(AtomicU64::new(0)))
                .collect();
            std::thread::scope(|scope| {
                for counter in &counters {
                    scope.spawn(move || increment_own_counter(counter, increments));
                }
            });
            Ok(counters
                .into_iter()
                .map(|counter| CachePadded::into_inner(counter).into_inner())
                .collect())
        }
    }
}
// ANCHOR_END: count_per_thread

/// The distance in bytes between two neighbouring counters of a layout.
pub fn counter_stride(layout: CounterLayout) -> usize {
    match layout {
        CounterLayout::SideBySide => size_of::<AtomicU64>(),
        CounterLayout::Padded => size_of::<CachePadded<AtomicU64>>(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_counter_reaches_its_count_in_both_layouts() {
        for threads in [1, 2, 3, 9] {
            for layout in CounterLayout::ALL {
                let counts = count_per_thread(threads, 10_000, layout).unwrap();
                assert_eq!(counts, vec![10_000; threads], "{}", layout.name());
            }
        }
    }

    #[test]
    fn side_by_side_counters_share_a_line_and_padded_ones_do_not() {
        assert_eq!(counter_stride(CounterLayout::SideBySide), 8);
        assert!(counter_stride(CounterLayout::Padded) >= 64);
    }

    #[test]
    fn zero_threads_is_an_error() {
        assert_eq!(
            count_per_thread(0, 10, CounterLayout::Padded),
            Err(ThreadsError::NoThreads)
        );
    }
}
