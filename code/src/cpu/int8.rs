//! Symmetric int8 quantisation: the types an int8 linear layer is made of, and the
//! int8 linear operator the graph runs.
//!
//! A tensor of `f32` values is stored as `i8` values `q` and a *scale* `s`, so that each
//! value is approximately `q · s`; the scale maps the largest magnitude of a group to 127.
//! The weights are quantised once ([`QuantizedWeights`]), the input row by row at run time
//! ([`quantize_rows`]), and the products are summed exactly in `i32` by
//! [`crate::cpu::int8_matmul::matmul_int8`]. Module 3's [`crate::inference::quantization`]
//! teaches all of it and re-exports these types under their old names; they live here, in
//! the `cpu` layer, so that the graph (a `LinearInt8` node holds its weights as
//! [`QuantizedWeights`]) and the compiler's `quantize` pass can reach them.

use thiserror::Error;

use crate::cpu::int8_matmul::{Int8MatmulError, Int8Shape, matmul_int8};
use crate::tensor::Tensor2d;

/// The largest quantised magnitude: symmetric int8 uses −127..=127.
pub const LARGEST_LEVEL: f32 = 127.0;

/// How many scales a weight matrix gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Granularity {
    /// One scale for the whole matrix.
    PerTensor,
    /// One scale per output: a column of the `inputs × outputs` weights.
    PerOutput,
}

/// Input the quantiser cannot represent, said for a person.
#[derive(Debug, Clone, Error, PartialEq)]
pub enum QuantizationError {
    #[error(
        "the {what} contain a non-finite value ({value}) at row {row}, column {column}; int8 cannot represent it, so the layer would silently compute garbage"
    )]
    NonFinite {
        what: &'static str,
        row: usize,
        column: usize,
        value: f32,
    },
    #[error(
        "scale {index} is {value}; a scale must be positive and finite (a zero scale would map every value to 0)"
    )]
    BadScale { index: usize, value: f32 },
    #[error(
        "{found} scales were given for weights with {outputs} outputs; {granularity} needs {expected}"
    )]
    WrongScaleCount {
        found: usize,
        expected: usize,
        outputs: usize,
        granularity: &'static str,
    },
    #[error(
        "{found} quantised values were given for {inputs} × {outputs} weights ({expected} expected)"
    )]
    WrongValueCount {
        found: usize,
        expected: usize,
        inputs: usize,
        outputs: usize,
    },
    #[error("the input has {input_columns} columns, but the weights expect {weight_rows} inputs")]
    ShapeMismatch {
        input_columns: usize,
        weight_rows: usize,
    },
    #[error("the bias has shape {rows}×{columns}; it must be one row of {outputs} values")]
    BadBias {
        rows: usize,
        columns: usize,
        outputs: usize,
    },
    #[error("the int8 product: {0}")]
    Product(#[from] Int8MatmulError),
    #[error(
        "the output is {rows}×{columns}, but the layer writes {expected_rows}×{expected_columns}"
    )]
    OutputShape {
        rows: usize,
        columns: usize,
        expected_rows: usize,
        expected_columns: usize,
    },
}

/// Weights quantised to int8. The values are stored **transposed**, output by output
/// (`outputs × inputs`), so that the inputs of one output sit next to each other: the CPU
/// loop reads both operands contiguously, and the GPU packs four of them into one `u32`.
#[derive(Debug, Clone, PartialEq)]
pub struct QuantizedWeights {
    inputs: usize,
    outputs: usize,
    /// `outputs × inputs`, row-major.
    values: Vec<i8>,
    /// One scale, or one per output.
    scales: Vec<f32>,
    granularity: Granularity,
}

impl QuantizedWeights {
    // ANCHOR: quantize_weights
    /// Quantises `inputs × outputs` weights with the chosen granularity. A group whose values
    /// are all zero (a pruned output, say) gets scale 1: any positive scale represents it
    /// exactly.
    pub fn quantize(
        weights: &Tensor2d,
        granularity: Granularity,
    ) -> Result<QuantizedWeights, QuantizationError> {
        check_finite(weights, "weights")?;
        let (inputs, outputs) = weights.shape();
        let largest_per_output: Vec<f32> = (0..outputs)
            .map(|output| {
                (0..inputs)
                    .map(|input| weights.get(input, output).abs())
                    .fold(0.0, f32::max)
            })
            .collect();
        let scales = match granularity {
            Granularity::PerTensor => {
                vec![scale_for(
                    largest_per_output.iter().copied().fold(0.0, f32::max),
                )]
            }
            Granularity::PerOutput => largest_per_output.into_iter().map(scale_for).collect(),
        };
        let mut values = Vec::with_capacity(inputs * outputs);
        for output in 0..outputs {
            let scale = scales[if scales.len() == 1 { 0 } else { output }];
            for input in 0..inputs {
                values.push(quantize_value(weights.get(input, output), scale));
            }
        }
        Ok(QuantizedWeights {
            inputs,
            outputs,
            values,
            scales,
            granularity,
        })
    }
    // ANCHOR_END: quantize_weights

    /// Weights from already quantised parts (for example read from a file): `values` output
    /// by output (`outputs × inputs`), and one scale or one per output. Every scale must be
    /// positive and finite.
    pub fn from_parts(
        inputs: usize,
        outputs: usize,
        values: Vec<i8>,
        scales: Vec<f32>,
        granularity: Granularity,
    ) -> Result<QuantizedWeights, QuantizationError> {
        let expected_scales = match granularity {
            Granularity::PerTensor => 1,
            Granularity::PerOutput => outputs,
        };
        if scales.len() != expected_scales {
            return Err(QuantizationError::WrongScaleCount {
                found: scales.len(),
                expected: expected_scales,
                outputs,
                granularity: match granularity {
                    Granularity::PerTensor => "one scale for the whole matrix",
                    Granularity::PerOutput => "one scale per output",
                },
            });
        }
        if values.len() != inputs * outputs {
            return Err(QuantizationError::WrongValueCount {
                found: values.len(),
                expected: inputs * outputs,
                inputs,
                outputs,
            });
        }
        if let Some((index, &value)) = scales
            .iter()
            .enumerate()
            .find(|(_, scale)| !(scale.is_finite() && **scale > 0.0))
        {
            return Err(QuantizationError::BadScale { index, value });
        }
        Ok(QuantizedWeights {
            inputs,
            outputs,
            values,
            scales,
            granularity,
        })
    }

    pub fn inputs(&self) -> usize {
        self.inputs
    }

    pub fn outputs(&self) -> usize {
        self.outputs
    }

    pub fn granularity(&self) -> Granularity {
        self.granularity
    }

    /// The quantised values of one output's inputs.
    pub fn output_values(&self, output: usize) -> &[i8] {
        &self.values[output * self.inputs..(output + 1) * self.inputs]
    }

    /// All values, output by output.
    pub fn values(&self) -> &[i8] {
        &self.values
    }

    /// The scale of one output.
    pub fn scale(&self, output: usize) -> f32 {
        self.scales[if self.scales.len() == 1 { 0 } else { output }]
    }

    /// The weights as `f32` again (`q · s`), `inputs × outputs`: what the int8 layer really
    /// multiplies by.
    pub fn dequantize(&self) -> Tensor2d {
        let mut weights = Tensor2d::zeros(self.inputs, self.outputs);
        for output in 0..self.outputs {
            let scale = self.scale(output);
            for (input, &value) in self.output_values(output).iter().enumerate() {
                weights.set(input, output, value as f32 * scale);
            }
        }
        weights
    }

    /// The memory the weights take: one byte per value and four per scale.
    pub fn size_in_bytes(&self) -> usize {
        self.values.len() + 4 * self.scales.len()
    }
}

/// A tensor quantised row by row: `values` row-major, one scale per row.
#[derive(Debug, Clone, PartialEq)]
pub struct QuantizedRows {
    pub rows: usize,
    pub columns: usize,
    pub values: Vec<i8>,
    pub scales: Vec<f32>,
}

// ANCHOR: quantize_rows
/// Quantises each row of `input` with its own scale (dynamic quantisation of activations).
pub fn quantize_rows(input: &Tensor2d) -> Result<QuantizedRows, QuantizationError> {
    check_finite(input, "input")?;
    let mut values = Vec::with_capacity(input.len());
    let mut scales = Vec::with_capacity(input.rows());
    for row in 0..input.rows() {
        let largest = input
            .row(row)
            .iter()
            .fold(0.0f32, |max, x| max.max(x.abs()));
        let scale = scale_for(largest);
        values.extend(input.row(row).iter().map(|&x| quantize_value(x, scale)));
        scales.push(scale);
    }
    Ok(QuantizedRows {
        rows: input.rows(),
        columns: input.columns(),
        values,
        scales,
    })
}
// ANCHOR_END: quantize_rows

fn scale_for(largest_magnitude: f32) -> f32 {
    if largest_magnitude > 0.0 {
        largest_magnitude / LARGEST_LEVEL
    } else {
        1.0
    }
}

fn quantize_value(value: f32, scale: f32) -> i8 {
    (value / scale).round().clamp(-LARGEST_LEVEL, LARGEST_LEVEL) as i8
}

pub fn check_finite(tensor: &Tensor2d, what: &'static str) -> Result<(), QuantizationError> {
    match tensor
        .as_slice()
        .iter()
        .position(|value| !value.is_finite())
    {
        None => Ok(()),
        Some(index) => Err(QuantizationError::NonFinite {
            what,
            row: index / tensor.columns().max(1),
            column: index % tensor.columns().max(1),
            value: tensor.as_slice()[index],
        }),
    }
}

pub fn check_shapes(
    input: &Tensor2d,
    weights: &QuantizedWeights,
    bias: &Tensor2d,
) -> Result<(), QuantizationError> {
    if input.columns() != weights.inputs() {
        return Err(QuantizationError::ShapeMismatch {
            input_columns: input.columns(),
            weight_rows: weights.inputs(),
        });
    }
    if bias.shape() != (1, weights.outputs()) {
        return Err(QuantizationError::BadBias {
            rows: bias.rows(),
            columns: bias.columns(),
            outputs: weights.outputs(),
        });
    }
    Ok(())
}

// ANCHOR: linear_int8_into
/// `input · weights + bias` with int8 operands, written into `output` (`rows × outputs`),
/// and with a ReLU on every result when `relu` is set: the graph's `LinearInt8` operator.
///
/// The input is quantised row by row (one scale per row, chosen at run time), the crate's
/// one int8 product ([`matmul_int8`]) sums every row against every output exactly in `i32`,
/// and each sum is scaled back once: `sum · row scale · output scale + bias`.
pub fn linear_int8_into(
    input: &Tensor2d,
    weights: &QuantizedWeights,
    bias: &Tensor2d,
    relu: bool,
    output: &mut Tensor2d,
) -> Result<(), QuantizationError> {
    check_shapes(input, weights, bias)?;
    if output.shape() != (input.rows(), weights.outputs()) {
        return Err(QuantizationError::OutputShape {
            rows: output.rows(),
            columns: output.columns(),
            expected_rows: input.rows(),
            expected_columns: weights.outputs(),
        });
    }
    let quantized = quantize_rows(input)?;
    let shape = Int8Shape {
        rows: input.rows(),
        inputs: weights.inputs(),
        outputs: weights.outputs(),
    };
    let mut sums = vec![0i32; shape.rows * shape.outputs];
    matmul_int8(shape, &quantized.values, weights.values(), &mut sums)?;
    let bias = bias.as_slice();
    for (row, (output_row, sum_row)) in output
        .as_mut_slice()
        .chunks_mut(shape.outputs.max(1))
        .zip(sums.chunks(shape.outputs.max(1)))
        .enumerate()
    {
        let row_scale = quantized.scales[row];
        for (column, (value, &sum)) in output_row.iter_mut().zip(sum_row).enumerate() {
            let scaled = sum as f32 * row_scale * weights.scale(column) + bias[column];
            *value = if relu { scaled.max(0.0) } else { scaled };
        }
    }
    Ok(())
}
// ANCHOR_END: linear_int8_into

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_all_zero_output_gets_a_positive_scale_and_stays_exactly_zero() {
        // Output 1 is pruned away entirely: its scale must not be 0 (0 / 0 would be NaN).
        let mut weights = Tensor2d::random(6, 3, -1.0..=1.0, 9);
        for input in 0..6 {
            weights.set(input, 1, 0.0);
        }
        for granularity in [Granularity::PerTensor, Granularity::PerOutput] {
            let quantized = QuantizedWeights::quantize(&weights, granularity).unwrap();
            assert!(quantized.scale(1) > 0.0 && quantized.scale(1).is_finite());
            let input = Tensor2d::random(4, 6, -1.0..=1.0, 10);
            let bias = Tensor2d::from_vec(1, 3, vec![0.5, -0.25, 0.0]).unwrap();
            let mut output = Tensor2d::filled(4, 3, f32::NAN);
            linear_int8_into(&input, &quantized, &bias, false, &mut output).unwrap();
            for row in 0..4 {
                assert_eq!(
                    output.get(row, 1),
                    -0.25,
                    "row {row}: only the bias is left"
                );
            }
        }
        // An all-zero input row too.
        let quantized = QuantizedWeights::quantize(&weights, Granularity::PerOutput).unwrap();
        let rows = quantize_rows(&Tensor2d::zeros(2, 6)).unwrap();
        assert!(rows.scales.iter().all(|&scale| scale == 1.0));
        let mut output = Tensor2d::filled(2, 3, f32::NAN);
        let bias = Tensor2d::zeros(1, 3);
        linear_int8_into(&Tensor2d::zeros(2, 6), &quantized, &bias, true, &mut output).unwrap();
        assert_eq!(output, Tensor2d::zeros(2, 3));
    }

    #[test]
    fn a_wrong_output_shape_is_an_error() {
        let quantized =
            QuantizedWeights::quantize(&Tensor2d::zeros(4, 3), Granularity::PerTensor).unwrap();
        let error = linear_int8_into(
            &Tensor2d::zeros(2, 4),
            &quantized,
            &Tensor2d::zeros(1, 3),
            false,
            &mut Tensor2d::zeros(2, 4),
        )
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "the output is 2×4, but the layer writes 2×3"
        );
    }
}
