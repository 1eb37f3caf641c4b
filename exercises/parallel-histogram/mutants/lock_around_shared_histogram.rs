// mutant: lock — one shared histogram behind a Mutex, locked for every value
// expect: Mutex
use std::sync::Mutex;

/// Counts how many of `values` fall in each of `bins` bins, on `threads` threads.
pub fn histogram(values: &[u32], bins: usize, threads: usize) -> Result<Vec<u64>, HistogramError> {
    if threads == 0 {
        return Err(HistogramError::NoThreads);
    }
    if bins == 0 {
        return Err(HistogramError::NoBins);
    }
    let shared = Mutex::new(vec![0u64; bins]);
    let chunk_length = values.len().div_ceil(threads).max(1);
    let outcomes: Vec<Result<(), HistogramError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = values
            .chunks(chunk_length)
            .map(|chunk| {
                let shared = &shared;
                scope.spawn(move || {
                    for &value in chunk {
                        if value as usize >= bins {
                            return Err(HistogramError::ValueOutOfRange { value, bins });
                        }
                        shared.lock().unwrap()[value as usize] += 1;
                    }
                    Ok(())
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().unwrap())
            .collect()
    });
    for outcome in outcomes {
        outcome?;
    }
    Ok(shared.into_inner().unwrap())
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
