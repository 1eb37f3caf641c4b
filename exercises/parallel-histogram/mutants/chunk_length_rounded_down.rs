// mutant: edge — `chunks(values.len() / threads)`: a chunk length of zero when there are fewer values than threads
// expect: panicked
/// Counts how many of `values` fall in each of `bins` bins, on `threads` threads.
pub fn histogram(values: &[u32], bins: usize, threads: usize) -> Result<Vec<u64>, HistogramError> {
    if threads == 0 {
        return Err(HistogramError::NoThreads);
    }
    if bins == 0 {
        return Err(HistogramError::NoBins);
    }
    let chunk_length = values.len() / threads;
    let partials: Vec<Result<Vec<u64>, HistogramError>> = std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(threads);
        // `chunks` makes one chunk more when the length is not a multiple: still correct.
        for chunk in values.chunks(chunk_length) {
            handles.push(scope.spawn(move || partial_histogram(chunk, bins)));
        }
        handles
            .into_iter()
            .map(|handle| {
                handle
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    });
    let mut total = vec![0u64; bins];
    for partial in partials {
        for (sum, count) in total.iter_mut().zip(partial?) {
            *sum += count;
        }
    }
    Ok(total)
}

/// One thread's work: the histogram of its own chunk.
fn partial_histogram(chunk: &[u32], bins: usize) -> Result<Vec<u64>, HistogramError> {
    let mut counts = vec![0u64; bins];
    for &value in chunk {
        match counts.get_mut(value as usize) {
            Some(count) => *count += 1,
            None => return Err(HistogramError::ValueOutOfRange { value, bins }),
        }
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
