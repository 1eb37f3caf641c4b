//! A hot loop that needs scratch space: where should the scratch live?
//!
//! The task is the median of every row of a matrix. Finding a median rearranges values
//! (`select_nth_unstable` partially sorts them), and the input must stay untouched, so
//! each row is first copied into a scratch buffer. The four functions differ only in
//! where that buffer comes from:
//!
//! - [`row_medians_allocating`]: a new `Vec` for every row, freed at the end of the row.
//! - [`row_medians_reusing`]: one `Vec`, allocated by the caller and reused for every row.
//! - [`row_medians_on_stack`]: an array in the function's stack frame; its length is a
//!   compile-time constant.
//! - [`row_medians_boxed`]: the same fixed-size array, but in a new `Box` for every row.
//!
//! A heap allocation asks the allocator for memory and a free gives it back: a few tens
//! of nanoseconds when the allocator can recycle a block it has cached, much more when it
//! must ask the operating system for fresh pages. The stack costs nothing per call: the
//! frame is reserved by moving the stack pointer when the function starts.

use crate::tensor::Tensor2d;

use crate::memory::MemoryError;

// ANCHOR: median_of_scratch
/// The median of the values in `scratch`, which it reorders: the value at position
/// `len / 2` once sorted (for an even length, the upper of the two middle values).
/// `total_cmp` orders every `f32`, NaN included, so no value can make this panic.
fn median_of_scratch(scratch: &mut [f32]) -> f32 {
    let middle = scratch.len() / 2;
    let (_, median, _) = scratch.select_nth_unstable_by(middle, f32::total_cmp);
    *median
}
// ANCHOR_END: median_of_scratch

/// Checks that there is one output value per row and that rows are not empty.
fn check_medians_shape(input: &Tensor2d, medians: &[f32]) -> Result<(), MemoryError> {
    if input.columns() == 0 {
        return Err(crate::tensor::ShapeError::Empty {
            operation: "row medians",
            rows: input.rows(),
            columns: input.columns(),
        }
        .into());
    }
    if medians.len() != input.rows() {
        return Err(MemoryError::LengthMismatch {
            operation: "row medians",
            expected_name: "the input's rows",
            expected: input.rows(),
            found_name: "the medians",
            found: medians.len(),
        });
    }
    Ok(())
}

// ANCHOR: row_medians_allocating
/// The median of every row, with a freshly allocated scratch vector per row.
pub fn row_medians_allocating(input: &Tensor2d, medians: &mut [f32]) -> Result<(), MemoryError> {
    check_medians_shape(input, medians)?;
    for (row, median) in medians.iter_mut().enumerate() {
        let mut scratch = input.row(row).to_vec(); // allocate, copy
        *median = median_of_scratch(&mut scratch);
    } // `scratch` is freed here, at the end of every iteration
    Ok(())
}
// ANCHOR_END: row_medians_allocating

// ANCHOR: row_medians_reusing
/// The median of every row, with one scratch vector reused for all rows. The caller owns
/// it, so a loop calling this function allocates nothing after its first call.
pub fn row_medians_reusing(
    input: &Tensor2d,
    medians: &mut [f32],
    scratch: &mut Vec<f32>,
) -> Result<(), MemoryError> {
    check_medians_shape(input, medians)?;
    for (row, median) in medians.iter_mut().enumerate() {
        scratch.clear(); // keeps the capacity: no allocation
        scratch.extend_from_slice(input.row(row));
        *median = median_of_scratch(scratch);
    }
    Ok(())
}
// ANCHOR_END: row_medians_reusing

/// Checks that the rows have exactly the compile-time length `COLUMNS`.
fn check_compiled_columns<const COLUMNS: usize>(
    input: &Tensor2d,
    operation: &'static str,
) -> Result<(), MemoryError> {
    if input.columns() != COLUMNS {
        return Err(MemoryError::RowLength {
            operation,
            compiled: COLUMNS,
            found: input.columns(),
        });
    }
    Ok(())
}

// ANCHOR: row_medians_on_stack
/// The median of every row, with the scratch space in a stack array of `COLUMNS` values.
/// The rows must have exactly `COLUMNS` values.
pub fn row_medians_on_stack<const COLUMNS: usize>(
    input: &Tensor2d,
    medians: &mut [f32],
) -> Result<(), MemoryError> {
    check_compiled_columns::<COLUMNS>(input, "row_medians_on_stack")?;
    check_medians_shape(input, medians)?;
    let mut scratch = [0.0_f32; COLUMNS]; // part of this function's stack frame
    for (row, median) in medians.iter_mut().enumerate() {
        scratch.copy_from_slice(input.row(row));
        *median = median_of_scratch(&mut scratch);
    }
    Ok(())
}
// ANCHOR_END: row_medians_on_stack

// ANCHOR: row_medians_boxed
/// The median of every row, with a fixed-size array allocated in a new `Box` per row:
/// the same layout as the stack array, on the heap.
pub fn row_medians_boxed<const COLUMNS: usize>(
    input: &Tensor2d,
    medians: &mut [f32],
) -> Result<(), MemoryError> {
    check_compiled_columns::<COLUMNS>(input, "row_medians_boxed")?;
    check_medians_shape(input, medians)?;
    for (row, median) in medians.iter_mut().enumerate() {
        let mut scratch = Box::new([0.0_f32; COLUMNS]); // allocate
        scratch.copy_from_slice(input.row(row));
        *median = median_of_scratch(&mut scratch[..]);
    } // freed here
    Ok(())
}
// ANCHOR_END: row_medians_boxed

#[cfg(test)]
mod tests {
    use super::*;

    /// The median by sorting a copy: slower, but obviously right.
    fn median_by_sorting(row: &[f32]) -> f32 {
        let mut sorted = row.to_vec();
        sorted.sort_by(f32::total_cmp);
        sorted[sorted.len() / 2]
    }

    fn check_all_variants<const COLUMNS: usize>(rows: usize, seed: u64) {
        let input = Tensor2d::random(rows, COLUMNS, -10.0..=10.0, seed);
        let expected: Vec<f32> = (0..rows)
            .map(|row| median_by_sorting(input.row(row)))
            .collect();
        let fresh = || vec![f32::NAN; rows];

        let mut medians = fresh();
        row_medians_allocating(&input, &mut medians).unwrap();
        assert_eq!(medians, expected, "allocating, {rows}×{COLUMNS}");

        let mut medians = fresh();
        let mut scratch = Vec::new();
        row_medians_reusing(&input, &mut medians, &mut scratch).unwrap();
        assert_eq!(medians, expected, "reusing, {rows}×{COLUMNS}");
        // Run again with the scratch left over from the first call: clear() must work.
        let mut medians = fresh();
        row_medians_reusing(&input, &mut medians, &mut scratch).unwrap();
        assert_eq!(medians, expected, "reusing again, {rows}×{COLUMNS}");

        let mut medians = fresh();
        row_medians_on_stack::<COLUMNS>(&input, &mut medians).unwrap();
        assert_eq!(medians, expected, "on stack, {rows}×{COLUMNS}");

        let mut medians = fresh();
        row_medians_boxed::<COLUMNS>(&input, &mut medians).unwrap();
        assert_eq!(medians, expected, "boxed, {rows}×{COLUMNS}");
    }

    #[test]
    fn every_variant_finds_the_median_of_every_row() {
        check_all_variants::<1>(1, 1);
        check_all_variants::<2>(5, 2);
        check_all_variants::<7>(3, 3);
        check_all_variants::<16>(9, 4);
        check_all_variants::<33>(17, 5);
        check_all_variants::<1000>(4, 6);
    }

    #[test]
    fn the_median_of_an_even_row_is_the_upper_middle_value() {
        let input = Tensor2d::from_vec(1, 4, vec![4.0, 1.0, 3.0, 2.0]).unwrap();
        let mut medians = [0.0];
        row_medians_allocating(&input, &mut medians).unwrap();
        assert_eq!(medians, [3.0]);
    }

    #[test]
    fn the_input_is_left_untouched() {
        let input = Tensor2d::random(6, 9, -1.0..=1.0, 8);
        let copy = input.clone();
        let mut medians = [0.0; 6];
        row_medians_on_stack::<9>(&input, &mut medians).unwrap();
        row_medians_reusing(&input, &mut medians, &mut Vec::new()).unwrap();
        assert_eq!(input, copy);
    }

    #[test]
    fn bad_shapes_are_errors() {
        let input = Tensor2d::zeros(3, 4);
        let mut too_few = [0.0; 2];
        assert!(matches!(
            row_medians_allocating(&input, &mut too_few),
            Err(MemoryError::LengthMismatch {
                expected: 3,
                found: 2,
                ..
            })
        ));
        let mut medians = [0.0; 3];
        assert_eq!(
            row_medians_on_stack::<5>(&input, &mut medians),
            Err(MemoryError::RowLength {
                operation: "row_medians_on_stack",
                compiled: 5,
                found: 4
            })
        );
        assert!(matches!(
            row_medians_boxed::<5>(&input, &mut medians),
            Err(MemoryError::RowLength { .. })
        ));
        let empty_rows = Tensor2d::zeros(3, 0);
        assert!(matches!(
            row_medians_reusing(&empty_rows, &mut medians, &mut Vec::new()),
            Err(MemoryError::Shape(_))
        ));
    }
}
