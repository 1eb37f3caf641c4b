//! A sparse matrix in compressed sparse row (CSR) form: the type, its checked
//! constructors, and its products with dense vectors and matrices.
//!
//! The type lives in the `cpu` layer so that the graph (a `LinearSparse` node holds its
//! weights as a `CsrMatrix`) and every later module can use it; module 2's
//! [`crate::parallel::csr`] teaches it and re-exports it under its old name.
//!
//! CSR keeps only the non-zeros, row after row, in three arrays: `values` (the non-zeros),
//! `column_indices` (the column of each) and `row_offsets` (`rows + 1` positions into the
//! other two, row `r` owning `row_offsets[r]..row_offsets[r + 1]`).

use rayon::prelude::*;
use thiserror::Error;

use crate::tensor::Tensor2d;

// ANCHOR: csr_matrix
/// A `rows × columns` matrix that stores only its non-zero entries, row by row.
///
/// Every `CsrMatrix` has passed [`CsrMatrix::from_parts`]'s checks, so the products never
/// index out of bounds.
#[derive(Debug, Clone, PartialEq)]
pub struct CsrMatrix {
    rows: usize,
    columns: usize,
    /// `rows + 1` entries: row `r`'s non-zeros are `row_offsets[r]..row_offsets[r + 1]`.
    row_offsets: Vec<u32>,
    /// The column of each non-zero.
    column_indices: Vec<u32>,
    /// The non-zeros themselves.
    values: Vec<f32>,
}
// ANCHOR_END: csr_matrix

/// What is wrong with the parts of a sparse matrix, or with the operands of a product.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum CsrError {
    #[error(
        "a matrix of {rows} rows needs {expected} row offsets (one more than its rows), but {found} were given"
    )]
    OffsetCount {
        rows: usize,
        expected: usize,
        found: usize,
    },
    #[error("the row offsets must start at 0, but the first one is {first}")]
    FirstOffsetNotZero { first: u32 },
    #[error(
        "the row offsets must never decrease, but row {row} starts at {start} and ends at {end}"
    )]
    OffsetsNotMonotone { row: usize, start: u32, end: u32 },
    #[error(
        "the lengths disagree: the last row offset says {last} non-zeros, but there are {column_indices} column indices and {values} values"
    )]
    LengthsDisagree {
        last: u32,
        column_indices: usize,
        values: usize,
    },
    #[error(
        "row {row} has an entry in column {column}, but the matrix has only {columns} columns (0 to {columns} − 1)"
    )]
    ColumnOutOfRange {
        row: usize,
        column: u32,
        columns: usize,
    },
    #[error("the entry at row {row}, column {column} is NaN; a sparse matrix holds numbers only")]
    NotANumber { row: usize, column: usize },
    #[error("{count} non-zeros or rows are more than 32-bit indices can address")]
    TooLarge { count: usize },
    #[error(
        "{operation}: the operands do not fit, a {left_rows}×{left_columns} matrix times a {right_rows}×{right_columns} one"
    )]
    ShapeMismatch {
        operation: &'static str,
        left_rows: usize,
        left_columns: usize,
        right_rows: usize,
        right_columns: usize,
    },
}

impl CsrMatrix {
    // ANCHOR: from_parts
    /// A sparse matrix from its three arrays, after checking everything the products rely
    /// on: `rows + 1` offsets that start at 0 and never decrease, a last offset equal to
    /// the number of column indices and of values, every column inside the matrix, and no
    /// NaN among the values.
    pub fn from_parts(
        rows: usize,
        columns: usize,
        row_offsets: Vec<u32>,
        column_indices: Vec<u32>,
        values: Vec<f32>,
    ) -> Result<CsrMatrix, CsrError> {
        if row_offsets.len() != rows + 1 {
            return Err(CsrError::OffsetCount {
                rows,
                expected: rows + 1,
                found: row_offsets.len(),
            });
        }
        if row_offsets[0] != 0 {
            return Err(CsrError::FirstOffsetNotZero {
                first: row_offsets[0],
            });
        }
        for (row, window) in row_offsets.windows(2).enumerate() {
            if window[1] < window[0] {
                return Err(CsrError::OffsetsNotMonotone {
                    row,
                    start: window[0],
                    end: window[1],
                });
            }
        }
        let last = row_offsets[rows];
        if last as usize != column_indices.len() || last as usize != values.len() {
            return Err(CsrError::LengthsDisagree {
                last,
                column_indices: column_indices.len(),
                values: values.len(),
            });
        }
        for row in 0..rows {
            let range = row_offsets[row] as usize..row_offsets[row + 1] as usize;
            for (&column, &value) in column_indices[range.clone()].iter().zip(&values[range]) {
                if column as usize >= columns {
                    return Err(CsrError::ColumnOutOfRange {
                        row,
                        column,
                        columns,
                    });
                }
                if value.is_nan() {
                    return Err(CsrError::NotANumber {
                        row,
                        column: column as usize,
                    });
                }
            }
        }
        Ok(CsrMatrix {
            rows,
            columns,
            row_offsets,
            column_indices,
            values,
        })
    }
    // ANCHOR_END: from_parts

    // ANCHOR: from_dense
    /// The entries of `dense` whose magnitude is above `threshold`, in CSR form. A
    /// threshold of 0 keeps every non-zero; a larger one prunes the small entries too.
    pub fn from_dense(dense: &Tensor2d, threshold: f32) -> Result<CsrMatrix, CsrError> {
        let mut row_offsets = Vec::with_capacity(dense.rows() + 1);
        let mut column_indices = Vec::new();
        let mut values = Vec::new();
        row_offsets.push(0);
        for row in 0..dense.rows() {
            for (column, &value) in dense.row(row).iter().enumerate() {
                if value.is_nan() {
                    return Err(CsrError::NotANumber { row, column });
                }
                if value.abs() > threshold {
                    column_indices.push(column as u32);
                    values.push(value);
                }
            }
            let count = values.len();
            row_offsets.push(u32::try_from(count).map_err(|_| CsrError::TooLarge { count })?);
        }
        if u32::try_from(dense.columns()).is_err() {
            return Err(CsrError::TooLarge {
                count: dense.columns(),
            });
        }
        CsrMatrix::from_parts(
            dense.rows(),
            dense.columns(),
            row_offsets,
            column_indices,
            values,
        )
    }
    // ANCHOR_END: from_dense

    /// The matrix with its zeros written out.
    pub fn to_dense(&self) -> Tensor2d {
        let mut dense = Tensor2d::zeros(self.rows, self.columns);
        for row in 0..self.rows {
            let (columns, values) = self.row(row);
            for (&column, &value) in columns.iter().zip(values) {
                dense.set(row, column as usize, value);
            }
        }
        dense
    }

    pub fn rows(&self) -> usize {
        self.rows
    }

    pub fn columns(&self) -> usize {
        self.columns
    }

    /// How many entries are stored.
    pub fn non_zeros(&self) -> usize {
        self.values.len()
    }

    /// The fraction of entries stored: non-zeros / (rows · columns), 0 for an empty shape.
    pub fn density(&self) -> f64 {
        let entries = self.rows * self.columns;
        if entries == 0 {
            0.0
        } else {
            self.non_zeros() as f64 / entries as f64
        }
    }

    pub fn row_offsets(&self) -> &[u32] {
        &self.row_offsets
    }

    pub fn column_indices(&self) -> &[u32] {
        &self.column_indices
    }

    pub fn values(&self) -> &[f32] {
        &self.values
    }

    /// Row `row`'s column indices and values. Panics if `row` is not below `rows()`, like
    /// indexing a slice.
    pub fn row(&self, row: usize) -> (&[u32], &[f32]) {
        let range = self.row_offsets[row] as usize..self.row_offsets[row + 1] as usize;
        (&self.column_indices[range.clone()], &self.values[range])
    }

    // ANCHOR: row_dot
    /// One row of the matrix times a dense vector: a gather through the column indices.
    fn row_times(&self, row: usize, vector: &[f32]) -> f32 {
        let (columns, values) = self.row(row);
        columns
            .iter()
            .zip(values)
            .map(|(&column, &value)| value * vector[column as usize])
            .sum()
    }

    /// The product `A · x` with a dense vector `x` of length `columns()`.
    pub fn multiply_vector(&self, vector: &[f32]) -> Result<Vec<f32>, CsrError> {
        self.check_vector(vector)?;
        Ok((0..self.rows)
            .map(|row| self.row_times(row, vector))
            .collect())
    }

    /// The same product, rows spread over rayon's threads.
    pub fn multiply_vector_parallel(&self, vector: &[f32]) -> Result<Vec<f32>, CsrError> {
        self.check_vector(vector)?;
        Ok((0..self.rows)
            .into_par_iter()
            .map(|row| self.row_times(row, vector))
            .collect())
    }
    // ANCHOR_END: row_dot

    fn check_vector(&self, vector: &[f32]) -> Result<(), CsrError> {
        if vector.len() == self.columns {
            Ok(())
        } else {
            Err(self.mismatch("sparse matrix × vector", vector.len(), 1))
        }
    }

    fn mismatch(&self, operation: &'static str, rows: usize, columns: usize) -> CsrError {
        CsrError::ShapeMismatch {
            operation,
            left_rows: self.rows,
            left_columns: self.columns,
            right_rows: rows,
            right_columns: columns,
        }
    }

    /// One output row of `A · B`: for each non-zero `A[row, k]`, add `A[row, k] · B[k, ·]`.
    fn dense_row_into(&self, row: usize, dense: &Tensor2d, output: &mut [f32]) {
        let (columns, values) = self.row(row);
        for (&inner, &value) in columns.iter().zip(values) {
            for (out, &right) in output.iter_mut().zip(dense.row(inner as usize)) {
                *out += value * right;
            }
        }
    }

    /// The product `A · B` with a dense `B` of `columns()` rows.
    pub fn multiply_dense(&self, dense: &Tensor2d) -> Result<Tensor2d, CsrError> {
        self.check_dense(dense)?;
        let mut output = Tensor2d::zeros(self.rows, dense.columns());
        if dense.columns() > 0 {
            for (row, output_row) in output
                .as_mut_slice()
                .chunks_mut(dense.columns())
                .enumerate()
            {
                self.dense_row_into(row, dense, output_row);
            }
        }
        Ok(output)
    }

    /// The same product, output rows spread over rayon's threads.
    pub fn multiply_dense_parallel(&self, dense: &Tensor2d) -> Result<Tensor2d, CsrError> {
        self.check_dense(dense)?;
        let mut output = Tensor2d::zeros(self.rows, dense.columns());
        if dense.columns() > 0 {
            output
                .as_mut_slice()
                .par_chunks_mut(dense.columns())
                .enumerate()
                .for_each(|(row, output_row)| self.dense_row_into(row, dense, output_row));
        }
        Ok(output)
    }

    fn check_dense(&self, dense: &Tensor2d) -> Result<(), CsrError> {
        if dense.rows() == self.columns {
            Ok(())
        } else {
            Err(self.mismatch(
                "sparse matrix × dense matrix",
                dense.rows(),
                dense.columns(),
            ))
        }
    }
}

/// A `rows × columns` dense matrix with about `density` of its entries non-zero (values in
/// ±1), seeded: the inputs of the tests, benchmarks and the density sweep.
pub fn random_sparse_dense(rows: usize, columns: usize, density: f64, seed: u64) -> Tensor2d {
    use rand::{RngExt, SeedableRng};
    let mut generator = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let values = (0..rows * columns)
        .map(|_| {
            if generator.random::<f64>() < density {
                generator.random_range(-1.0_f32..=1.0)
            } else {
                0.0
            }
        })
        .collect();
    Tensor2d::from_vec(rows, columns, values).expect("the length is rows · columns")
}
