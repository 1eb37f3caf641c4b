//! Warm-up: no clones in the hot loop (`smooth`).
//!
//! Two parts. **Results**: the signal is smoothed for lengths from 0 to 4,097 and from 0
//! to 50 steps, and every value is compared with the checker's own reference (within a
//! relative 10⁻⁶, so that `(a + 2b + c) / 4` passes as well as `¼a + ½b + ¼c`). **At
//! most two allocations**: the function is called on 4,096 values for 8 and for 64
//! steps, and every request it makes to the allocator on this thread is counted (see
//! [`crate::allocations`]); the vector it returns and one scratch buffer are allowed,
//! whatever the number of steps.

use galaxy::{Tensor2d, Tolerance};

use crate::allocations::allocations_during;
use crate::report::{PartReport, Verdict, catching_panics, compare};
use crate::submission::{Submission, Variant};

pub type Smooth = fn(&[f32], usize) -> Vec<f32>;

/// The allocations a correct solution needs: the result and one scratch buffer.
pub const ALLOWED_ALLOCATIONS: usize = 2;

pub fn function_of(variant: Variant) -> Smooth {
    crate::rust_exercises::with_rust_module!(clone_free_loop, variant, |code| code::smooth)
}

/// The checker's own reference, written independently of the exercise files: a new
/// vector per step, built from windows of three.
pub fn reference(signal: &[f32], steps: usize) -> Vec<f32> {
    let mut current = signal.to_vec();
    if current.len() < 3 {
        return current;
    }
    for _ in 0..steps {
        let first = current[0];
        let last = current[current.len() - 1];
        let inside = current
            .windows(3)
            .map(|window| 0.25 * window[0] + 0.5 * window[1] + 0.25 * window[2]);
        current = std::iter::once(first)
            .chain(inside)
            .chain(std::iter::once(last))
            .collect();
    }
    current
}

/// (length, steps) of every case.
const CASES: [(usize, usize); 10] = [
    (0, 3),
    (1, 5),
    (2, 4),
    (3, 1),
    (17, 0),
    (17, 1),
    (17, 2),
    (64, 7),
    (1000, 50),
    (4097, 33),
];

const TOLERANCE: Tolerance = Tolerance::new(1e-6, 1e-7);

fn random_signal(length: usize, seed: u64) -> Vec<f32> {
    Tensor2d::random(1, length, -1.0..=1.0, seed).into_vec()
}

pub fn check(submission: &Submission) -> Vec<PartReport> {
    let function = function_of(submission.rust);
    vec![results(function), allocations(function)]
}

fn results(function: Smooth) -> PartReport {
    let mut part = PartReport::new("results");
    for (case, &(length, steps)) in CASES.iter().enumerate() {
        let signal = random_signal(length, 4000 + case as u64);
        let expected = reference(&signal, steps);
        let description = format!(
            "{length} value{}, {steps} step{}",
            if length == 1 { "" } else { "s" },
            if steps == 1 { "" } else { "s" }
        );
        let verdict = match catching_panics(|| function(&signal, steps)) {
            Err(panicked) => panicked,
            Ok(actual) if actual.len() != expected.len() => Verdict::Unmet(format!(
                "returned {} values for a signal of {length}",
                actual.len()
            )),
            Ok(_) if length == 0 => Verdict::Pass("no values".to_string()),
            Ok(actual) => match (
                Tensor2d::from_vec(1, length, actual),
                Tensor2d::from_vec(1, length, expected),
            ) {
                (Ok(actual), Ok(expected)) => compare(&actual, &expected, TOLERANCE),
                (Err(error), _) | (_, Err(error)) => Verdict::Error(error.to_string()),
            },
        };
        part.push(description, verdict);
    }
    part
}

fn allocations(function: Smooth) -> PartReport {
    let mut part = PartReport::new("at most two allocations");
    let length = 4096;
    let signal = random_signal(length, 5000);
    for steps in [8, 64] {
        let verdict = match catching_panics(|| allocations_during(|| function(&signal, steps))) {
            Err(panicked) => panicked,
            Ok((_, count)) if count <= ALLOWED_ALLOCATIONS => {
                Verdict::Pass(format!("{count} allocation(s)"))
            }
            Ok((_, count)) => Verdict::Unmet(format!(
                "{count} allocations for {steps} steps, where {ALLOWED_ALLOCATIONS} are enough \
                 (the vector returned and one scratch buffer made before the loop): a \
                 `clone`, `to_vec` or `vec!` inside the loop asks for new memory at every step"
            )),
        };
        part.push(format!("{length} values, {steps} steps"), verdict);
    }
    part
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_keeps_the_ends_and_averages_the_inside() {
        assert_eq!(reference(&[4.0, 0.0, 8.0], 1), [4.0, 3.0, 8.0]);
        assert_eq!(reference(&[1.0, 2.0], 9), [1.0, 2.0]);
        assert_eq!(reference(&[4.0, 0.0, 8.0], 0), [4.0, 0.0, 8.0]);
    }

    #[test]
    fn an_update_in_place_gives_other_values() {
        // The mistake the second buffer prevents must change the numbers, or the checker
        // could not see it.
        let signal = random_signal(64, 1);
        let mut in_place = signal.clone();
        for index in 1..in_place.len() - 1 {
            in_place[index] =
                0.25 * in_place[index - 1] + 0.5 * in_place[index] + 0.25 * in_place[index + 1];
        }
        let expected = reference(&signal, 1);
        let differing = in_place
            .iter()
            .zip(&expected)
            .filter(|(a, b)| (*a - *b).abs() > 1e-4)
            .count();
        assert!(differing > 30, "{differing}");
    }
}
