//! Property tests: on random shapes and random values, every variant agrees with the
//! simplest one.
//!
//! The unit tests beside each operator check hand-computed examples; these check that the
//! faster variants compute the *same thing* as the plain ones on inputs nobody picked by
//! hand, including the awkward shapes (one row, one column, sizes that are not a multiple
//! of a block or of the accumulator count).

use proptest::prelude::*;

use crate::cpu::*;
use crate::tensor::{Tensor2d, Tolerance};

/// Cases per property: enough to hit the edge shapes, few enough that the whole CPU suite
/// runs in a few seconds in an unoptimised debug build.
const CASES: u32 = 64;

/// How close the linear variants must be to [`linear_naive`].
///
/// The variants may add the same products in a different order (they do not today, but a
/// SIMD or GPU version will), and every `f32` addition rounds by up to `ε/2 ≈ 6·10⁻⁸` of
/// the running sum. The error of a dot product therefore grows with its length, roughly
/// `inner · ε` times the size of the terms. With at most 40 terms in −1..1, that is about
/// `40 · 1.2·10⁻⁷ ≈ 5·10⁻⁶`, inside `10⁻⁵`; the absolute part covers sums that cancel
/// to nearly zero, where a relative error means nothing.
const LINEAR_TOLERANCE: Tolerance = Tolerance::new(1e-5, 1e-5);

/// Softmax values lie in (0, 1], and the variants share one row kernel.
const SOFTMAX_TOLERANCE: Tolerance = Tolerance::new(1e-6, 1e-6);

/// A random input, weights and bias for a linear layer of the given shape, values in −1..1.
fn linear_operands(
    rows: usize,
    inner_size: usize,
    outputs: usize,
    seed: u64,
) -> (Tensor2d, Tensor2d, Tensor2d) {
    (
        Tensor2d::random(rows, inner_size, -1.0..=1.0, seed),
        Tensor2d::random(inner_size, outputs, -1.0..=1.0, seed.wrapping_add(1)),
        Tensor2d::random(1, outputs, -1.0..=1.0, seed.wrapping_add(2)),
    )
}

fn assert_close(actual: &Tensor2d, expected: &Tensor2d, tolerance: Tolerance, name: &str) {
    let comparison = actual.compare(expected, tolerance).unwrap();
    assert!(comparison.passed(), "{name}: {comparison}");
}

fn assert_rows_sum_to_one(tensor: &Tensor2d) {
    for row in 0..tensor.rows() {
        let row_sum: f32 = tensor.row(row).iter().sum();
        assert!((row_sum - 1.0).abs() <= 1e-5, "row {row} sums to {row_sum}");
    }
}

/// How far two sums of the same values in different orders may drift apart: each is
/// within `(length − 1) · ε · Σ|value|` of the exact sum, so they are within twice that
/// of each other.
fn sum_tolerance(values: &[f32]) -> f32 {
    let magnitude: f32 = values.iter().map(|value| value.abs()).sum();
    2.0 * values.len() as f32 * f32::EPSILON * magnitude
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    #[test]
    fn linear_variants_agree_with_naive(
        rows in 1usize..=40,
        inner_size in 1usize..=40,
        outputs in 1usize..=40,
        seed in any::<u64>(),
    ) {
        let (input, weights, bias) = linear_operands(rows, inner_size, outputs, seed);
        let expected = linear_naive(&input, &weights, &bias).unwrap();

        let local = linear_local_accumulator(&input, &weights, &bias).unwrap();
        assert_close(&local, &expected, LINEAR_TOLERANCE, "linear_local_accumulator");
        let loop_order = linear_loop_order(&input, &weights, &bias).unwrap();
        assert_close(&loop_order, &expected, LINEAR_TOLERANCE, "linear_loop_order");
        let transposed =
            linear_transposed_weights(&input, &weights.transposed(), &bias).unwrap();
        assert_close(&transposed, &expected, LINEAR_TOLERANCE, "linear_transposed_weights");
        let blocked = linear_blocked(&input, &weights, &bias).unwrap();
        assert_close(&blocked, &expected, LINEAR_TOLERANCE, "linear_blocked");
        let mut preallocated = Tensor2d::filled(rows, outputs, f32::NAN);
        linear_into(&input, &weights, &bias, &mut preallocated).unwrap();
        assert_close(&preallocated, &expected, LINEAR_TOLERANCE, "linear_into");
    }

    #[test]
    fn fused_operators_agree_with_the_unfused_chain(
        rows in 1usize..=40,
        inner_size in 1usize..=40,
        outputs in 1usize..=40,
        seed in any::<u64>(),
    ) {
        let (input, weights, bias) = linear_operands(rows, inner_size, outputs, seed);
        let linear_then_relu = relu(&linear_naive(&input, &weights, &bias).unwrap());
        let fused_relu = linear_relu_fused(&input, &weights, &bias).unwrap();
        assert_close(&fused_relu, &linear_then_relu, LINEAR_TOLERANCE, "linear_relu_fused");

        let unfused_softmax = softmax(&linear_then_relu).unwrap();
        let fused_softmax = linear_relu_softmax_fused(&input, &weights, &bias).unwrap();
        assert_close(
            &fused_softmax,
            &unfused_softmax,
            LINEAR_TOLERANCE,
            "linear_relu_softmax_fused",
        );
        assert_rows_sum_to_one(&fused_softmax);
    }

    #[test]
    fn relu_variants_agree_exactly(
        rows in 1usize..=40,
        columns in 1usize..=40,
        seed in any::<u64>(),
    ) {
        let input = Tensor2d::random(rows, columns, -1.0..=1.0, seed);
        let allocated = relu(&input);
        prop_assert!(allocated.as_slice().iter().all(|&value| value >= 0.0));

        let mut preallocated = Tensor2d::filled(rows, columns, f32::NAN);
        relu_into(&input, &mut preallocated).unwrap();
        assert_close(&preallocated, &allocated, Tolerance::EXACT, "relu_into");
        let mut in_place = input.clone();
        relu_in_place(&mut in_place);
        assert_close(&in_place, &allocated, Tolerance::EXACT, "relu_in_place");
    }

    #[test]
    fn softmax_variants_agree_and_rows_sum_to_one(
        rows in 1usize..=40,
        columns in 1usize..=40,
        seed in any::<u64>(),
    ) {
        // A wider range than −1..1, so that the shift by the row maximum matters.
        let input = Tensor2d::random(rows, columns, -30.0..=30.0, seed);
        let allocated = softmax(&input).unwrap();
        let mut in_place = input.clone();
        softmax_in_place(&mut in_place).unwrap();
        assert_close(&in_place, &allocated, SOFTMAX_TOLERANCE, "softmax_in_place");
        assert_rows_sum_to_one(&allocated);
    }

    #[test]
    fn sum_variants_agree_within_rounding(
        values in prop::collection::vec(-1.0f32..1.0, 0..2000),
    ) {
        let single = sum_single_accumulator(&values);
        let several = sum_several_accumulators(&values);
        prop_assert!(
            (single - several).abs() <= sum_tolerance(&values),
            "single {single}, several {several}, tolerance {}",
            sum_tolerance(&values)
        );
    }

    #[test]
    fn max_variants_agree_exactly(
        values in prop::collection::vec(-1.0f32..1.0, 0..2000),
    ) {
        let single = max_single_accumulator(&values);
        prop_assert_eq!(single, max_several_accumulators(&values));
        prop_assert_eq!(single.is_none(), values.is_empty());
    }
}
