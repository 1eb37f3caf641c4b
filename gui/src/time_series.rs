//! A fixed-length history of durations: what the plots draw and the status line summarises.
//!
//! The application records one value per frame and one per run, for as long as it runs.
//! Keeping every value would grow without bound, so the history keeps the newest
//! `capacity` values and forgets the oldest, like an oscilloscope's screen.

use std::collections::VecDeque;

/// The newest durations, in milliseconds, oldest first.
#[derive(Debug, Clone, PartialEq)]
pub struct TimeSeries {
    capacity: usize,
    values: VecDeque<f64>,
}

impl TimeSeries {
    /// An empty history that keeps at most `capacity` values (at least one).
    pub fn new(capacity: usize) -> TimeSeries {
        let capacity = capacity.max(1);
        TimeSeries {
            capacity,
            values: VecDeque::with_capacity(capacity),
        }
    }

    /// Adds the newest value, forgetting the oldest when the history is full.
    pub fn push(&mut self, milliseconds: f64) {
        if self.values.len() == self.capacity {
            self.values.pop_front();
        }
        self.values.push_back(milliseconds);
    }

    pub fn clear(&mut self) {
        self.values.clear();
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// The values, oldest first.
    pub fn values(&self) -> impl ExactSizeIterator<Item = f64> + '_ {
        self.values.iter().copied()
    }

    pub fn latest(&self) -> Option<f64> {
        self.values.back().copied()
    }

    pub fn maximum(&self) -> Option<f64> {
        self.values().reduce(f64::max)
    }

    /// The middle value: unlike the mean, one slow outlier (a page fault, a compile) does
    /// not move it. `None` for an empty history.
    pub fn median(&self) -> Option<f64> {
        let mut sorted: Vec<f64> = self.values().collect();
        if sorted.is_empty() {
            return None;
        }
        sorted.sort_by(f64::total_cmp);
        let middle = sorted.len() / 2;
        Some(if sorted.len() % 2 == 1 {
            sorted[middle]
        } else {
            (sorted[middle - 1] + sorted[middle]) / 2.0
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_history_forgets_its_oldest_value() {
        let mut series = TimeSeries::new(3);
        for value in [1.0, 2.0, 3.0, 4.0] {
            series.push(value);
        }
        assert_eq!(series.values().collect::<Vec<_>>(), [2.0, 3.0, 4.0]);
        assert_eq!(series.latest(), Some(4.0));
        assert_eq!(series.maximum(), Some(4.0));
    }

    #[test]
    fn the_median_ignores_one_outlier_and_averages_the_middle_pair() {
        let mut series = TimeSeries::new(10);
        assert_eq!(series.median(), None);
        for value in [2.0, 1000.0, 1.0] {
            series.push(value);
        }
        assert_eq!(series.median(), Some(2.0));
        series.push(3.0);
        assert_eq!(series.median(), Some(2.5));
    }

    #[test]
    fn a_capacity_of_zero_still_keeps_the_newest_value() {
        let mut series = TimeSeries::new(0);
        series.push(5.0);
        series.push(6.0);
        assert_eq!(series.values().collect::<Vec<_>>(), [6.0]);
    }
}
