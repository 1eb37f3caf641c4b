// mutant: stringly-typed — gives the enum a `name()` and still matches on the names inside the loop
// expect: string literal
//! An enum instead of operator names.
//! The reference solution with the one mistake named in the first line.
//!
//! The names are read once, in `parse_program`, which is the only place that knows how
//! an operator is spelt. From there on an operator is one byte, and `match` on it
//! compiles to a jump table or a few comparisons of small integers. The compiler checks
//! that every `match` covers every variant, so adding an operator to the enum shows every
//! place that must learn about it.

/// One operator of a program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operator {
    Relu,
    Negate,
    Square,
    Halve,
    Absolute,
}

impl Operator {
    /// The operator's name, as a program spells it.
    pub fn name(self) -> &'static str {
        match self {
            Operator::Relu => "relu",
            Operator::Negate => "negate",
            Operator::Square => "square",
            Operator::Halve => "halve",
            Operator::Absolute => "absolute",
        }
    }
}

/// The operators named by `names`, in order; an error for the first name that is not an
/// operator.
pub fn parse_program(names: &[&str]) -> Result<Vec<Operator>, UnknownOperator> {
    names
        .iter()
        .enumerate()
        .map(|(position, &name)| match name {
            "relu" => Ok(Operator::Relu),
            "negate" => Ok(Operator::Negate),
            "square" => Ok(Operator::Square),
            "halve" => Ok(Operator::Halve),
            "absolute" => Ok(Operator::Absolute),
            _ => Err(UnknownOperator {
                position,
                name: name.to_string(),
            }),
        })
        // Collecting `Result`s into a `Result<Vec<_>, _>` stops at the first error.
        .collect()
}

/// Applies every operator of `program`, first to last, to every value.
pub fn run_program(program: &[Operator], values: &mut [f32]) {
    for operator in program {
        for value in values.iter_mut() {
            *value = match operator.name() {
                "relu" => {
                    if *value > 0.0 {
                        *value
                    } else {
                        0.0
                    }
                }
                "negate" => -*value,
                "square" => *value * *value,
                "halve" => *value / 2.0,
                "absolute" => value.abs(),
                _ => *value,
            };
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
