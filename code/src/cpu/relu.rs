//! ReLU, `max(0, x)` element by element, in three variants that differ only in where the
//! result goes: a fresh tensor, a tensor the caller already owns, or the input itself.
//!
//! The arithmetic is one comparison per element, far cheaper than moving the element
//! through memory, so ReLU is *memory-bound*: its speed is set by how many bytes it reads
//! and writes, and how many fresh pages it makes the operating system hand over. That is
//! exactly what the three variants change.

use crate::tensor::{ShapeError, Tensor2d, check_output_shape};

// ANCHOR: relu_value
/// ReLU of one value.
///
/// Written as a comparison rather than `value.max(0.0)` so that a NaN passes through and
/// stays visible, as it does in PyTorch: `f32::max` would quietly turn NaN into 0 and
/// hide the bug that produced it.
pub(crate) fn relu_value(value: f32) -> f32 {
    if value < 0.0 { 0.0 } else { value }
}
// ANCHOR_END: relu_value

/// ReLU of every value in `input`, written to the same position in `output`. Both slices
/// have the same length; the callers check the shapes.
fn relu_values_into(input: &[f32], output: &mut [f32]) {
    for (output_value, &input_value) in output.iter_mut().zip(input) {
        *output_value = relu_value(input_value);
    }
}

/// ReLU of every value in a slice, in place. The fused operators use it on one output row
/// while that row is still in cache.
pub(crate) fn relu_values_in_place(values: &mut [f32]) {
    for value in values {
        *value = relu_value(*value);
    }
}

// ANCHOR: relu_allocating
/// ReLU into a new tensor of the same shape.
///
/// Simple to call, but every call allocates: for a large tensor that means fresh pages
/// from the operating system, each of which costs a page fault the first time it is
/// written.
pub fn relu(input: &Tensor2d) -> Tensor2d {
    let mut output = Tensor2d::zeros(input.rows(), input.columns());
    relu_values_into(input.as_slice(), output.as_mut_slice());
    output
}
// ANCHOR_END: relu_allocating

// ANCHOR: relu_preallocated
/// ReLU into a tensor the caller already owns, which must have the input's shape.
///
/// A loop that reuses the same output tensor allocates nothing after the first call, and
/// the output's pages are already mapped (and often still in cache).
pub fn relu_into(input: &Tensor2d, output: &mut Tensor2d) -> Result<(), ShapeError> {
    check_output_shape("relu_into", input.shape(), output.shape())?;
    relu_values_into(input.as_slice(), output.as_mut_slice());
    Ok(())
}
// ANCHOR_END: relu_preallocated

// ANCHOR: relu_in_place
/// ReLU that overwrites its input.
///
/// The fewest bytes moved of the three: each cache line is read once and written back,
/// and there is no second tensor to allocate, fault in or pull into cache. The price is
/// that the input is gone, which is fine when nothing else needs it.
pub fn relu_in_place(tensor: &mut Tensor2d) {
    relu_values_in_place(tensor.as_mut_slice());
}
// ANCHOR_END: relu_in_place

#[cfg(test)]
mod tests {
    use super::*;

    fn mixed_signs() -> Tensor2d {
        Tensor2d::from_vec(2, 3, vec![-2.0, 0.0, 3.5, 1.0, -0.25, -7.0]).unwrap()
    }

    fn mixed_signs_relu() -> Tensor2d {
        Tensor2d::from_vec(2, 3, vec![0.0, 0.0, 3.5, 1.0, 0.0, 0.0]).unwrap()
    }

    #[test]
    fn relu_zeroes_the_negative_values() {
        assert_eq!(relu(&mixed_signs()), mixed_signs_relu());
    }

    #[test]
    fn relu_into_overwrites_the_whole_output() {
        let mut output = Tensor2d::filled(2, 3, f32::NAN);
        relu_into(&mixed_signs(), &mut output).unwrap();
        assert_eq!(output, mixed_signs_relu());
    }

    #[test]
    fn relu_in_place_overwrites_the_input() {
        let mut tensor = mixed_signs();
        relu_in_place(&mut tensor);
        assert_eq!(tensor, mixed_signs_relu());
    }

    #[test]
    fn relu_into_rejects_an_output_of_another_shape() {
        let mut output = Tensor2d::zeros(3, 2);
        assert_eq!(
            relu_into(&mixed_signs(), &mut output),
            Err(ShapeError::Incompatible {
                operation: "relu_into",
                expectation: "the output must have the shape the operation produces",
                left_name: "expected output",
                left: (2, 3),
                right_name: "output",
                right: (3, 2),
            })
        );
    }

    #[test]
    fn nan_passes_through() {
        assert!(relu_value(f32::NAN).is_nan());
        assert_eq!(relu_value(f32::NEG_INFINITY), 0.0);
        assert_eq!(relu_value(f32::INFINITY), f32::INFINITY);
    }

    #[test]
    fn empty_tensors_stay_empty() {
        for (rows, columns) in [(0, 0), (0, 3), (2, 0)] {
            let empty = Tensor2d::zeros(rows, columns);
            assert_eq!(relu(&empty).shape(), (rows, columns));
            let mut output = Tensor2d::zeros(rows, columns);
            assert_eq!(relu_into(&empty, &mut output), Ok(()));
            let mut in_place = empty.clone();
            relu_in_place(&mut in_place);
            assert_eq!(in_place, empty);
        }
    }
}
