//! Naming the mistake behind a wrong result.
//!
//! A mismatch report says which elements are wrong; a student then has to guess why. For
//! a few mistakes that students make again and again (a filter read backwards, a sum one
//! term short, a vector read twice), the checker can do the guessing: it computes what
//! the mistaken program would have produced, and if the kernel's result matches that
//! within the tolerance, the report says so. A hypothesis is only ever an explanation
//! added to a failure; it never turns a failure into a pass, or a pass into a failure.

use galaxy::{Tensor2d, Tolerance};

use crate::checkers::common::with_cause;
use crate::report::{Verdict, compare};

/// One possible mistake: the sentence that names it, and the result it would produce.
pub struct Hypothesis {
    pub cause: String,
    pub result: Tensor2d,
}

impl Hypothesis {
    pub fn new(cause: impl Into<String>, result: Tensor2d) -> Hypothesis {
        Hypothesis {
            cause: cause.into(),
            result,
        }
    }
}

/// `verdict`, with the cause of the first hypothesis that `actual` matches added when the
/// verdict is a mismatch. The hypotheses are only computed for a mismatch.
pub fn explain(
    verdict: Verdict,
    actual: &Tensor2d,
    tolerance: Tolerance,
    hypotheses: impl FnOnce() -> Vec<Hypothesis>,
) -> Verdict {
    if !matches!(verdict, Verdict::Mismatch(_)) {
        return verdict;
    }
    let matched = hypotheses().into_iter().find(|hypothesis| {
        hypothesis.result.shape() == actual.shape()
            && compare(actual, &hypothesis.result, tolerance).passed()
    });
    match matched {
        Some(hypothesis) => with_cause(verdict, &hypothesis.cause),
        None => verdict,
    }
}

/// `tensor` with `change` applied to a copy of its values.
pub fn changed(tensor: &Tensor2d, change: impl FnOnce(&mut [f32])) -> Tensor2d {
    let mut values = tensor.as_slice().to_vec();
    change(&mut values);
    Tensor2d::from_vec(tensor.rows(), tensor.columns(), values)
        .expect("the same number of values as the tensor")
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOLERANCE: Tolerance = Tolerance::new(1e-6, 1e-7);

    fn row(values: &[f32]) -> Tensor2d {
        Tensor2d::from_vec(1, values.len(), values.to_vec()).unwrap()
    }

    #[test]
    fn the_first_matching_hypothesis_names_the_cause() {
        let expected = row(&[1.0, 2.0, 3.0]);
        let actual = row(&[2.0, 4.0, 6.0]);
        let verdict = compare(&actual, &expected, TOLERANCE);
        let explained = explain(verdict, &actual, TOLERANCE, || {
            vec![
                Hypothesis::new(
                    "cause: negated",
                    changed(&expected, |v| v.iter_mut().for_each(|x| *x = -*x)),
                ),
                Hypothesis::new(
                    "cause: doubled",
                    changed(&expected, |v| v.iter_mut().for_each(|x| *x *= 2.0)),
                ),
            ]
        });
        assert!(!explained.passed());
        let text = explained.to_string();
        assert!(text.contains("cause: doubled"), "{text}");
        assert!(!text.contains("negated"), "{text}");
    }

    #[test]
    fn a_pass_or_an_unmatched_mismatch_is_left_alone() {
        let expected = row(&[1.0, 2.0]);
        let passed = explain(
            compare(&expected, &expected, TOLERANCE),
            &expected,
            TOLERANCE,
            || panic!("no hypothesis is computed for a pass"),
        );
        assert!(passed.passed());
        let actual = row(&[1.0, 5.0]);
        let explained = explain(
            compare(&actual, &expected, TOLERANCE),
            &actual,
            TOLERANCE,
            || vec![Hypothesis::new("cause: zero", row(&[0.0, 0.0]))],
        );
        assert!(!explained.to_string().contains("cause: zero"));
    }
}
