//! Element-wise addition of two tensors of one shape: where two branches of a network
//! meet again (a residual connection adds a block's input to its output).

use crate::tensor::{ShapeError, Tensor2d, check_output_shape};

// ANCHOR: add_into
/// `output = left + right`, element by element, into a tensor the caller owns. All three
/// must have one shape.
pub fn add_into(
    left: &Tensor2d,
    right: &Tensor2d,
    output: &mut Tensor2d,
) -> Result<(), ShapeError> {
    check_same_shape(left, right)?;
    check_output_shape("add", left.shape(), output.shape())?;
    for ((sum, &a), &b) in output
        .as_mut_slice()
        .iter_mut()
        .zip(left.as_slice())
        .zip(right.as_slice())
    {
        *sum = a + b;
    }
    Ok(())
}
// ANCHOR_END: add_into

/// `left + right`, element by element, in a new tensor.
pub fn add(left: &Tensor2d, right: &Tensor2d) -> Result<Tensor2d, ShapeError> {
    check_same_shape(left, right)?;
    let mut output = Tensor2d::zeros(left.rows(), left.columns());
    add_into(left, right, &mut output)?;
    Ok(output)
}

/// The shape rule of `add`, for the graph's validation too.
pub fn add_output_shape(
    left: (usize, usize),
    right: (usize, usize),
) -> Result<(usize, usize), ShapeError> {
    if left != right {
        return Err(ShapeError::Incompatible {
            operation: "add",
            expectation: "both tensors must have the same shape",
            left_name: "left",
            left,
            right_name: "right",
            right,
        });
    }
    Ok(left)
}

fn check_same_shape(left: &Tensor2d, right: &Tensor2d) -> Result<(), ShapeError> {
    add_output_shape(left.shape(), right.shape()).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds_element_by_element() {
        let left = Tensor2d::from_vec(2, 2, vec![1.0, -2.0, 3.5, 0.0]).unwrap();
        let right = Tensor2d::from_vec(2, 2, vec![0.5, 2.0, -1.5, f32::NAN]).unwrap();
        let sum = add(&left, &right).unwrap();
        assert_eq!(&sum.as_slice()[..3], &[1.5, 0.0, 2.0]);
        assert!(sum.as_slice()[3].is_nan(), "NaN must pass through");
    }

    #[test]
    fn different_shapes_are_an_error() {
        let error = add(&Tensor2d::zeros(2, 3), &Tensor2d::zeros(3, 2)).unwrap_err();
        assert!(error.to_string().contains("same shape"), "{error}");
        let mut output = Tensor2d::zeros(2, 2);
        assert!(add_into(&Tensor2d::zeros(2, 3), &Tensor2d::zeros(2, 3), &mut output).is_err());
    }
}
