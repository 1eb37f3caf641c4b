//! The sparse linear layer `x · W + b` with the weights `W` in CSR: the graph's
//! `LinearSparse` operator.
//!
//! Module 2's [`crate::parallel::csr::dense_times_sparse`] reads each CSR row of `W` and
//! scatters `x[r, k] · W[k, c]` into output row `r`, one multiply-add per non-zero and per
//! input row, each a load and a store at an address that depends on the data. Here the
//! batch does the vector work instead: the input is turned so that sixteen rows of the
//! batch lie side by side for every input feature (a *lane* of sixteen values), and every
//! non-zero `W[k, c]` becomes one multiply-add of two lanes,
//! `out[c][0..16] += W[k, c] · x[k][0..16]`, which the compiler turns into a single
//! AVX-512 instruction (two with AVX2). The index is read once per sixteen multiply-adds
//! instead of once per one.
//!
//! An input feature whose sixteen values are all zero is skipped with all its non-zeros:
//! after a ReLU, many are, so the sparsity of the activations saves work too.

use rayon::prelude::*;

use crate::cpu::sparse::CsrMatrix;
use crate::tensor::{ShapeError, Tensor2d, check_output_shape, linear_output_shape};

/// Rows of the batch computed together: one AVX-512 register of `f32`.
pub const BATCH_LANE: usize = 16;

type Lane = [f32; BATCH_LANE];

// ANCHOR: linear_sparse_into
/// `input · weights + bias` with `weights` (`inputs × outputs`) in CSR, written into
/// `output`, with a ReLU on every result when `relu` is set. Blocks of sixteen rows are
/// shared between rayon's threads.
pub fn linear_sparse_into(
    input: &Tensor2d,
    weights: &CsrMatrix,
    bias: &Tensor2d,
    relu: bool,
    output: &mut Tensor2d,
) -> Result<(), ShapeError> {
    let shape = linear_output_shape(
        input.shape(),
        (weights.rows(), weights.columns()),
        bias.shape(),
    )?;
    check_output_shape("linear_sparse", shape, output.shape())?;
    let outputs = weights.columns();
    if outputs == 0 {
        return Ok(());
    }
    output
        .as_mut_slice()
        .par_chunks_mut(BATCH_LANE * outputs)
        .enumerate()
        .for_each(|(block, output_rows)| {
            let first_row = block * BATCH_LANE;
            block_into(input, first_row, weights, bias, relu, output_rows);
        });
    Ok(())
}

/// One block of up to sixteen rows: turn the input, add every non-zero's lane, turn back.
fn block_into(
    input: &Tensor2d,
    first_row: usize,
    weights: &CsrMatrix,
    bias: &Tensor2d,
    relu: bool,
    output_rows: &mut [f32],
) {
    let outputs = weights.columns();
    let rows = output_rows.len() / outputs;
    // x turned: one lane per input feature, the rows past the batch's end left at zero.
    let mut input_lanes: Vec<Lane> = vec![[0.0; BATCH_LANE]; input.columns()];
    for lane_row in 0..rows {
        for (lane, &value) in input_lanes.iter_mut().zip(input.row(first_row + lane_row)) {
            lane[lane_row] = value;
        }
    }
    // Every output's lane starts at its bias.
    let mut output_lanes: Vec<Lane> = bias
        .as_slice()
        .iter()
        .map(|&value| [value; BATCH_LANE])
        .collect();
    for (inner, input_lane) in input_lanes.iter().enumerate() {
        if input_lane.iter().all(|&value| value == 0.0) {
            continue;
        }
        let (columns, values) = weights.row(inner);
        for (&column, &weight) in columns.iter().zip(values) {
            let output_lane = &mut output_lanes[column as usize];
            for (out, &x) in output_lane.iter_mut().zip(input_lane) {
                *out += weight * x;
            }
        }
    }
    for (lane_row, output_row) in output_rows.chunks_mut(outputs).enumerate() {
        for (value, lane) in output_row.iter_mut().zip(&output_lanes) {
            let result = lane[lane_row];
            // `result < 0.0` rather than `result.max(0.0)`, which turns a NaN into 0: a
            // NaN passes through the ReLU, as in every other layer of the crate.
            *value = if relu && result < 0.0 { 0.0 } else { result };
        }
    }
}
// ANCHOR_END: linear_sparse_into

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::linear_naive;
    use crate::cpu::sparse::random_sparse_dense;
    use crate::tensor::Tolerance;

    #[test]
    fn matches_the_dense_layer_on_many_shapes_and_densities() {
        for (case, &(rows, inputs, outputs, density)) in [
            (1, 1, 1, 1.0),
            (3, 5, 7, 0.5),
            (16, 64, 10, 0.1),
            (17, 33, 65, 0.02),
            (40, 100, 30, 0.0),
            (64, 128, 128, 0.3),
        ]
        .iter()
        .enumerate()
        {
            let seed = 40 + case as u64;
            let mut input = Tensor2d::random(rows, inputs, -1.0..=1.0, seed);
            // A feature that is zero for every row: the skipped lane.
            for row in 0..rows {
                input.set(row, 0, 0.0);
            }
            let dense = random_sparse_dense(inputs, outputs, density, seed + 1);
            let sparse = CsrMatrix::from_dense(&dense, 0.0).unwrap();
            let bias = Tensor2d::random(1, outputs, -0.5..=0.5, seed + 2);
            for relu in [false, true] {
                let mut expected = linear_naive(&input, &dense, &bias).unwrap();
                if relu {
                    crate::cpu::relu_in_place(&mut expected);
                }
                let mut output = Tensor2d::filled(rows, outputs, f32::NAN);
                linear_sparse_into(&input, &sparse, &bias, relu, &mut output).unwrap();
                // The same products, added in another order: a few ulps of the sum of
                // magnitudes.
                let comparison = output
                    .compare(&expected, Tolerance::new(1e-5, 1e-6))
                    .unwrap();
                assert!(
                    comparison.passed(),
                    "{rows}×{inputs}×{outputs} at {density}, relu {relu}: {comparison}"
                );
            }
        }
    }

    #[test]
    fn shapes_that_do_not_fit_are_errors() {
        let sparse = CsrMatrix::from_dense(&Tensor2d::filled(3, 2, 1.0), 0.0).unwrap();
        let mut output = Tensor2d::zeros(2, 2);
        assert!(
            linear_sparse_into(
                &Tensor2d::zeros(2, 4),
                &sparse,
                &Tensor2d::zeros(1, 2),
                false,
                &mut output
            )
            .is_err()
        );
        assert!(
            linear_sparse_into(
                &Tensor2d::zeros(2, 3),
                &sparse,
                &Tensor2d::zeros(1, 2),
                false,
                &mut Tensor2d::zeros(2, 3)
            )
            .is_err()
        );
    }
}
