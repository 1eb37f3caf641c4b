//! Bounds checks: every `slice[index]` in Rust checks the index and panics when it is out
//! of range. The check is one compare and one branch that is never taken, cheap on its
//! own; what it can cost is the vectorisation of the loop around it.
//!
//! Two pairs of loops, each pair computing identical results and differing only in what
//! the compiler can prove about the indices: `output[i] += scale * input[i]` (the *axpy*
//! of linear algebra), where the compiler removes the checks itself, and a dot product
//! with 16 running sums, where the way the indices are written decides. Compare them with
//! `scale_and_add_zipped` and `dot_in_lanes` in `iterators.rs`.

// ANCHOR: indexed
/// The loop runs over the output's indices, so `output[index]` is provably in range.
/// Nothing says that `input` is as long as `output`, so `input[index]` needs its check,
/// and a short input must panic at exactly the right iteration, after the earlier outputs
/// were written. The compiler handles that by working out before the loop how many
/// iterations are certainly safe, running those vectorised without checks, and finishing
/// one value at a time with a check on each index.
#[inline(never)]
pub fn scale_and_add_indexed(scale: f32, input: &[f32], output: &mut [f32]) {
    for index in 0..output.len() {
        output[index] += scale * input[index];
    }
}
// ANCHOR_END: indexed

// ANCHOR: resliced
/// The same loop after one line that cuts `input` to the output's length. Slicing checks
/// once, before the loop (and panics there if `input` is too short); afterwards both
/// slices provably have `output.len()` elements, every check inside the loop disappears,
/// and the loop is vectorised.
#[inline(never)]
pub fn scale_and_add_resliced(scale: f32, input: &[f32], output: &mut [f32]) {
    let input = &input[..output.len()];
    for index in 0..output.len() {
        output[index] += scale * input[index];
    }
}
// ANCHOR_END: resliced

// ANCHOR: dot_in_lanes_indexed
/// A dot product with 16 running sums (the idea of `dot_in_lanes` in `iterators.rs`),
/// written with indices. Every `left[start + lane]` keeps its check: the compiler does not
/// prove `start + lane < left.len()` from `chunk < chunks`, so each of the 32 loads per
/// chunk carries a compare and a branch to a panic, and the lanes stay scalar.
#[inline(never)]
pub fn dot_in_lanes_indexed(left: &[f32], right: &[f32]) -> f32 {
    let length = left.len().min(right.len());
    let chunks = length / 16;
    let mut sums = [0.0f32; 16];
    for chunk in 0..chunks {
        let start = chunk * 16;
        for lane in 0..16 {
            sums[lane] += left[start + lane] * right[start + lane];
        }
    }
    let mut tail = 0.0;
    for index in chunks * 16..length {
        tail += left[index] * right[index];
    }
    sums.iter().sum::<f32>() + tail
}
// ANCHOR_END: dot_in_lanes_indexed

// ANCHOR: dot_in_lanes_sliced
/// The same loop with one change: each chunk is first cut out as a slice of exactly 16
/// values. Cutting checks once per chunk; inside, `lane < 16` is visibly in range, the
/// checks go, and the 16 lanes become SIMD multiplies and adds.
#[inline(never)]
pub fn dot_in_lanes_sliced(left: &[f32], right: &[f32]) -> f32 {
    let length = left.len().min(right.len());
    let chunks = length / 16;
    let mut sums = [0.0f32; 16];
    for chunk in 0..chunks {
        let left_chunk = &left[chunk * 16..chunk * 16 + 16];
        let right_chunk = &right[chunk * 16..chunk * 16 + 16];
        for lane in 0..16 {
            sums[lane] += left_chunk[lane] * right_chunk[lane];
        }
    }
    let mut tail = 0.0;
    for index in chunks * 16..length {
        tail += left[index] * right[index];
    }
    sums.iter().sum::<f32>() + tail
}
// ANCHOR_END: dot_in_lanes_sliced

// ANCHOR: gather
/// Indices that come from data cannot be checked in advance: each `values[index]` keeps
/// its check. `get` turns an out-of-range index into a `None` to handle instead of a panic.
#[inline(never)]
pub fn sum_gathered(values: &[f32], indices: &[usize]) -> Option<f32> {
    let mut total = 0.0;
    for &index in indices {
        total += values.get(index)?;
    }
    Some(total)
}
// ANCHOR_END: gather

#[cfg(test)]
mod tests {
    use super::*;

    fn ramp(length: usize, start: f32) -> Vec<f32> {
        (0..length)
            .map(|index| start + index as f32 * 0.25)
            .collect()
    }

    #[test]
    fn both_indexed_loops_compute_the_same_axpy() {
        for length in [0, 1, 7, 16, 33, 1000] {
            let input = ramp(length, -3.0);
            let mut checked = ramp(length, 1.0);
            let mut resliced = checked.clone();
            let expected: Vec<f32> = checked
                .iter()
                .zip(&input)
                .map(|(output, input)| output + 1.5 * input)
                .collect();
            scale_and_add_indexed(1.5, &input, &mut checked);
            scale_and_add_resliced(1.5, &input, &mut resliced);
            assert_eq!(checked, expected, "length {length}");
            assert_eq!(resliced, expected, "length {length}");
        }
    }

    #[test]
    fn a_longer_input_is_fine_and_only_its_first_elements_are_read() {
        let input = ramp(10, 0.0);
        let mut output = vec![1.0; 4];
        scale_and_add_resliced(2.0, &input, &mut output);
        assert_eq!(output, [1.0, 1.5, 2.0, 2.5]);
    }

    #[test]
    #[should_panic(expected = "out of range")]
    fn a_short_input_panics_before_the_loop_when_resliced() {
        let mut output = vec![0.0; 4];
        scale_and_add_resliced(1.0, &[1.0, 2.0], &mut output);
    }

    #[test]
    fn a_short_input_panics_mid_loop_after_writing_the_first_outputs() {
        let mut output = vec![0.0; 4];
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            scale_and_add_indexed(1.0, &[1.0, 2.0], &mut output);
        }));
        assert!(outcome.is_err());
        assert_eq!(output, [1.0, 2.0, 0.0, 0.0]);
    }

    #[test]
    fn indexed_and_sliced_lanes_add_in_the_same_order() {
        for length in [0, 1, 15, 16, 17, 100, 1000] {
            let left = ramp(length, -2.0);
            let right = ramp(length + 3, 0.5);
            let indexed = dot_in_lanes_indexed(&left, &right);
            assert_eq!(
                indexed,
                dot_in_lanes_sliced(&left, &right),
                "length {length}"
            );
            let exact: f64 = left
                .iter()
                .zip(&right)
                .map(|(left, right)| f64::from(*left) * f64::from(*right))
                .sum();
            assert!((f64::from(indexed) - exact).abs() <= 1e-5 * (1.0 + exact.abs()));
        }
    }

    #[test]
    fn gathering_an_index_out_of_range_gives_none() {
        let values = [1.0, 2.0, 4.0];
        assert_eq!(sum_gathered(&values, &[2, 0, 2]), Some(9.0));
        assert_eq!(sum_gathered(&values, &[0, 3]), None);
    }
}
