//! The int8 matrix product behind every int8 linear layer of the crate: int8 activations
//! times int8 weights, each product added exactly into an `i32` sum.
//!
//! Two 8-bit values multiply into at most 15 bits (−128 · −128 = 16 384), so a sum of up
//! to 131 072 such products cannot leave an `i32`: the integer arithmetic is exact, and all
//! the rounding of an int8 layer happens when values are quantised and when each sum is
//! scaled back to `f32`. The weights are stored one output per row (`outputs × inputs`),
//! so that both operands of every sum are read contiguously.
//!
//! [`matmul_int8_portable`] is the plain loop every faster version is checked against.

use thiserror::Error;

/// The longest sum that cannot overflow an `i32`: 2³¹ / 2¹⁴ products of two int8 values.
pub const MAXIMUM_INPUTS: usize = 1 << 17;

/// Slices whose lengths do not describe the product they were given for.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Int8MatmulError {
    #[error(
        "the {name} hold {length} values, but a {rows}×{columns} matrix needs {}",
        rows * columns
    )]
    Length {
        name: &'static str,
        length: usize,
        rows: usize,
        columns: usize,
    },
    #[error(
        "a sum of {inputs} int8 products could overflow an i32; at most {MAXIMUM_INPUTS} inputs are supported"
    )]
    TooManyInputs { inputs: usize },
}

/// The shape of one int8 product: `rows × inputs` activations, `outputs × inputs` weights,
/// `rows × outputs` sums.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Int8Shape {
    pub rows: usize,
    pub inputs: usize,
    pub outputs: usize,
}

impl Int8Shape {
    /// Checks that the three slices have the lengths this shape needs.
    pub fn check(
        &self,
        activations: &[i8],
        weights: &[i8],
        sums: &[i32],
    ) -> Result<(), Int8MatmulError> {
        if self.inputs > MAXIMUM_INPUTS {
            return Err(Int8MatmulError::TooManyInputs {
                inputs: self.inputs,
            });
        }
        let expect = |name, length: usize, rows: usize, columns: usize| {
            if length == rows * columns {
                Ok(())
            } else {
                Err(Int8MatmulError::Length {
                    name,
                    length,
                    rows,
                    columns,
                })
            }
        };
        expect("activations", activations.len(), self.rows, self.inputs)?;
        expect("weights", weights.len(), self.outputs, self.inputs)?;
        expect("sums", sums.len(), self.rows, self.outputs)
    }
}

// ANCHOR: portable
/// `sums[r][o] = Σₖ activations[r][k] · weights[o][k]`, one multiply-add at a time.
pub fn matmul_int8_portable(
    shape: Int8Shape,
    activations: &[i8],
    weights: &[i8],
    sums: &mut [i32],
) -> Result<(), Int8MatmulError> {
    shape.check(activations, weights, sums)?;
    for row in 0..shape.rows {
        let activation_row = &activations[row * shape.inputs..(row + 1) * shape.inputs];
        for output in 0..shape.outputs {
            let weight_row = &weights[output * shape.inputs..(output + 1) * shape.inputs];
            sums[row * shape.outputs + output] = activation_row
                .iter()
                .zip(weight_row)
                .map(|(&a, &w)| a as i32 * w as i32)
                .sum();
        }
    }
    Ok(())
}
// ANCHOR_END: portable

/// The fastest int8 product this CPU supports. For now the portable loop.
pub fn matmul_int8(
    shape: Int8Shape,
    activations: &[i8],
    weights: &[i8],
    sums: &mut [i32],
) -> Result<(), Int8MatmulError> {
    matmul_int8_portable(shape, activations, weights, sums)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extreme_values_sum_exactly() {
        let shape = Int8Shape {
            rows: 1,
            inputs: 1000,
            outputs: 2,
        };
        let activations = vec![-128i8; 1000];
        let mut weights = vec![-128i8; 1000];
        weights.extend(vec![127i8; 1000]);
        let mut sums = vec![0; 2];
        matmul_int8(shape, &activations, &weights, &mut sums).unwrap();
        assert_eq!(sums, vec![1000 * 16384, -1000 * 128 * 127]);
    }

    #[test]
    fn wrong_lengths_are_typed_errors() {
        let shape = Int8Shape {
            rows: 2,
            inputs: 3,
            outputs: 4,
        };
        let mut sums = vec![0; 8];
        let error = matmul_int8(shape, &[0; 5], &[0; 12], &mut sums).unwrap_err();
        assert_eq!(
            error.to_string(),
            "the activations hold 5 values, but a 2×3 matrix needs 6"
        );
    }
}
