//! Branchless forms that vectorise: clamping every value of a slice to a limit.
//!
//! Module 1 showed what a branch costs when the processor cannot predict it
//! (`crate::memory::branch_prediction`). Here the same question meets SIMD. Three ways to
//! write "no value above `limit`":
//!
//! - [`clamp_with_branch`]: `if *value > limit { *value = limit }`. The store happens only
//!   on one side of the `if`. The compiler does not add stores the source does not make
//!   (its general rule, which keeps it correct for memory other code may be watching), and
//!   it will not use a masked store here on the default x86-64 target, so it cannot turn a
//!   *conditional* store into vector code. It stays a loop with a branch per value, fast when the branch is
//!   predictable (sorted data) and slow when it is not (random data).
//! - [`clamp_with_select`]: `*value = if *value > limit { limit } else { *value }`. Every
//!   value is stored, and the `if` only chooses *which* value: a *select*, which the
//!   compiler turns into a vector comparison and blend, several values per instruction,
//!   with no branch at all. Its time does not depend on the data.
//! - [`clamp_with_min`]: `*value = value.min(limit)`, the same select spelt as a library
//!   call, which compiles to the vector `min` instruction plus a NaN fix-up.
//!
//! The three differ on NaN: a comparison with NaN is false, so the first two leave a NaN
//! in place, while `f32::min` returns the number when one operand is NaN, so it replaces a
//! NaN with `limit`. A rewrite "for speed" must keep the behaviour the caller relies on.

// ANCHOR: clamp_with_branch
/// Lowers every value above `limit` to `limit`, with a conditional store.
pub fn clamp_with_branch(values: &mut [f32], limit: f32) {
    for value in values.iter_mut() {
        if *value > limit {
            *value = limit;
        }
    }
}
// ANCHOR_END: clamp_with_branch

// ANCHOR: clamp_with_select
/// The same result with an unconditional store of a selected value.
pub fn clamp_with_select(values: &mut [f32], limit: f32) {
    for value in values.iter_mut() {
        *value = if *value > limit { limit } else { *value };
    }
}
// ANCHOR_END: clamp_with_select

// ANCHOR: clamp_with_min
/// The same for numbers, with `f32::min`; a NaN becomes `limit`.
pub fn clamp_with_min(values: &mut [f32], limit: f32) {
    for value in values.iter_mut() {
        *value = value.min(limit);
    }
}
// ANCHOR_END: clamp_with_min

/// The three forms, for benchmarks and sweeps to loop over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClampForm {
    Branch,
    Select,
    Min,
}

impl ClampForm {
    pub const ALL: [ClampForm; 3] = [ClampForm::Branch, ClampForm::Select, ClampForm::Min];

    pub fn name(self) -> &'static str {
        match self {
            ClampForm::Branch => "if, store on one side",
            ClampForm::Select => "select, store always",
            ClampForm::Min => "f32::min",
        }
    }

    pub fn run(self, values: &mut [f32], limit: f32) {
        match self {
            ClampForm::Branch => clamp_with_branch(values, limit),
            ClampForm::Select => clamp_with_select(values, limit),
            ClampForm::Min => clamp_with_min(values, limit),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::Tensor2d;

    #[test]
    fn every_form_clamps_like_the_plain_definition() {
        for length in [0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 100, 1001] {
            let original = Tensor2d::random(1, length, -2.0..=2.0, length as u64).into_vec();
            for limit in [-3.0, -0.5, 0.0, 0.7, 3.0] {
                let expected: Vec<f32> = original
                    .iter()
                    .map(|&value| if value > limit { limit } else { value })
                    .collect();
                for form in ClampForm::ALL {
                    let mut values = original.clone();
                    form.run(&mut values, limit);
                    assert_eq!(values, expected, "{} {length} {limit}", form.name());
                }
            }
        }
    }

    #[test]
    fn sorted_data_gives_the_same_result() {
        let mut original = Tensor2d::random(1, 999, -1.0..=1.0, 5).into_vec();
        original.sort_by(f32::total_cmp);
        for form in ClampForm::ALL {
            let mut values = original.clone();
            form.run(&mut values, 0.0);
            for (&clamped, &value) in values.iter().zip(&original) {
                let expected = if value > 0.0 { 0.0 } else { value };
                assert_eq!(clamped, expected, "{}", form.name());
            }
        }
    }

    #[test]
    fn nan_survives_the_comparisons_but_not_min() {
        let original = [f32::NAN, 2.0, -1.0, f32::INFINITY, f32::NEG_INFINITY];
        for form in [ClampForm::Branch, ClampForm::Select] {
            let mut values = original;
            form.run(&mut values, 1.0);
            assert!(values[0].is_nan(), "{}", form.name());
            assert_eq!(values[1..], [1.0, -1.0, 1.0, f32::NEG_INFINITY]);
        }
        let mut values = original;
        clamp_with_min(&mut values, 1.0);
        assert_eq!(values, [1.0, 1.0, -1.0, 1.0, f32::NEG_INFINITY]);
    }
}
