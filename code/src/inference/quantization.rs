//! Symmetric int8 quantisation of a linear layer, and the int8 linear operator on the CPU.
//!
//! A tensor of `f32` values is stored as `i8` values `q` and a *scale* `s`, so that each value
//! is approximately `q · s`. *Symmetric* means zero maps to zero and the range is ±127 · s
//! (−128 is left unused, so that negating a value never overflows). The scale is chosen so
//! that the largest magnitude of the group maps to 127: `s = max |x| / 127`.
//!
//! The weights are quantised once, ahead of time, with one scale for the whole matrix
//! ([`Granularity::PerTensor`]) or one per output ([`Granularity::PerOutput`]: a column of the
//! `inputs × outputs` `f32` matrix, stored as one row of the quantised `outputs × inputs`
//! values, like PyTorch's weight). The input is
//! quantised at run time, one scale per row, because each example has its own range. The
//! products are summed in `i32` (exact: a sum of fewer than 2¹⁷ products of two int8 values
//! cannot leave an `i32`, and the int8 product refuses longer ones, see
//! [`crate::cpu::int8_matmul::MAXIMUM_INPUTS`]) and only the final sum is scaled back to `f32`:
//!
//! `y[r][c] = (Σ_k qx[r][k] · qw[k][c]) · sx[r] · sw[c] + b[c]`.

use crate::tensor::Tensor2d;

// The types, and the quantisation of weights and of input rows, live in the `cpu` layer
// (`code/src/cpu/int8.rs`), where the graph's int8 operator can reach them; this module
// keeps their old names and teaches the layer.
pub use crate::cpu::int8::{
    Granularity, LARGEST_LEVEL, QuantizationError, QuantizedRows, QuantizedWeights,
    linear_int8_into, quantize_rows,
};
pub(crate) use crate::cpu::int8::{check_finite, check_shapes};

// ANCHOR: linear_int8
/// `input · weights + bias` with int8 operands and `i32` sums: the input is quantised per
/// row, every product of two int8 values is added exactly in `i32` by the crate's one int8
/// product (the fastest kernel this processor has), and each sum is scaled back once.
pub fn linear_int8(
    input: &Tensor2d,
    weights: &QuantizedWeights,
    bias: &Tensor2d,
) -> Result<Tensor2d, QuantizationError> {
    check_shapes(input, weights, bias)?;
    check_finite(bias, "bias")?;
    let mut output = Tensor2d::zeros(input.rows(), weights.outputs());
    linear_int8_into(input, weights, bias, false, &mut output)?;
    Ok(output)
}
// ANCHOR_END: linear_int8

/// A bound on `|linear_int8 − fp32 linear|` for each output element: rounding moves each
/// quantised value by at most half a step, so each product `x·w` is off by at most
/// `|x|·δw + |w|·δx + δx·δw` with `δ = scale / 2`, plus the `f32` rounding of the final
/// scaling. Tests check the int8 operators against the fp32 reference with this bound
/// instead of a guessed tolerance.
pub fn error_bound(input: &Tensor2d, weights: &QuantizedWeights, original: &Tensor2d) -> Tensor2d {
    let quantized = quantize_rows(input).expect("finite input");
    let mut bound = Tensor2d::zeros(input.rows(), weights.outputs());
    for row in 0..input.rows() {
        let half_input_step = quantized.scales[row] / 2.0;
        for output in 0..weights.outputs() {
            let half_weight_step = weights.scale(output) / 2.0;
            let mut total = 0.0f32;
            let mut magnitude = 0.0f32;
            for (inner, &x) in input.row(row).iter().enumerate() {
                let w = original.get(inner, output);
                total += x.abs() * half_weight_step
                    + w.abs() * half_input_step
                    + half_input_step * half_weight_step;
                magnitude += (x * w).abs();
            }
            // Relative slack for the f32 arithmetic of both sides.
            bound.set(row, output, total * 1.001 + magnitude * 1e-5 + 1e-6);
        }
    }
    bound
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fp32_linear(input: &Tensor2d, weights: &Tensor2d, bias: &Tensor2d) -> Tensor2d {
        let mut output = Tensor2d::zeros(input.rows(), weights.columns());
        for row in 0..input.rows() {
            for column in 0..weights.columns() {
                let mut sum = bias.as_slice()[column];
                for inner in 0..input.columns() {
                    sum += input.get(row, inner) * weights.get(inner, column);
                }
                output.set(row, column, sum);
            }
        }
        output
    }

    #[test]
    fn int8_linear_stays_within_its_error_bound_on_many_shapes() {
        for (case, &(rows, inputs, outputs)) in [
            (1, 1, 1),
            (3, 5, 7),
            (16, 64, 10),
            (7, 129, 33),
            (32, 256, 64),
            // Tiles of every height and a part-filled panel in the fast int8 kernels.
            (19, 301, 70),
        ]
        .iter()
        .enumerate()
        {
            let seed = case as u64 * 10;
            let input = Tensor2d::random(rows, inputs, -1.0..=1.0, seed);
            let mut weights = Tensor2d::random(inputs, outputs, -0.5..=0.5, seed + 1);
            // Outputs of very different ranges: where per-output scales pay off.
            for output in 0..outputs {
                let factor = 1.0 + 20.0 * (output % 3) as f32;
                for inner in 0..inputs {
                    let value = weights.get(inner, output) * factor;
                    weights.set(inner, output, value);
                }
            }
            let bias = Tensor2d::random(1, outputs, -0.1..=0.1, seed + 2);
            let reference = fp32_linear(&input, &weights, &bias);
            for granularity in [Granularity::PerTensor, Granularity::PerOutput] {
                let quantized = QuantizedWeights::quantize(&weights, granularity).unwrap();
                let result = linear_int8(&input, &quantized, &bias).unwrap();
                let bound = error_bound(&input, &quantized, &weights);
                for index in 0..result.len() {
                    let error = (result.as_slice()[index] - reference.as_slice()[index]).abs();
                    assert!(
                        error <= bound.as_slice()[index],
                        "{rows}×{inputs}×{outputs} {granularity:?}, element {index}: error {error} > bound {}",
                        bound.as_slice()[index]
                    );
                }
            }
        }
    }

    #[test]
    fn per_output_scales_are_more_accurate_when_outputs_differ_in_range() {
        let mut weights = Tensor2d::random(64, 8, -0.01..=0.01, 4);
        for inner in 0..64 {
            let value = weights.get(inner, 0) * 1000.0;
            weights.set(inner, 0, value);
        }
        let error = |granularity| {
            let quantized = QuantizedWeights::quantize(&weights, granularity).unwrap();
            let restored = quantized.dequantize();
            (0..64)
                .flat_map(|inner| (1..8).map(move |output| (inner, output)))
                .map(|(inner, output)| {
                    (restored.get(inner, output) - weights.get(inner, output)).abs()
                })
                .fold(0.0f32, f32::max)
        };
        assert!(error(Granularity::PerOutput) * 100.0 < error(Granularity::PerTensor));
    }

    #[test]
    fn quantisation_is_symmetric_and_exact_for_zero() {
        let weights = Tensor2d::from_vec(2, 2, vec![0.0, -1.0, 0.5, 1.0]).unwrap();
        let quantized = QuantizedWeights::quantize(&weights, Granularity::PerTensor).unwrap();
        assert_eq!(quantized.scale(0), 1.0 / 127.0);
        // Stored output by output: output 0 = (0.0, 0.5), output 1 = (−1.0, 1.0).
        assert_eq!(quantized.values(), &[0, 64, -127, 127]);
        let zeros = Tensor2d::zeros(3, 2);
        let quantized = QuantizedWeights::quantize(&zeros, Granularity::PerOutput).unwrap();
        assert!(quantized.values().iter().all(|&value| value == 0));
        assert_eq!(quantized.dequantize(), zeros);
    }

    #[test]
    fn bad_input_gets_errors_a_person_can_read() {
        let mut weights = Tensor2d::random(4, 3, -1.0..=1.0, 1);
        weights.set(2, 1, f32::NAN);
        let error = QuantizedWeights::quantize(&weights, Granularity::PerTensor).unwrap_err();
        assert!(matches!(
            error,
            QuantizationError::NonFinite {
                what: "weights",
                row: 2,
                column: 1,
                ..
            }
        ));
        assert!(error.to_string().contains("row 2, column 1"));
        assert_eq!(
            QuantizedWeights::from_parts(2, 2, vec![0; 4], vec![0.5, 0.0], Granularity::PerOutput),
            Err(QuantizationError::BadScale {
                index: 1,
                value: 0.0
            })
        );
        assert!(matches!(
            QuantizedWeights::from_parts(2, 2, vec![0; 4], vec![0.5, 0.5], Granularity::PerTensor),
            Err(QuantizationError::WrongScaleCount {
                found: 2,
                expected: 1,
                ..
            })
        ));
        assert!(matches!(
            QuantizedWeights::from_parts(2, 2, vec![0; 3], vec![0.5], Granularity::PerTensor),
            Err(QuantizationError::WrongValueCount {
                found: 3,
                expected: 4,
                ..
            })
        ));
        let good =
            QuantizedWeights::quantize(&Tensor2d::zeros(4, 3), Granularity::PerTensor).unwrap();
        assert!(matches!(
            linear_int8(&Tensor2d::zeros(2, 5), &good, &Tensor2d::zeros(1, 3)),
            Err(QuantizationError::ShapeMismatch {
                input_columns: 5,
                weight_rows: 4
            })
        ));
        assert!(matches!(
            linear_int8(&Tensor2d::zeros(2, 4), &good, &Tensor2d::zeros(3, 1)),
            Err(QuantizationError::BadBias { .. })
        ));
        let mut input = Tensor2d::zeros(2, 4);
        input.set(1, 3, f32::INFINITY);
        assert!(matches!(
            linear_int8(&input, &good, &Tensor2d::zeros(1, 3)),
            Err(QuantizationError::NonFinite {
                what: "input",
                row: 1,
                column: 3,
                ..
            })
        ));
    }
}
