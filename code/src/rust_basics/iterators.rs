//! Iterators: the same loops as `bounds_checks.rs`, written as chains of adaptors, and a
//! reduction that no way of writing vectorises until the order of the additions changes.

// ANCHOR: zipped
/// `zip` walks both slices together and stops at the shorter one, so there is no index to
/// check: the loop is vectorised like the resliced indexed loop.
#[inline(never)]
pub fn scale_and_add_zipped(scale: f32, input: &[f32], output: &mut [f32]) {
    for (output, input) in output.iter_mut().zip(input) {
        *output += scale * input;
    }
}
// ANCHOR_END: zipped

// ANCHOR: dot_in_order
/// A dot product as one chain. `sum` adds the products in order, one after the other, and
/// floating-point addition is not associative: adding them in another order can round
/// differently. The compiler must keep the order, so every addition waits for the one
/// before it, and the chain runs at one value per addition latency.
#[inline(never)]
pub fn dot_in_order(left: &[f32], right: &[f32]) -> f32 {
    left.iter()
        .zip(right)
        .map(|(left, right)| left * right)
        .sum()
}
// ANCHOR_END: dot_in_order

// ANCHOR: dot_in_lanes
/// How many running sums `dot_in_lanes` keeps: 16 `f32` fill one 512-bit register (or two
/// 256-bit ones), and are enough independent chains to hide the addition latency.
pub const LANES: usize = 16;

/// The same dot product with the additions reordered by hand: `LANES` running sums, one
/// per position in a chunk, combined at the end. Now the code itself says that lane `j`
/// only adds every `LANES`-th product, so the compiler may put the lanes side by side in
/// a SIMD register. The result can differ from `dot_in_order` in the last bits.
#[inline(never)]
pub fn dot_in_lanes(left: &[f32], right: &[f32]) -> f32 {
    let length = left.len().min(right.len());
    let (left, right) = (&left[..length], &right[..length]);
    let mut sums = [0.0f32; LANES];
    let left_chunks = left.chunks_exact(LANES);
    let right_chunks = right.chunks_exact(LANES);
    let tail = dot_in_order(left_chunks.remainder(), right_chunks.remainder());
    for (left_chunk, right_chunk) in left_chunks.zip(right_chunks) {
        for lane in 0..LANES {
            sums[lane] += left_chunk[lane] * right_chunk[lane];
        }
    }
    sums.iter().sum::<f32>() + tail
}
// ANCHOR_END: dot_in_lanes

// ANCHOR: lazy
/// Adaptors are lazy: `map` and `filter` build a description of the work, and nothing runs
/// until something consumes the chain. Here `take_while` stops the walk at the first
/// negative value, so `calls` counts how many values were really squared.
pub fn sum_of_squares_until_negative(values: &[f32]) -> (f32, usize) {
    let mut calls = 0;
    let total = values
        .iter()
        .take_while(|value| **value >= 0.0)
        .map(|value| {
            calls += 1;
            value * value
        })
        .sum();
    (total, calls)
}
// ANCHOR_END: lazy

#[cfg(test)]
mod tests {
    use super::*;

    fn values(length: usize, seed: u32) -> Vec<f32> {
        // A small deterministic sequence in [-1, 1): enough variety for sums that round.
        let mut state = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
        (0..length)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 17;
                state ^= state << 5;
                (state as f32 / u32::MAX as f32) * 2.0 - 1.0
            })
            .collect()
    }

    #[test]
    fn zipped_axpy_matches_the_indexed_one() {
        for length in [0, 1, 15, 16, 17, 1001] {
            let input = values(length, 1);
            let mut zipped = values(length, 2);
            let mut indexed = zipped.clone();
            scale_and_add_zipped(0.5, &input, &mut zipped);
            crate::rust_basics::bounds_checks::scale_and_add_indexed(0.5, &input, &mut indexed);
            assert_eq!(zipped, indexed, "length {length}");
        }
    }

    #[test]
    fn both_dot_products_agree_within_rounding() {
        for length in [0, 1, 15, 16, 17, 100, 4097] {
            let left = values(length, 3);
            let right = values(length, 4);
            let exact: f64 = left
                .iter()
                .zip(&right)
                .map(|(left, right)| f64::from(*left) * f64::from(*right))
                .sum();
            let magnitude: f64 = left
                .iter()
                .zip(&right)
                .map(|(left, right)| f64::from((left * right).abs()))
                .sum();
            let tolerance = 1e-6 * (1.0 + magnitude);
            for (name, result) in [
                ("in order", dot_in_order(&left, &right)),
                ("in lanes", dot_in_lanes(&left, &right)),
            ] {
                assert!(
                    (f64::from(result) - exact).abs() <= tolerance,
                    "{name}, length {length}: {result} against {exact}"
                );
            }
        }
    }

    #[test]
    fn dot_in_lanes_stops_at_the_shorter_slice_like_zip() {
        let left = values(40, 5);
        let right = values(33, 6);
        let expected = dot_in_order(&left, &right);
        assert!((dot_in_lanes(&left, &right) - expected).abs() < 1e-5);
    }

    #[test]
    fn nothing_after_the_first_negative_value_is_touched() {
        let (total, calls) = sum_of_squares_until_negative(&[1.0, 2.0, -1.0, 100.0]);
        assert_eq!(total, 5.0);
        assert_eq!(calls, 2);
    }
}
