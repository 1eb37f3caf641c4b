//! From an indexed loop to an iterator chain.
//!
//! `add_bias_relu` adds a bias row to every row of a matrix and replaces every negative
//! result with zero: the linear layer's `+ b` and its ReLU, in place. It is correct, and
//! it is written the way C teaches: two counters and index arithmetic. Every
//! `values[row * columns + column]` and `bias[column]` is checked against the slice's
//! length on every iteration, unless the compiler can prove it needless.
//!
//! Your task: rewrite the loops as an iterator chain (`chunks_exact_mut`, `iter_mut`,
//! `zip`, `for_each`, or `for` loops over those iterators), with no indexing, no
//! `unsafe` and no allocation, keeping exactly the same results and the same errors.
//! The error type at the end of the file is part of the task's interface: keep it.

/// Adds `bias` to every row of `values`, a matrix of `columns` columns stored row after
/// row, and replaces every negative sum (and every NaN) with zero. Leaves `values`
/// untouched and returns an error when the shapes do not fit.
pub fn add_bias_relu(
    values: &mut [f32],
    columns: usize,
    bias: &[f32],
) -> Result<(), ShapeMismatch> {
    if columns == 0 {
        return Err(ShapeMismatch::NoColumns);
    }
    if bias.len() != columns {
        return Err(ShapeMismatch::BiasLength {
            bias: bias.len(),
            columns,
        });
    }
    if values.len() % columns != 0 {
        return Err(ShapeMismatch::NotWholeRows {
            values: values.len(),
            columns,
        });
    }
    let rows = values.len() / columns;
    for row in 0..rows {
        for column in 0..columns {
            let sum = values[row * columns + column] + bias[column];
            values[row * columns + column] = if sum > 0.0 { sum } else { 0.0 };
        }
    }
    Ok(())
}

/// Why `add_bias_relu` refused its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShapeMismatch {
    /// `columns` is zero: a row with no values cannot take a bias.
    NoColumns,
    /// The bias does not hold one value per column.
    BiasLength { bias: usize, columns: usize },
    /// The values do not fill a whole number of rows.
    NotWholeRows { values: usize, columns: usize },
}

impl std::fmt::Display for ShapeMismatch {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ShapeMismatch::NoColumns => {
                write!(formatter, "a row of zero columns holds no values")
            }
            ShapeMismatch::BiasLength { bias, columns } => write!(
                formatter,
                "the bias has {bias} values but a row has {columns} columns"
            ),
            ShapeMismatch::NotWholeRows { values, columns } => write!(
                formatter,
                "{values} values are not a whole number of rows of {columns} columns"
            ),
        }
    }
}

impl std::error::Error for ShapeMismatch {}
