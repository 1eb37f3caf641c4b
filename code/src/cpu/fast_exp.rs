//! `exp` without a library call, so that a loop over a row of scores can run in vector
//! registers: what the fast CPU runner's softmax uses.
//!
//! `f32::exp` calls the C library's `expf`, one value at a time, and a loop that calls a
//! function cannot be vectorised. A softmax over a 256 × 256 result is 65 536 of them. On
//! the 2-core EPYC, a run of a four-layer 256-wide network took 0.91 ms with `expf` and
//! 0.81 ms with the function below, 0.70 ms once the softmax was also compiled for AVX-512
//! (figures/data/cpu-anchors-epyc-2026-11-25/probes.txt). Written with plain arithmetic,
//! the loop is vectorised by the compiler and computes several values per instruction,
//! as long as every step has a vector instruction: with `n as i32` for the exponent, the
//! compiler converted one lane at a time, and the softmax was a tenth of a profile of the
//! four-layer network on the 2-core Xeon; taking the exponent from the bits instead made
//! that network's run 0.49–0.50 ms instead of 0.53–0.63
//! (figures/data/cpu-anchors-xeon-2026-11-25/copied-rows/probes.txt).
//!
//! The method is the classic one (Cody and Waite's range reduction, a polynomial from the
//! Cephes library): write `x = n · ln 2 + r` with `n` a whole number and `|r| ≤ ln 2 / 2`;
//! then `exp(x) = 2ⁿ · exp(r)`. `2ⁿ` is built directly from its bits (the exponent field of
//! a float is `n + 127`, the bit trick of module 3), and `exp(r)` on that short interval is
//! a polynomial of degree 7 whose error is within a couple of units in the last place.

// ANCHOR: exp_fast
/// `ln 2`, split in two so that `n · LN_2_HIGH` is exact for every `n` we use and the
/// reduction `x − n · ln 2` loses no precision.
const LN_2_HIGH: f32 = 0.693_359_4;
const LN_2_LOW: f32 = -2.121_944_4e-4;
/// Below this, `exp` is smaller than the smallest normal `f32`: the result is 0.
const SMALLEST_ARGUMENT: f32 = -87.336_55;
/// The largest argument whose `n` (below) still fits the exponent field: larger ones are
/// clamped to it, so the result stops growing at about 2.41e38 instead of reaching
/// `f32::MAX` and then infinity as `f32::exp` does (the softmax never gets here: its
/// arguments are ≤ 0).
const LARGEST_ARGUMENT: f32 = 88.376_26;
/// Adding and subtracting 1.5 · 2²³ rounds a float (of magnitude below 2²²) to the nearest
/// whole number with two additions, which vectorise, where `f32::round` is a call.
const ROUNDING: f32 = 12_582_912.0;

/// `e^x` within about 2 units in the last place of `f32::exp` for `x` from −87.34 to
/// 88.37; 0 below (and for −∞), NaN for NaN, and about 2.41e38 above (even for +∞, where
/// `f32::exp` gives up to 3.4e38 and then infinity): enough for the softmax, whose
/// arguments are never positive.
#[inline(always)]
pub fn exp_fast(x: f32) -> f32 {
    let clamped = x.clamp(SMALLEST_ARGUMENT, LARGEST_ARGUMENT);
    // After adding ROUNDING, the float's low mantissa bits hold the whole number n itself
    // (1.5 · 2²³ has a unit of exactly 1 there): `shifted.to_bits()` is
    // `0x4B40_0000 + n`, two's complement for a negative n.
    let shifted = clamped * std::f32::consts::LOG2_E + ROUNDING;
    let n = shifted - ROUNDING;
    let r = clamped - n * LN_2_HIGH - n * LN_2_LOW;
    // exp(r) ≈ 1 + r + r²·(1/2 + r·(1/6 + r·(1/24 + …))), the Cephes coefficients.
    let polynomial =
        ((((((1.987_569_1e-4 * r + 1.398_199_9e-3) * r + 8.333_452e-3) * r + 4.166_579_6e-2) * r
            + 1.666_666_5e-1)
            * r
            + 0.5)
            * r
            * r)
            + r
            + 1.0;
    // 2ⁿ from its bits: the biased exponent n + 127 in bits 23 to 30, taken from the bits
    // of `shifted` (the shift pushes ROUNDING's own bits out of the word). Converting `n`
    // with `n as i32` would be shorter, but Rust's conversion saturates and turns NaN into
    // 0, which no single x86 instruction does (`vcvttps2dq` gives 0x8000_0000 for NaN and
    // out-of-range values): the compiler did it one lane at a time.
    let power_of_two = f32::from_bits(shifted.to_bits().wrapping_add(127) << 23);
    let value = polynomial * power_of_two;
    if x < SMALLEST_ARGUMENT { 0.0 } else { value }
}
// ANCHOR_END: exp_fast

// ANCHOR: softmax_row_fast
/// The numerically stable softmax of one row, in place, with [`exp_fast`]: the same
/// three passes as `cpu::softmax`'s reference (maximum, exponentials and their sum,
/// division), each a loop the compiler vectorises: 16 values per instruction on a
/// processor with AVX-512 (the same code compiled a second time, chosen when the program
/// runs, like the matrix product's micro-kernel), 4 with the baseline x86-64 instructions.
pub fn softmax_row_fast(row: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if is_x86_feature_detected!("avx512f") {
        // SAFETY: the processor has AVX-512, checked on the line above.
        unsafe { softmax_row_fast_avx512(row) };
        return;
    }
    softmax_row(row);
}

/// [`softmax_row`] compiled with AVX-512 enabled.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn softmax_row_fast_avx512(row: &mut [f32]) {
    softmax_row(row);
}

/// The three passes, inlined into each build.
#[inline(always)]
fn softmax_row(row: &mut [f32]) {
    let Some(row_max) = crate::cpu::reduce::max_several_accumulators(row) else {
        return;
    };
    for value in row.iter_mut() {
        *value = exp_fast(*value - row_max);
    }
    let total: f32 = crate::cpu::reduce::sum_several_accumulators(row);
    let scale = 1.0 / total;
    for value in row.iter_mut() {
        *value *= scale;
    }
}
// ANCHOR_END: softmax_row_fast

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::softmax::softmax_row_in_place;

    /// Units in the last place between two positive floats.
    fn ulps(a: f32, b: f32) -> u32 {
        a.to_bits().abs_diff(b.to_bits())
    }

    #[test]
    fn within_two_units_in_the_last_place_of_the_library_exp() {
        let mut worst = 0;
        // Every 997th float bit pattern between −87.3 and 88.3, both signs.
        for bits in (0..0x42b0_0000_u32).step_by(997) {
            for x in [f32::from_bits(bits), -f32::from_bits(bits)] {
                if !(SMALLEST_ARGUMENT..=88.3).contains(&x) {
                    continue;
                }
                let expected = x.exp();
                let error = ulps(exp_fast(x), expected);
                assert!(error <= 2, "exp({x}): {} against {expected}", exp_fast(x));
                worst = worst.max(error);
            }
        }
        assert!(
            worst >= 1,
            "a polynomial exactly equal to expf everywhere is suspicious"
        );
    }

    #[test]
    fn the_edges_underflow_to_zero_and_keep_nan() {
        assert_eq!(exp_fast(0.0), 1.0);
        assert_eq!(exp_fast(-100.0), 0.0);
        assert_eq!(exp_fast(f32::NEG_INFINITY), 0.0);
        assert!(exp_fast(f32::NAN).is_nan());
        assert!(exp_fast(88.0).is_finite());
        // Above the largest argument the result is clamped, not infinite.
        assert_eq!(exp_fast(f32::INFINITY), exp_fast(LARGEST_ARGUMENT));
        assert!(exp_fast(f32::INFINITY) < 2.5e38);
    }

    #[test]
    fn the_fast_softmax_matches_the_reference() {
        for width in [1, 2, 7, 16, 33, 256, 1000] {
            let row: Vec<f32> = (0..width)
                .map(|index| ((index * 37 % 101) as f32 - 50.0) * 0.37)
                .collect();
            let (mut fast, mut portable, mut reference) = (row.clone(), row.clone(), row);
            softmax_row_fast(&mut fast);
            // The baseline build too, whichever build this processor picks.
            softmax_row(&mut portable);
            softmax_row_in_place(&mut reference);
            for (got, expected) in fast.iter().chain(&portable).zip(reference.iter().cycle()) {
                assert!(
                    (got - expected).abs() <= 1e-6 * expected.max(1e-30) + 1e-12,
                    "width {width}: {got} against {expected}"
                );
            }
        }
        let mut empty: [f32; 0] = [];
        softmax_row_fast(&mut empty);
    }
}
