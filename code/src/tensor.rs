//! `Tensor2d`: the one data type every operator in the book works on.
//!
//! A tensor here is deliberately simple: a row-major `Vec<f32>` with a number of rows and
//! columns. Row-major means element `(row, column)` lives at index `row * columns + column`,
//! so one row is one contiguous slice of memory. The memory-hierarchy chapter leans on that
//! fact again and again.

use std::fmt;
use std::ops::RangeInclusive;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use thiserror::Error;

// ANCHOR: shape_error
/// Shape problems, reported instead of panicking whenever a caller hands us tensors that
/// do not fit together.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ShapeError {
    /// A flat vector whose length is not `rows * columns`.
    #[error("a {rows}×{columns} tensor needs {} values, but {length} were given",
        describe_element_count(*rows, *columns))]
    LengthMismatch {
        rows: usize,
        columns: usize,
        length: usize,
    },
    /// Two tensors whose shapes do not fit the operation.
    #[error("{operation}: {expectation}, but got {left_name} {}×{} and {right_name} {}×{}",
        left.0, left.1, right.0, right.1)]
    Incompatible {
        operation: &'static str,
        expectation: &'static str,
        left_name: &'static str,
        left: (usize, usize),
        right_name: &'static str,
        right: (usize, usize),
    },
    /// A tensor with zero rows or zero columns where the operation needs at least one element.
    #[error("{operation}: the tensor is empty ({rows}×{columns})")]
    Empty {
        operation: &'static str,
        rows: usize,
        columns: usize,
    },
}
// ANCHOR_END: shape_error

// ANCHOR: tensor2d
/// A two-dimensional tensor of `f32`, stored row by row in one contiguous vector.
#[derive(Clone, PartialEq)]
pub struct Tensor2d {
    rows: usize,
    columns: usize,
    data: Vec<f32>,
}
// ANCHOR_END: tensor2d

impl Tensor2d {
    // ANCHOR: constructors
    /// A tensor of the given shape with every element zero.
    ///
    /// # Panics
    ///
    /// If `rows × columns` is more than a `usize` can count, like `vec!`. (A count that fits
    /// but is more than the memory can hold ends the process, as any failed allocation does.)
    pub fn zeros(rows: usize, columns: usize) -> Self {
        Self::filled(rows, columns, 0.0)
    }

    /// A tensor of the given shape with every element set to `value`.
    ///
    /// # Panics
    ///
    /// As [`Tensor2d::zeros`], if `rows × columns` is more than a `usize` can count.
    pub fn filled(rows: usize, columns: usize, value: f32) -> Self {
        Self {
            rows,
            columns,
            data: vec![value; element_count(rows, columns)],
        }
    }

    /// Wraps a row-major vector, checking that its length matches the shape.
    pub fn from_vec(rows: usize, columns: usize, data: Vec<f32>) -> Result<Self, ShapeError> {
        if rows.checked_mul(columns) != Some(data.len()) {
            return Err(ShapeError::LengthMismatch {
                rows,
                columns,
                length: data.len(),
            });
        }
        Ok(Self {
            rows,
            columns,
            data,
        })
    }

    /// A tensor of values drawn uniformly from `range`. The same seed gives the same
    /// tensor on every machine, so tests and benchmarks are reproducible.
    ///
    /// A range with no values to draw, empty like `1.0..=0.0` or with an end that is NaN
    /// or infinite, gives a tensor of NaN: the value floating point gives any result it
    /// cannot define, and one that every comparison in the crate rejects.
    ///
    /// # Panics
    ///
    /// As [`Tensor2d::zeros`], if `rows × columns` is more than a `usize` can count.
    pub fn random(rows: usize, columns: usize, range: RangeInclusive<f32>, seed: u64) -> Self {
        let mut generator = ChaCha8Rng::seed_from_u64(seed);
        let (low, high) = range.into_inner();
        let data = (0..element_count(rows, columns))
            .map(|_| uniform_between(&mut generator, low, high))
            .collect();
        Self {
            rows,
            columns,
            data,
        }
    }
    // ANCHOR_END: constructors

    pub fn rows(&self) -> usize {
        self.rows
    }

    pub fn columns(&self) -> usize {
        self.columns
    }

    /// `(rows, columns)`.
    pub fn shape(&self) -> (usize, usize) {
        (self.rows, self.columns)
    }

    /// The number of elements, `rows * columns`.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The size of the elements in bytes, as a GPU buffer would hold them.
    pub fn size_in_bytes(&self) -> u64 {
        (self.data.len() * std::mem::size_of::<f32>()) as u64
    }

    pub fn as_slice(&self) -> &[f32] {
        &self.data
    }

    pub fn as_mut_slice(&mut self) -> &mut [f32] {
        &mut self.data
    }

    pub fn into_vec(self) -> Vec<f32> {
        self.data
    }

    // ANCHOR: indexing
    /// The element at `(row, column)`. Row-major: rows are contiguous.
    ///
    /// # Panics
    ///
    /// If `row` or `column` is out of range, like indexing a slice.
    pub fn get(&self, row: usize, column: usize) -> f32 {
        self.check_position(row, column);
        self.data[row * self.columns + column]
    }
    // ANCHOR_END: indexing

    /// Sets the element at `(row, column)`.
    ///
    /// # Panics
    ///
    /// If `row` or `column` is out of range, like indexing a slice.
    pub fn set(&mut self, row: usize, column: usize, value: f32) {
        self.check_position(row, column);
        self.data[row * self.columns + column] = value;
    }

    /// One row as a contiguous slice.
    ///
    /// # Panics
    ///
    /// If `row` is out of range, like indexing a slice.
    pub fn row(&self, row: usize) -> &[f32] {
        self.check_row(row);
        &self.data[row * self.columns..(row + 1) * self.columns]
    }

    /// One row as a mutable contiguous slice.
    ///
    /// # Panics
    ///
    /// If `row` is out of range, like indexing a slice.
    pub fn row_mut(&mut self, row: usize) -> &mut [f32] {
        self.check_row(row);
        &mut self.data[row * self.columns..(row + 1) * self.columns]
    }

    /// Panics with the position and the shape when `(row, column)` is outside the tensor.
    /// Without the check, a column past the end would silently read the next row.
    fn check_position(&self, row: usize, column: usize) {
        if row >= self.rows || column >= self.columns {
            panic!(
                "position ({row}, {column}) is outside a {}×{} tensor",
                self.rows, self.columns
            );
        }
    }

    /// Panics with the row and the shape when `row` is outside the tensor.
    fn check_row(&self, row: usize) {
        if row >= self.rows {
            panic!(
                "row {row} is outside a {}×{} tensor",
                self.rows, self.columns
            );
        }
    }

    /// A new tensor with rows and columns swapped.
    pub fn transposed(&self) -> Tensor2d {
        let mut transposed = Tensor2d::zeros(self.columns, self.rows);
        for row in 0..self.rows {
            for column in 0..self.columns {
                transposed.data[column * self.rows + row] = self.data[row * self.columns + column];
            }
        }
        transposed
    }

    /// Checks that `other` has the same shape as `self`, for element-wise operations.
    pub fn expect_same_shape(
        &self,
        other: &Tensor2d,
        operation: &'static str,
    ) -> Result<(), ShapeError> {
        if self.shape() != other.shape() {
            return Err(ShapeError::Incompatible {
                operation,
                expectation: "both tensors must have the same shape",
                left_name: "left",
                left: self.shape(),
                right_name: "right",
                right: other.shape(),
            });
        }
        Ok(())
    }

    /// Compares `self` (the result under test) with `expected`, element by element.
    pub fn compare(
        &self,
        expected: &Tensor2d,
        tolerance: Tolerance,
    ) -> Result<Comparison, ShapeError> {
        self.expect_same_shape(expected, "compare")?;
        Ok(Comparison::of(self, expected, tolerance))
    }
}

/// `rows × columns`, the length of the data vector.
///
/// # Panics
///
/// If the product is more than a `usize` can count.
fn element_count(rows: usize, columns: usize) -> usize {
    rows.checked_mul(columns).unwrap_or_else(|| {
        panic!("a {rows}×{columns} tensor has more elements than a usize can count")
    })
}

/// The element count for an error message, even when it overflows.
fn describe_element_count(rows: usize, columns: usize) -> String {
    match rows.checked_mul(columns) {
        Some(count) => count.to_string(),
        None => format!("more than {}", usize::MAX),
    }
}

/// One value drawn uniformly from `low..=high`, or NaN when that range holds nothing to
/// draw from (`low > high`, or an end that is NaN or infinite).
fn uniform_between(generator: &mut ChaCha8Rng, low: f32, high: f32) -> f32 {
    if !(low <= high && low.is_finite() && high.is_finite()) {
        return f32::NAN;
    }
    if (high - low).is_finite() {
        generator.random_range(low..=high)
    } else {
        // Both ends are finite, but the width is beyond the largest f32 (an interval from
        // below −1.7e38 to above 1.7e38). At half the scale it fits; doubling is exact.
        2.0 * generator.random_range(low / 2.0..=high / 2.0)
    }
}

impl fmt::Debug for Tensor2d {
    /// Shows the shape and at most the first few elements: a 1024×1024 tensor in a failing
    /// assertion should not flood the terminal.
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        const SHOWN: usize = 8;
        write!(formatter, "Tensor2d {}×{} [", self.rows, self.columns)?;
        for (index, value) in self.data.iter().take(SHOWN).enumerate() {
            if index > 0 {
                write!(formatter, ", ")?;
            }
            write!(formatter, "{value}")?;
        }
        if self.data.len() > SHOWN {
            write!(formatter, ", … {} more", self.data.len() - SHOWN)?;
        }
        write!(formatter, "]")
    }
}

// ANCHOR: linear_shapes
/// The output shape of `input · weights + bias`, or why the shapes do not fit.
///
/// `input` is rows × inner, `weights` inner × outputs, and `bias` a row vector
/// 1 × outputs that is added to every row.
pub fn linear_output_shape(
    input: (usize, usize),
    weights: (usize, usize),
    bias: (usize, usize),
) -> Result<(usize, usize), ShapeError> {
    if input.1 != weights.0 {
        return Err(ShapeError::Incompatible {
            operation: "linear",
            expectation: "the input's columns must equal the weights' rows",
            left_name: "input",
            left: input,
            right_name: "weights",
            right: weights,
        });
    }
    if bias != (1, weights.1) {
        return Err(ShapeError::Incompatible {
            operation: "linear",
            expectation: "the bias must be one row with one value per weight column",
            left_name: "weights",
            left: weights,
            right_name: "bias",
            right: bias,
        });
    }
    Ok((input.0, weights.1))
}
// ANCHOR_END: linear_shapes

/// Checks that a preallocated output has the shape the operation produces.
pub fn check_output_shape(
    operation: &'static str,
    expected: (usize, usize),
    output: (usize, usize),
) -> Result<(), ShapeError> {
    if output != expected {
        return Err(ShapeError::Incompatible {
            operation,
            expectation: "the output must have the shape the operation produces",
            left_name: "expected output",
            left: expected,
            right_name: "output",
            right: output,
        });
    }
    Ok(())
}

// ANCHOR: tolerance
/// How close two floating-point results must be to count as equal.
///
/// An element passes when `|actual − expected| ≤ absolute + relative · |expected|`
/// (the rule NumPy's `allclose` uses). The absolute part keeps values that should be
/// almost zero from failing on rounding noise; the relative part scales with the value.
/// A NaN or infinity where a finite value was expected always fails.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerance {
    pub relative: f32,
    pub absolute: f32,
}
// ANCHOR_END: tolerance

impl Tolerance {
    pub const fn new(relative: f32, absolute: f32) -> Self {
        Self { relative, absolute }
    }

    /// Exact equality, for operations that only move or select values (ReLU, max).
    pub const EXACT: Tolerance = Tolerance::new(0.0, 0.0);

    fn allowed_difference(&self, expected: f32) -> f32 {
        self.absolute + self.relative * expected.abs()
    }
}

/// The result of [`Tensor2d::compare`]: how many elements are out of tolerance and where
/// the worst one is.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub tolerance: Tolerance,
    pub compared_elements: usize,
    pub elements_outside_tolerance: usize,
    /// Elements of the actual result that are NaN or infinite where `expected` is finite.
    pub non_finite_elements: usize,
    /// The largest `|actual − expected| / |expected|` over elements whose expected
    /// magnitude is above the absolute tolerance (elsewhere a relative error means little).
    pub largest_relative_error: f32,
    /// The element that misses its tolerance by the widest margin, if any misses it.
    pub worst: Option<Mismatch>,
}

/// One element that did not match.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mismatch {
    pub row: usize,
    pub column: usize,
    pub actual: f32,
    pub expected: f32,
}

impl Comparison {
    fn of(actual: &Tensor2d, expected: &Tensor2d, tolerance: Tolerance) -> Comparison {
        let mut comparison = Comparison {
            tolerance,
            compared_elements: actual.len(),
            elements_outside_tolerance: 0,
            non_finite_elements: 0,
            largest_relative_error: 0.0,
            worst: None,
        };
        let mut worst_excess = 0.0_f32;
        for (index, (&actual_value, &expected_value)) in
            actual.data.iter().zip(&expected.data).enumerate()
        {
            let difference = (actual_value - expected_value).abs();
            let finite_where_expected = actual_value.is_finite() || !expected_value.is_finite();
            if !finite_where_expected {
                comparison.non_finite_elements += 1;
            }
            if expected_value.abs() > tolerance.absolute && difference.is_finite() {
                comparison.largest_relative_error = comparison
                    .largest_relative_error
                    .max(difference / expected_value.abs());
            }
            // `!(a <= b)` rather than `a > b`, so that a NaN difference counts as a miss.
            let within = finite_where_expected
                && (actual_value == expected_value
                    || difference <= tolerance.allowed_difference(expected_value));
            if !within {
                comparison.elements_outside_tolerance += 1;
                let excess = if difference.is_finite() {
                    difference
                        / tolerance
                            .allowed_difference(expected_value)
                            .max(f32::MIN_POSITIVE)
                } else {
                    f32::INFINITY
                };
                if comparison.worst.is_none() || excess > worst_excess {
                    worst_excess = excess;
                    comparison.worst = Some(Mismatch {
                        row: index / actual.columns,
                        column: index % actual.columns,
                        actual: actual_value,
                        expected: expected_value,
                    });
                }
            }
        }
        comparison
    }

    /// True when every element is within tolerance.
    pub fn passed(&self) -> bool {
        self.elements_outside_tolerance == 0
    }
}

impl fmt::Display for Comparison {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            formatter,
            "{} of {} elements outside tolerance (relative {:e}, absolute {:e}); \
             {} non-finite; largest relative error {:e}",
            self.elements_outside_tolerance,
            self.compared_elements,
            self.tolerance.relative,
            self.tolerance.absolute,
            self.non_finite_elements,
            self.largest_relative_error,
        )?;
        if let Some(worst) = self.worst {
            write!(
                formatter,
                "; worst at (row {}, column {}): got {}, expected {}",
                worst.row, worst.column, worst.actual, worst.expected
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn from_vec_checks_the_length() {
        assert!(Tensor2d::from_vec(2, 3, vec![0.0; 6]).is_ok());
        assert_eq!(
            Tensor2d::from_vec(2, 3, vec![0.0; 5]),
            Err(ShapeError::LengthMismatch {
                rows: 2,
                columns: 3,
                length: 5
            })
        );
    }

    #[test]
    fn elements_are_stored_row_by_row() {
        let tensor = Tensor2d::from_vec(2, 3, vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
        assert_eq!(tensor.get(1, 0), 4.0);
        assert_eq!(tensor.row(1), &[4.0, 5.0, 6.0]);
        assert_eq!(tensor.transposed().row(0), &[1.0, 4.0]);
    }

    #[test]
    fn random_is_reproducible_and_stays_in_range() {
        let first = Tensor2d::random(17, 5, -2.0..=3.0, 42);
        let second = Tensor2d::random(17, 5, -2.0..=3.0, 42);
        let other_seed = Tensor2d::random(17, 5, -2.0..=3.0, 43);
        assert_eq!(first, second);
        assert_ne!(first, other_seed);
        assert!(
            first
                .as_slice()
                .iter()
                .all(|value| (-2.0..=3.0).contains(value))
        );
    }

    #[test]
    fn a_range_with_nothing_to_draw_gives_nan() {
        for range in [
            1.0..=0.0,
            f32::NAN..=1.0,
            0.0..=f32::NAN,
            0.0..=f32::INFINITY,
            f32::NEG_INFINITY..=f32::INFINITY,
            f32::INFINITY..=f32::INFINITY,
        ] {
            let tensor = Tensor2d::random(3, 4, range.clone(), 5);
            assert_eq!(tensor.shape(), (3, 4));
            assert!(
                tensor.as_slice().iter().all(|value| value.is_nan()),
                "{range:?}"
            );
        }
    }

    #[test]
    fn random_draws_from_every_finite_range() {
        assert_eq!(
            Tensor2d::random(2, 2, 0.5..=0.5, 1),
            Tensor2d::filled(2, 2, 0.5)
        );
        // Wider than the largest f32: the values are still finite and inside the range.
        let widest = Tensor2d::random(50, 50, f32::MIN..=f32::MAX, 2);
        assert!(widest.as_slice().iter().all(|value| value.is_finite()));
        assert!(widest.as_slice().iter().any(|&value| value < -1e37));
        assert!(widest.as_slice().iter().any(|&value| value > 1e37));
    }

    #[test]
    fn a_shape_too_large_to_count_is_an_error_in_from_vec() {
        let error = Tensor2d::from_vec(usize::MAX, 2, vec![0.0; 2]).unwrap_err();
        assert!(matches!(
            error,
            ShapeError::LengthMismatch { length: 2, .. }
        ));
        assert!(error.to_string().contains("needs more than"), "{error}");
    }

    #[test]
    #[should_panic(expected = "more elements than a usize can count")]
    fn a_shape_too_large_to_count_panics_in_zeros() {
        let _ = Tensor2d::zeros(usize::MAX, 2);
    }

    #[test]
    #[should_panic(expected = "position (0, 3) is outside a 2×3 tensor")]
    fn a_column_past_the_end_panics_instead_of_reading_the_next_row() {
        let tensor = Tensor2d::from_vec(2, 3, vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
        let _ = tensor.get(0, 3);
    }

    #[test]
    #[should_panic(expected = "row 2 is outside a 2×0 tensor")]
    fn a_row_past_the_end_panics_even_without_columns() {
        let tensor = Tensor2d::zeros(2, 0);
        assert!(tensor.row(1).is_empty());
        let _ = tensor.row(2);
    }

    #[test]
    fn compare_finds_the_worst_element() {
        let expected = Tensor2d::from_vec(2, 2, vec![1.0, 2.0, 3.0, 4.0]).unwrap();
        let actual = Tensor2d::from_vec(2, 2, vec![1.0, 2.1, 3.0, 4.8]).unwrap();
        let comparison = actual
            .compare(&expected, Tolerance::new(1e-3, 1e-6))
            .unwrap();
        assert!(!comparison.passed());
        assert_eq!(comparison.elements_outside_tolerance, 2);
        let worst = comparison.worst.unwrap();
        assert_eq!((worst.row, worst.column), (1, 1));
        assert!((comparison.largest_relative_error - 0.2).abs() < 1e-5);
    }

    #[test]
    fn compare_never_lets_nan_pass() {
        let expected = Tensor2d::from_vec(1, 2, vec![1.0, 2.0]).unwrap();
        let actual = Tensor2d::from_vec(1, 2, vec![1.0, f32::NAN]).unwrap();
        let comparison = actual.compare(&expected, Tolerance::new(1.0, 1.0)).unwrap();
        assert!(!comparison.passed());
        assert_eq!(comparison.non_finite_elements, 1);
    }

    #[test]
    fn compare_rejects_different_shapes() {
        let left = Tensor2d::zeros(2, 3);
        let right = Tensor2d::zeros(3, 2);
        assert!(matches!(
            left.compare(&right, Tolerance::EXACT),
            Err(ShapeError::Incompatible { .. })
        ));
    }
}
