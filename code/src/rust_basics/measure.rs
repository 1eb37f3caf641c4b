//! Repeating a whole measurement and keeping, for every point, the median of the repeats
//! and their range, so that a figure can show how much a busy machine moved the result.
//!
//! The examples of module 0 run their full sweep several times, one pass after the other,
//! rather than repeating each point back to back: a burst of other work on the machine
//! then disturbs one pass of many points instead of every repeat of one point.

use crate::figure::{Figure, Point, Spread};

/// The repeated values of one point of one series.
#[derive(Debug, Clone, PartialEq)]
struct Repeats {
    series: String,
    x: f64,
    values: Vec<f64>,
}

/// The median, fastest and slowest of a point's repeats.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    pub median: f64,
    pub minimum: f64,
    pub maximum: f64,
}

/// Every value recorded so far, grouped by series and x, in the order first recorded.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RepeatedMeasurements {
    points: Vec<Repeats>,
}

impl RepeatedMeasurements {
    /// Records one more value for the point `x` of `series`.
    pub fn record(&mut self, series: &str, x: f64, value: f64) {
        match self
            .points
            .iter_mut()
            .find(|point| point.series == series && point.x == x)
        {
            Some(point) => point.values.push(value),
            None => self.points.push(Repeats {
                series: series.to_string(),
                x,
                values: vec![value],
            }),
        }
    }

    /// The summary of one point, or `None` if nothing was recorded for it.
    pub fn summary(&self, series: &str, x: f64) -> Option<Summary> {
        let point = self
            .points
            .iter()
            .find(|point| point.series == series && point.x == x)?;
        summarise(&point.values)
    }

    /// Adds every point to `figure`: the median as `y`, the range as its spread when the
    /// point was measured more than once.
    pub fn add_to(&self, figure: &mut Figure) {
        for point in &self.points {
            let Some(summary) = summarise(&point.values) else {
                continue;
            };
            let position = Point {
                x: point.x,
                y: summary.median,
            };
            if point.values.len() > 1 {
                let spread = Spread {
                    minimum: summary.minimum,
                    maximum: summary.maximum,
                };
                figure.push_with_spread(&point.series, position, spread);
            } else {
                figure.push(&point.series, position);
            }
        }
    }
}

/// Median (the mean of the middle two for an even count), minimum and maximum.
fn summarise(values: &[f64]) -> Option<Summary> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let middle = sorted.len() / 2;
    let median = if sorted.len() % 2 == 1 {
        sorted[middle]
    } else {
        (sorted[middle - 1] + sorted[middle]) / 2.0
    };
    Some(Summary {
        median,
        minimum: sorted[0],
        maximum: sorted[sorted.len() - 1],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figure::Axis;

    fn empty_figure() -> Figure {
        let axis = |label: &str| Axis {
            label: label.to_string(),
            logarithmic: false,
        };
        Figure {
            id: "test".to_string(),
            title: "test".to_string(),
            x: axis("x"),
            y: axis("y"),
            hardware: "test".to_string(),
            command: "test".to_string(),
            series: Vec::new(),
        }
    }

    #[test]
    fn the_median_ignores_one_slow_outlier_and_the_range_keeps_it() {
        let mut measurements = RepeatedMeasurements::default();
        for value in [2.0, 9.0, 1.0] {
            measurements.record("a", 4.0, value);
        }
        let summary = measurements.summary("a", 4.0).unwrap();
        assert_eq!(summary.median, 2.0);
        assert_eq!((summary.minimum, summary.maximum), (1.0, 9.0));
        assert_eq!(measurements.summary("a", 8.0), None);
    }

    #[test]
    fn an_even_count_takes_the_mean_of_the_middle_two() {
        assert_eq!(summarise(&[4.0, 1.0, 3.0, 2.0]).unwrap().median, 2.5);
    }

    #[test]
    fn the_figure_gets_medians_with_spreads_in_first_recorded_order() {
        let mut measurements = RepeatedMeasurements::default();
        for pass in 0..3 {
            for x in [1.0, 2.0] {
                measurements.record("slow", x, 10.0 * x + f64::from(pass));
                measurements.record("fast", x, x + f64::from(pass));
            }
        }
        measurements.record("once", 1.0, 5.0);
        let mut figure = empty_figure();
        measurements.add_to(&mut figure);
        let names: Vec<&str> = figure.series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["slow", "fast", "once"]);
        assert_eq!(figure.series[0].points[1], Point { x: 2.0, y: 21.0 });
        assert_eq!(
            figure.series[0].spreads[1],
            Some(Spread {
                minimum: 20.0,
                maximum: 22.0
            })
        );
        assert_eq!(figure.series[2].spreads[0], None);
    }
}
