//! Operator fusion on the CPU: finishing each output row completely while it is still in
//! the L1 cache, instead of running one operator over the whole tensor, then the next.
//!
//! Unfused, `relu(linear(x))` writes the whole linear output to memory and then reads it
//! all back for ReLU; a softmax after it reads and writes it once more. Fused, each row
//! is computed, clamped and normalised while it is still in cache, and written to memory
//! once. The arithmetic is the same; only the memory traffic shrinks. This is the idea a
//! graph compiler automates, later in the book.
//!
//! The linear part is the fast one, [`crate::cpu::linear_parallel()`]: it computes a block
//! of rows at a time (at most `ROW_BLOCK` rows, on whichever thread owns them), and
//! the finishing step runs over each row of the block as soon as the block is done,
//! before the thread moves on and the block leaves its core's cache.

use crate::cpu::linear::check_linear_shapes;
use crate::cpu::linear_parallel::linear_parallel_rows_into;
use crate::cpu::relu::relu_values_in_place;
use crate::cpu::softmax::softmax_row_in_place;
use crate::tensor::{ShapeError, Tensor2d};

// ANCHOR: linear_relu_fused
/// `relu(input · weights + bias)` in one pass over the output.
///
/// ReLU is applied to each block of output rows as soon as its sums are complete, before
/// the thread moves on to the next block and this one leaves the cache.
pub fn linear_relu_fused(
    input: &Tensor2d,
    weights: &Tensor2d,
    bias: &Tensor2d,
) -> Result<Tensor2d, ShapeError> {
    let (rows, outputs) = check_linear_shapes(input, weights, bias)?;
    let mut output = Tensor2d::zeros(rows, outputs);
    linear_relu_into(input, weights, bias, &mut output)?;
    Ok(output)
}

/// [`linear_relu_fused`] into a preallocated output of shape `rows × outputs`.
pub fn linear_relu_into(
    input: &Tensor2d,
    weights: &Tensor2d,
    bias: &Tensor2d,
    output: &mut Tensor2d,
) -> Result<(), ShapeError> {
    linear_parallel_rows_into(
        "linear_relu_into",
        input,
        weights,
        bias,
        output,
        relu_values_in_place,
    )
}
// ANCHOR_END: linear_relu_fused

// ANCHOR: linear_relu_softmax_fused
/// `softmax(relu(input · weights + bias))`, a block of rows at a time: the linear layer
/// fills a block of output rows, and ReLU and softmax finish each row of it while the
/// block is still in cache.
///
/// Softmax needs the whole row (its maximum and its sum) before it can write anything,
/// which is why the fusion works a row at a time rather than an element at a time. As
/// for [`crate::cpu::softmax()`], zero outputs (rows with no columns) give an empty output.
pub fn linear_relu_softmax_fused(
    input: &Tensor2d,
    weights: &Tensor2d,
    bias: &Tensor2d,
) -> Result<Tensor2d, ShapeError> {
    let (rows, outputs) = check_linear_shapes(input, weights, bias)?;
    let mut output = Tensor2d::zeros(rows, outputs);
    linear_relu_softmax_into(input, weights, bias, &mut output)?;
    Ok(output)
}

/// [`linear_relu_softmax_fused`] into a preallocated output of shape `rows × outputs`.
pub fn linear_relu_softmax_into(
    input: &Tensor2d,
    weights: &Tensor2d,
    bias: &Tensor2d,
    output: &mut Tensor2d,
) -> Result<(), ShapeError> {
    check_linear_shapes(input, weights, bias)?;
    linear_parallel_rows_into(
        "linear_relu_softmax_into",
        input,
        weights,
        bias,
        output,
        |row| {
            relu_values_in_place(row);
            softmax_row_in_place(row);
        },
    )
}
// ANCHOR_END: linear_relu_softmax_fused

#[cfg(test)]
mod tests {
    use super::*;

    /// The 2×3 · 3×2 example of the linear tests, with another bias. By hand, `x · W` is
    /// `[[−4, 2], [−5.5, 2]]`; adding the bias `[5, −2]` gives `[[1, 0], [−0.5, 0]]`, so
    /// ReLU has a negative value to clamp.
    fn small_example() -> (Tensor2d, Tensor2d, Tensor2d) {
        let input = Tensor2d::from_vec(2, 3, vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
        let weights = Tensor2d::from_vec(3, 2, vec![1.0, -1.0, 0.5, 0.0, -2.0, 1.0]).unwrap();
        let bias = Tensor2d::from_vec(1, 2, vec![5.0, -2.0]).unwrap();
        (input, weights, bias)
    }

    #[test]
    fn linear_relu_fused_clamps_the_negative_sums() {
        let (input, weights, bias) = small_example();
        let expected = Tensor2d::from_vec(2, 2, vec![1.0, 0.0, 0.0, 0.0]).unwrap();
        assert_eq!(
            linear_relu_fused(&input, &weights, &bias).unwrap(),
            expected
        );
    }

    #[test]
    fn linear_relu_softmax_fused_normalises_each_row() {
        let (input, weights, bias) = small_example();
        let result = linear_relu_softmax_fused(&input, &weights, &bias).unwrap();
        // Row 0 is softmax([1, 0]) = [e / (e + 1), 1 / (e + 1)].
        let e = std::f32::consts::E;
        assert!((result.get(0, 0) - e / (e + 1.0)).abs() < 1e-6);
        assert!((result.get(0, 1) - 1.0 / (e + 1.0)).abs() < 1e-6);
        // Row 1 is softmax([0, 0]) = [0.5, 0.5], exactly.
        assert_eq!(result.row(1), &[0.5, 0.5]);
    }

    #[test]
    fn shape_errors_come_from_the_linear_check() {
        let (input, weights, _) = small_example();
        let wide_bias = Tensor2d::zeros(1, 3);
        let expected = check_linear_shapes(&input, &weights, &wide_bias).unwrap_err();
        assert_eq!(
            linear_relu_fused(&input, &weights, &wide_bias),
            Err(expected.clone())
        );
        assert_eq!(
            linear_relu_softmax_fused(&input, &weights, &wide_bias),
            Err(expected)
        );
    }

    #[test]
    fn zero_outputs_give_an_empty_output() {
        let (input, _, _) = small_example();
        let weights = Tensor2d::zeros(3, 0);
        let bias = Tensor2d::zeros(1, 0);
        assert_eq!(
            linear_relu_fused(&input, &weights, &bias).unwrap().shape(),
            (2, 0)
        );
        assert_eq!(
            linear_relu_softmax_fused(&input, &weights, &bias)
                .unwrap()
                .shape(),
            (2, 0)
        );
    }

    #[test]
    fn zero_rows_give_an_empty_output() {
        let (_, weights, bias) = small_example();
        let input = Tensor2d::zeros(0, 3);
        assert_eq!(
            linear_relu_fused(&input, &weights, &bias).unwrap().shape(),
            (0, 2)
        );
        assert_eq!(
            linear_relu_softmax_fused(&input, &weights, &bias)
                .unwrap()
                .shape(),
            (0, 2)
        );
    }
}
