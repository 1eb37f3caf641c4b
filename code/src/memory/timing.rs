//! A small, honest timer: warm up, repeat until a sample is long enough to time, take
//! several samples, report the median.
//!
//! The figure sweeps measure hundreds of points and cannot afford criterion's full
//! statistics for each, so they use this instead. The median is used rather than the mean
//! because a machine shared with other work produces occasional slow outliers (another
//! process, an interrupt), and the median ignores them.

use std::time::{Duration, Instant};

/// How long and how often to measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimingPlan {
    /// How many samples to take; the median of them is reported.
    pub samples: usize,
    /// A sample repeats the call until it has run at least this long, so that very short
    /// calls are not lost in the resolution of the clock.
    pub minimum_sample_time: Duration,
}

impl TimingPlan {
    /// A few short samples: good enough to see the shape of a curve.
    pub const QUICK: TimingPlan = TimingPlan {
        samples: 3,
        minimum_sample_time: Duration::from_millis(2),
    };
    /// More samples, for the book's figures. Each is kept short (a few milliseconds, about
    /// one time slice of the scheduler), so that on a busy machine most samples run
    /// uninterrupted and the median ignores the rest.
    pub const FULL: TimingPlan = TimingPlan {
        samples: 11,
        minimum_sample_time: Duration::from_millis(5),
    };
}

// ANCHOR: median_nanoseconds_per_item
/// The median time of one `call`, in nanoseconds, divided by `items_per_call` (the number
/// of elements, rows or steps one call processes).
///
/// The first call is a warm-up: it brings the data into cache (if it fits), faults in
/// fresh pages and lets the CPU raise its clock. Its duration also decides how many calls
/// one sample needs to last at least `plan.minimum_sample_time`.
pub fn median_nanoseconds_per_item(
    plan: TimingPlan,
    items_per_call: usize,
    mut call: impl FnMut(),
) -> f64 {
    let warm_up = Instant::now();
    call();
    let one_call = warm_up.elapsed().max(Duration::from_nanos(1));
    let calls_per_sample = (plan.minimum_sample_time.as_nanos() / one_call.as_nanos()).max(1);
    let calls_per_sample = u32::try_from(calls_per_sample).unwrap_or(u32::MAX);

    let mut per_item: Vec<f64> = (0..plan.samples.max(1))
        .map(|_| {
            let start = Instant::now();
            for _ in 0..calls_per_sample {
                call();
            }
            let nanoseconds = start.elapsed().as_secs_f64() * 1e9;
            nanoseconds / f64::from(calls_per_sample) / items_per_call.max(1) as f64
        })
        .collect();
    per_item.sort_by(f64::total_cmp);
    per_item[per_item.len() / 2]
}
// ANCHOR_END: median_nanoseconds_per_item

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sleep_is_measured_at_least_as_long_as_it_sleeps() {
        let plan = TimingPlan {
            samples: 3,
            minimum_sample_time: Duration::from_millis(1),
        };
        // 2 ms per call over 4 items: at least 0.5 ms per item, whatever the machine.
        let per_item = median_nanoseconds_per_item(plan, 4, || {
            std::thread::sleep(Duration::from_millis(2));
        });
        assert!(per_item >= 0.5e6, "{per_item} ns");
        assert!(per_item.is_finite());
    }

    #[test]
    fn the_call_runs_once_to_warm_up_and_then_for_every_sample() {
        let plan = TimingPlan {
            samples: 5,
            // A sleep of 1 ms already lasts this long, so one call per sample.
            minimum_sample_time: Duration::from_micros(1),
        };
        let mut calls = 0;
        median_nanoseconds_per_item(plan, 1, || {
            calls += 1;
            std::thread::sleep(Duration::from_millis(1));
        });
        assert_eq!(calls, 1 + 5);
    }
}
