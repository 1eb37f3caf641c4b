//! A parallel histogram without a lock (`histogram(values, bins, threads)`).
//!
//! Three parts. **Results**: the function runs on many inputs (empty, fewer values than
//! threads, lengths the thread count does not divide, every value in one bin, one bin,
//! many threads) and every bin is compared exactly with the checker's own sequential
//! count; a wrong bin is named with the total, so that a lost chunk reads as "never
//! counted". **Errors**: a value outside the bins (at the start, in the middle, in the last
//! chunk, exactly one past the last bin), zero threads and zero bins must each give the
//! right error, not a histogram and not a panic. **Threads, no lock**: the file must start
//! threads (`spawn`) and may not use `Mutex` or `RwLock` (read from the source, see
//! [`crate::rust_form`]).

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::report::{PartReport, Verdict, catching_panics};
use crate::rust_form::{Place, RustSource, Span};
use crate::submission::{Submission, Variant};

/// The checker's copy of the exercise's error type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HistogramError {
    NoThreads,
    NoBins,
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
                bins.saturating_sub(1)
            ),
        }
    }
}

pub type Histogram = fn(&[u32], usize, usize) -> Result<Vec<u64>, HistogramError>;

pub fn function_of(variant: Variant) -> Histogram {
    crate::rust_exercises::with_rust_module!(parallel_histogram, variant, |code| {
        // The exercise file defines its own error type, so that it stands on its own;
        // its variants are turned into the checker's copy to be compared.
        fn converted(
            values: &[u32],
            bins: usize,
            threads: usize,
        ) -> Result<Vec<u64>, HistogramError> {
            code::histogram(values, bins, threads).map_err(|error| match error {
                code::HistogramError::NoThreads => HistogramError::NoThreads,
                code::HistogramError::NoBins => HistogramError::NoBins,
                code::HistogramError::ValueOutOfRange { value, bins } => {
                    HistogramError::ValueOutOfRange { value, bins }
                }
            })
        }
        converted
    })
}

/// The checker's own reference: one loop on one thread. Only called with valid values.
pub fn reference(values: &[u32], bins: usize) -> Vec<u64> {
    let mut counts = vec![0u64; bins];
    for &value in values {
        counts[value as usize] += 1;
    }
    counts
}

/// How the values of a case are drawn.
#[derive(Clone, Copy)]
enum Values {
    /// Uniform over every bin.
    Uniform,
    /// Every value in this one bin.
    All(u32),
}

/// (values, bins, threads, how the values are drawn, what the case is about).
const CASES: [(usize, usize, usize, Values, &str); 12] = [
    (0, 4, 3, Values::Uniform, "an empty input"),
    (1, 4, 4, Values::Uniform, "fewer values than threads"),
    (5, 8, 8, Values::Uniform, "fewer values than threads"),
    (
        1000,
        16,
        7,
        Values::Uniform,
        "a length 7 threads do not divide",
    ),
    (
        10_007,
        256,
        4,
        Values::Uniform,
        "a length 4 threads do not divide",
    ),
    (65_536, 1000, 16, Values::Uniform, "many bins, many threads"),
    (100_003, 64, 1, Values::Uniform, "one thread"),
    (100, 10, 64, Values::Uniform, "far more threads than values"),
    (5000, 8, 3, Values::All(3), "every value in one bin"),
    (4099, 32, 5, Values::All(31), "every value in the last bin"),
    (999, 1, 2, Values::All(0), "a single bin"),
    (262_147, 4096, 6, Values::Uniform, "a long input"),
];

fn random_values(count: usize, bins: usize, seed: u64) -> Vec<u32> {
    let mut generator = ChaCha8Rng::seed_from_u64(seed);
    (0..count)
        .map(|_| generator.random_range(0..bins as u32))
        .collect()
}

fn case_values(count: usize, bins: usize, values: Values, seed: u64) -> Vec<u32> {
    match values {
        Values::Uniform => random_values(count, bins, seed),
        Values::All(bin) => vec![bin; count],
    }
}

pub fn check(submission: &Submission) -> Vec<PartReport> {
    let function = function_of(submission.rust);
    vec![results(function), errors(function), form(submission.rust)]
}

fn results(function: Histogram) -> PartReport {
    let mut part = PartReport::new("results");
    for (case, &(count, bins, threads, drawn, about)) in CASES.iter().enumerate() {
        let values = case_values(count, bins, drawn, 500 + case as u64);
        let expected = reference(&values, bins);
        let description = format!("{count} values, {bins} bins, {threads} threads ({about})");
        let verdict = match catching_panics(|| function(&values, bins, threads)) {
            Err(panicked) => panicked,
            Ok(Err(error)) => Verdict::Unmet(format!(
                "returned the error `{error}`, but every value has a bin"
            )),
            Ok(Ok(counts)) => compare_counts(&counts, &expected, count),
        };
        part.push(description, verdict);
    }
    part
}

/// Compares two histograms bin by bin; the message says how many values went missing or
/// were counted twice, and which bins differ first.
fn compare_counts(actual: &[u64], expected: &[u64], count: usize) -> Verdict {
    if actual.len() != expected.len() {
        return Verdict::Unmet(format!(
            "returned {} bins; expected {}: the histogram has one bin per possible value",
            actual.len(),
            expected.len()
        ));
    }
    let wrong: Vec<usize> = (0..expected.len())
        .filter(|&bin| actual[bin] != expected[bin])
        .collect();
    if wrong.is_empty() {
        return Verdict::Pass(format!("all {} bins right", expected.len()));
    }
    let counted: u64 = actual.iter().sum();
    let total = match counted.cmp(&(count as u64)) {
        std::cmp::Ordering::Less => format!(
            "the bins hold {counted} values in all, but the input has {count}: {} never \
             counted (a chunk left out, or a partial histogram not added?)",
            plural_of_values(count as u64 - counted)
        ),
        std::cmp::Ordering::Greater => format!(
            "the bins hold {counted} values in all, but the input has {count}: {} counted \
             twice (chunks that overlap?)",
            plural_of_values(counted - count as u64)
        ),
        std::cmp::Ordering::Equal => {
            format!("the bins hold all {count} values, but in the wrong bins")
        }
    };
    let examples: Vec<String> = wrong
        .iter()
        .take(3)
        .map(|&bin| {
            format!(
                "bin {bin} holds {}, expected {}",
                actual[bin], expected[bin]
            )
        })
        .collect();
    Verdict::Unmet(format!(
        "{total}; {} of {} bins differ: {}",
        wrong.len(),
        expected.len(),
        examples.join("; ")
    ))
}

/// "1 value", "3 values".
fn counted(count: usize, word: &str) -> String {
    if count == 1 {
        format!("1 {word}")
    } else {
        format!("{count} {word}s")
    }
}

/// "1 value was", "3 values were".
fn plural_of_values(count: u64) -> String {
    if count == 1 {
        "1 value was".to_string()
    } else {
        format!("{count} values were")
    }
}

fn errors(function: Histogram) -> PartReport {
    let mut part = PartReport::new("errors");
    // (values, bins, threads, what the case is about, the error expected)
    let mut cases: Vec<(Vec<u32>, usize, usize, String, HistogramError)> = Vec::new();
    for (position, threads, about) in [
        (999usize, 3usize, "in the last chunk"),
        (0, 4, "at the start"),
        (500, 1, "in the middle"),
    ] {
        let bins = 16;
        let mut values = random_values(1000, bins, 900 + position as u64);
        values[position] = bins as u32; // exactly one past the last bin
        cases.push((
            values,
            bins,
            threads,
            format!(
                "the value 16 among 16 bins, {about}, {}",
                counted(threads, "thread")
            ),
            HistogramError::ValueOutOfRange {
                value: 16,
                bins: 16,
            },
        ));
    }
    let mut huge = random_values(777, 8, 950);
    huge[400] = u32::MAX;
    cases.push((
        huge,
        8,
        5,
        "the value 4294967295 among 8 bins, 5 threads".to_string(),
        HistogramError::ValueOutOfRange {
            value: u32::MAX,
            bins: 8,
        },
    ));
    cases.push((
        random_values(100, 4, 960),
        4,
        0,
        "zero threads".to_string(),
        HistogramError::NoThreads,
    ));
    cases.push((
        Vec::new(),
        0,
        2,
        "zero bins, no values".to_string(),
        HistogramError::NoBins,
    ));
    cases.push((
        vec![0, 1, 2],
        0,
        2,
        "zero bins, three values".to_string(),
        HistogramError::NoBins,
    ));
    for (values, bins, threads, about, expected) in cases {
        let verdict = match catching_panics(|| function(&values, bins, threads)) {
            Err(panicked) => panicked,
            Ok(Ok(_)) => Verdict::Unmet(format!(
                "returned a histogram; expected the error `{expected}`"
            )),
            Ok(Err(error)) if error != expected => Verdict::Unmet(format!(
                "returned the error `{error}`; expected `{expected}`"
            )),
            Ok(Err(error)) => Verdict::Pass(format!("the error `{error}`")),
        };
        part.push(about, verdict);
    }
    part
}

fn form(variant: Variant) -> PartReport {
    let mut part = PartReport::new("threads, no lock");
    let source = match crate::rust_form::source_of("parallel-histogram", variant) {
        Ok(source) => source,
        Err(error) => {
            part.push("reading the source", Verdict::Error(error.to_string()));
            return part;
        }
    };
    part.push(source.shown(), judge_form(&source));
    part
}

fn judge_form(source: &RustSource) -> Verdict {
    if source.function_body("histogram").is_none() {
        return Verdict::Error(format!("{}: there is no `fn histogram`", source.shown()));
    }
    // The whole file: the threads may be started in a helper function.
    let length = std::fs::read_to_string(&source.path).map_or(0, |text| text.len());
    let file = Span {
        start: 0,
        end: length,
    };
    let listed = |places: &[Place]| {
        places
            .iter()
            .map(Place::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    };
    let mut findings = Vec::new();
    if source.word_in(file, "spawn").is_empty() {
        findings.push(
            "no thread is started: the file never calls `spawn` (`std::thread::scope` and \
             `scope.spawn`, or `std::thread::spawn`), so everything runs on the calling thread"
                .to_string(),
        );
    }
    let mut locks = source.word_in(file, "Mutex");
    locks.extend(source.word_in(file, "RwLock"));
    locks.sort_by_key(|place| place.line);
    locks.dedup();
    if !locks.is_empty() {
        findings.push(format!(
            "the code uses a lock (Mutex or RwLock), so the threads take turns at the shared \
             histogram; give each thread its own partial histogram, or use atomic counters:\n{}",
            listed(&locks)
        ));
    }
    if findings.is_empty() {
        Verdict::Pass("starts threads, uses no lock".to_string())
    } else {
        Verdict::Unmet(findings.join("\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_counts_every_value_in_its_bin() {
        assert_eq!(reference(&[0, 2, 2, 1, 2], 4), [1, 1, 3, 0]);
        assert!(reference(&[], 3).iter().all(|&count| count == 0));
    }

    #[test]
    fn a_lost_chunk_is_reported_as_values_never_counted() {
        let verdict = compare_counts(&[1, 1, 0], &[1, 1, 2], 4);
        let text = format!("{verdict}");
        assert!(text.contains("never counted"), "{text}");
        assert!(text.contains("bin 2 holds 0, expected 2"), "{text}");
    }

    #[test]
    fn the_uniform_cases_fill_many_bins() {
        let values = random_values(10_007, 256, 504);
        let counts = reference(&values, 256);
        assert!(counts.iter().all(|&count| count > 0));
    }
}
