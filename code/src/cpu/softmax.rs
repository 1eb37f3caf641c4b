//! Softmax, row by row: each row of scores becomes a row of probabilities that are
//! positive and sum to 1.
//!
//! For one row `x`, `softmax(x)[column] = exp(x[column]) / Σ exp(x[other])`.
//!
//! # Why subtract the row's maximum
//!
//! Computed directly, `exp` overflows `f32` for any score above about 88.7: `exp(1000.0)` is
//! infinity, and infinity divided by infinity is NaN. But for any constant `m`,
//!
//! ```text
//! exp(x − m) / Σ exp(x_other − m) = (exp(x) · exp(−m)) / (Σ exp(x_other) · exp(−m))
//! ```
//!
//! and the `exp(−m)` factors cancel, so shifting a row by a constant does not change its
//! softmax. Choosing `m` as the row's maximum makes every shifted score `≤ 0`, so every
//! `exp` lies in `(0, 1]`: nothing overflows, and the largest term is exactly 1, so the
//! denominator is at least 1 and never underflows to zero.

use crate::cpu::reduce::max_several_accumulators;
use crate::tensor::{ShapeError, Tensor2d};

// ANCHOR: softmax_row_in_place
/// Numerically stable softmax of one row, in place: shift by the row's maximum,
/// exponentiate and sum in one pass, then divide by the sum.
///
/// An empty row is left alone; the tensor-level functions reject empty rows first.
pub(crate) fn softmax_row_in_place(row: &mut [f32]) {
    let Some(row_max) = max_several_accumulators(row) else {
        return;
    };
    let mut total = 0.0;
    for value in row.iter_mut() {
        *value = (*value - row_max).exp();
        total += *value;
    }
    for value in row.iter_mut() {
        *value /= total;
    }
}
// ANCHOR_END: softmax_row_in_place

// ANCHOR: softmax_allocating
/// Row-wise softmax into a new tensor of the same shape.
///
/// A tensor with no rows, or rows with no columns, gives an empty tensor of the same
/// shape, as in NumPy and PyTorch: there is no value to normalise, so nothing is divided.
/// The `Result` is kept so that every operator reports bad input the same way.
pub fn softmax(input: &Tensor2d) -> Result<Tensor2d, ShapeError> {
    let mut output = input.clone();
    for row in 0..output.rows() {
        softmax_row_in_place(output.row_mut(row));
    }
    Ok(output)
}
// ANCHOR_END: softmax_allocating

// ANCHOR: softmax_in_place
/// Row-wise softmax that overwrites its input: no second tensor, and each row is read and
/// rewritten while it is still in cache.
pub fn softmax_in_place(tensor: &mut Tensor2d) -> Result<(), ShapeError> {
    for row in 0..tensor.rows() {
        softmax_row_in_place(tensor.row_mut(row));
    }
    Ok(())
}
// ANCHOR_END: softmax_in_place

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::Tolerance;

    /// The textbook formula, without the shift: correct for small scores, NaN for large.
    fn unstable_softmax(input: &Tensor2d) -> Tensor2d {
        let mut output = input.clone();
        for row in 0..output.rows() {
            let output_row = output.row_mut(row);
            let total: f32 = output_row.iter().map(|value| value.exp()).sum();
            for value in output_row.iter_mut() {
                *value = value.exp() / total;
            }
        }
        output
    }

    fn row_sum(tensor: &Tensor2d, row: usize) -> f32 {
        tensor.row(row).iter().sum()
    }

    #[test]
    fn a_row_of_equal_scores_is_uniform() {
        let input = Tensor2d::filled(1, 4, 3.0);
        assert_eq!(softmax(&input).unwrap(), Tensor2d::filled(1, 4, 0.25));
    }

    #[test]
    fn matches_the_direct_formula_on_small_scores() {
        let input = Tensor2d::from_vec(2, 3, vec![1.0, 2.0, 3.0, -1.0, 0.0, 0.5]).unwrap();
        let expected = unstable_softmax(&input);
        let stable = softmax(&input).unwrap();
        let comparison = stable
            .compare(&expected, Tolerance::new(1e-6, 1e-7))
            .unwrap();
        assert!(comparison.passed(), "{comparison}");
        // By hand: exp(0) / (exp(−2) + exp(−1) + exp(0)) for the largest score of row 0.
        let largest = 1.0 / ((-2.0_f32).exp() + (-1.0_f32).exp() + 1.0);
        assert!((stable.get(0, 2) - largest).abs() < 1e-6);
    }

    #[test]
    fn large_scores_stay_finite_and_rows_sum_to_one() {
        let input =
            Tensor2d::from_vec(2, 3, vec![1000.0, 999.0, 998.0, -1000.0, 0.0, 1000.0]).unwrap();
        // The direct formula overflows: exp(1000) is infinity, and ∞ / ∞ is NaN.
        assert!(unstable_softmax(&input).get(0, 0).is_nan());
        let stable = softmax(&input).unwrap();
        assert!(stable.as_slice().iter().all(|value| value.is_finite()));
        for row in 0..stable.rows() {
            assert!((row_sum(&stable, row) - 1.0).abs() < 1e-6);
        }
        // Row 0 is row [2, 1, 0] shifted by 998, so it has the same softmax.
        let shifted = softmax(&Tensor2d::from_vec(1, 3, vec![2.0, 1.0, 0.0]).unwrap()).unwrap();
        assert_eq!(stable.row(0), shifted.row(0));
    }

    #[test]
    fn in_place_gives_the_same_result() {
        let input = Tensor2d::random(5, 7, -4.0..=4.0, 11);
        let mut in_place = input.clone();
        softmax_in_place(&mut in_place).unwrap();
        assert_eq!(in_place, softmax(&input).unwrap());
    }

    #[test]
    fn rows_without_columns_give_an_empty_output() {
        for rows in [0, 3] {
            let mut empty = Tensor2d::zeros(rows, 0);
            assert_eq!(softmax(&empty).unwrap().shape(), (rows, 0));
            assert_eq!(softmax_in_place(&mut empty), Ok(()));
            assert_eq!(empty.shape(), (rows, 0));
        }
    }

    #[test]
    fn no_rows_is_fine() {
        let mut no_rows = Tensor2d::zeros(0, 4);
        assert_eq!(softmax(&no_rows).unwrap().shape(), (0, 4));
        assert_eq!(softmax_in_place(&mut no_rows), Ok(()));
    }
}
