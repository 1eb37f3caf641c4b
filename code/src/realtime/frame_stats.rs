//! What a real-time loop records about every frame, and the numbers that judge it.
//!
//! A frame is *released* at its scheduled time (frame `k` at `k · period` after the loop
//! starts), *starts* when a thread begins its work, *finishes* when its result is ready,
//! and has a *deadline*. From those four times come the three numbers a real-time system
//! is judged by:
//!
//! - the **latency** of a frame, `finish − release`: how old the input is when its result
//!   appears; summarised by percentiles (p50, p99, max) because the mean hides the slow
//!   frames that matter;
//! - the **deadline misses**: frames finished after their deadline, plus frames skipped
//!   because the loop had fallen behind;
//! - the **jitter**: how unevenly frames start, the standard deviation of the interval
//!   between the starts of consecutive frames.

use std::time::Duration;

use thiserror::Error;

/// Why statistics could not be computed, or a rate could not be used.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum FrameStatsError {
    #[error("there are no frames to summarise: run the loop for at least one frame")]
    NoFrames,
    #[error("a percentile must lie between 0 and 100, not {percentile}")]
    PercentileOutOfRange { percentile: f64 },
    #[error("a loop rate must be a positive, finite number of frames per second, not {hertz}")]
    InvalidRate { hertz: f64 },
    #[error("a histogram needs a positive bin width and at least one bin")]
    EmptyHistogram,
}

// ANCHOR: frame_record
/// The four times of one frame, each measured from the start of the loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameRecord {
    /// Which frame: its input is sample block `index` of the stream.
    pub index: u64,
    /// When the frame's input became available: `index · period`.
    pub release: Duration,
    /// When a thread began the frame's work.
    pub start: Duration,
    /// When the frame's result was ready.
    pub finish: Duration,
    /// When the result had to be ready.
    pub deadline: Duration,
}

impl FrameRecord {
    /// How old the input is when its result appears.
    pub fn latency(&self) -> Duration {
        self.finish.saturating_sub(self.release)
    }

    /// The time spent on the frame's work.
    pub fn work(&self) -> Duration {
        self.finish.saturating_sub(self.start)
    }

    /// Whether the result came after the deadline.
    pub fn missed(&self) -> bool {
        self.finish > self.deadline
    }
}
// ANCHOR_END: frame_record

// ANCHOR: percentile
/// The `percentile`-th percentile of `values` by the **nearest-rank** definition: the
/// smallest value such that at least `percentile` % of the values are less than or equal
/// to it. It is always one of the values (no interpolation), so "p99 = 9.1 ms" means
/// that some frame really took 9.1 ms and 99 % took no longer. Percentile 0 is the
/// minimum, 100 the maximum.
pub fn percentile(values: &[Duration], percentile: f64) -> Result<Duration, FrameStatsError> {
    if !(0.0..=100.0).contains(&percentile) {
        return Err(FrameStatsError::PercentileOutOfRange { percentile });
    }
    if values.is_empty() {
        return Err(FrameStatsError::NoFrames);
    }
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    // Rank r (1-based) is the smallest with r / n ≥ p / 100.
    let rank = (percentile / 100.0 * sorted.len() as f64).ceil() as usize;
    Ok(sorted[rank.max(1) - 1])
}
// ANCHOR_END: percentile

// ANCHOR: summary
/// What a run of the loop amounts to.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameSummary {
    /// Frames released during the run: finished ones plus skipped ones.
    pub released: u64,
    /// Frames that produced a result.
    pub finished: u64,
    /// Frames finished after their deadline.
    pub late: u64,
    /// Frames never run because the loop had fallen behind (or dropped on purpose).
    pub skipped: u64,
    /// Latency percentiles (nearest rank) of the finished frames.
    pub latency_p50: Duration,
    pub latency_p99: Duration,
    pub latency_max: Duration,
    /// Work time percentiles of the finished frames.
    pub work_p50: Duration,
    pub work_p99: Duration,
    /// Standard deviation of the intervals between consecutive frame starts (zero for
    /// a single frame).
    pub start_jitter: Duration,
}

impl FrameSummary {
    /// Summarises the finished frames `records` (in order) and the count of skipped ones.
    pub fn new(records: &[FrameRecord], skipped: u64) -> Result<FrameSummary, FrameStatsError> {
        if records.is_empty() {
            return Err(FrameStatsError::NoFrames);
        }
        let latencies: Vec<Duration> = records.iter().map(FrameRecord::latency).collect();
        let work: Vec<Duration> = records.iter().map(FrameRecord::work).collect();
        Ok(FrameSummary {
            released: records.len() as u64 + skipped,
            finished: records.len() as u64,
            late: records.iter().filter(|record| record.missed()).count() as u64,
            skipped,
            latency_p50: percentile(&latencies, 50.0)?,
            latency_p99: percentile(&latencies, 99.0)?,
            latency_max: percentile(&latencies, 100.0)?,
            work_p50: percentile(&work, 50.0)?,
            work_p99: percentile(&work, 99.0)?,
            start_jitter: start_jitter(records),
        })
    }

    /// Late plus skipped frames: every frame whose result was not there in time.
    pub fn deadline_misses(&self) -> u64 {
        self.late + self.skipped
    }
}
// ANCHOR_END: summary

/// The standard deviation of the intervals between consecutive frame starts.
fn start_jitter(records: &[FrameRecord]) -> Duration {
    let intervals: Vec<f64> = records
        .windows(2)
        .map(|pair| pair[1].start.as_secs_f64() - pair[0].start.as_secs_f64())
        .collect();
    if intervals.is_empty() {
        return Duration::ZERO;
    }
    let mean = intervals.iter().sum::<f64>() / intervals.len() as f64;
    let variance = intervals
        .iter()
        .map(|interval| (interval - mean).powi(2))
        .sum::<f64>()
        / intervals.len() as f64;
    Duration::from_secs_f64(variance.sqrt())
}

// ANCHOR: histogram
/// Counts of values in equal bins `[i · width, (i + 1) · width)`; the last bin also
/// holds every value beyond it, so no frame disappears from the picture.
#[derive(Debug, Clone, PartialEq)]
pub struct Histogram {
    pub bin_width: Duration,
    pub counts: Vec<u64>,
}

impl Histogram {
    pub fn new(
        values: &[Duration],
        bin_width: Duration,
        bins: usize,
    ) -> Result<Histogram, FrameStatsError> {
        if bin_width.is_zero() || bins == 0 {
            return Err(FrameStatsError::EmptyHistogram);
        }
        let mut counts = vec![0; bins];
        for value in values {
            let bin = (value.as_nanos() / bin_width.as_nanos()) as usize;
            counts[bin.min(bins - 1)] += 1;
        }
        Ok(Histogram { bin_width, counts })
    }

    /// The lower edge of bin `index`.
    pub fn bin_start(&self, index: usize) -> Duration {
        self.bin_width * index as u32
    }
}
// ANCHOR_END: histogram

#[cfg(test)]
mod tests {
    use super::*;

    fn milliseconds(values: &[u64]) -> Vec<Duration> {
        values
            .iter()
            .map(|&value| Duration::from_millis(value))
            .collect()
    }

    #[test]
    fn nearest_rank_percentiles_of_known_values() {
        // 1..=100 ms in shuffled order: the p-th percentile is exactly p ms.
        let mut values = milliseconds(&(1..=100).collect::<Vec<_>>());
        values.reverse();
        values.swap(3, 71);
        assert_eq!(percentile(&values, 50.0), Ok(Duration::from_millis(50)));
        assert_eq!(percentile(&values, 99.0), Ok(Duration::from_millis(99)));
        assert_eq!(percentile(&values, 100.0), Ok(Duration::from_millis(100)));
        assert_eq!(percentile(&values, 0.0), Ok(Duration::from_millis(1)));
        // Four values: p50 is the 2nd (not the mean of the 2nd and 3rd), p51 the 3rd.
        let four = milliseconds(&[40, 10, 30, 20]);
        assert_eq!(percentile(&four, 50.0), Ok(Duration::from_millis(20)));
        assert_eq!(percentile(&four, 51.0), Ok(Duration::from_millis(30)));
        assert_eq!(percentile(&four, 25.0), Ok(Duration::from_millis(10)));
    }

    #[test]
    fn one_slow_frame_in_a_hundred_is_the_maximum_but_not_the_p99() {
        let mut values = milliseconds(&[5; 99]);
        values.push(Duration::from_millis(80));
        assert_eq!(percentile(&values, 99.0), Ok(Duration::from_millis(5)));
        assert_eq!(percentile(&values, 100.0), Ok(Duration::from_millis(80)));
    }

    #[test]
    fn bad_input_is_a_typed_error() {
        assert_eq!(percentile(&[], 50.0), Err(FrameStatsError::NoFrames));
        assert_eq!(
            percentile(&milliseconds(&[1]), 101.0),
            Err(FrameStatsError::PercentileOutOfRange { percentile: 101.0 })
        );
        assert!(matches!(
            percentile(&milliseconds(&[1]), f64::NAN),
            Err(FrameStatsError::PercentileOutOfRange { .. })
        ));
        assert_eq!(FrameSummary::new(&[], 3), Err(FrameStatsError::NoFrames));
        assert_eq!(
            Histogram::new(&[], Duration::ZERO, 4),
            Err(FrameStatsError::EmptyHistogram)
        );
        assert_eq!(
            Histogram::new(&[], Duration::from_millis(1), 0),
            Err(FrameStatsError::EmptyHistogram)
        );
    }

    /// Frame `index` of a 10 ms loop, starting `late` ms after its release and
    /// working `work` ms, with its deadline at the next release.
    fn frame(index: u64, late: u64, work: u64) -> FrameRecord {
        let release = Duration::from_millis(10 * index);
        let start = release + Duration::from_millis(late);
        FrameRecord {
            index,
            release,
            start,
            finish: start + Duration::from_millis(work),
            deadline: release + Duration::from_millis(10),
        }
    }

    #[test]
    fn a_summary_counts_late_and_skipped_frames() {
        // Frame 2 finishes at 12 ms past its release: late. Frames 4 and 5 were skipped.
        let records = [
            frame(0, 0, 4),
            frame(1, 0, 4),
            frame(2, 0, 12),
            frame(3, 2, 8),
        ];
        let summary = FrameSummary::new(&records, 2).unwrap();
        assert_eq!(summary.released, 6);
        assert_eq!(summary.finished, 4);
        assert_eq!(summary.late, 1);
        assert_eq!(summary.skipped, 2);
        assert_eq!(summary.deadline_misses(), 3);
        // Latencies 4, 4, 12, 10 ms: nearest-rank p50 is the 2nd of 4 sorted values.
        assert_eq!(summary.latency_p50, Duration::from_millis(4));
        assert_eq!(summary.latency_max, Duration::from_millis(12));
        assert_eq!(summary.work_p99, Duration::from_millis(12));
        // Frame 3 at exactly its deadline (10 ms) is on time.
        assert!(!records[3].missed());
    }

    #[test]
    fn jitter_is_zero_for_a_perfect_schedule_and_grows_with_uneven_starts() {
        let even: Vec<FrameRecord> = (0..10).map(|index| frame(index, 0, 3)).collect();
        assert_eq!(
            FrameSummary::new(&even, 0).unwrap().start_jitter,
            Duration::ZERO
        );
        // Starts at 0, 10, 22, 30 ms: intervals 10, 12, 8, mean 10, deviation √(8/3) ms.
        let uneven = [
            frame(0, 0, 3),
            frame(1, 0, 3),
            frame(2, 2, 3),
            frame(3, 0, 3),
        ];
        let jitter = FrameSummary::new(&uneven, 0).unwrap().start_jitter;
        let expected = (8.0f64 / 3.0).sqrt() / 1000.0;
        assert!((jitter.as_secs_f64() - expected).abs() < 1e-9, "{jitter:?}");
    }

    #[test]
    fn a_histogram_puts_each_value_in_its_bin_and_the_overflow_in_the_last() {
        let values = milliseconds(&[0, 1, 1, 2, 3, 9, 40]);
        let histogram = Histogram::new(&values, Duration::from_millis(2), 3).unwrap();
        // [0, 2): 0, 1, 1; [2, 4): 2, 3; [4, …): 9 and 40.
        assert_eq!(histogram.counts, vec![3, 2, 2]);
        assert_eq!(histogram.bin_start(2), Duration::from_millis(4));
        assert_eq!(histogram.counts.iter().sum::<u64>(), values.len() as u64);
    }
}
