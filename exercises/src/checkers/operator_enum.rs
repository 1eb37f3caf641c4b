//! Warm-up: an enum instead of operator names (`parse_program`, `run_program`).
//!
//! Three parts. **Unknown names are errors**: programs with a misspelt, a capitalised
//! and an empty name must give `UnknownOperator` with the right position and name, and
//! programs of known names must parse. **Results**: random programs of every operator
//! run on random values, compared exactly with the checker's own interpreter. **An enum,
//! not strings**: `Operator` must be declared as an `enum`, take at most 8 bytes (a
//! `String` inside it takes 24), and neither `run_program` nor a function it calls may
//! hold a string literal (read from the source, see [`crate::rust_form`]).

use galaxy::{Tensor2d, Tolerance};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::report::{PartReport, Verdict, catching_panics, compare};
use crate::rust_form::{Place, RustSource};
use crate::submission::{Submission, Variant};
use crate::warm_ups::{OPERATOR_NAMES, UnknownOperator};

/// The largest `Operator` that holds no string: a tag, and room for one parameter.
pub const LARGEST_OPERATOR_BYTES: usize = 8;

/// What the checker needs from one variant's module, with the program kept opaque: it
/// parses and runs in one call so that the module's own `Operator` type stays inside.
struct Interpreter {
    parse_and_run: fn(&[&str], &mut [f32]) -> Result<(), UnknownOperator>,
    operator_bytes: usize,
}

fn interpreter_of(variant: Variant) -> Interpreter {
    crate::rust_exercises::with_rust_module!(operator_enum, variant, |code| {
        fn parse_and_run(names: &[&str], values: &mut [f32]) -> Result<(), UnknownOperator> {
            // The exercise file defines its own error type, so that it stands on its own;
            // it is turned into the checker's copy to be compared.
            let program = code::parse_program(names).map_err(|error| UnknownOperator {
                position: error.position,
                name: error.name,
            })?;
            code::run_program(&program, values);
            Ok(())
        }
        Interpreter {
            parse_and_run,
            operator_bytes: std::mem::size_of::<code::Operator>(),
        }
    })
}

/// The checker's own interpreter: one operator on one value.
pub fn apply(name: &str, value: f32) -> f32 {
    match name {
        "relu" => {
            if value > 0.0 {
                value
            } else {
                0.0
            }
        }
        "negate" => -value,
        "square" => value * value,
        "halve" => value * 0.5,
        "absolute" => value.abs(),
        other => panic!("the checker's programs use known names only, not {other:?}"),
    }
}

/// Programs with one bad name each: (program, position of the bad name).
const BAD_PROGRAMS: [(&[&str], usize); 4] = [
    (&["relu", "sqare"], 1),
    (&["ReLU"], 0),
    (&["negate", "relu", ""], 2),
    (
        &[
            "square", "relu", "halve", "negate", "absolute", "cube", "relu",
        ],
        5,
    ),
];

pub fn check(submission: &Submission) -> Vec<PartReport> {
    let interpreter = interpreter_of(submission.rust);
    vec![
        unknown_names(&interpreter),
        results(&interpreter),
        form(submission.rust, interpreter.operator_bytes),
    ]
}

fn unknown_names(interpreter: &Interpreter) -> PartReport {
    let mut part = PartReport::new("unknown names are errors");
    for (program, position) in BAD_PROGRAMS {
        let name = program[position];
        let expected = UnknownOperator {
            position,
            name: name.to_string(),
        };
        let mut values = vec![1.0, -2.0];
        let verdict = match catching_panics(|| (interpreter.parse_and_run)(program, &mut values)) {
            Err(panicked) => panicked,
            Ok(Ok(())) => Verdict::Unmet(format!(
                "accepted the name {name:?} at position {position}, which is not an operator: \
                 expected the error: {expected}"
            )),
            Ok(Err(error)) if error == expected => Verdict::Pass(format!("the error: {error}")),
            Ok(Err(error)) => Verdict::Unmet(format!(
                "returned the error for position {} and the name {:?}; expected the name \
                 {name:?} at position {position}, counting from 0",
                error.position, error.name
            )),
        };
        part.push(format!("{program:?}"), verdict);
    }
    part
}

/// A seeded random program of `length` known names.
fn random_program(length: usize, seed: u64) -> Vec<&'static str> {
    let mut random = ChaCha8Rng::seed_from_u64(seed);
    (0..length)
        .map(|_| OPERATOR_NAMES[random.random_range(0..OPERATOR_NAMES.len())])
        .collect()
}

fn results(interpreter: &Interpreter) -> PartReport {
    let mut part = PartReport::new("results");
    let mut programs: Vec<Vec<&str>> = vec![Vec::new()];
    programs.extend(OPERATOR_NAMES.iter().map(|&name| vec![name]));
    // Order matters: negate then relu is not relu then negate.
    programs.push(vec!["negate", "relu"]);
    programs.push(vec!["relu", "negate"]);
    programs.push(random_program(12, 6000));
    programs.push(random_program(40, 6001));
    let lengths = [1, 257, 4096];
    for (case, program) in programs.iter().enumerate() {
        let length = lengths[case % lengths.len()];
        let original = Tensor2d::random(1, length, -4.0..=4.0, 7000 + case as u64).into_vec();
        let expected: Vec<f32> = original
            .iter()
            .map(|&value| program.iter().fold(value, |value, name| apply(name, value)))
            .collect();
        let mut values = original.clone();
        let shown = if program.len() <= 3 {
            format!("{program:?}")
        } else {
            format!("a random program of {} operators", program.len())
        };
        let description = format!(
            "{shown} on {length} value{}",
            if length == 1 { "" } else { "s" }
        );
        let verdict = match catching_panics(|| (interpreter.parse_and_run)(program, &mut values)) {
            Err(panicked) => panicked,
            Ok(Err(error)) => Verdict::Unmet(format!("refused a program of known names: {error}")),
            Ok(Ok(())) => match (
                Tensor2d::from_vec(1, length, values),
                Tensor2d::from_vec(1, length, expected),
            ) {
                (Ok(actual), Ok(expected)) => compare(&actual, &expected, Tolerance::EXACT),
                (Err(error), _) | (_, Err(error)) => Verdict::Error(error.to_string()),
            },
        };
        part.push(description, verdict);
    }
    part
}

fn form(variant: Variant, operator_bytes: usize) -> PartReport {
    let mut part = PartReport::new("an enum, not strings");
    let size = if operator_bytes <= LARGEST_OPERATOR_BYTES {
        Verdict::Pass(format!("{operator_bytes} byte(s)"))
    } else {
        Verdict::Unmet(format!(
            "an Operator takes {operator_bytes} bytes, more than the {LARGEST_OPERATOR_BYTES} \
             an enum of five operators needs: it still carries a string (a `String` alone is \
             24 bytes, a `&str` 16)"
        ))
    };
    part.push("the size of Operator", size);
    match crate::rust_form::source_of("operator-enum", variant) {
        Ok(source) => {
            part.push("Operator is an enum", declared_as_enum(&source));
            part.push(
                "no strings while running",
                no_strings_while_running(&source),
            );
        }
        Err(error) => part.push("reading the source", Verdict::Error(error.to_string())),
    }
    part
}

fn declared_as_enum(source: &RustSource) -> Verdict {
    if source.declares("enum", "Operator") {
        Verdict::Pass("`enum Operator`".to_string())
    } else {
        Verdict::Unmet(format!(
            "{} declares no `enum Operator`: an operator is one of a fixed set of choices, \
             which is what an enum is",
            source.shown()
        ))
    }
}

/// No string literal in `run_program`, nor in a function of the file that its body
/// calls by name: once parsed, a program is run without looking at a name again.
fn no_strings_while_running(source: &RustSource) -> Verdict {
    let Some(body) = source.function_body("run_program") else {
        return Verdict::Error(format!("{}: there is no `fn run_program`", source.shown()));
    };
    let mut places: Vec<Place> = source.string_literals_in(body);
    for called in source.called_names(body) {
        if called == "run_program" {
            continue;
        }
        if let Some(callee) = source.function_body(&called) {
            places.extend(source.string_literals_in(callee));
        }
    }
    if places.is_empty() {
        return Verdict::Pass("no string literal in run_program or what it calls".to_string());
    }
    let listed: Vec<String> = places.iter().map(Place::to_string).collect();
    Verdict::Unmet(format!(
        "run_program (or a function it calls) still compares names: every string literal \
         there is a string comparison for every operator and every value:\n{}",
        listed.join("\n")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_random_programs_use_every_operator() {
        let program = random_program(40, 6001);
        for name in OPERATOR_NAMES {
            assert!(program.contains(&name), "{name} missing from {program:?}");
        }
    }

    #[test]
    fn the_order_of_a_program_matters_on_the_checkers_values() {
        let forwards = ["negate", "relu"]
            .iter()
            .fold(-1.0, |value, name| apply(name, value));
        let backwards = ["relu", "negate"]
            .iter()
            .fold(-1.0, |value, name| apply(name, value));
        assert_ne!(forwards, backwards);
    }
}
