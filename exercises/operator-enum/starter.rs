//! An enum instead of operator names.
//!
//! A tiny interpreter runs a *program*: a list of operators, each applied in turn to
//! every value. The program arrives as names, such as `["negate", "relu", "halve"]`,
//! and the starter keeps them as names: an `Operator` holds a `String`, and
//! `run_program` compares strings for every operator and every value. A misspelt name
//! is not noticed at all: `"sqaure"` matches nothing and silently does nothing.
//!
//! Your task: make `Operator` an enum with one variant per operator; let
//! `parse_program` turn names into variants once, returning an `UnknownOperator` error
//! (with the position and the name) for a name it does not know; and let `run_program`
//! `match` on the variants, with no string in sight.
//!
//! The error type at the end of the file is part of the task's interface: keep it.
//!
//! The operators: `relu` (a negative value or a NaN becomes 0), `negate` (−x), `square`
//! (x · x), `halve` (x / 2) and `absolute` (|x|).

/// One operator of a program.
pub struct Operator {
    name: String,
}

/// The operators named by `names`, in order; an error for the first name that is not an
/// operator.
pub fn parse_program(names: &[&str]) -> Result<Vec<Operator>, UnknownOperator> {
    Ok(names
        .iter()
        .map(|name| Operator {
            name: name.to_string(),
        })
        .collect())
}

/// Applies every operator of `program`, first to last, to every value.
pub fn run_program(program: &[Operator], values: &mut [f32]) {
    for operator in program {
        for value in values.iter_mut() {
            match operator.name.as_str() {
                "relu" => *value = if *value > 0.0 { *value } else { 0.0 },
                "negate" => *value = -*value,
                "square" => *value = *value * *value,
                "halve" => *value = *value / 2.0,
                "absolute" => *value = value.abs(),
                _ => {}
            }
        }
    }
}

/// A name in a program that names no operator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownOperator {
    /// Where the name is in the program, counting from 0.
    pub position: usize,
    /// The name as it was given.
    pub name: String,
}

impl std::fmt::Display for UnknownOperator {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            formatter,
            "operator {} of the program is {:?}, which is not one of relu, negate, square, \
             halve, absolute",
            self.position, self.name
        )
    }
}

impl std::error::Error for UnknownOperator {}
