//! The linear layer, `linear(x) = x · W + b`, in the variants the memory-hierarchy chapter
//! compares.
//!
//! Shapes: the input `x` is `rows × inner`, the weights `W` are `inner × outputs`, and the
//! bias `b` is one row, `1 × outputs`, added to every row of the product. The result is
//! `rows × outputs`.
//!
//! Every variant does the same `rows · inner · outputs` multiply-adds; they differ only in
//! the order in which they touch memory. Tensors are row-major, so walking along a row is
//! a walk through consecutive addresses, while walking down a column jumps `columns`
//! floats at a time. The variants below go from the textbook loop to one that streams
//! through contiguous memory and stays inside the caches.

use crate::tensor::{ShapeError, Tensor2d, check_output_shape, linear_output_shape};

// ANCHOR: check_linear_shapes
/// Checks that `input · weights + bias` is defined and returns the output shape
/// `(rows, outputs)`.
///
/// Two rules: the weights need one row per input column (`inner` must match), and the
/// bias must be a single row with one value per output column.
pub fn check_linear_shapes(
    input: &Tensor2d,
    weights: &Tensor2d,
    bias: &Tensor2d,
) -> Result<(usize, usize), ShapeError> {
    linear_output_shape(input.shape(), weights.shape(), bias.shape())
}
// ANCHOR_END: check_linear_shapes

// ANCHOR: linear_naive
/// The textbook triple loop: for every output element, walk the inner dimension and add
/// each product straight into the output element in memory.
///
/// Two costs hide here. The innermost loop walks *down a column* of the weights, one
/// row (`outputs` floats) apart, so nearly every weight read touches a different cache
/// line. And the running sum lives in `output`, so the loop is written as a load and a
/// store per step. The optimiser may move the store out of the loop only if it can prove
/// that no input value it reads lives at the same address. It cannot: the promise that
/// comes with `&Tensor2d` covers the struct, not the heap block its vector points to, so
/// the compiler must assume that `output` might overlap an input. It keeps the running
/// sum in a register but still stores it in every step.
pub fn linear_naive(
    input: &Tensor2d,
    weights: &Tensor2d,
    bias: &Tensor2d,
) -> Result<Tensor2d, ShapeError> {
    let (rows, outputs) = check_linear_shapes(input, weights, bias)?;
    let inner_size = input.columns();
    let mut output = Tensor2d::zeros(rows, outputs);
    let (input_values, weight_values) = (input.as_slice(), weights.as_slice());
    let bias_values = bias.as_slice();
    let output_values = output.as_mut_slice();
    for row in 0..rows {
        for column in 0..outputs {
            let output_index = row * outputs + column;
            output_values[output_index] = bias_values[column];
            for inner in 0..inner_size {
                let input_value = input_values[row * inner_size + inner];
                let weight = weight_values[inner * outputs + column];
                output_values[output_index] += input_value * weight;
            }
        }
    }
    Ok(output)
}
// ANCHOR_END: linear_naive

// ANCHOR: linear_local_accumulator
/// The same loop order as [`linear_naive`], but the running sum lives in a local variable,
/// which the compiler keeps in a register, and is written to memory once per element.
///
/// This removes the load and store per step; the strided walk down a weight column
/// remains, so this variant still waits on memory once the weights outgrow the cache.
pub fn linear_local_accumulator(
    input: &Tensor2d,
    weights: &Tensor2d,
    bias: &Tensor2d,
) -> Result<Tensor2d, ShapeError> {
    let (rows, outputs) = check_linear_shapes(input, weights, bias)?;
    let inner_size = input.columns();
    let mut output = Tensor2d::zeros(rows, outputs);
    let (input_values, weight_values) = (input.as_slice(), weights.as_slice());
    let bias_values = bias.as_slice();
    let output_values = output.as_mut_slice();
    for row in 0..rows {
        for column in 0..outputs {
            let mut accumulator = bias_values[column];
            for inner in 0..inner_size {
                let input_value = input_values[row * inner_size + inner];
                let weight = weight_values[inner * outputs + column];
                accumulator += input_value * weight;
            }
            output_values[row * outputs + column] = accumulator;
        }
    }
    Ok(output)
}
// ANCHOR_END: linear_local_accumulator

// ANCHOR: linear_loop_order
// ANCHOR: linear_row_into
/// One output row of the linear layer in row, inner, column order: start from the bias,
/// then add each input value times one whole, contiguous row of the weights.
///
/// The innermost loop streams through `weights.row(inner)` and `output_row` side by side,
/// both contiguous, so every cache line fetched is used completely and the compiler can
/// turn the loop into SIMD instructions. `output_row` is the accumulator: it is only
/// `outputs` floats, small enough to stay in the L1 cache for the whole row.
pub(crate) fn linear_row_into(
    input_row: &[f32],
    weights: &Tensor2d,
    bias_row: &[f32],
    output_row: &mut [f32],
) {
    output_row.copy_from_slice(bias_row);
    for (inner, &input_value) in input_row.iter().enumerate() {
        for (output_value, &weight) in output_row.iter_mut().zip(weights.row(inner)) {
            *output_value += input_value * weight;
        }
    }
}
// ANCHOR_END: linear_row_into

// ANCHOR: linear_rows_into
/// The linear layer row by row into `output`, handing each output row to `finish_row` as
/// soon as its sums are complete, while the row is still in the L1 cache. Plain
/// [`linear_into`] finishes nothing. This is the simplest form of fusion; the fused
/// operators in [`crate::cpu::fused`] do the same a block of rows at a time with the
/// fast kernel (`linear_parallel_rows_into` in the module
/// [`linear_parallel`](mod@crate::cpu::linear_parallel)).
pub(crate) fn linear_rows_into(
    operation: &'static str,
    input: &Tensor2d,
    weights: &Tensor2d,
    bias: &Tensor2d,
    output: &mut Tensor2d,
    mut finish_row: impl FnMut(&mut [f32]),
) -> Result<(), ShapeError> {
    let (rows, outputs) = check_linear_shapes(input, weights, bias)?;
    check_output_shape(operation, (rows, outputs), output.shape())?;
    for row in 0..rows {
        let output_row = output.row_mut(row);
        linear_row_into(input.row(row), weights, bias.as_slice(), output_row);
        finish_row(output_row);
    }
    Ok(())
}
// ANCHOR_END: linear_rows_into

// ANCHOR: linear_into
/// The linear layer written into a tensor the caller already owns, so that a loop calling
/// it again and again allocates nothing. Uses the row, inner, column loop order.
///
/// The output must already have the result's shape, `rows × outputs`.
pub fn linear_into(
    input: &Tensor2d,
    weights: &Tensor2d,
    bias: &Tensor2d,
    output: &mut Tensor2d,
) -> Result<(), ShapeError> {
    linear_rows_into("linear_into", input, weights, bias, output, |_| {})
}
// ANCHOR_END: linear_into

/// The loop-order variant as an allocating function: the row, inner, column order of
/// [`linear_into`], into a fresh tensor.
pub fn linear_loop_order(
    input: &Tensor2d,
    weights: &Tensor2d,
    bias: &Tensor2d,
) -> Result<Tensor2d, ShapeError> {
    let (rows, outputs) = check_linear_shapes(input, weights, bias)?;
    let mut output = Tensor2d::zeros(rows, outputs);
    linear_into(input, weights, bias, &mut output)?;
    Ok(output)
}
// ANCHOR_END: linear_loop_order

// ANCHOR: linear_transposed_weights
/// The row, column, inner order of [`linear_local_accumulator`], with weights that were
/// transposed beforehand: `transposed_weights` is `outputs × inner`, so one column of `W`
/// is one contiguous row of `Wᵀ`, and each output element is the dot product of two
/// contiguous rows.
///
/// The caller transposes once, up front (`weights.transposed()`), and reuses the result
/// for every call: weights are fixed during inference, so the transpose costs nothing per
/// call. The single accumulator is a chain of dependent additions that the compiler may
/// not reorder into SIMD lanes (that would change the rounding), which is why this
/// variant, although it reads memory in order, can still trail [`linear_loop_order`].
pub fn linear_transposed_weights(
    input: &Tensor2d,
    transposed_weights: &Tensor2d,
    bias: &Tensor2d,
) -> Result<Tensor2d, ShapeError> {
    let (rows, outputs) = check_transposed_linear_shapes(input, transposed_weights, bias)?;
    let mut output = Tensor2d::zeros(rows, outputs);
    let bias_values = bias.as_slice();
    for row in 0..rows {
        let input_row = input.row(row);
        let output_row = output.row_mut(row);
        for (column, output_value) in output_row.iter_mut().enumerate() {
            let mut accumulator = bias_values[column];
            for (&input_value, &weight) in input_row.iter().zip(transposed_weights.row(column)) {
                accumulator += input_value * weight;
            }
            *output_value = accumulator;
        }
    }
    Ok(output)
}

/// [`check_linear_shapes`] for weights stored transposed, `outputs × inner`.
fn check_transposed_linear_shapes(
    input: &Tensor2d,
    transposed_weights: &Tensor2d,
    bias: &Tensor2d,
) -> Result<(usize, usize), ShapeError> {
    if transposed_weights.columns() != input.columns() {
        return Err(ShapeError::Incompatible {
            operation: "linear_transposed_weights",
            expectation: "the transposed weights need one column per input column (outputs×inner)",
            left_name: "input",
            left: input.shape(),
            right_name: "transposed weights",
            right: transposed_weights.shape(),
        });
    }
    if bias.shape() != (1, transposed_weights.rows()) {
        return Err(ShapeError::Incompatible {
            operation: "linear_transposed_weights",
            expectation: "the bias must be one row with one value per output (1×outputs)",
            left_name: "transposed weights",
            left: transposed_weights.shape(),
            right_name: "bias",
            right: bias.shape(),
        });
    }
    Ok((input.rows(), transposed_weights.rows()))
}
// ANCHOR_END: linear_transposed_weights

// ANCHOR: linear_blocked
/// The edge length of one tile, in elements. A `BLOCK × BLOCK` tile of `f32` is 16 KiB,
/// so the three tiles in use at once (input, weights, output) take 48 KiB: about the
/// size of a modern L1 data cache (32–48 KiB) and well inside any L2 (256 KiB and up).
const BLOCK: usize = 64;

/// Cache blocking: the output is computed one `BLOCK × BLOCK` tile at a time, and each
/// tile sums over the inner dimension one tile at a time, in row, inner, column order
/// within the tiles.
///
/// While one output tile is being summed, it stays in cache, and each input tile and
/// weight tile is reused `BLOCK` times before it is evicted. For matrices that fit in
/// the caches anyway, this only adds loop overhead; it pays off when they do not.
pub fn linear_blocked(
    input: &Tensor2d,
    weights: &Tensor2d,
    bias: &Tensor2d,
) -> Result<Tensor2d, ShapeError> {
    let (rows, outputs) = check_linear_shapes(input, weights, bias)?;
    let inner_size = input.columns();
    let mut output = Tensor2d::zeros(rows, outputs);
    for row in 0..rows {
        output.row_mut(row).copy_from_slice(bias.as_slice());
    }
    for row_start in (0..rows).step_by(BLOCK) {
        let row_end = (row_start + BLOCK).min(rows);
        for column_start in (0..outputs).step_by(BLOCK) {
            let column_end = (column_start + BLOCK).min(outputs);
            // Inner tiles in increasing order, so every element is still summed in the
            // same order as in the other variants.
            for inner_start in (0..inner_size).step_by(BLOCK) {
                let inner_end = (inner_start + BLOCK).min(inner_size);
                for row in row_start..row_end {
                    let input_tile_row = &input.row(row)[inner_start..inner_end];
                    let output_tile_row = &mut output.row_mut(row)[column_start..column_end];
                    for (inner, &input_value) in (inner_start..inner_end).zip(input_tile_row) {
                        let weight_tile_row = &weights.row(inner)[column_start..column_end];
                        for (output_value, &weight) in
                            output_tile_row.iter_mut().zip(weight_tile_row)
                        {
                            *output_value += input_value * weight;
                        }
                    }
                }
            }
        }
    }
    Ok(output)
}
// ANCHOR_END: linear_blocked

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::Tolerance;

    type LinearVariant = fn(&Tensor2d, &Tensor2d, &Tensor2d) -> Result<Tensor2d, ShapeError>;

    /// Every allocating variant that takes the weights as they are (`inner × outputs`).
    const VARIANTS: [(&str, LinearVariant); 4] = [
        ("linear_naive", linear_naive),
        ("linear_local_accumulator", linear_local_accumulator),
        ("linear_loop_order", linear_loop_order),
        ("linear_blocked", linear_blocked),
    ];

    /// A 2×3 input, 3×2 weights and a 1×2 bias, small enough to multiply by hand.
    fn small_example() -> (Tensor2d, Tensor2d, Tensor2d) {
        let input = Tensor2d::from_vec(2, 3, vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
        let weights = Tensor2d::from_vec(3, 2, vec![1.0, -1.0, 0.5, 0.0, -2.0, 1.0]).unwrap();
        let bias = Tensor2d::from_vec(1, 2, vec![10.0, 20.0]).unwrap();
        (input, weights, bias)
    }

    /// By hand:
    /// row 0: 1·1 + 2·0.5 + 3·(−2) + 10 = 6,   1·(−1) + 2·0 + 3·1 + 20 = 22
    /// row 1: 4·1 + 5·0.5 + 6·(−2) + 10 = 4.5, 4·(−1) + 5·0 + 6·1 + 20 = 22
    fn small_example_result() -> Tensor2d {
        Tensor2d::from_vec(2, 2, vec![6.0, 22.0, 4.5, 22.0]).unwrap()
    }

    /// Every variant, including the transposed one and `linear_into`, on the same inputs.
    fn all_results(
        input: &Tensor2d,
        weights: &Tensor2d,
        bias: &Tensor2d,
    ) -> Vec<(&'static str, Tensor2d)> {
        let mut results: Vec<(&'static str, Tensor2d)> = VARIANTS
            .iter()
            .map(|(name, variant)| (*name, variant(input, weights, bias).unwrap()))
            .collect();
        let transposed = weights.transposed();
        results.push((
            "linear_transposed_weights",
            linear_transposed_weights(input, &transposed, bias).unwrap(),
        ));
        let mut output = Tensor2d::filled(input.rows(), weights.columns(), f32::NAN);
        linear_into(input, weights, bias, &mut output).unwrap();
        results.push(("linear_into", output));
        results
    }

    #[test]
    fn every_variant_matches_the_hand_computed_example() {
        let (input, weights, bias) = small_example();
        for (name, result) in all_results(&input, &weights, &bias) {
            assert_eq!(result, small_example_result(), "{name}");
        }
    }

    #[test]
    fn blocked_handles_shapes_that_are_not_multiples_of_the_block() {
        let (rows, inner_size, outputs) = (BLOCK + 3, 2 * BLOCK + 1, BLOCK - 5);
        let input = Tensor2d::random(rows, inner_size, -1.0..=1.0, 1);
        let weights = Tensor2d::random(inner_size, outputs, -1.0..=1.0, 2);
        let bias = Tensor2d::random(1, outputs, -1.0..=1.0, 3);
        let expected = linear_naive(&input, &weights, &bias).unwrap();
        let blocked = linear_blocked(&input, &weights, &bias).unwrap();
        let comparison = blocked
            .compare(&expected, Tolerance::new(1e-5, 1e-5))
            .unwrap();
        assert!(comparison.passed(), "{comparison}");
    }

    #[test]
    fn check_linear_shapes_returns_the_output_shape() {
        let (input, weights, bias) = small_example();
        assert_eq!(check_linear_shapes(&input, &weights, &bias), Ok((2, 2)));
    }

    #[test]
    fn a_wrong_inner_dimension_is_an_error() {
        let (input, _, bias) = small_example();
        let weights = Tensor2d::zeros(4, 2);
        for (name, variant) in VARIANTS {
            assert!(
                matches!(
                    variant(&input, &weights, &bias),
                    Err(ShapeError::Incompatible {
                        left_name: "input",
                        right_name: "weights",
                        ..
                    })
                ),
                "{name}"
            );
        }
        let transposed = Tensor2d::zeros(2, 4);
        assert!(matches!(
            linear_transposed_weights(&input, &transposed, &bias),
            Err(ShapeError::Incompatible {
                left_name: "input",
                ..
            })
        ));
    }

    #[test]
    fn a_bias_with_more_than_one_row_is_an_error() {
        let (input, weights, _) = small_example();
        let bias = Tensor2d::zeros(2, 2);
        for (name, variant) in VARIANTS {
            assert!(
                matches!(
                    variant(&input, &weights, &bias),
                    Err(ShapeError::Incompatible {
                        right_name: "bias",
                        right: (2, 2),
                        ..
                    })
                ),
                "{name}"
            );
        }
        let transposed = weights.transposed();
        assert!(matches!(
            linear_transposed_weights(&input, &transposed, &bias),
            Err(ShapeError::Incompatible {
                right_name: "bias",
                ..
            })
        ));
    }

    #[test]
    fn a_bias_of_the_wrong_width_is_an_error() {
        let (input, weights, _) = small_example();
        let bias = Tensor2d::zeros(1, 3);
        for (name, variant) in VARIANTS {
            assert!(
                matches!(
                    variant(&input, &weights, &bias),
                    Err(ShapeError::Incompatible {
                        right_name: "bias",
                        right: (1, 3),
                        ..
                    })
                ),
                "{name}"
            );
        }
        let transposed = weights.transposed();
        assert!(matches!(
            linear_transposed_weights(&input, &transposed, &bias),
            Err(ShapeError::Incompatible {
                right_name: "bias",
                ..
            })
        ));
    }

    #[test]
    fn an_output_of_the_wrong_shape_is_an_error() {
        let (input, weights, bias) = small_example();
        let mut output = Tensor2d::zeros(2, 3);
        assert_eq!(
            linear_into(&input, &weights, &bias, &mut output),
            Err(ShapeError::Incompatible {
                operation: "linear_into",
                expectation: "the output must have the shape the operation produces",
                left_name: "expected output",
                left: (2, 2),
                right_name: "output",
                right: (2, 3),
            })
        );
    }

    #[test]
    fn zero_rows_give_an_empty_output() {
        let input = Tensor2d::zeros(0, 3);
        let (_, weights, bias) = small_example();
        for (name, result) in all_results(&input, &weights, &bias) {
            assert_eq!(result.shape(), (0, 2), "{name}");
        }
    }

    #[test]
    fn an_empty_inner_dimension_leaves_only_the_bias() {
        // A sum over nothing is zero, so every output row is the bias.
        let input = Tensor2d::zeros(2, 0);
        let weights = Tensor2d::zeros(0, 2);
        let bias = Tensor2d::from_vec(1, 2, vec![1.5, -2.5]).unwrap();
        let expected = Tensor2d::from_vec(2, 2, vec![1.5, -2.5, 1.5, -2.5]).unwrap();
        for (name, result) in all_results(&input, &weights, &bias) {
            assert_eq!(result, expected, "{name}");
        }
    }

    #[test]
    fn zero_outputs_give_rows_with_no_columns() {
        let (input, _, _) = small_example();
        let weights = Tensor2d::zeros(3, 0);
        let bias = Tensor2d::zeros(1, 0);
        for (name, result) in all_results(&input, &weights, &bias) {
            assert_eq!(result.shape(), (2, 0), "{name}");
        }
    }
}
