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
/// The variants may add the same products in a different order (they do not today, so
/// they agree to the last bit, but a SIMD or GPU version will), and every `f32` addition
/// rounds by up to `ε/2 ≈ 6·10⁻⁸` of the running sum. In the worst case the errors of a
/// dot product add up to `(inner − 1) · ε/2 · Σ|term|`, relative to the sum of the
/// magnitudes of the terms, not to the result: with 40 products in −1..1 plus a bias,
/// two orders could differ by up to about `2·10⁻⁴`. Rounding errors usually have mixed
/// signs, though, and grow like `√inner · ε/2` times the running sum (about 2 here):
/// about `10⁻⁶`. The tolerance covers that typical error ten times over, not the worst
/// case; a real bug (a term dropped or added twice) moves a result by about 0.25, far
/// outside either. The absolute part covers sums that cancel to nearly zero, where a
/// relative error means nothing.
const LINEAR_TOLERANCE: Tolerance = Tolerance::new(1e-5, 1e-5);

/// How close the fast linear variants must be to [`linear_naive`] for an inner dimension
/// of `inner_size`.
///
/// They add the products in another order (one inner block at a time, and in the
/// micro-kernel's order within a block) and with fused multiply-adds, so both results
/// carry rounding errors, and different ones. Each addition rounds by at most `ε/2` of
/// the running sum; with terms in −1..1 the running sum of `n` terms is typically about
/// `√(n/9)` in size, and the rounding errors of `n` additions add up like a random walk,
/// to around `n · ε / 3`. The absolute part allows `4 · n · ε`, twelve times that: still
/// `1.4·10⁻⁴` at 300 terms, far below the size of a single term the kernel might drop or
/// add twice (about 0.25 on average).
fn fast_linear_tolerance(inner_size: usize) -> Tolerance {
    Tolerance::new(1e-5, 4.0 * inner_size as f32 * f32::EPSILON + 1e-6)
}

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

    /// The register-blocked and parallel kernels on shapes that cross their blocks: up
    /// to 300 inner values (more than one inner block of 256), up to 64 rows (several
    /// tiles, most of them partial) and columns (several panels). The largest cases are
    /// above the threshold at which `linear_parallel` shares the rows between threads.
    #[test]
    fn fast_linear_variants_agree_with_naive(
        rows in 1usize..=64,
        inner_size in 1usize..=300,
        outputs in 1usize..=64,
        seed in any::<u64>(),
    ) {
        let (input, weights, bias) = linear_operands(rows, inner_size, outputs, seed);
        let expected = linear_naive(&input, &weights, &bias).unwrap();
        let tolerance = fast_linear_tolerance(inner_size);

        // The `_into` forms must overwrite every element of a poisoned output. (The
        // allocating forms only wrap them.)
        let mut output = Tensor2d::filled(rows, outputs, f32::NAN);
        linear_register_blocked_into(&input, &weights, &bias, &mut output).unwrap();
        assert_close(&output, &expected, tolerance, "linear_register_blocked_into");
        let mut output = Tensor2d::filled(rows, outputs, f32::NAN);
        linear_parallel_into(&input, &weights, &bias, &mut output).unwrap();
        assert_close(&output, &expected, tolerance, "linear_parallel_into");
    }

    /// A NaN anywhere in the input poisons its whole output row and nothing else; a NaN
    /// in the weights poisons its whole output column and nothing else. A kernel that
    /// lost it (by skipping a term) or spread it (by mixing up rows or columns of a tile)
    /// fails here.
    #[test]
    fn nan_propagates_to_exactly_the_outputs_that_depend_on_it(
        rows in 1usize..=40,
        inner_size in 1usize..=300,
        outputs in 1usize..=40,
        in_weights in any::<bool>(),
        position in any::<(usize, usize)>(),
        seed in any::<u64>(),
    ) {
        let (mut input, mut weights, bias) = linear_operands(rows, inner_size, outputs, seed);
        let inner = position.0 % inner_size;
        let (poisoned_row, poisoned_column) = if in_weights {
            let column = position.1 % outputs;
            weights.set(inner, column, f32::NAN);
            (None, Some(column))
        } else {
            let row = position.1 % rows;
            input.set(row, inner, f32::NAN);
            (Some(row), None)
        };
        let expected_linear = linear_naive(&input, &weights, &bias).unwrap();
        let expected_relu = relu(&expected_linear);
        let results = [
            (
                "linear_register_blocked",
                linear_register_blocked(&input, &weights, &bias).unwrap(),
                &expected_linear,
            ),
            (
                "linear_parallel",
                linear_parallel(&input, &weights, &bias).unwrap(),
                &expected_linear,
            ),
            (
                "linear_relu_fused",
                linear_relu_fused(&input, &weights, &bias).unwrap(),
                &expected_relu,
            ),
        ];
        for (name, mut result, expected) in results {
            // NaN exactly where it belongs; there, both sides are then set to zero so
            // that the comparison below checks every other element's value.
            let mut expected = expected.clone();
            for row in 0..rows {
                for column in 0..outputs {
                    let value = result.get(row, column);
                    let poisoned = poisoned_row == Some(row) || poisoned_column == Some(column);
                    prop_assert_eq!(
                        value.is_nan(),
                        poisoned,
                        "{} at ({}, {}) is {}",
                        name,
                        row,
                        column,
                        value
                    );
                    if poisoned {
                        result.set(row, column, 0.0);
                        expected.set(row, column, 0.0);
                    }
                }
            }
            assert_close(&result, &expected, fast_linear_tolerance(inner_size), name);
        }
    }

    /// Shapes that do not fit are errors, never panics, and the same errors as the shape
    /// check gives (or, for a wrong output, the error that names the output).
    #[test]
    fn fast_linear_variants_reject_mismatched_shapes(
        rows in 0usize..=6,
        inner_size in 0usize..=6,
        weight_rows in 0usize..=6,
        outputs in 0usize..=6,
        bias_shape in (0usize..=2, 0usize..=7),
        output_shape in (0usize..=7, 0usize..=7),
    ) {
        let input = Tensor2d::zeros(rows, inner_size);
        let weights = Tensor2d::zeros(weight_rows, outputs);
        let bias = Tensor2d::zeros(bias_shape.0, bias_shape.1);
        let mut output = Tensor2d::zeros(output_shape.0, output_shape.1);
        match check_linear_shapes(&input, &weights, &bias) {
            Err(error) => {
                prop_assert_eq!(
                    linear_register_blocked(&input, &weights, &bias),
                    Err(error.clone())
                );
                prop_assert_eq!(linear_parallel(&input, &weights, &bias), Err(error.clone()));
                prop_assert_eq!(
                    linear_parallel_into(&input, &weights, &bias, &mut output),
                    Err(error.clone())
                );
                prop_assert_eq!(
                    linear_register_blocked_into(&input, &weights, &bias, &mut output),
                    Err(error)
                );
            }
            Ok(shape) if shape != output.shape() => {
                let is_output_error = |result: Result<(), crate::tensor::ShapeError>| {
                    matches!(
                        result,
                        Err(crate::tensor::ShapeError::Incompatible { right_name: "output", .. })
                    )
                };
                prop_assert!(is_output_error(linear_register_blocked_into(
                    &input, &weights, &bias, &mut output
                )));
                prop_assert!(is_output_error(linear_parallel_into(
                    &input, &weights, &bias, &mut output
                )));
                prop_assert!(is_output_error(linear_relu_into(
                    &input, &weights, &bias, &mut output
                )));
            }
            Ok(_) => {
                // Shapes that fit, possibly empty: the bias alone (or nothing) comes out.
                let expected = linear_naive(&input, &weights, &bias).unwrap();
                linear_parallel_into(&input, &weights, &bias, &mut output).unwrap();
                prop_assert_eq!(&output, &expected);
                prop_assert_eq!(
                    linear_register_blocked(&input, &weights, &bias).unwrap(),
                    expected
                );
            }
        }
    }

    #[test]
    fn fused_operators_agree_with_the_unfused_chain(
        rows in 1usize..=64,
        inner_size in 1usize..=300,
        outputs in 1usize..=64,
        seed in any::<u64>(),
    ) {
        let (input, weights, bias) = linear_operands(rows, inner_size, outputs, seed);
        let linear_then_relu = relu(&linear_naive(&input, &weights, &bias).unwrap());
        let fused_relu = linear_relu_fused(&input, &weights, &bias).unwrap();
        let tolerance = fast_linear_tolerance(inner_size);
        assert_close(&fused_relu, &linear_then_relu, tolerance, "linear_relu_fused");

        let unfused_softmax = softmax(&linear_then_relu).unwrap();
        let fused_softmax = linear_relu_softmax_fused(&input, &weights, &bias).unwrap();
        assert_close(&fused_softmax, &unfused_softmax, tolerance, "linear_relu_softmax_fused");
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
