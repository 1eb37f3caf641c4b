//! A branch whose direction depends on the data, and a version without the branch.
//!
//! Both functions copy the values below a threshold to the front of an output slice (a
//! *filter*, or *stream compaction*). [`keep_below_branching`] decides with an `if` whether
//! to copy each value. The CPU does not wait for the comparison: its branch predictor
//! guesses the outcome and the pipeline runs ahead on the guess. When the data is sorted,
//! the outcome is "yes" for a long stretch and then "no" for the rest, and the guesses are
//! almost always right. When the data is shuffled and about half the values pass, no
//! predictor can do better than a coin toss, and every wrong guess throws away the work
//! in flight behind the branch: a *misprediction*, costing roughly 15 to 20 cycles.
//!
//! [`keep_below_branchless`] always writes the value and only *counts* whether it passed,
//! turning the control dependency into a data dependency. It does a little more work per
//! value, but the same amount whatever the data.

use crate::memory::MemoryError;

/// The output must have room for every value, because the branchless version writes
/// each value before it knows whether to keep it.
fn check_room(values: &[f32], kept: &[f32], operation: &'static str) -> Result<(), MemoryError> {
    if kept.len() < values.len() {
        return Err(MemoryError::LengthMismatch {
            operation,
            expected_name: "the values (at least as many slots needed)",
            expected: values.len(),
            found_name: "the output",
            found: kept.len(),
        });
    }
    Ok(())
}

// ANCHOR: keep_below_branching
/// Copies the values smaller than `threshold` to the front of `kept`, in order, and
/// returns how many there are. `kept` needs at least `values.len()` slots.
pub fn keep_below_branching(
    values: &[f32],
    threshold: f32,
    kept: &mut [f32],
) -> Result<usize, MemoryError> {
    check_room(values, kept, "keep_below_branching")?;
    let mut count = 0;
    for &value in values {
        if value < threshold {
            kept[count] = value;
            count += 1;
        }
    }
    Ok(count)
}
// ANCHOR_END: keep_below_branching

// ANCHOR: keep_below_branchless
/// The same result without a data-dependent branch: every value is written to the next
/// free slot, and the slot only advances if the value is kept. A rejected value is
/// overwritten by the next one (or left behind, past the returned count).
pub fn keep_below_branchless(
    values: &[f32],
    threshold: f32,
    kept: &mut [f32],
) -> Result<usize, MemoryError> {
    check_room(values, kept, "keep_below_branchless")?;
    let mut count = 0;
    for &value in values {
        kept[count] = value;
        count += usize::from(value < threshold); // 0 or 1, no jump
    }
    Ok(count)
}
// ANCHOR_END: keep_below_branchless

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::Tensor2d;

    #[test]
    fn both_versions_keep_the_same_values_in_the_same_order() {
        for length in [0, 1, 2, 7, 100, 1025] {
            let values = Tensor2d::random(1, length, 0.0..=1.0, length as u64).into_vec();
            for threshold in [-1.0, 0.0, 0.25, 0.5, 0.9, 1.0, 2.0] {
                let expected: Vec<f32> = values
                    .iter()
                    .copied()
                    .filter(|&value| value < threshold)
                    .collect();
                let mut kept = vec![f32::NAN; length];
                let count = keep_below_branching(&values, threshold, &mut kept).unwrap();
                assert_eq!(&kept[..count], expected.as_slice(), "branching {threshold}");

                let mut kept = vec![f32::NAN; length + 3];
                let count = keep_below_branchless(&values, threshold, &mut kept).unwrap();
                assert_eq!(
                    &kept[..count],
                    expected.as_slice(),
                    "branchless {threshold}"
                );
            }
        }
    }

    #[test]
    fn nan_is_never_below_anything() {
        let values = [f32::NAN, 0.5, f32::NAN];
        let mut kept = [0.0; 3];
        assert_eq!(keep_below_branching(&values, 1.0, &mut kept), Ok(1));
        assert_eq!(keep_below_branchless(&values, 1.0, &mut kept), Ok(1));
        assert_eq!(kept[0], 0.5);
    }

    #[test]
    fn an_output_that_is_too_short_is_an_error() {
        let values = [0.1, 0.2, 0.3];
        let mut kept = [0.0; 2];
        // Even though only one value would pass, the branchless version needs the room.
        assert!(matches!(
            keep_below_branching(&values, 0.15, &mut kept),
            Err(MemoryError::LengthMismatch { .. })
        ));
        assert!(matches!(
            keep_below_branchless(&values, 0.15, &mut kept),
            Err(MemoryError::LengthMismatch { .. })
        ));
    }
}
