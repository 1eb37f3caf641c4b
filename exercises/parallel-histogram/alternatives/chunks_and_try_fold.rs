// alternative: `chunks(len.div_ceil(threads))` and a `try_fold` over the joined partial histograms
/// Counts how many of `values` fall in each of `bins` bins, on `threads` threads.
pub fn histogram(values: &[u32], bins: usize, threads: usize) -> Result<Vec<u64>, HistogramError> {
    if threads == 0 {
        return Err(HistogramError::NoThreads);
    }
    if bins == 0 {
        return Err(HistogramError::NoBins);
    }
    // Rounding the chunk length up gives at most `threads` chunks; `max(1)` keeps it legal
    // for an empty input.
    let chunk_length = values.len().div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        let handles: Vec<_> = values
            .chunks(chunk_length)
            .map(|chunk| {
                scope.spawn(move || {
                    let mut counts = vec![0u64; bins];
                    for &value in chunk {
                        *counts
                            .get_mut(value as usize)
                            .ok_or(HistogramError::ValueOutOfRange { value, bins })? += 1;
                    }
                    Ok(counts)
                })
            })
            .collect();
        handles
            .into_iter()
            .try_fold(vec![0u64; bins], |mut total, handle| {
                let partial = handle.join().unwrap()?;
                total
                    .iter_mut()
                    .zip(partial)
                    .for_each(|(sum, count)| *sum += count);
                Ok(total)
            })
    })
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
