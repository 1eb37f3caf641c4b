//! A linear layer whose weights are packed once, when a network is prepared, and whose
//! bias and ReLU are applied in the epilogue of the matrix product.
//!
//! [`crate::cpu::linear_register_blocked()`] packs the weights into the micro-kernel's
//! order on every call. That is the right thing for a single call, but a network runs the
//! same weights again and again: packing them once, ahead of time, takes the copy out of
//! every run. This is what inference engines call *prepacking*.
//!
//! The second idea is the *epilogue*: the work that follows the matrix product (adding
//! the bias, clamping with ReLU) is done by the code that stores each finished tile of
//! sums, while the tile is still in registers, instead of in separate passes over the
//! output afterwards.

use crate::cpu::linear_register_blocked::{
    MicroKernel, PackedWeights, ROW_BLOCK, RowBlock, TileEpilogue,
};
use crate::tensor::{ShapeError, Tensor2d};

// ANCHOR: prepacked_linear
/// `x · W + b` (and optionally ReLU) with `W` already in the micro-kernel's order.
pub struct PrepackedLinear {
    kernel: MicroKernel,
    packed_weights: PackedWeights,
    bias: Vec<f32>,
    inputs: usize,
    outputs: usize,
}

impl PrepackedLinear {
    /// Checks that `bias` is a `1 × outputs` row for `weights` of shape
    /// `inputs × outputs`, and packs the weights for the fastest micro-kernel this
    /// processor can run.
    pub fn new(weights: &Tensor2d, bias: &Tensor2d) -> Result<PrepackedLinear, ShapeError> {
        PrepackedLinear::with_kernel(MicroKernel::selected(), weights, bias)
    }

    pub(crate) fn with_kernel(
        kernel: MicroKernel,
        weights: &Tensor2d,
        bias: &Tensor2d,
    ) -> Result<PrepackedLinear, ShapeError> {
        let (inputs, outputs) = weights.shape();
        if bias.shape() != (1, outputs) {
            return Err(ShapeError::Incompatible {
                operation: "PrepackedLinear::new",
                expectation: "the bias must be one row as wide as the weights",
                left_name: "weights",
                left: weights.shape(),
                right_name: "bias",
                right: bias.shape(),
            });
        }
        Ok(PrepackedLinear {
            kernel,
            packed_weights: kernel.pack_weights(weights),
            bias: bias.as_slice().to_vec(),
            inputs,
            outputs,
        })
    }

    /// The width of an input row.
    pub fn inputs(&self) -> usize {
        self.inputs
    }

    /// The width of an output row.
    pub fn outputs(&self) -> usize {
        self.outputs
    }

    /// The step in which a caller that shares the rows between threads should cut them:
    /// the height of the smallest tile the micro-kernel computes without wasted work.
    pub fn task_rows(&self) -> usize {
        self.kernel.task_rows()
    }

    /// Computes `input_rows · W + b`, then ReLU if `relu`, into `output_rows`: whole rows,
    /// flat, `inputs` and `outputs` wide. `packed_inputs` is scratch space the caller
    /// keeps between calls, so that a run allocates nothing.
    pub fn compute_rows(
        &self,
        input_rows: &[f32],
        output_rows: &mut [f32],
        relu: bool,
        packed_inputs: &mut Vec<f32>,
    ) {
        let (inputs, outputs) = (self.inputs, self.outputs);
        if outputs == 0 {
            return;
        }
        debug_assert!(inputs == 0 || input_rows.len() / inputs == output_rows.len() / outputs);
        let epilogue = TileEpilogue {
            bias: Some(&self.bias),
            relu,
        };
        for (block_index, output_block) in output_rows.chunks_mut(ROW_BLOCK * outputs).enumerate() {
            let rows = output_block.len() / outputs;
            if inputs == 0 {
                // No inner dimension: no tiles are stored, and the output is the bias.
                for row in output_block.chunks_exact_mut(outputs) {
                    row.copy_from_slice(&self.bias);
                    if relu {
                        crate::cpu::relu::relu_values_in_place(row);
                    }
                }
                continue;
            }
            let block = RowBlock {
                input_rows: &input_rows[block_index * ROW_BLOCK * inputs..][..rows * inputs],
                inner_size: inputs,
                output_rows: output_block,
                outputs,
            };
            self.kernel
                .multiply_row_block(block, &self.packed_weights, packed_inputs, epilogue);
        }
    }
}
// ANCHOR_END: prepacked_linear

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::{linear_naive, relu};
    use crate::tensor::Tolerance;

    #[test]
    fn every_kernel_with_and_without_relu_matches_naive() {
        for (rows, inputs, outputs) in [(1, 1, 1), (13, 300, 37), (97, 5, 64), (2, 513, 33)] {
            let input = Tensor2d::random(rows, inputs, -1.0..=1.0, 1);
            let weights = Tensor2d::random(inputs, outputs, -1.0..=1.0, 2);
            let bias = Tensor2d::random(1, outputs, -1.0..=1.0, 3);
            let expected = linear_naive(&input, &weights, &bias).unwrap();
            for kernel in MicroKernel::all_available() {
                let linear = PrepackedLinear::with_kernel(kernel, &weights, &bias).unwrap();
                for (apply_relu, expected) in [(false, expected.clone()), (true, relu(&expected))] {
                    let mut output = Tensor2d::filled(rows, outputs, f32::NAN);
                    linear.compute_rows(
                        input.as_slice(),
                        output.as_mut_slice(),
                        apply_relu,
                        &mut Vec::new(),
                    );
                    let comparison = output
                        .compare(&expected, Tolerance::new(1e-4, 1e-5))
                        .unwrap();
                    assert!(
                        comparison.passed(),
                        "{kernel:?}, relu {apply_relu}, {rows}×{inputs}×{outputs}: {comparison}"
                    );
                }
            }
        }
    }

    #[test]
    fn an_empty_inner_dimension_gives_the_bias() {
        let weights = Tensor2d::zeros(0, 2);
        let bias = Tensor2d::from_vec(1, 2, vec![1.5, -2.5]).unwrap();
        let linear = PrepackedLinear::new(&weights, &bias).unwrap();
        let mut output = vec![f32::NAN; 4];
        linear.compute_rows(&[], &mut output, true, &mut Vec::new());
        assert_eq!(output, [1.5, 0.0, 1.5, 0.0]);
    }

    #[test]
    fn a_bias_of_the_wrong_width_is_an_error() {
        let weights = Tensor2d::zeros(3, 4);
        let bias = Tensor2d::zeros(1, 5);
        assert!(matches!(
            PrepackedLinear::new(&weights, &bias),
            Err(ShapeError::Incompatible {
                right_name: "bias",
                right: (1, 5),
                ..
            })
        ));
    }
}
