//! A sparse matrix in compressed sparse row (CSR) form, and its products.
//!
//! A matrix whose entries are mostly zero wastes memory and time when stored densely. CSR
//! keeps only the non-zeros, row after row, in three arrays:
//!
//! - `values`: the non-zero values, row 0's first, then row 1's, …;
//! - `column_indices`: the column of each value;
//! - `row_offsets`: `rows + 1` positions into the other two, row `r` owning
//!   `row_offsets[r]..row_offsets[r + 1]`.
//!
//! The products read the dense operand through `column_indices`, an indirect, data-
//! dependent access: that is what makes sparse work irregular. Each product comes
//! sequential and with rayon; rows are independent, so rayon splits by rows and needs no
//! locks. `shaders/parallel/csr_multiply.wgsl` (see `gpu_csr`) runs the same product on
//! the GPU.
//!
//! The pruning chapters of module 3 build on this type: a pruned linear layer computes
//! `x · W + b` with the weights `W` in CSR, which [`dense_times_sparse`] does.

use rayon::prelude::*;

use crate::tensor::Tensor2d;

// The type, its constructors and the random test matrices live in the `cpu` layer
// (`code/src/cpu/sparse.rs`), where the graph's sparse operator and its tests can reach
// them; this module keeps its old names.
pub use crate::cpu::sparse::{CsrError, CsrMatrix, random_sparse_dense};

// ANCHOR: dense_times_sparse
/// The product `x · W` of dense rows `x` (`batch × inputs`) and sparse weights `W`
/// (`inputs × outputs`) stored in CSR: the product of a pruned linear layer without its
/// bias. Row `k` of `W` holds the weights leaving input `k`, so each output row is the sum
/// of `x[r, k] · W[k, ·]` over the inputs: the CSR rows are read front to back and
/// scattered into the output row, with no transposition.
pub fn dense_times_sparse(inputs: &Tensor2d, weights: &CsrMatrix) -> Result<Tensor2d, CsrError> {
    check_dense_times_sparse(inputs, weights)?;
    let mut output = Tensor2d::zeros(inputs.rows(), weights.columns());
    if weights.columns() > 0 {
        for (row, output_row) in output
            .as_mut_slice()
            .chunks_mut(weights.columns())
            .enumerate()
        {
            input_row_times_sparse(inputs.row(row), weights, output_row);
        }
    }
    Ok(output)
}

/// [`dense_times_sparse`] with the rows of `x` spread over rayon's threads.
pub fn dense_times_sparse_parallel(
    inputs: &Tensor2d,
    weights: &CsrMatrix,
) -> Result<Tensor2d, CsrError> {
    check_dense_times_sparse(inputs, weights)?;
    let mut output = Tensor2d::zeros(inputs.rows(), weights.columns());
    if weights.columns() > 0 {
        output
            .as_mut_slice()
            .par_chunks_mut(weights.columns())
            .enumerate()
            .for_each(|(row, output_row)| {
                input_row_times_sparse(inputs.row(row), weights, output_row)
            });
    }
    Ok(output)
}

fn input_row_times_sparse(input_row: &[f32], weights: &CsrMatrix, output_row: &mut [f32]) {
    for (inner, &input) in input_row.iter().enumerate() {
        let (columns, values) = weights.row(inner);
        for (&column, &weight) in columns.iter().zip(values) {
            output_row[column as usize] += input * weight;
        }
    }
}
// ANCHOR_END: dense_times_sparse

fn check_dense_times_sparse(inputs: &Tensor2d, weights: &CsrMatrix) -> Result<(), CsrError> {
    if inputs.columns() == weights.rows() {
        Ok(())
    } else {
        Err(CsrError::ShapeMismatch {
            operation: "dense rows × sparse weights",
            left_rows: inputs.rows(),
            left_columns: inputs.columns(),
            right_rows: weights.rows(),
            right_columns: weights.columns(),
        })
    }
}

/// The dense product `a · b`, the plain triple loop: the reference the sparse products
/// are checked against, and the dense side of the density sweep.
pub fn dense_product(a: &Tensor2d, b: &Tensor2d) -> Tensor2d {
    let mut output = Tensor2d::zeros(a.rows(), b.columns());
    if b.columns() > 0 {
        for (row, output_row) in output.as_mut_slice().chunks_mut(b.columns()).enumerate() {
            for (inner, &left) in a.row(row).iter().enumerate() {
                for (out, &right) in output_row.iter_mut().zip(b.row(inner)) {
                    *out += left * right;
                }
            }
        }
    }
    output
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::Tolerance;

    fn assert_close(actual: &Tensor2d, expected: &Tensor2d, what: &str) {
        let comparison = actual
            .compare(expected, Tolerance::new(1e-5, 1e-5))
            .unwrap_or_else(|error| panic!("{what}: {error}"));
        assert!(comparison.passed(), "{what}: {comparison}");
    }

    /// Sparsity patterns worth testing: random densities, an empty row, a dense row, and
    /// a matrix with no non-zeros at all.
    fn patterns() -> Vec<(String, Tensor2d)> {
        let mut cases = Vec::new();
        for (index, &(rows, columns, density)) in [
            (1, 1, 1.0),
            (3, 5, 0.0),
            (7, 3, 0.5),
            (31, 17, 0.1),
            (64, 64, 0.02),
            (100, 37, 0.9),
        ]
        .iter()
        .enumerate()
        {
            let mut dense = random_sparse_dense(rows, columns, density, index as u64);
            if rows > 2 {
                dense.row_mut(0).fill(0.0);
                dense.row_mut(1).fill(0.75);
            }
            cases.push((format!("{rows}×{columns} at density {density}"), dense));
        }
        cases
    }

    #[test]
    fn dense_to_sparse_and_back_is_the_identity() {
        for (name, dense) in patterns() {
            let sparse = CsrMatrix::from_dense(&dense, 0.0).unwrap();
            assert_eq!(sparse.to_dense(), dense, "{name}");
            let stored = dense
                .as_slice()
                .iter()
                .filter(|value| **value != 0.0)
                .count();
            assert_eq!(sparse.non_zeros(), stored, "{name}");
        }
        // A threshold drops the small entries.
        let dense = Tensor2d::from_vec(1, 4, vec![0.1, -0.5, 2.0, -0.05]).unwrap();
        let pruned = CsrMatrix::from_dense(&dense, 0.2).unwrap();
        assert_eq!(pruned.column_indices(), [1, 2]);
        assert_eq!(pruned.values(), [-0.5, 2.0]);
    }

    #[test]
    fn every_product_matches_the_dense_reference() {
        for (name, dense) in patterns() {
            let sparse = CsrMatrix::from_dense(&dense, 0.0).unwrap();
            let vector = Tensor2d::random(dense.columns(), 1, -1.0..=1.0, 5);
            let expected = dense_product(&dense, &vector);
            for (label, result) in [
                ("vector", sparse.multiply_vector(vector.as_slice()).unwrap()),
                (
                    "vector, parallel",
                    sparse.multiply_vector_parallel(vector.as_slice()).unwrap(),
                ),
            ] {
                let result = Tensor2d::from_vec(dense.rows(), 1, result).unwrap();
                assert_close(&result, &expected, &format!("{name}, {label}"));
            }
            let right = Tensor2d::random(dense.columns(), 9, -1.0..=1.0, 6);
            let expected = dense_product(&dense, &right);
            assert_close(&sparse.multiply_dense(&right).unwrap(), &expected, &name);
            assert_close(
                &sparse.multiply_dense_parallel(&right).unwrap(),
                &expected,
                &name,
            );
            // x · W with W sparse.
            let inputs = Tensor2d::random(5, dense.rows(), -1.0..=1.0, 7);
            let expected = dense_product(&inputs, &dense);
            assert_close(
                &dense_times_sparse(&inputs, &sparse).unwrap(),
                &expected,
                &name,
            );
            assert_close(
                &dense_times_sparse_parallel(&inputs, &sparse).unwrap(),
                &expected,
                &name,
            );
        }
    }

    #[test]
    fn broken_parts_are_named_errors() {
        let ok = || (vec![0, 1, 3], vec![2, 0, 1], vec![1.0, 2.0, 3.0]);
        let (offsets, columns, values) = ok();
        assert!(CsrMatrix::from_parts(2, 3, offsets, columns, values).is_ok());
        let (_, columns, values) = ok();
        assert_eq!(
            CsrMatrix::from_parts(2, 3, vec![0, 3], columns, values),
            Err(CsrError::OffsetCount {
                rows: 2,
                expected: 3,
                found: 2
            })
        );
        let (_, columns, values) = ok();
        assert_eq!(
            CsrMatrix::from_parts(2, 3, vec![1, 1, 3], columns, values),
            Err(CsrError::FirstOffsetNotZero { first: 1 })
        );
        let (_, columns, values) = ok();
        assert_eq!(
            CsrMatrix::from_parts(2, 3, vec![0, 3, 1], columns, values),
            Err(CsrError::OffsetsNotMonotone {
                row: 1,
                start: 3,
                end: 1
            })
        );
        let (offsets, columns, _) = ok();
        assert_eq!(
            CsrMatrix::from_parts(2, 3, offsets, columns, vec![1.0, 2.0]),
            Err(CsrError::LengthsDisagree {
                last: 3,
                column_indices: 3,
                values: 2
            })
        );
        let (offsets, _, values) = ok();
        let error = CsrMatrix::from_parts(2, 3, offsets, vec![2, 3, 1], values).unwrap_err();
        assert_eq!(
            error,
            CsrError::ColumnOutOfRange {
                row: 1,
                column: 3,
                columns: 3
            }
        );
        assert!(
            error.to_string().contains("row 1 has an entry in column 3"),
            "{error}"
        );
        let (offsets, columns, _) = ok();
        assert_eq!(
            CsrMatrix::from_parts(2, 3, offsets, columns, vec![1.0, f32::NAN, 3.0]),
            Err(CsrError::NotANumber { row: 1, column: 0 })
        );
        let nan = Tensor2d::from_vec(1, 2, vec![0.0, f32::NAN]).unwrap();
        assert_eq!(
            CsrMatrix::from_dense(&nan, 0.0),
            Err(CsrError::NotANumber { row: 0, column: 1 })
        );
        let sparse = CsrMatrix::from_dense(&Tensor2d::filled(2, 3, 1.0), 0.0).unwrap();
        assert!(matches!(
            sparse.multiply_vector(&[1.0; 2]),
            Err(CsrError::ShapeMismatch { .. })
        ));
        assert!(matches!(
            sparse.multiply_dense(&Tensor2d::zeros(2, 2)),
            Err(CsrError::ShapeMismatch { .. })
        ));
        assert!(matches!(
            dense_times_sparse(&Tensor2d::zeros(4, 3), &sparse),
            Err(CsrError::ShapeMismatch { .. })
        ));
    }
}
