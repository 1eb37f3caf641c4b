// alternative: parses with the `FromStr` trait and `str::parse`, and runs the whole program on one value before moving to the next
//! An enum instead of operator names. A correct solution written differently.

use std::str::FromStr;

/// One operator of a program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Operator {
    Relu,
    Negate,
    Square,
    Halve,
    Absolute,
}

/// A name that is not an operator; `parse_program` adds the position.
pub struct NotAnOperator;

impl FromStr for Operator {
    type Err = NotAnOperator;

    fn from_str(name: &str) -> Result<Operator, NotAnOperator> {
        match name {
            "relu" => Ok(Operator::Relu),
            "negate" => Ok(Operator::Negate),
            "square" => Ok(Operator::Square),
            "halve" => Ok(Operator::Halve),
            "absolute" => Ok(Operator::Absolute),
            _ => Err(NotAnOperator),
        }
    }
}

impl Operator {
    fn apply(self, value: f32) -> f32 {
        match self {
            Operator::Relu => value.max(0.0),
            Operator::Negate => -value,
            Operator::Square => value * value,
            Operator::Halve => 0.5 * value,
            Operator::Absolute => value.abs(),
        }
    }
}

/// The operators named by `names`, in order; an error for the first name that is not an
/// operator.
pub fn parse_program(names: &[&str]) -> Result<Vec<Operator>, UnknownOperator> {
    let mut program = Vec::with_capacity(names.len());
    for (position, name) in names.iter().enumerate() {
        match name.parse() {
            Ok(operator) => program.push(operator),
            Err(NotAnOperator) => {
                return Err(UnknownOperator {
                    position,
                    name: name.to_string(),
                });
            }
        }
    }
    Ok(program)
}

/// Applies every operator of `program`, first to last, to every value.
pub fn run_program(program: &[Operator], values: &mut [f32]) {
    for value in values.iter_mut() {
        *value = program
            .iter()
            .fold(*value, |value, operator| operator.apply(value));
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
