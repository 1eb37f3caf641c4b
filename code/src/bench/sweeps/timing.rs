//! Timing one point of a sweep: a warm-up run, repetitions sized to the run, the median,
//! and a budget that stops a series before it takes all afternoon.
//!
//! A sweep measures hundreds of points whose runs last from a microsecond (the CPU on a
//! 4×4 graph) to many seconds (an uncached GPU mode on a software rasteriser at size
//! 1024). No fixed number of repetitions suits both, so [`measure`] lets the first run
//! decide: fast runs are batched into samples long enough for the clock to resolve, and
//! the number of samples is chosen to fill a time budget per point.

use std::time::Instant;

// ANCHOR: budget
/// How much time a sweep may spend, per run and per point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budget {
    /// A series stops growing once one run takes longer than this.
    pub seconds_per_run: f64,
    /// About how long all the samples of one point may take together.
    pub seconds_per_point: f64,
    /// One sample lasts at least this long: quicker runs are repeated inside a sample
    /// and the sample's time divided by their number.
    pub minimum_sample_seconds: f64,
    pub minimum_samples: usize,
    pub maximum_samples: usize,
}

impl Budget {
    /// For trying things out: a couple of minutes for every sweep together.
    pub const QUICK: Budget = Budget {
        seconds_per_run: 0.2,
        seconds_per_point: 0.3,
        minimum_sample_seconds: 0.002,
        minimum_samples: 3,
        maximum_samples: 15,
    };

    /// For the book's figures.
    pub const FULL: Budget = Budget {
        seconds_per_run: 3.0,
        seconds_per_point: 1.0,
        minimum_sample_seconds: 0.01,
        minimum_samples: 3,
        maximum_samples: 41,
    };

    /// The budget of each of `repeats` repeats of one point: the point's time is shared
    /// among them, so repeating a sweep costs about as much as measuring it once (while
    /// the fewest samples a repeat takes stays the same).
    pub fn per_repeat(&self, repeats: usize) -> Budget {
        Budget {
            seconds_per_point: self.seconds_per_point / repeats.max(1) as f64,
            ..*self
        }
    }
}
// ANCHOR_END: budget

/// What [`measure`] found for one point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Measurement {
    /// The median time of one run, in seconds.
    pub seconds_per_run: f64,
    /// The first run already took longer than the budget allows: the time is that one
    /// run's (warm-up included), and the series should stop here.
    pub over_budget: bool,
    /// How many samples the median was taken over.
    pub samples: usize,
    /// How many runs each sample held.
    pub runs_per_sample: usize,
}

// ANCHOR: measure
/// Times `run`, which performs the given number of runs each time it is called.
///
/// The first call, one run, is the warm-up: it fills caches, compiles what is compiled
/// lazily and tells how long a run takes. If it took longer than the budget allows, its
/// time is returned at once, marked `over_budget`. Otherwise enough runs are grouped into
/// each sample to last `minimum_sample_seconds`, enough samples are taken to fill
/// `seconds_per_point` (within the bounds on their number), and the median sample,
/// divided by its runs, is the time of one run. The median rather than the mean, because
/// a run interrupted by another process is slower, never faster.
pub fn measure<E>(
    budget: &Budget,
    mut run: impl FnMut(usize) -> Result<(), E>,
) -> Result<Measurement, E> {
    measure_timed(budget, |runs| {
        let start = Instant::now();
        run(runs)?;
        Ok(start.elapsed().as_secs_f64())
    })
}

/// [`measure`] for runs that time themselves: `run` performs the given number of runs
/// and returns the seconds they took, by a clock of its choosing (the GPU's own
/// timestamps, for example, which leave out the CPU's side of a submission).
pub fn measure_timed<E>(
    budget: &Budget,
    mut run: impl FnMut(usize) -> Result<f64, E>,
) -> Result<Measurement, E> {
    let first = run(1)?;
    if first > budget.seconds_per_run {
        return Ok(Measurement {
            seconds_per_run: first,
            over_budget: true,
            samples: 1,
            runs_per_sample: 1,
        });
    }
    let (runs_per_sample, samples) = sample_plan(budget, first);
    let mut times = Vec::with_capacity(samples);
    for _ in 0..samples {
        times.push(run(runs_per_sample)? / runs_per_sample as f64);
    }
    Ok(Measurement {
        seconds_per_run: median(&mut times),
        over_budget: false,
        samples,
        runs_per_sample,
    })
}
// ANCHOR_END: measure

/// Runs per sample and number of samples for runs that take `seconds_per_run`.
fn sample_plan(budget: &Budget, seconds_per_run: f64) -> (usize, usize) {
    let seconds_per_run = seconds_per_run.max(1e-9);
    let runs_per_sample = (budget.minimum_sample_seconds / seconds_per_run)
        .ceil()
        .clamp(1.0, 1e6) as usize;
    let sample_seconds = seconds_per_run * runs_per_sample as f64;
    let samples = (budget.seconds_per_point / sample_seconds)
        .round()
        .clamp(budget.minimum_samples as f64, budget.maximum_samples as f64)
        as usize;
    (runs_per_sample, samples)
}

/// The middle value (the mean of the two middle ones for an even count). NaN sorts last,
/// so it only wins when most samples are NaN.
pub fn median(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.sort_by(f64::total_cmp);
    let middle = values.len() / 2;
    if values.len() % 2 == 1 {
        values[middle]
    } else {
        (values[middle - 1] + values[middle]) / 2.0
    }
}

// ANCHOR: series_limit
/// How many times the budget a run may be *predicted* to take before it is not even
/// tried.
const PREDICTION_LIMIT: f64 = 3.0;

/// Decides when a series stops growing.
///
/// A series stops after a run that went over the budget. It also stops when the trend
/// says the next point would take more than [`PREDICTION_LIMIT`] budgets: the sweeps
/// double their parameter from one point to the next, so the next time is predicted as
/// the last one multiplied by the last growth factor. Without the prediction, one run
/// just under the budget would be followed by one at eight times the cost (a cubic
/// kernel at twice the size).
#[derive(Debug, Clone, Default)]
pub struct SeriesLimit {
    seconds_per_run: Vec<f64>,
    stopped: bool,
}

impl SeriesLimit {
    /// Whether the next point of the series is worth measuring.
    pub fn allows_next(&self, budget: &Budget) -> bool {
        if self.stopped {
            return false;
        }
        match self.seconds_per_run[..] {
            [.., previous, last] => {
                let growth = (last / previous).max(1.0);
                last * growth <= PREDICTION_LIMIT * budget.seconds_per_run
            }
            _ => true,
        }
    }

    /// Records a measured point.
    pub fn record(&mut self, measurement: &Measurement) {
        self.seconds_per_run.push(measurement.seconds_per_run);
        self.stopped |= measurement.over_budget;
    }
}
// ANCHOR_END: series_limit

#[cfg(test)]
mod tests {
    use super::*;
    use std::convert::Infallible;

    fn tiny_budget() -> Budget {
        Budget {
            seconds_per_run: 0.5,
            seconds_per_point: 0.001,
            minimum_sample_seconds: 0.0005,
            minimum_samples: 3,
            maximum_samples: 5,
        }
    }

    #[test]
    fn the_median_ignores_outliers() {
        assert_eq!(median(&mut [3.0, 1.0, 100.0]), 3.0);
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 100.0]), 3.0);
        assert!(median(&mut []).is_nan());
    }

    #[test]
    fn quick_runs_are_batched_and_slow_ones_are_not() {
        let budget = Budget::FULL;
        let (runs, samples) = sample_plan(&budget, 1e-6);
        assert_eq!(runs, 10_000);
        assert!(samples >= budget.minimum_samples && samples <= budget.maximum_samples);
        assert_eq!(sample_plan(&budget, 2.0), (1, budget.minimum_samples));
    }

    #[test]
    fn measure_counts_every_run_it_asks_for() {
        let mut runs_done = 0;
        let measurement = measure(&tiny_budget(), |runs| {
            runs_done += runs;
            std::hint::black_box((0..1000).sum::<u64>());
            Ok::<(), Infallible>(())
        })
        .unwrap();
        assert!(!measurement.over_budget);
        assert!(measurement.seconds_per_run > 0.0 && measurement.seconds_per_run.is_finite());
        assert_eq!(
            runs_done,
            1 + measurement.samples * measurement.runs_per_sample
        );
    }

    #[test]
    fn a_run_over_budget_is_measured_once_and_stops_the_series() {
        let budget = Budget {
            seconds_per_run: 0.001,
            ..tiny_budget()
        };
        let mut calls = 0;
        let measurement = measure(&budget, |_| {
            calls += 1;
            std::thread::sleep(std::time::Duration::from_millis(5));
            Ok::<(), Infallible>(())
        })
        .unwrap();
        assert_eq!(calls, 1);
        assert!(measurement.over_budget);
        assert!(measurement.seconds_per_run >= 0.005);
        let mut limit = SeriesLimit::default();
        assert!(limit.allows_next(&budget));
        limit.record(&measurement);
        assert!(!limit.allows_next(&budget));
    }

    #[test]
    fn runs_that_time_themselves_report_their_own_seconds() {
        let mut runs_done = 0;
        // Every run "takes" 1 ms by its own clock, however long it really takes.
        let measurement = measure_timed(&tiny_budget(), |runs| {
            runs_done += runs;
            Ok::<f64, Infallible>(runs as f64 * 1e-3)
        })
        .unwrap();
        assert_eq!(measurement.seconds_per_run, 1e-3);
        assert_eq!(
            runs_done,
            1 + measurement.samples * measurement.runs_per_sample
        );
    }

    #[test]
    fn errors_pass_through() {
        let error = measure(&tiny_budget(), |_| Err::<(), _>("broken")).unwrap_err();
        assert_eq!(error, "broken");
    }

    #[test]
    fn the_trend_stops_a_series_before_an_expensive_point() {
        let budget = Budget {
            seconds_per_run: 1.0,
            ..tiny_budget()
        };
        let point = |seconds| Measurement {
            seconds_per_run: seconds,
            over_budget: false,
            samples: 3,
            runs_per_sample: 1,
        };
        let mut limit = SeriesLimit::default();
        limit.record(&point(0.1));
        limit.record(&point(0.8));
        // 0.8 s growing eightfold predicts 6.4 s: more than three budgets.
        assert!(!limit.allows_next(&budget));

        let mut slowly_growing = SeriesLimit::default();
        slowly_growing.record(&point(0.5));
        slowly_growing.record(&point(0.9));
        assert!(slowly_growing.allows_next(&budget));
    }
}
