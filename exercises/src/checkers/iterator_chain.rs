//! Warm-up: from an indexed loop to an iterator chain (`add_bias_relu`).
//!
//! Three parts. **Results**: the function runs on matrices of many shapes (one value, odd
//! sizes, no rows, wide rows) with values and bias drawn so that about half of the sums
//! are negative, and every value is compared exactly with the checker's own reference;
//! wrong shapes must give the right error and leave the values untouched. **No
//! allocation**: a call on a 128 × 256 matrix may not ask the allocator for memory.
//! **An iterator chain**: the function's body may not index a slice, nor use `unsafe` or
//! `get_unchecked` (read from the source, see [`crate::rust_form`]).

use galaxy::{Tensor2d, Tolerance};

use crate::allocations::allocations_during;
use crate::report::{PartReport, Verdict, catching_panics, compare};
use crate::rust_form::{Place, RustSource};
use crate::submission::{Submission, Variant};
use crate::warm_ups::ShapeMismatch;

pub type AddBiasRelu = fn(&mut [f32], usize, &[f32]) -> Result<(), ShapeMismatch>;

pub fn function_of(variant: Variant) -> AddBiasRelu {
    crate::rust_exercises::with_rust_module!(iterator_chain, variant, |code| {
        // The exercise file defines its own error type, so that it stands on its own;
        // its variants are turned into the checker's copy to be compared.
        fn converted(
            values: &mut [f32],
            columns: usize,
            bias: &[f32],
        ) -> Result<(), ShapeMismatch> {
            code::add_bias_relu(values, columns, bias).map_err(|error| match error {
                code::ShapeMismatch::NoColumns => ShapeMismatch::NoColumns,
                code::ShapeMismatch::BiasLength { bias, columns } => {
                    ShapeMismatch::BiasLength { bias, columns }
                }
                code::ShapeMismatch::NotWholeRows { values, columns } => {
                    ShapeMismatch::NotWholeRows { values, columns }
                }
            })
        }
        converted
    })
}

/// The checker's own reference: the obvious loop, kept apart from anything the student
/// writes.
pub fn reference(values: &[f32], columns: usize, bias: &[f32]) -> Vec<f32> {
    values
        .chunks_exact(columns)
        .flat_map(|row| {
            row.iter().zip(bias).map(|(value, bias)| {
                let sum = value + bias;
                if sum > 0.0 { sum } else { 0.0 }
            })
        })
        .collect()
}

/// (rows, columns) of the cases that must succeed.
const SHAPES: [(usize, usize); 7] = [
    (1, 1),
    (3, 7),
    (16, 16),
    (0, 5),
    (33, 65),
    (1, 1000),
    (128, 256),
];

/// (values, columns, bias length, the error expected) of the cases that must fail.
fn wrong_shapes() -> [(usize, usize, usize, ShapeMismatch); 5] {
    [
        (
            64,
            8,
            7,
            ShapeMismatch::BiasLength {
                bias: 7,
                columns: 8,
            },
        ),
        (
            10,
            4,
            4,
            ShapeMismatch::NotWholeRows {
                values: 10,
                columns: 4,
            },
        ),
        (6, 0, 0, ShapeMismatch::NoColumns),
        // No values and no columns: "a whole number of rows" holds, so only the
        // zero-columns check stands between this and `chunks_exact_mut(0)`, which panics.
        (0, 0, 0, ShapeMismatch::NoColumns),
        (
            12,
            3,
            4,
            ShapeMismatch::BiasLength {
                bias: 4,
                columns: 3,
            },
        ),
    ]
}

fn random_values(count: usize, seed: u64) -> Vec<f32> {
    Tensor2d::random(1, count, -1.0..=1.0, seed).into_vec()
}

pub fn check(submission: &Submission) -> Vec<PartReport> {
    let function = function_of(submission.rust);
    vec![
        results(function),
        allocation(function),
        form(submission.rust),
    ]
}

fn results(function: AddBiasRelu) -> PartReport {
    let mut part = PartReport::new("results");
    for (case, &(rows, columns)) in SHAPES.iter().enumerate() {
        let seed = 1000 + case as u64;
        let mut values = random_values(rows * columns, seed);
        let bias = random_values(columns, seed + 500);
        let expected = reference(&values, columns, &bias);
        let description = shape_text(rows, columns);
        let verdict = match catching_panics(|| function(&mut values, columns, &bias)) {
            Err(panicked) => panicked,
            Ok(Err(error)) => {
                Verdict::Unmet(format!("returned the error `{error}` for shapes that fit"))
            }
            Ok(Ok(())) => compare_values(&values, &expected, columns),
        };
        part.push(description, verdict);
    }
    for (case, (count, columns, bias_length, expected_error)) in
        wrong_shapes().into_iter().enumerate()
    {
        let original = random_values(count, 2000 + case as u64);
        let mut values = original.clone();
        let bias = random_values(bias_length, 2100 + case as u64);
        let description =
            format!("{count} values, {columns} columns, a bias of {bias_length} (wrong shapes)");
        let verdict = match catching_panics(|| function(&mut values, columns, &bias)) {
            Err(panicked) => panicked,
            Ok(Ok(())) => Verdict::Unmet(format!(
                "returned Ok, but the shapes do not fit: expected the error `{expected_error}`"
            )),
            Ok(Err(error)) if error != expected_error => Verdict::Unmet(format!(
                "returned the error `{error}`; expected `{expected_error}`"
            )),
            Ok(Err(_)) if values != original => Verdict::Unmet(format!(
                "returned the right error, `{expected_error}`, but changed the values first: \
                 check the shapes before touching anything"
            )),
            Ok(Err(error)) => Verdict::Pass(format!("the error `{error}`, values untouched")),
        };
        part.push(description, verdict);
    }
    part
}

/// "3 rows of 7 columns", "1 row of 1 column".
fn shape_text(rows: usize, columns: usize) -> String {
    let plural = |count: usize, word: &str| {
        if count == 1 {
            format!("1 {word}")
        } else {
            format!("{count} {word}s")
        }
    };
    format!("{} of {}", plural(rows, "row"), plural(columns, "column"))
}

fn compare_values(actual: &[f32], expected: &[f32], columns: usize) -> Verdict {
    let rows = expected.len() / columns.max(1);
    if rows == 0 {
        return if actual.is_empty() {
            Verdict::Pass("no values, nothing to change".to_string())
        } else {
            Verdict::Error("values appeared from nowhere".to_string())
        };
    }
    match (
        Tensor2d::from_vec(rows, columns, actual.to_vec()),
        Tensor2d::from_vec(rows, columns, expected.to_vec()),
    ) {
        (Ok(actual), Ok(expected)) => compare(&actual, &expected, Tolerance::EXACT),
        (Err(error), _) | (_, Err(error)) => Verdict::Error(error.to_string()),
    }
}

fn allocation(function: AddBiasRelu) -> PartReport {
    let mut part = PartReport::new("no allocation");
    let (rows, columns) = (128, 256);
    let mut values = random_values(rows * columns, 3000);
    let bias = random_values(columns, 3001);
    let verdict =
        match catching_panics(|| allocations_during(|| function(&mut values, columns, &bias))) {
            Err(panicked) => panicked,
            Ok((_, 0)) => Verdict::Pass("no allocation".to_string()),
            Ok((_, count)) => Verdict::Unmet(format!(
                "{count} allocation(s) in one call: the function works in place, so it needs no \
             new memory; a `collect`, `to_vec` or `clone` in the loop asks for some every time"
            )),
        };
    part.push(shape_text(rows, columns), verdict);
    part
}

fn form(variant: Variant) -> PartReport {
    let mut part = PartReport::new("an iterator chain");
    let source = match crate::rust_form::source_of("iterator-chain", variant) {
        Ok(source) => source,
        Err(error) => {
            part.push("reading the source", Verdict::Error(error.to_string()));
            return part;
        }
    };
    part.push(
        format!("fn add_bias_relu in {}", source.shown()),
        judge_form(&source),
    );
    part
}

fn judge_form(source: &RustSource) -> Verdict {
    let Some(body) = source.function_body("add_bias_relu") else {
        return Verdict::Error(format!(
            "{}: there is no `fn add_bias_relu`",
            source.shown()
        ));
    };
    let mut findings = Vec::new();
    let listed = |places: &[Place]| {
        places
            .iter()
            .map(Place::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    };
    let indexing = source.indexing_in(body);
    if !indexing.is_empty() {
        findings.push(format!(
            "the function still indexes a slice, and every index is checked against the \
             slice's length:\n{}",
            listed(&indexing)
        ));
    }
    let mut unchecked = source.word_in(body, "unsafe");
    unchecked.extend(source.word_in(body, "get_unchecked"));
    unchecked.extend(source.word_in(body, "get_unchecked_mut"));
    unchecked.sort_by_key(|place| place.line);
    unchecked.dedup();
    if !unchecked.is_empty() {
        findings.push(format!(
            "the function uses unsafe code to skip the bounds checks; an iterator chain needs \
             none:\n{}",
            listed(&unchecked)
        ));
    }
    if findings.is_empty() {
        Verdict::Pass("no indexing, no unsafe code".to_string())
    } else {
        Verdict::Unmet(findings.join("\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_adds_the_bias_and_clamps() {
        let values = [1.0, -2.0, 0.5, -0.5];
        assert_eq!(reference(&values, 2, &[0.5, 1.0]), [1.5, 0.0, 1.0, 0.5]);
    }

    #[test]
    fn the_random_cases_make_the_relu_matter() {
        let values = random_values(128 * 256, 3000);
        let bias = random_values(256, 3001);
        let result = reference(&values, 256, &bias);
        let zeros = result.iter().filter(|&&value| value == 0.0).count();
        assert!(
            zeros > result.len() / 4 && zeros < 3 * result.len() / 4,
            "{zeros}"
        );
    }
}
