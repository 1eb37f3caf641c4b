//! Two workloads with the same total amount of work: one where every item costs the same,
//! and one where the cost of an item grows with its position.
//!
//! Each item is a 32-bit seed and a number of steps. Processing an item runs a small
//! random-number generator (xorshift32) for that many steps, starting from the seed, and
//! turns the final state into a float in [0, 1). The steps form one dependency chain, so an
//! item's cost is proportional to its step count, and the compiler cannot shorten the
//! chain: every step needs the one before.
//!
//! The computation is integer arithmetic followed by an exact conversion, so every
//! implementation (sequential, rayon, fixed chunks, a GPU kernel) must produce *bit for
//! bit* the same output. Tests can therefore compare with `==`, not with a tolerance.
//!
//! - [`Balance::Balanced`]: every item takes `average_steps` steps.
//! - [`Balance::Unbalanced`]: item `i` of `n` takes about `2 · average_steps · (i + 1) /
//!   (n + 1)` steps, a ramp from almost nothing to twice the average. The total is exactly
//!   `n · average_steps`, the same as the balanced workload, so any difference in time
//!   between the two comes from how the work is *distributed*, not how much there is.
//!
//! The ramp is the worst case for splitting the items into equal contiguous chunks: the
//! last chunk holds the most expensive items. With two chunks, the second holds three
//! quarters of the work; with `t` chunks, the last holds `(2t − 1) / t²` of it.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// What can go wrong when a data-parallel function is handed slices that do not fit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DataParallelError {
    /// Two slices that must have the same length do not.
    #[error("{operation}: {expected_name} has {expected} elements but {found_name} has {found}")]
    LengthMismatch {
        operation: &'static str,
        expected_name: &'static str,
        expected: usize,
        found_name: &'static str,
        found: usize,
    },
    /// A thread count of zero: there would be nobody to do the work.
    #[error("{operation}: the number of threads must be at least 1")]
    NoThreads { operation: &'static str },
    /// A SIMD kernel was asked for on a processor without its instructions.
    #[error("the {kernel} kernel needs vector instructions this processor does not have")]
    MissingInstructions { kernel: &'static str },
}

/// Checks that `found` has as many elements as `expected`.
pub fn check_same_length(
    operation: &'static str,
    expected_name: &'static str,
    expected: usize,
    found_name: &'static str,
    found: usize,
) -> Result<(), DataParallelError> {
    if expected == found {
        Ok(())
    } else {
        Err(DataParallelError::LengthMismatch {
            operation,
            expected_name,
            expected,
            found_name,
            found,
        })
    }
}

/// How the work is spread over the items.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Balance {
    /// Every item costs the same.
    Balanced,
    /// Item `i` costs in proportion to `i + 1`: a ramp.
    Unbalanced,
}

impl Balance {
    pub fn name(self) -> &'static str {
        match self {
            Balance::Balanced => "balanced",
            Balance::Unbalanced => "unbalanced",
        }
    }
}

// ANCHOR: workload
/// The items of a workload: a seed and a step count per item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workload {
    pub seeds: Vec<u32>,
    pub steps: Vec<u32>,
}
// ANCHOR_END: workload

impl Workload {
    /// `items` items whose step counts add up to exactly `items · average_steps`, spread
    /// as `balance` says. The seeds are random (never 0, which xorshift would keep at 0).
    pub fn new(balance: Balance, items: usize, average_steps: u32, seed: u64) -> Workload {
        let mut generator = ChaCha8Rng::seed_from_u64(seed);
        let seeds = (0..items)
            .map(|_| generator.random_range(1..=u32::MAX))
            .collect();
        let steps = match balance {
            Balance::Balanced => vec![average_steps; items],
            Balance::Unbalanced => ramp(items, average_steps),
        };
        Workload { seeds, steps }
    }

    pub fn len(&self) -> usize {
        self.seeds.len()
    }

    pub fn is_empty(&self) -> bool {
        self.seeds.is_empty()
    }

    /// The sum of every item's step count: the work to do.
    pub fn total_steps(&self) -> u64 {
        self.steps.iter().map(|&steps| u64::from(steps)).sum()
    }
}

// ANCHOR: ramp
/// Step counts rising with the index, `2 · average · (i + 1) / (n + 1)` rounded down, then
/// the steps lost to rounding handed out one each to the last items, so that the total is
/// exactly `n · average`.
fn ramp(items: usize, average_steps: u32) -> Vec<u32> {
    let total = items as u64 * u64::from(average_steps);
    let mut steps: Vec<u32> = (0..items as u64)
        .map(|index| (2 * u64::from(average_steps) * (index + 1) / (items as u64 + 1)) as u32)
        .collect();
    let handed_out: u64 = steps.iter().map(|&count| u64::from(count)).sum();
    // Each item lost less than one step to rounding, so fewer than `items` are missing.
    let missing = (total - handed_out) as usize;
    for count in steps.iter_mut().rev().take(missing) {
        *count += 1;
    }
    steps
}
// ANCHOR_END: ramp

// ANCHOR: process_item
/// One item's work: `steps` steps of xorshift32 from `seed`, the top 24 bits of the final
/// state as a float in [0, 1). Each step depends on the previous one, so the time is
/// proportional to `steps`. A `u32` below 2²⁴ converts to `f32` exactly, and multiplying
/// by a power of two is exact, so every correct implementation gives the same bits.
#[inline]
pub fn process_item(seed: u32, steps: u32) -> f32 {
    let mut state = seed;
    for _ in 0..steps {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
    }
    (state >> 8) as f32 * (1.0 / 16_777_216.0)
}
// ANCHOR_END: process_item

// ANCHOR: process_sequential
/// The reference: every item in order, on the calling thread.
pub fn process_sequential(
    workload: &Workload,
    output: &mut [f32],
) -> Result<(), DataParallelError> {
    check_output(workload, output, "process_sequential")?;
    for ((result, &seed), &steps) in output.iter_mut().zip(&workload.seeds).zip(&workload.steps) {
        *result = process_item(seed, steps);
    }
    Ok(())
}
// ANCHOR_END: process_sequential

/// Checks that the workload's two lists and the output have the same length.
pub fn check_output(
    workload: &Workload,
    output: &[f32],
    operation: &'static str,
) -> Result<(), DataParallelError> {
    check_same_length(
        operation,
        "the seeds",
        workload.seeds.len(),
        "the step counts",
        workload.steps.len(),
    )?;
    check_same_length(
        operation,
        "the workload",
        workload.seeds.len(),
        "the output",
        output.len(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_workloads_hold_exactly_the_same_total_work() {
        for items in [0, 1, 2, 3, 10, 1000, 4097] {
            for average in [0, 1, 7, 64, 1000] {
                let balanced = Workload::new(Balance::Balanced, items, average, 1);
                let unbalanced = Workload::new(Balance::Unbalanced, items, average, 1);
                let expected = items as u64 * u64::from(average);
                assert_eq!(balanced.total_steps(), expected, "{items} × {average}");
                assert_eq!(unbalanced.total_steps(), expected, "{items} × {average}");
            }
        }
    }

    #[test]
    fn the_unbalanced_workload_is_a_rising_ramp_up_to_twice_the_average() {
        let workload = Workload::new(Balance::Unbalanced, 1000, 100, 2);
        assert!(workload.steps.windows(2).all(|pair| pair[0] <= pair[1]));
        assert!(workload.steps[0] <= 1);
        assert!((199..=200).contains(&workload.steps[999]));
        // The second half holds about three quarters of the work.
        let second_half: u64 = workload.steps[500..].iter().map(|&s| u64::from(s)).sum();
        let share = second_half as f64 / workload.total_steps() as f64;
        assert!((0.74..0.76).contains(&share), "{share}");
    }

    #[test]
    fn seeds_are_reproducible_and_never_zero() {
        let first = Workload::new(Balance::Balanced, 5000, 3, 9);
        assert_eq!(first, Workload::new(Balance::Balanced, 5000, 3, 9));
        assert_ne!(first, Workload::new(Balance::Balanced, 5000, 3, 10));
        assert!(first.seeds.iter().all(|&seed| seed != 0));
    }

    #[test]
    fn process_item_depends_on_the_seed_and_on_every_step() {
        // Zero steps: the seed itself, top 24 bits.
        assert_eq!(process_item(0xffff_ff00, 0), 16_777_215.0 / 16_777_216.0);
        // One step of xorshift32 from 1, written out: 1 ^ 1<<13 = 0x2001; >> 17 is 0;
        // 0x2001 ^ 0x2001<<5 = 0x42021.
        assert_eq!(process_item(1, 1), (0x42021u32 >> 8) as f32 / 16_777_216.0);
        let outputs: Vec<f32> = (0..50).map(|steps| process_item(12345, steps)).collect();
        for (index, value) in outputs.iter().enumerate() {
            assert!((0.0..1.0).contains(value));
            // Each step count gives a different state.
            assert!(!outputs[..index].contains(value), "{index}");
        }
    }

    #[test]
    fn sequential_processing_checks_lengths() {
        let workload = Workload::new(Balance::Balanced, 10, 2, 3);
        let mut short = vec![0.0; 9];
        assert!(matches!(
            process_sequential(&workload, &mut short),
            Err(DataParallelError::LengthMismatch { found: 9, .. })
        ));
        let mut output = vec![f32::NAN; 10];
        process_sequential(&workload, &mut output).unwrap();
        for ((&result, &seed), &steps) in output.iter().zip(&workload.seeds).zip(&workload.steps) {
            assert_eq!(result, process_item(seed, steps));
        }
    }
}
