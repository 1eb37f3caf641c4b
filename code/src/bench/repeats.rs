//! Repeating a whole measurement to see how far the next one could land.
//!
//! The median of one measurement's samples hides what changes *between* measurements: the
//! buffers land elsewhere in memory, the driver and the clocks are in another state, another
//! process wakes up. On the H100 behind its Vulkan driver two measurements of the same mode
//! can differ by a third. So the sweeps and the report can repeat each measurement and give
//! the median of the repeats together with the fastest and the slowest.
//!
//! The repeats are *interleaved*: every contender once, then every contender again (A, B,
//! C, A, B, C, …), never A, A, A, B, B, B. A slow spell of the machine then hits all of
//! them alike, and a ratio of two contenders is taken between measurements made side by
//! side.

use crate::bench::figure::Spread;
use crate::bench::sweeps::timing::median;

/// The values of several repeats of one measurement.
#[derive(Debug, Clone, PartialEq)]
pub struct Repeats {
    values: Vec<f64>,
}

impl Repeats {
    /// The repeats' values, in the order they were measured. `None` for no values: there is
    /// no median of nothing.
    pub fn new(values: Vec<f64>) -> Option<Repeats> {
        (!values.is_empty()).then_some(Repeats { values })
    }

    pub fn values(&self) -> &[f64] {
        &self.values
    }

    pub fn count(&self) -> usize {
        self.values.len()
    }

    pub fn median(&self) -> f64 {
        median(&mut self.values.clone())
    }

    pub fn minimum(&self) -> f64 {
        self.values.iter().copied().fold(f64::INFINITY, f64::min)
    }

    pub fn maximum(&self) -> f64 {
        self.values
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max)
    }

    /// The range of the repeats; `None` for a single value, whose spread is unknown rather
    /// than zero.
    pub fn spread(&self) -> Option<Spread> {
        (self.count() > 1).then(|| Spread {
            minimum: self.minimum(),
            maximum: self.maximum(),
        })
    }

    /// Every value converted, for example from seconds to milliseconds or to GB/s.
    pub fn map(&self, convert: impl Fn(f64) -> f64) -> Repeats {
        Repeats {
            values: self.values.iter().map(|&value| convert(value)).collect(),
        }
    }

    /// Value by value, `combine(self, other)`: for two contenders measured side by side,
    /// repeat `i` of one with repeat `i` of the other (a ratio, a difference). `None` when
    /// their numbers of repeats differ.
    pub fn paired_with(
        &self,
        other: &Repeats,
        combine: impl Fn(f64, f64) -> f64,
    ) -> Option<Repeats> {
        (self.count() == other.count()).then(|| Repeats {
            values: self
                .values
                .iter()
                .zip(&other.values)
                .map(|(&mine, &theirs)| combine(mine, theirs))
                .collect(),
        })
    }
}

// ANCHOR: interleaved
/// Measures each of `contenders` things `repeats` times, interleaved: `measure(i, earlier)`
/// for every `i` in order, then again, `repeats` rounds in all. `earlier` holds what
/// contender `i` measured in the rounds before; `measure` returns `None` to leave it out
/// of this round (say, because its one run already took all the time it may have).
/// Returns every contender's measurements, in the order they were taken.
pub fn interleaved<T, E>(
    contenders: usize,
    repeats: usize,
    mut measure: impl FnMut(usize, &[T]) -> Result<Option<T>, E>,
) -> Result<Vec<Vec<T>>, E> {
    let mut measured: Vec<Vec<T>> = (0..contenders).map(|_| Vec::new()).collect();
    for _ in 0..repeats.max(1) {
        for (contender, earlier) in measured.iter_mut().enumerate() {
            if let Some(value) = measure(contender, earlier)? {
                earlier.push(value);
            }
        }
    }
    Ok(measured)
}
// ANCHOR_END: interleaved

#[cfg(test)]
mod tests {
    use super::*;
    use std::convert::Infallible;

    #[test]
    fn the_median_and_range_of_repeats() {
        let repeats = Repeats::new(vec![3.0, 1.0, 2.0]).unwrap();
        assert_eq!(repeats.median(), 2.0);
        assert_eq!(
            repeats.spread(),
            Some(Spread {
                minimum: 1.0,
                maximum: 3.0
            })
        );
        assert_eq!(repeats.values(), [3.0, 1.0, 2.0], "the order is kept");
        assert_eq!(Repeats::new(vec![5.0]).unwrap().spread(), None);
        assert!(Repeats::new(Vec::new()).is_none());
        assert_eq!(repeats.map(|value| value * 10.0).median(), 20.0);
    }

    #[test]
    fn pairs_combine_repeat_by_repeat() {
        let slow = Repeats::new(vec![4.0, 9.0, 6.0]).unwrap();
        let fast = Repeats::new(vec![2.0, 3.0, 3.0]).unwrap();
        let ratio = slow.paired_with(&fast, |a, b| a / b).unwrap();
        assert_eq!(ratio.values(), [2.0, 3.0, 2.0]);
        let shorter = Repeats::new(vec![1.0]).unwrap();
        assert!(slow.paired_with(&shorter, |a, b| a / b).is_none());
    }

    #[test]
    fn contenders_take_turns() {
        let mut order = Vec::new();
        let measured = interleaved(3, 2, |contender, _| {
            order.push(contender);
            Ok::<_, Infallible>(Some(contender as f64))
        })
        .unwrap();
        assert_eq!(order, [0, 1, 2, 0, 1, 2]);
        assert_eq!(measured[2], [2.0, 2.0]);
    }

    #[test]
    fn a_contender_can_sit_out_later_rounds() {
        let mut order = Vec::new();
        // Contender 1 measures once and then sits out, as a run over budget would.
        let measured = interleaved(2, 3, |contender, earlier: &[f64]| {
            if contender == 1 && !earlier.is_empty() {
                return Ok::<_, Infallible>(None);
            }
            order.push(contender);
            Ok(Some(1.0))
        })
        .unwrap();
        assert_eq!(order, [0, 1, 0, 0]);
        assert_eq!(measured[0].len(), 3);
        assert_eq!(measured[1].len(), 1);
    }
}
