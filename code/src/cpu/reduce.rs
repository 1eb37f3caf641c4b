//! Reductions, a whole slice down to one number, with one accumulator or with several.
//!
//! With one accumulator, every addition needs the result of the one before it: the loop
//! is a single *dependency chain*, and it runs no faster than one addition per
//! floating-point latency (2 to 4 cycles on current cores), however many adders the core
//! has. Several independent accumulators make several chains; the compiler packs them side
//! by side into SIMD registers, and the CPU pipeline overlaps the chains that remain.

/// How many independent accumulators the "several" variants use. Eight `f32` fill one
/// 256-bit SIMD register or two 128-bit ones. On the default x86-64 target (128-bit SSE
/// registers) the compiler turns them into two registers of four: two *vector* chains,
/// each adding four values per addition latency, so eight additions are in flight instead
/// of one. Keeping every adder of a current core busy would take more chains (latency ×
/// adders vector additions in flight), but for arrays larger than L2 the loop already
/// waits on memory at eight.
const ACCUMULATORS: usize = 8;

// ANCHOR: sum_single_accumulator
/// The sum of the values, added strictly left to right into one accumulator.
///
/// Floating-point addition is not associative, so the compiler must keep this exact
/// order, and every addition waits for the previous one.
pub fn sum_single_accumulator(values: &[f32]) -> f32 {
    let mut accumulator = 0.0;
    for &value in values {
        accumulator += value;
    }
    accumulator
}
// ANCHOR_END: sum_single_accumulator

// ANCHOR: sum_several_accumulators
/// The sum of the values, using `ACCUMULATORS` (eight) independent accumulators: the
/// value at `position` goes to accumulator `position % ACCUMULATORS`, and the
/// accumulators are added together at the end.
///
/// The independent accumulators break the single dependency chain into several, so the
/// pipeline can have several additions in flight at once. The price is that the values
/// are added in a different order, so the result can differ from
/// [`sum_single_accumulator`] in the last bits: neither is "the" right answer, both are
/// rounded, and for long slices of same-signed values this one is usually closer,
/// because each accumulator stays smaller.
pub fn sum_several_accumulators(values: &[f32]) -> f32 {
    let mut accumulators = [0.0_f32; ACCUMULATORS];
    let chunks = values.chunks_exact(ACCUMULATORS);
    let leftover = chunks.remainder();
    for chunk in chunks {
        for (accumulator, &value) in accumulators.iter_mut().zip(chunk) {
            *accumulator += value;
        }
    }
    // The leftover values, fewer than ACCUMULATORS, go to the first accumulators.
    for (accumulator, &value) in accumulators.iter_mut().zip(leftover) {
        *accumulator += value;
    }
    sum_single_accumulator(&accumulators)
}
// ANCHOR_END: sum_several_accumulators

// ANCHOR: max_propagating_nan
/// The larger of two values, or NaN if either is NaN, as `numpy.maximum` and
/// `torch.maximum` do.
///
/// [`f32::max`] does the opposite: it returns the other value when one is NaN, which
/// would let a NaN produced upstream vanish from a maximum without a trace. A comparison
/// with NaN is always false, so `left > right` fails for a NaN on either side and the
/// `is_nan` test picks the NaN.
pub fn max_propagating_nan(left: f32, right: f32) -> f32 {
    if left > right || left.is_nan() {
        left
    } else {
        right
    }
}
// ANCHOR_END: max_propagating_nan

// ANCHOR: max_single_accumulator
/// The largest value, or `None` for an empty slice, which has no largest value.
///
/// A NaN anywhere makes the result NaN (see [`max_propagating_nan`]), as `numpy.max`
/// and `torch.max` do.
pub fn max_single_accumulator(values: &[f32]) -> Option<f32> {
    let (&first, rest) = values.split_first()?;
    let mut accumulator = first;
    for &value in rest {
        accumulator = max_propagating_nan(accumulator, value);
    }
    Some(accumulator)
}
// ANCHOR_END: max_single_accumulator

// ANCHOR: max_several_accumulators
/// The largest value with `ACCUMULATORS` (eight) independent accumulators, or `None`
/// for an empty slice.
///
/// Unlike a sum, the maximum does not depend on the order in which values are compared,
/// so this always agrees with [`max_single_accumulator`] (NaN included). Every
/// accumulator starts from the first value, which every maximum is at least, so no
/// starting value has to be invented.
pub fn max_several_accumulators(values: &[f32]) -> Option<f32> {
    let &first = values.first()?;
    let mut accumulators = [first; ACCUMULATORS];
    let chunks = values.chunks_exact(ACCUMULATORS);
    let leftover = chunks.remainder();
    for chunk in chunks {
        for (accumulator, &value) in accumulators.iter_mut().zip(chunk) {
            *accumulator = max_propagating_nan(*accumulator, value);
        }
    }
    for (accumulator, &value) in accumulators.iter_mut().zip(leftover) {
        *accumulator = max_propagating_nan(*accumulator, value);
    }
    max_single_accumulator(&accumulators)
}
// ANCHOR_END: max_several_accumulators

#[cfg(test)]
mod tests {
    use super::*;

    /// Eleven values: one full chunk of eight and three left over, so both parts of the
    /// several-accumulator loops run.
    const ELEVEN: [f32; 11] = [1.0, -2.0, 3.0, 4.5, -5.0, 6.0, 7.0, -8.0, 9.0, 10.0, -0.5];

    #[test]
    fn sums_of_small_integers_are_exact() {
        // Every partial sum is a small integer or half-integer, exactly representable,
        // so the order of additions cannot matter here.
        assert_eq!(sum_single_accumulator(&ELEVEN), 25.0);
        assert_eq!(sum_several_accumulators(&ELEVEN), 25.0);
    }

    #[test]
    fn the_sum_of_nothing_is_zero() {
        assert_eq!(sum_single_accumulator(&[]), 0.0);
        assert_eq!(sum_several_accumulators(&[]), 0.0);
    }

    #[test]
    fn short_slices_use_only_the_leftover_loop() {
        assert_eq!(sum_several_accumulators(&[1.0, 2.0, 3.0]), 6.0);
        assert_eq!(max_several_accumulators(&[1.0, 3.0, 2.0]), Some(3.0));
    }

    #[test]
    fn summation_order_changes_the_rounding() {
        // 1 + 2⁻²⁴ rounds back to 1 in f32. Left to right, each tiny value is lost against
        // the 1; spread over eight accumulators, seven of them add tiny values to each
        // other first, and those survive.
        let tiny = f32::EPSILON / 2.0;
        let mut values = vec![tiny; 64];
        values[0] = 1.0;
        assert_eq!(sum_single_accumulator(&values), 1.0);
        assert!(sum_several_accumulators(&values) > 1.0);
    }

    #[test]
    fn max_finds_the_largest_value() {
        assert_eq!(max_single_accumulator(&ELEVEN), Some(10.0));
        assert_eq!(max_several_accumulators(&ELEVEN), Some(10.0));
    }

    #[test]
    fn an_empty_slice_has_no_max() {
        assert_eq!(max_single_accumulator(&[]), None);
        assert_eq!(max_several_accumulators(&[]), None);
    }

    #[test]
    fn a_nan_anywhere_makes_the_max_nan() {
        let with_nan = [
            f32::NAN,
            -3.0,
            f32::NAN,
            -1.0,
            -2.0,
            f32::NAN,
            -4.0,
            -5.0,
            -6.0,
        ];
        assert!(max_single_accumulator(&with_nan).unwrap().is_nan());
        assert!(max_several_accumulators(&with_nan).unwrap().is_nan());
        // A NaN between ordinary values, with larger values after it.
        let example = [1.0, f32::NAN, 2.0, 1.0, 2.0, 3.0];
        assert!(max_single_accumulator(&example).unwrap().is_nan());
        assert!(max_several_accumulators(&example).unwrap().is_nan());
    }

    #[test]
    fn max_propagating_nan_on_every_side() {
        assert!(max_propagating_nan(f32::NAN, 1.0).is_nan());
        assert!(max_propagating_nan(1.0, f32::NAN).is_nan());
        assert_eq!(max_propagating_nan(1.0, 2.0), 2.0);
        assert_eq!(max_propagating_nan(f32::NEG_INFINITY, -1e38), -1e38);
        assert_eq!(max_propagating_nan(f32::INFINITY, 1.0), f32::INFINITY);
    }
}
