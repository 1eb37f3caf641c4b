//! A histogram on several threads: one shared histogram behind a `Mutex`, a histogram of
//! atomic counters, and per-thread partial histograms added up at the end (the model to
//! follow).
//!
//! A histogram is many counters at once: one per bin. The choices are those of the shared
//! counter, with one difference: with many bins, two threads rarely update the same
//! counter at the same moment, so atomics suffer less than on a single counter, while a
//! single lock around the whole histogram still makes the threads take turns.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::parallel::threads::chunk_ranges;

/// Why a histogram cannot be computed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HistogramError {
    #[error("zero threads were asked for: at least one thread must do the work")]
    NoThreads,
    #[error("a histogram with zero bins has nowhere to count a value")]
    NoBins,
    #[error("the value {value} at position {position} is outside the histogram's {bins} bins (0 to {})", bins - 1)]
    ValueOutOfRange {
        position: usize,
        value: u32,
        bins: usize,
    },
}

/// How the threads combine their counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HistogramStrategy {
    /// One `Mutex<Vec<u64>>`, locked for every value.
    Mutex,
    /// A `Vec<AtomicU64>`, one `fetch_add` per value.
    Atomic,
    /// One private histogram per thread, added up after the threads have finished.
    PartialHistograms,
}

impl HistogramStrategy {
    pub const ALL: [HistogramStrategy; 3] = [
        HistogramStrategy::Mutex,
        HistogramStrategy::Atomic,
        HistogramStrategy::PartialHistograms,
    ];

    pub fn name(self) -> &'static str {
        match self {
            HistogramStrategy::Mutex => "mutex",
            HistogramStrategy::Atomic => "atomic",
            HistogramStrategy::PartialHistograms => "partial histograms",
        }
    }
}

/// Counts how many of `values` fall in each of `bins` bins (value `v` in bin `v`).
pub fn histogram(
    values: &[u32],
    bins: usize,
    threads: usize,
    strategy: HistogramStrategy,
) -> Result<Vec<u64>, HistogramError> {
    if threads == 0 {
        return Err(HistogramError::NoThreads);
    }
    if bins == 0 {
        return Err(HistogramError::NoBins);
    }
    match strategy {
        HistogramStrategy::Mutex => histogram_with_mutex(values, bins, threads),
        HistogramStrategy::Atomic => histogram_with_atomics(values, bins, threads),
        HistogramStrategy::PartialHistograms => {
            histogram_with_partial_histograms(values, bins, threads)
        }
    }
}

/// The bin of the value at `start + offset`, or the error that names it.
fn bin_of(value: u32, bins: usize, position: usize) -> Result<usize, HistogramError> {
    if (value as usize) < bins {
        Ok(value as usize)
    } else {
        Err(HistogramError::ValueOutOfRange {
            position,
            value,
            bins,
        })
    }
}

/// Runs `work(start, chunk)` on one scoped thread per chunk and returns the results in
/// chunk order.
fn on_threads<T: Send>(
    values: &[u32],
    threads: usize,
    work: impl Fn(usize, &[u32]) -> T + Sync,
) -> Result<Vec<T>, HistogramError> {
    let ranges = chunk_ranges(values.len(), threads).map_err(|_| HistogramError::NoThreads)?;
    let work = &work;
    Ok(std::thread::scope(|scope| {
        let handles: Vec<_> = ranges
            .into_iter()
            .map(|range| scope.spawn(move || work(range.start, &values[range])))
            .collect();
        handles
            .into_iter()
            .map(|handle| {
                handle
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    }))
}

// ANCHOR: histogram_with_mutex
/// One histogram, one lock: a thread locks it for every value.
fn histogram_with_mutex(
    values: &[u32],
    bins: usize,
    threads: usize,
) -> Result<Vec<u64>, HistogramError> {
    let shared = Mutex::new(vec![0u64; bins]);
    let outcomes = on_threads(values, threads, |start, chunk| {
        for (offset, value) in chunk.iter().enumerate() {
            let bin = bin_of(*value, bins, start + offset)?;
            let mut counts = shared
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            counts[bin] += 1;
        } // each guard is dropped at the end of its iteration, which unlocks
        Ok(())
    })?;
    // The chunks are in order, so the first error met is the one at the lowest position.
    outcomes
        .into_iter()
        .collect::<Result<(), HistogramError>>()?;
    Ok(shared
        .into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner()))
}
// ANCHOR_END: histogram_with_mutex

// ANCHOR: histogram_with_atomics
/// One histogram of atomic counters: threads update different bins at the same time.
fn histogram_with_atomics(
    values: &[u32],
    bins: usize,
    threads: usize,
) -> Result<Vec<u64>, HistogramError> {
    let counts: Vec<AtomicU64> = (0..bins).map(|_| AtomicU64::new(0)).collect();
    let outcomes = on_threads(values, threads, |start, chunk| {
        for (offset, value) in chunk.iter().enumerate() {
            let bin = bin_of(*value, bins, start + offset)?;
            counts[bin].fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    })?;
    outcomes
        .into_iter()
        .collect::<Result<(), HistogramError>>()?;
    Ok(counts.into_iter().map(AtomicU64::into_inner).collect())
}
// ANCHOR_END: histogram_with_atomics

// ANCHOR: histogram_with_partial_histograms
/// Every thread fills a private histogram of its chunk, checking its values as it goes;
/// then the partial histograms are added together, in chunk order, so the first error
/// met is the one at the lowest position. Nothing is shared while the threads run.
fn histogram_with_partial_histograms(
    values: &[u32],
    bins: usize,
    threads: usize,
) -> Result<Vec<u64>, HistogramError> {
    let partials = on_threads(values, threads, |start, chunk| {
        let mut counts = vec![0u64; bins];
        for (offset, value) in chunk.iter().enumerate() {
            counts[bin_of(*value, bins, start + offset)?] += 1;
        }
        Ok::<_, HistogramError>(counts)
    })?;
    let mut total = vec![0u64; bins];
    for partial in partials {
        for (sum, count) in total.iter_mut().zip(partial?) {
            *sum += count;
        }
    }
    Ok(total)
}
// ANCHOR_END: histogram_with_partial_histograms

/// The sequential reference.
pub fn histogram_sequential(values: &[u32], bins: usize) -> Result<Vec<u64>, HistogramError> {
    if bins == 0 {
        return Err(HistogramError::NoBins);
    }
    let mut counts = vec![0u64; bins];
    for (position, value) in values.iter().enumerate() {
        counts[bin_of(*value, bins, position)?] += 1;
    }
    Ok(counts)
}

/// `count` random values below `bins`, from a seeded generator.
pub fn random_bin_values(count: usize, bins: u32, seed: u64) -> Vec<u32> {
    use rand::{RngExt, SeedableRng};
    let mut generator = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    (0..count)
        .map(|_| generator.random_range(0..bins))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_strategy_agrees_with_the_sequential_histogram() {
        for (case, (length, bins)) in [
            (0usize, 1u32),
            (1, 1),
            (7, 3),
            (1000, 16),
            (10_001, 256),
            (5000, 1),
        ]
        .into_iter()
        .enumerate()
        {
            let values = random_bin_values(length, bins, 300 + case as u64);
            let expected = histogram_sequential(&values, bins as usize).unwrap();
            assert_eq!(expected.iter().sum::<u64>(), length as u64);
            for threads in [1, 2, 3, 8, 64] {
                for strategy in HistogramStrategy::ALL {
                    assert_eq!(
                        histogram(&values, bins as usize, threads, strategy).as_ref(),
                        Ok(&expected),
                        "{} with {threads} threads, {length} values in {bins} bins",
                        strategy.name()
                    );
                }
            }
        }
    }

    #[test]
    fn a_value_outside_the_bins_is_an_error_naming_the_first_one() {
        let mut values = random_bin_values(1000, 10, 9);
        values[600] = 10; // exactly one past the last bin
        values[900] = 4_000_000_000;
        let expected = HistogramError::ValueOutOfRange {
            position: 600,
            value: 10,
            bins: 10,
        };
        for threads in [1, 2, 3, 7] {
            for strategy in HistogramStrategy::ALL {
                assert_eq!(
                    histogram(&values, 10, threads, strategy),
                    Err(expected.clone())
                );
            }
        }
        let message = expected.to_string();
        assert!(
            message.contains("value 10 at position 600") && message.contains("0 to 9"),
            "{message}"
        );
    }

    #[test]
    fn zero_threads_and_zero_bins_are_errors() {
        for strategy in HistogramStrategy::ALL {
            assert_eq!(
                histogram(&[0, 1], 2, 0, strategy),
                Err(HistogramError::NoThreads)
            );
            assert_eq!(histogram(&[], 0, 2, strategy), Err(HistogramError::NoBins));
        }
    }
}
