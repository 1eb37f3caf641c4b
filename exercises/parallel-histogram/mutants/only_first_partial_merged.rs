// mutant: wrong-result — the partial histograms are collected but only the first one is returned
// expect: never counted
/// Counts how many of `values` fall in each of `bins` bins, on `threads` threads.
pub fn histogram(values: &[u32], bins: usize, threads: usize) -> Result<Vec<u64>, HistogramError> {
    if threads == 0 {
        return Err(HistogramError::NoThreads);
    }
    if bins == 0 {
        return Err(HistogramError::NoBins);
    }
    let base = values.len() / threads;
    let remainder = values.len() % threads;
    let partials: Vec<Result<Vec<u64>, HistogramError>> = std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(threads);
        let mut start = 0;
        for thread in 0..threads {
            // The first `remainder` chunks take one value more.
            let length = base + usize::from(thread < remainder);
            let chunk = &values[start..start + length];
            start += length;
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
    let mut partials = partials.into_iter();
    match partials.next() {
        Some(first) => first,
        None => Ok(vec![0u64; bins]),
    }
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
