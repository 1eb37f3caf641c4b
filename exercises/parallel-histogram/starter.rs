//! A parallel histogram without a lock.
//!
//! `histogram` counts how many of `values` fall in each of `bins` bins: the value `v` goes
//! in bin `v`, so every value must be below `bins`. It is correct, and it runs on one
//! thread.
//!
//! Your task: spread the counting over `threads` threads, without a `Mutex` or `RwLock`.
//! Two ways work well: scoped threads (`std::thread::scope`) that each fill a private
//! histogram of their own chunk, added together at the end; or one histogram of atomic
//! counters (`AtomicU64`) that every thread adds to. Keep exactly the same results and the
//! same errors: no value may be lost or counted twice, whatever the number of values and
//! threads (fewer values than threads, a length the thread count does not divide), and a
//! value outside the bins is an error, not a panic, on whichever thread finds it. Use the
//! number of threads you are given: not fewer, not more.
//! The error type at the end of the file is part of the task's interface: keep it.

/// Counts how many of `values` fall in each of `bins` bins, on `threads` threads.
pub fn histogram(values: &[u32], bins: usize, threads: usize) -> Result<Vec<u64>, HistogramError> {
    if threads == 0 {
        return Err(HistogramError::NoThreads);
    }
    if bins == 0 {
        return Err(HistogramError::NoBins);
    }
    let mut counts = vec![0u64; bins];
    for &value in values {
        if value as usize >= bins {
            return Err(HistogramError::ValueOutOfRange { value, bins });
        }
        counts[value as usize] += 1;
    }
    Ok(counts)
}

/// Why `histogram` refused its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HistogramError {
    /// `threads` is zero: nobody would do the work.
    NoThreads,
    /// `bins` is zero: there is nowhere to count a value.
    NoBins,
    /// `value` is not below `bins`, so it has no bin.
    ValueOutOfRange { value: u32, bins: usize },
}

impl std::fmt::Display for HistogramError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HistogramError::NoThreads => write!(formatter, "zero threads cannot do any work"),
            HistogramError::NoBins => {
                write!(formatter, "a histogram of zero bins has nowhere to count")
            }
            HistogramError::ValueOutOfRange { value, bins } => write!(
                formatter,
                "the value {value} has no bin: the {bins} bins hold 0 to {}",
                bins - 1
            ),
        }
    }
}

impl std::error::Error for HistogramError {}
