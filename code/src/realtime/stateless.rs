//! Stateless over stateful: a moving average as a function of its whole input, against a
//! filter object that remembers the last samples between calls.
//!
//! Both produce bit-identical averages (each sums the same window in the same order). The
//! function can be tested with one call and any input; the object's answer depends on every
//! call made before, so a test has to replay a history, and a bug can hide in a history
//! nobody tried. Keep the state where it is needed (a stream really does arrive one sample
//! at a time) and the arithmetic in stateless functions it calls.

use std::collections::VecDeque;
use thiserror::Error;

/// A window of no samples has no average.
#[derive(Debug, Error, Clone, Copy, PartialEq, Eq)]
#[error("a moving average needs a window of at least one sample")]
pub struct EmptyWindow;

// ANCHOR: stateless
/// The average of every `window` consecutive samples: `samples.len() - window + 1` values,
/// none when there are fewer samples than the window. Same input, same output, always.
pub fn moving_average(samples: &[f32], window: usize) -> Result<Vec<f32>, EmptyWindow> {
    if window == 0 {
        return Err(EmptyWindow);
    }
    Ok(samples
        .windows(window)
        .map(|recent| recent.iter().sum::<f32>() / window as f32)
        .collect())
}
// ANCHOR_END: stateless

// ANCHOR: stateful
/// The same average over a stream: push one sample at a time, get the average of the last
/// `window` samples once that many have arrived. What `push` returns depends on everything
/// pushed before.
#[derive(Debug, Clone)]
pub struct MovingAverage {
    window: usize,
    recent: VecDeque<f32>,
}

impl MovingAverage {
    pub fn new(window: usize) -> Result<MovingAverage, EmptyWindow> {
        if window == 0 {
            return Err(EmptyWindow);
        }
        Ok(MovingAverage {
            window,
            recent: VecDeque::with_capacity(window),
        })
    }

    /// Adds a sample; the average of the last `window` samples, or `None` while fewer than
    /// `window` have arrived.
    pub fn push(&mut self, sample: f32) -> Option<f32> {
        if self.recent.len() == self.window {
            self.recent.pop_front();
        }
        self.recent.push_back(sample);
        (self.recent.len() == self.window)
            .then(|| self.recent.iter().sum::<f32>() / self.window as f32)
    }
}
// ANCHOR_END: stateful

#[cfg(test)]
mod tests {
    use super::*;
    use crate::realtime::seeded_random::{noisy_signal, seeds_for_tests};

    // ANCHOR: stateful_equals_stateless
    #[test]
    fn streaming_gives_the_same_averages_as_the_whole_signal() {
        for seed in seeds_for_tests(20) {
            let signal = noisy_signal(seed, 300);
            for window in [1, 2, 5, 64, 300, 301] {
                let whole = moving_average(&signal, window).unwrap();
                let mut filter = MovingAverage::new(window).unwrap();
                let streamed: Vec<f32> = signal.iter().filter_map(|&s| filter.push(s)).collect();
                assert_eq!(
                    streamed, whole,
                    "seed {seed}, window {window} (rerun with GALAXY_TEST_SEED={seed})"
                );
            }
        }
    }
    // ANCHOR_END: stateful_equals_stateless

    #[test]
    fn a_window_of_zero_is_refused_with_a_message() {
        assert_eq!(moving_average(&[1.0], 0), Err(EmptyWindow));
        assert_eq!(MovingAverage::new(0).unwrap_err(), EmptyWindow);
        assert_eq!(
            EmptyWindow.to_string(),
            "a moving average needs a window of at least one sample"
        );
    }

    #[test]
    fn a_known_signal_gives_known_averages() {
        assert_eq!(
            moving_average(&[1.0, 2.0, 3.0, 6.0], 2).unwrap(),
            [1.5, 2.5, 4.5]
        );
        assert!(moving_average(&[1.0, 2.0], 3).unwrap().is_empty());
    }
}
