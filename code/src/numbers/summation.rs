//! Summing many `f32` values three ways, and an exact-enough reference to measure them by.
//!
//! Every floating-point addition rounds its result to the nearest representable value, an
//! error of at most half a unit in the last place of the *result*. Summing `n` values left
//! to right adds into a running total that keeps growing, so the late additions round at
//! the scale of the whole sum: the error bound grows like `n`. Adding in pairs (a tree)
//! keeps the operands of each addition similar in size, and the bound grows like `log₂ n`.
//! Kahan's compensated sum keeps the rounding error of each addition in a second variable
//! and feeds it back, and its bound does not grow with `n` at all (to first order).
//!
//! The left-to-right sum is [`crate::cpu::sum_single_accumulator`]; this module adds the
//! other two and the reference.

/// Below this many values, [`sum_pairwise`] adds left to right: splitting further costs
/// more than it saves, and a block this short adds at most 7 rounding errors.
const PAIRWISE_BLOCK: usize = 8;

// ANCHOR: sum_pairwise
/// The sum as a balanced tree: split the slice in half, sum each half, add the two.
///
/// Every value passes through about `log₂ n` additions instead of up to `n`, so the
/// rounding errors it meets grow with the depth of the tree, not its width. NumPy's `sum`
/// does this (with blocks of 128).
pub fn sum_pairwise(values: &[f32]) -> f32 {
    if values.len() <= PAIRWISE_BLOCK {
        return values.iter().fold(0.0, |total, &value| total + value);
    }
    let (left, right) = values.split_at(values.len() / 2);
    sum_pairwise(left) + sum_pairwise(right)
}
// ANCHOR_END: sum_pairwise

// ANCHOR: sum_kahan
/// Kahan's compensated sum: a running total plus a running correction.
///
/// After `total + adjusted` rounds, `(new_total − total) − adjusted` recovers, exactly,
/// the part of `adjusted` that the rounding threw away (negated); the next value is
/// reduced by it before it is added. The compiler must not simplify the algebra, and Rust
/// never reassociates floating-point arithmetic, so it does not.
pub fn sum_kahan(values: &[f32]) -> f32 {
    let mut total = 0.0_f32;
    let mut compensation = 0.0_f32;
    for &value in values {
        let adjusted = value - compensation;
        let new_total = total + adjusted;
        compensation = (new_total - total) - adjusted;
        total = new_total;
    }
    total
}
// ANCHOR_END: sum_kahan

// ANCHOR: sum_reference
/// The reference sum: every `f32` widened to `f64` (exactly: `f64` holds every `f32`
/// value) and added with Neumaier's variant of compensated summation.
///
/// The result is the exact sum rounded once to `f64`, up to an error of order
/// `n · 2⁻¹⁰⁶ · Σ|value|`: for a million values of similar size, about 10⁻²⁶ relative,
/// some 10¹⁸ times below one rounding of an `f32` (6·10⁻⁸). Any error measured against it
/// larger than about 10⁻¹⁵ belongs to the method being measured, not to the reference.
pub fn sum_reference(values: &[f32]) -> f64 {
    let mut total = 0.0_f64;
    let mut compensation = 0.0_f64;
    for &value in values {
        let value = f64::from(value);
        let new_total = total + value;
        // Whichever operand is larger in magnitude lost no bits; recover the other's.
        compensation += if total.abs() >= value.abs() {
            (total - new_total) + value
        } else {
            (value - new_total) + total
        };
        total = new_total;
    }
    total + compensation
}
// ANCHOR_END: sum_reference

/// `|computed − reference| / |reference|`; the absolute error when the reference is 0.
pub fn relative_error(computed: f64, reference: f64) -> f64 {
    let error = (computed - reference).abs();
    if reference == 0.0 {
        error
    } else {
        error / reference.abs()
    }
}

// ANCHOR: sum_half_precision
/// Left-to-right sum of `f16` values with an `f16` accumulator: every addition rounds to
/// 11 significant bits, and a total above 65 504 overflows to infinity. This is the
/// arithmetic an `f16` kernel does when it also accumulates in `f16`.
pub fn sum_half_precision(values: &[half::f16]) -> half::f16 {
    let mut total = half::f16::ZERO;
    for &value in values {
        total += value;
    }
    total
}
// ANCHOR_END: sum_half_precision

/// Left-to-right sum of `f16` values into an `f32` accumulator: the inputs carry `f16`'s
/// rounding, the additions `f32`'s.
pub fn sum_half_inputs_single_accumulator(values: &[half::f16]) -> f32 {
    values.iter().map(|value| value.to_f32()).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::sum_single_accumulator;
    use proptest::prelude::*;
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn uniform(count: usize, seed: u64) -> Vec<f32> {
        let mut random = ChaCha8Rng::seed_from_u64(seed);
        (0..count).map(|_| random.random::<f32>()).collect()
    }

    #[test]
    fn the_reference_is_exact_on_a_sum_f64_gets_wrong() {
        // 2⁶⁰ + 1 − 2⁶⁰: plain f64 addition loses the 1; the compensation keeps it.
        let huge = 2f32.powi(60);
        let values = [huge, 1.0, -huge];
        assert_eq!(values.iter().map(|&v| f64::from(v)).sum::<f64>(), 0.0);
        assert_eq!(sum_reference(&values), 1.0);
    }

    proptest! {
        #[test]
        fn the_reference_is_exact_on_integers(values in prop::collection::vec(-(1i32 << 20)..(1 << 20), 0..2000)) {
            // Integers below 2²⁰ are exact in f32, and their sums (below 2³¹) exact in
            // f64, so the exact answer is the integer sum.
            let floats: Vec<f32> = values.iter().map(|&value| value as f32).collect();
            let exact: i64 = values.iter().map(|&value| i64::from(value)).sum();
            prop_assert_eq!(sum_reference(&floats), exact as f64);
        }

        #[test]
        fn pairwise_and_kahan_are_exact_on_small_integers(values in prop::collection::vec(-1000i32..1000, 0..2000)) {
            // Every partial sum stays below 2²⁴, so no addition rounds, in any order.
            let floats: Vec<f32> = values.iter().map(|&value| value as f32).collect();
            let exact: i32 = values.iter().sum();
            prop_assert_eq!(sum_pairwise(&floats), exact as f32);
            prop_assert_eq!(sum_kahan(&floats), exact as f32);
        }
    }

    #[test]
    fn kahan_and_pairwise_beat_left_to_right_on_a_long_sum() {
        let values = uniform(1 << 20, 7);
        let reference = sum_reference(&values);
        let error = |sum: f32| relative_error(f64::from(sum), reference);
        let naive = error(sum_single_accumulator(&values));
        let pairwise = error(sum_pairwise(&values));
        let kahan = error(sum_kahan(&values));
        // Kahan's bound: 2 roundings of the result, plus a term of order n·ε².
        assert!(kahan <= 2.0 * f64::from(f32::EPSILON), "kahan {kahan}");
        assert!(
            pairwise < naive / 10.0,
            "pairwise {pairwise}, naive {naive}"
        );
        assert!(kahan <= pairwise, "kahan {kahan}, pairwise {pairwise}");
    }

    #[test]
    fn half_precision_accumulation_overflows_where_single_does_not() {
        // A hundred values of 1000 sum to 100 000, past f16's largest finite value, 65 504.
        let values = vec![half::f16::from_f32(1000.0); 100];
        assert!(sum_half_precision(&values).is_infinite());
        assert_eq!(sum_half_inputs_single_accumulator(&values), 100_000.0);
    }

    #[test]
    fn half_precision_accumulation_stalls_once_the_total_is_large() {
        // From 1024 on, f16's spacing is 1: 1024 + 0.5 lies halfway between 1024 and 1025
        // and rounds to the even one, 1024, so the sum stops growing there.
        let values = vec![half::f16::from_f32(0.5); 10_000];
        assert_eq!(sum_half_precision(&values).to_f32(), 1024.0);
        assert_eq!(sum_half_inputs_single_accumulator(&values), 5000.0);
    }
}
