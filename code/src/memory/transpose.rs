//! Transposition: the everyday operation that cannot avoid strided access.
//!
//! Transposing a row-major matrix reads it row by row and writes it column by column, or
//! the other way round: one of the two sides always jumps a whole row of the output (or
//! input) between consecutive elements. Once a row no longer fits in a cache line, every
//! strided access touches a different line, and for large matrices those lines are
//! evicted before their neighbours are used.
//!
//! Blocking fixes that by transposing one small square tile at a time: a tile of
//! `block × block` values spans about `2 · block` cache lines on each side (for a block of
//! 32), few enough by capacity to stay in L1 until every value on them has been used.
//! Capacity is not the whole story: when the row length is a power of two, a tile's rows
//! map to the same few cache sets and evict each other, so the tiled version slows down
//! at those sizes too.
//!
//! All three functions move exactly the same values to exactly the same places.

use crate::tensor::{Tensor2d, check_output_shape};

use crate::memory::MemoryError;

/// Checks that `output` has the shape of `input` transposed.
fn check_transposed_shape(input: &Tensor2d, output: &Tensor2d) -> Result<(), MemoryError> {
    let (rows, columns) = input.shape();
    check_output_shape("transpose", (columns, rows), output.shape())?;
    Ok(())
}

// ANCHOR: transpose_reading_rows
/// Transposes `input` into `output`, reading `input` row by row (sequentially) and so
/// writing `output` column by column (with a stride of `input.rows()` values).
pub fn transpose_reading_rows(input: &Tensor2d, output: &mut Tensor2d) -> Result<(), MemoryError> {
    check_transposed_shape(input, output)?;
    let (rows, columns) = input.shape();
    let source = input.as_slice();
    let destination = output.as_mut_slice();
    for row in 0..rows {
        for column in 0..columns {
            destination[column * rows + row] = source[row * columns + column];
        }
    }
    Ok(())
}
// ANCHOR_END: transpose_reading_rows

// ANCHOR: transpose_writing_rows
/// Transposes `input` into `output`, writing `output` row by row (sequentially) and so
/// reading `input` column by column.
pub fn transpose_writing_rows(input: &Tensor2d, output: &mut Tensor2d) -> Result<(), MemoryError> {
    check_transposed_shape(input, output)?;
    let (rows, columns) = input.shape();
    let source = input.as_slice();
    let destination = output.as_mut_slice();
    for column in 0..columns {
        for row in 0..rows {
            destination[column * rows + row] = source[row * columns + column];
        }
    }
    Ok(())
}
// ANCHOR_END: transpose_writing_rows

// ANCHOR: transpose_blocked
/// Transposes `input` into `output` one `block × block` tile at a time. Tiles at the
/// right and bottom edges are cut to fit, so any shape works with any block size.
pub fn transpose_blocked(
    input: &Tensor2d,
    output: &mut Tensor2d,
    block: usize,
) -> Result<(), MemoryError> {
    if block == 0 {
        return Err(MemoryError::ZeroBlock);
    }
    check_transposed_shape(input, output)?;
    let (rows, columns) = input.shape();
    let source = input.as_slice();
    let destination = output.as_mut_slice();
    for row_start in (0..rows).step_by(block) {
        let row_end = (row_start + block).min(rows);
        for column_start in (0..columns).step_by(block) {
            let column_end = (column_start + block).min(columns);
            // Inside one tile, the lines read and written fit in L1 by capacity, so they
            // can stay there until the tile is done (unless a power-of-two row length
            // makes them collide in a few cache sets).
            for row in row_start..row_end {
                for column in column_start..column_end {
                    destination[column * rows + row] = source[row * columns + column];
                }
            }
        }
    }
    Ok(())
}
// ANCHOR_END: transpose_blocked

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_matches_the_tensors_own_transpose() {
        let shapes = [
            (1, 1),
            (1, 7),
            (7, 1),
            (3, 5),
            (31, 17),
            (64, 64),
            (65, 130),
        ];
        for (index, &(rows, columns)) in shapes.iter().enumerate() {
            let input = Tensor2d::random(rows, columns, -1.0..=1.0, index as u64);
            let expected = input.transposed();
            let mut output = Tensor2d::filled(columns, rows, f32::NAN);
            transpose_reading_rows(&input, &mut output).unwrap();
            assert_eq!(output, expected, "reading rows, {rows}×{columns}");

            let mut output = Tensor2d::filled(columns, rows, f32::NAN);
            transpose_writing_rows(&input, &mut output).unwrap();
            assert_eq!(output, expected, "writing rows, {rows}×{columns}");

            // Blocks that divide the shape, that do not, and that exceed it.
            for block in [1, 2, 8, 16, 33, 1000] {
                let mut output = Tensor2d::filled(columns, rows, f32::NAN);
                transpose_blocked(&input, &mut output, block).unwrap();
                assert_eq!(output, expected, "block {block}, {rows}×{columns}");
            }
        }
    }

    #[test]
    fn transposing_twice_gives_the_input_back() {
        let input = Tensor2d::random(23, 41, -1.0..=1.0, 3);
        let mut once = Tensor2d::zeros(41, 23);
        let mut twice = Tensor2d::zeros(23, 41);
        transpose_blocked(&input, &mut once, 8).unwrap();
        transpose_blocked(&once, &mut twice, 8).unwrap();
        assert_eq!(twice, input);
    }

    #[test]
    fn a_wrong_output_shape_or_a_zero_block_is_an_error() {
        let input = Tensor2d::zeros(3, 5);
        let mut untransposed = Tensor2d::zeros(3, 5);
        assert!(matches!(
            transpose_reading_rows(&input, &mut untransposed),
            Err(MemoryError::Shape(_))
        ));
        assert!(matches!(
            transpose_writing_rows(&input, &mut untransposed),
            Err(MemoryError::Shape(_))
        ));
        assert!(matches!(
            transpose_blocked(&input, &mut untransposed, 4),
            Err(MemoryError::Shape(_))
        ));
        let mut output = Tensor2d::zeros(5, 3);
        assert_eq!(
            transpose_blocked(&input, &mut output, 0),
            Err(MemoryError::ZeroBlock)
        );
    }
}
