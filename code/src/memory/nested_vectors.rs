//! A matrix as one flat vector, or as a vector of row vectors.
//!
//! `Tensor2d` keeps all its values in one `Vec<f32>`, row after row. The tempting
//! alternative, `Vec<Vec<f32>>`, gives every row its own heap allocation: the outer
//! vector holds, for each row, a pointer, a length and a capacity (24 bytes on a 64-bit
//! machine), and the values sit wherever the allocator put each row. Reading an element
//! then takes two dependent loads instead of one, and rows that were allocated at
//! different times may lie far apart. A walk over many rows is still not a pointer chase:
//! the row addresses sit in order in the outer vector, so the core can fetch several
//! scattered rows at once, as with independent random reads.
//!
//! The sums here are written so that the flat and the nested version of each traversal
//! add exactly the same numbers in exactly the same order: their results are identical,
//! and any difference in speed comes from the layout alone.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::cpu::sum_several_accumulators;
use crate::tensor::Tensor2d;

// ANCHOR: nested_matrix
/// A matrix stored as a vector of rows. The rows are private, so every row is known to
/// have `columns` values.
#[derive(Debug, Clone, PartialEq)]
pub struct NestedMatrix {
    rows: Vec<Vec<f32>>,
    columns: usize,
}
// ANCHOR_END: nested_matrix

impl NestedMatrix {
    /// The same values as `matrix`, each row copied into its own allocation, in order.
    /// A fresh allocator usually hands out such allocations one after another, so the
    /// rows end up close together: the best case for a nested matrix.
    pub fn from_tensor(matrix: &Tensor2d) -> Self {
        Self {
            rows: (0..matrix.rows())
                .map(|row| matrix.row(row).to_vec())
                .collect(),
            columns: matrix.columns(),
        }
    }

    /// The same values, but the rows are allocated in a random order, so that row `r`
    /// and row `r + 1` usually lie far apart in memory, as they do in a long-running
    /// program where rows were created, dropped and recreated over time.
    pub fn from_tensor_scattered(matrix: &Tensor2d, seed: u64) -> Self {
        let mut allocation_order: Vec<usize> = (0..matrix.rows()).collect();
        let mut generator = ChaCha8Rng::seed_from_u64(seed);
        for last in (1..allocation_order.len()).rev() {
            allocation_order.swap(last, generator.random_range(0..=last));
        }
        let mut rows: Vec<Option<Vec<f32>>> = vec![None; matrix.rows()];
        for row in allocation_order {
            rows[row] = Some(matrix.row(row).to_vec());
        }
        Self {
            rows: rows.into_iter().flatten().collect(),
            columns: matrix.columns(),
        }
    }

    pub fn rows(&self) -> usize {
        self.rows.len()
    }

    pub fn columns(&self) -> usize {
        self.columns
    }

    /// The address of each row's first value, to see where the allocator put the rows.
    pub fn row_addresses(&self) -> Vec<usize> {
        self.rows.iter().map(|row| row.as_ptr() as usize).collect()
    }
}

// ANCHOR: sum_rows_first
/// The sum of all values, row by row; each row is summed with eight accumulators.
pub fn sum_rows_first_flat(matrix: &Tensor2d) -> f32 {
    let mut total = 0.0;
    for row in 0..matrix.rows() {
        total += sum_several_accumulators(matrix.row(row));
    }
    total
}

/// The same sum over a nested matrix: one extra load per row, to find the row.
pub fn sum_rows_first_nested(matrix: &NestedMatrix) -> f32 {
    let mut total = 0.0;
    for row in &matrix.rows {
        total += sum_several_accumulators(row);
    }
    total
}
// ANCHOR_END: sum_rows_first

// ANCHOR: sum_columns_first
/// The sum of all values, column by column: consecutive reads are a whole row apart.
pub fn sum_columns_first_flat(matrix: &Tensor2d) -> f32 {
    let values = matrix.as_slice();
    let columns = matrix.columns();
    let mut total = 0.0;
    for column in 0..columns {
        for row in 0..matrix.rows() {
            total += values[row * columns + column];
        }
    }
    total
}

/// The same sum over a nested matrix: every single read first loads its row's pointer.
pub fn sum_columns_first_nested(matrix: &NestedMatrix) -> f32 {
    let mut total = 0.0;
    for column in 0..matrix.columns {
        for row in &matrix.rows {
            total += row[column];
        }
    }
    total
}
// ANCHOR_END: sum_columns_first

#[cfg(test)]
mod tests {
    use super::*;

    const SHAPES: [(usize, usize); 7] =
        [(1, 1), (1, 9), (9, 1), (3, 5), (17, 8), (8, 17), (64, 33)];

    #[test]
    fn flat_and_nested_give_identical_sums() {
        for (index, &(rows, columns)) in SHAPES.iter().enumerate() {
            let matrix = Tensor2d::random(rows, columns, -1.0..=1.0, index as u64);
            for nested in [
                NestedMatrix::from_tensor(&matrix),
                NestedMatrix::from_tensor_scattered(&matrix, 5),
            ] {
                assert_eq!((nested.rows(), nested.columns()), (rows, columns));
                // Same additions in the same order: equal to the last bit.
                assert_eq!(sum_rows_first_nested(&nested), sum_rows_first_flat(&matrix));
                assert_eq!(
                    sum_columns_first_nested(&nested),
                    sum_columns_first_flat(&matrix)
                );
            }
        }
    }

    #[test]
    fn rows_first_and_columns_first_agree_when_no_rounding_happens() {
        // Small integers add exactly in f32, so the order of the additions cannot matter.
        for &(rows, columns) in &SHAPES {
            let values = (0..rows * columns).map(|index| (index % 13) as f32 - 6.0);
            let matrix = Tensor2d::from_vec(rows, columns, values.collect()).unwrap();
            let expected: f32 = matrix.as_slice().iter().sum();
            assert_eq!(sum_rows_first_flat(&matrix), expected);
            assert_eq!(sum_columns_first_flat(&matrix), expected);
        }
    }

    #[test]
    fn scattered_rows_keep_their_values_but_not_their_neighbours() {
        let matrix = Tensor2d::random(200, 4, -1.0..=1.0, 9);
        let in_order = NestedMatrix::from_tensor(&matrix);
        let scattered = NestedMatrix::from_tensor_scattered(&matrix, 9);
        assert_eq!(in_order, scattered);
        // Rows allocated in a shuffled order cannot all sit at increasing addresses.
        let addresses = scattered.row_addresses();
        assert!(addresses.windows(2).any(|pair| pair[1] < pair[0]));
    }
}
