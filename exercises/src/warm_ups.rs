//! The checker's copies of the error types of the Rust warm-ups of Module 0.
//!
//! Every exercise file defines its error type itself, so that the file stands on its own
//! (it needs only the standard library, and the book compiles it as it is shown). The
//! checker turns a file's error into the copy here, field by field, and compares that.

use thiserror::Error;

/// Why `add_bias_relu` refused its arguments.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ShapeMismatch {
    #[error("a row of zero columns holds no values: columns must be at least 1")]
    NoColumns,
    #[error("the bias has {bias} values but a row has {columns} columns")]
    BiasLength { bias: usize, columns: usize },
    #[error("{values} values are not a whole number of rows of {columns} columns")]
    NotWholeRows { values: usize, columns: usize },
}

/// The operator names a program may use, in the order the error message lists them.
pub const OPERATOR_NAMES: [&str; 5] = ["relu", "negate", "square", "halve", "absolute"];

/// A name in an operator program that names no operator.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error(
    "operator {position} of the program is {name:?}, which is not one of relu, negate, \
     square, halve, absolute"
)]
pub struct UnknownOperator {
    /// Where the name is in the program, counting from 0.
    pub position: usize,
    /// The name as it was given.
    pub name: String,
}
