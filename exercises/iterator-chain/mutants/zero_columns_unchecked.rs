// mutant: panic — drops the zero-columns check: on an empty matrix `chunks_exact_mut(0)` panics instead of returning the error
// expect: panicked
//! From an indexed loop to an iterator chain.
//! The reference solution with the one mistake named in the first line.
//!
//! `chunks_exact_mut(columns)` hands out the rows one at a time as slices of exactly
//! `columns` values, and `zip` walks each row beside the bias. No index is ever
//! computed, so there is nothing to check against a length inside the loop, and the
//! compiler is free to process several values per instruction.

/// Adds `bias` to every row of `values`, a matrix of `columns` columns stored row after
/// row, and replaces every negative sum (and every NaN) with zero. Leaves `values`
/// untouched and returns an error when the shapes do not fit.
pub fn add_bias_relu(
    values: &mut [f32],
    columns: usize,
    bias: &[f32],
) -> Result<(), ShapeMismatch> {
    // The checks stay: `zip` stops at the shorter side and `chunks_exact_mut` drops a
    // partial last row, so without them a wrong shape would pass silently.
    if bias.len() != columns {
        return Err(ShapeMismatch::BiasLength {
            bias: bias.len(),
            columns,
        });
    }
    if !values.len().is_multiple_of(columns) {
        return Err(ShapeMismatch::NotWholeRows {
            values: values.len(),
            columns,
        });
    }
    values.chunks_exact_mut(columns).for_each(|row| {
        row.iter_mut().zip(bias).for_each(|(value, bias)| {
            let sum = *value + bias;
            *value = if sum > 0.0 { sum } else { 0.0 };
        });
    });
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
