//! Three ways to compute `1/√x` for positive `f32`: the classic bit trick with one Newton
//! step, the plain `1.0 / x.sqrt()`, and the processor's approximate reciprocal square
//! root instruction.
//!
//! The bit trick rests on one fact about the float layout: read as an integer, the bits of
//! a positive float are approximately `2²³ · (log₂ x + 127)`, a scaled and shifted
//! logarithm. Halving and negating a logarithm gives the logarithm of `1/√x`; doing it on
//! the integer, plus a constant that puts the shift back, gives a first guess within about
//! 3.4 %. One step of Newton's method brings that to about 0.18 %.

// ANCHOR: fast_inverse_square_root
/// The integer constant that undoes the exponent bias: `0x5f3759df`, the value in the
/// 1999 Quake III source. (Lomont later found `0x5f375a86` slightly better after the
/// Newton step; the difference is in the fourth significant digit of the error.)
pub const MAGIC: u32 = 0x5f37_59df;

/// `1/√x` by the bit trick and one Newton step, for positive normal `x`.
pub fn fast_inverse_square_root(x: f32) -> f32 {
    // Halve and negate the "logarithm" held in the bits, then add the magic constant.
    let guess = f32::from_bits(MAGIC - (x.to_bits() >> 1));
    // One Newton step for f(y) = 1/y² − x: y ← y · (1.5 − 0.5 · x · y²).
    guess * (1.5 - 0.5 * x * guess * guess)
}
// ANCHOR_END: fast_inverse_square_root

/// The bit trick without the Newton step: the first guess alone.
pub fn inverse_square_root_guess(x: f32) -> f32 {
    f32::from_bits(MAGIC - (x.to_bits() >> 1))
}

// ANCHOR: plain_inverse_square_root
/// `1/√x` the plain way: a correctly rounded square root, then a correctly rounded
/// division. The error is at most about one unit in the last place.
pub fn plain_inverse_square_root(x: f32) -> f32 {
    1.0 / x.sqrt()
}
// ANCHOR_END: plain_inverse_square_root

/// The relative error of `approximation(x)` against `1/√x` computed in `f64`.
pub fn relative_error(approximation: fn(f32) -> f32, x: f32) -> f64 {
    let exact = 1.0 / f64::from(x).sqrt();
    ((f64::from(approximation(x)) - exact) / exact).abs()
}

/// The largest relative error of `approximation` over every `f32` in `[low, high]`, and
/// the `x` where it occurs. Every float in a factor-of-4 range (two exponents) has the
/// same relative error pattern as every other such range, so one such range covers all
/// positive normal inputs; it holds 2²⁴ floats and takes a fraction of a second.
pub fn largest_relative_error(approximation: fn(f32) -> f32, low: f32, high: f32) -> (f64, f32) {
    let mut worst = (0.0, low);
    for bits in low.to_bits()..=high.to_bits() {
        let x = f32::from_bits(bits);
        let error = relative_error(approximation, x);
        if error > worst.0 {
            worst = (error, x);
        }
    }
    worst
}

// ANCHOR: hardware_inverse_square_root
/// `1/√x` for every value of `values` into `output` with the processor's reciprocal
/// square root instruction where it has one: `vrsqrt14ps` (AVX-512, relative error below
/// 2⁻¹⁴) or `rsqrtps` (SSE, below 1.5 · 2⁻¹²), chosen at run time, and the plain formula
/// elsewhere. Returns the name of what ran.
///
/// # Panics
///
/// If the two slices differ in length (a programming error in the caller, not user input).
pub fn hardware_inverse_square_root(values: &[f32], output: &mut [f32]) -> &'static str {
    assert_eq!(values.len(), output.len(), "one output per value");
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F, checked just above.
            unsafe { x86::rsqrt14_avx512(values, output) };
            return "vrsqrt14ps (AVX-512)";
        }
        // SSE is part of every x86-64 processor.
        // SAFETY: SSE is always present on x86-64.
        unsafe { x86::rsqrt_sse(values, output) };
        "rsqrtps (SSE)"
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        for (result, &x) in output.iter_mut().zip(values) {
            *result = plain_inverse_square_root(x);
        }
        "1.0 / x.sqrt() (no approximate instruction on this target)"
    }
}
// ANCHOR_END: hardware_inverse_square_root

/// The bit trick over a slice, for timing it against the other two on equal terms.
pub fn fast_inverse_square_root_slice(values: &[f32], output: &mut [f32]) {
    for (result, &x) in output.iter_mut().zip(values) {
        *result = fast_inverse_square_root(x);
    }
}

/// The plain formula over a slice.
pub fn plain_inverse_square_root_slice(values: &[f32], output: &mut [f32]) {
    for (result, &x) in output.iter_mut().zip(values) {
        *result = plain_inverse_square_root(x);
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::{
        __m128, __m512, __mmask16, _mm_loadu_ps, _mm_rsqrt_ps, _mm_storeu_ps, _mm512_loadu_ps,
        _mm512_mask_loadu_ps, _mm512_mask_storeu_ps, _mm512_rsqrt14_ps, _mm512_set1_ps,
        _mm512_storeu_ps,
    };

    /// Sixteen values per instruction; the tail (fewer than 16) through a masked load and
    /// store, so that every value gets the same instruction.
    ///
    /// # Safety
    ///
    /// The CPU must support AVX-512F, and `output` must be at least as long as `values`.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn rsqrt14_avx512(values: &[f32], output: &mut [f32]) {
        let chunks = values.len() / 16;
        for chunk in 0..chunks {
            let start = chunk * 16;
            // SAFETY: start + 16 <= values.len() <= output.len(); unaligned loads and
            // stores are allowed.
            unsafe {
                let x: __m512 = _mm512_loadu_ps(values.as_ptr().add(start));
                _mm512_storeu_ps(output.as_mut_ptr().add(start), _mm512_rsqrt14_ps(x));
            }
        }
        let start = chunks * 16;
        let remaining = values.len() - start;
        if remaining > 0 {
            let mask: __mmask16 = (1u16 << remaining) - 1;
            // SAFETY: the mask enables only the `remaining` lanes inside both slices;
            // masked-off lanes are neither read nor written. Lanes read as 1.0 stay finite.
            unsafe {
                let ones = _mm512_set1_ps(1.0);
                let x = _mm512_mask_loadu_ps(ones, mask, values.as_ptr().add(start));
                _mm512_mask_storeu_ps(output.as_mut_ptr().add(start), mask, _mm512_rsqrt14_ps(x));
            }
        }
    }

    /// Four values per instruction; the tail (fewer than 4) one at a time.
    ///
    /// # Safety
    ///
    /// `output` must be at least as long as `values`.
    #[target_feature(enable = "sse")]
    pub(super) unsafe fn rsqrt_sse(values: &[f32], output: &mut [f32]) {
        let chunks = values.len() / 4;
        for chunk in 0..chunks {
            let start = chunk * 4;
            // SAFETY: start + 4 <= values.len() <= output.len().
            unsafe {
                let x: __m128 = _mm_loadu_ps(values.as_ptr().add(start));
                _mm_storeu_ps(output.as_mut_ptr().add(start), _mm_rsqrt_ps(x));
            }
        }
        for index in chunks * 4..values.len() {
            let mut lane = [values[index], 1.0, 1.0, 1.0];
            // SAFETY: `lane` holds four values.
            unsafe { _mm_storeu_ps(lane.as_mut_ptr(), _mm_rsqrt_ps(_mm_loadu_ps(lane.as_ptr()))) };
            output[index] = lane[0];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The largest relative errors measured over every f32 in [1, 4) (see the example
    /// `fast_inverse_square_root`), rounded up in the second digit: 3.44 % for the guess
    /// and 0.176 % after one Newton step.
    const GUESS_BOUND: f64 = 0.0345;
    const NEWTON_BOUND: f64 = 0.00176;

    #[test]
    fn the_error_over_one_period_is_within_the_stated_bounds() {
        let (guess, _) = largest_relative_error(inverse_square_root_guess, 1.0, 4.0);
        let (newton, _) = largest_relative_error(fast_inverse_square_root, 1.0, 4.0);
        assert!(guess < GUESS_BOUND && guess > 0.034, "guess {guess}");
        assert!(newton < NEWTON_BOUND && newton > 0.0017, "newton {newton}");
    }

    proptest! {
        // Every positive normal f32, through its bits: the bound of one period holds
        // across the whole range.
        #[test]
        fn the_bound_holds_for_every_positive_normal_float(
            bits in f32::MIN_POSITIVE.to_bits()..f32::MAX.to_bits(),
        ) {
            let x = f32::from_bits(bits);
            prop_assert!(relative_error(inverse_square_root_guess, x) < GUESS_BOUND, "x = {x}");
            prop_assert!(relative_error(fast_inverse_square_root, x) < NEWTON_BOUND, "x = {x}");
        }

        #[test]
        fn the_newton_step_always_improves_the_guess(
            bits in f32::MIN_POSITIVE.to_bits()..f32::MAX.to_bits(),
        ) {
            let x = f32::from_bits(bits);
            prop_assert!(
                relative_error(fast_inverse_square_root, x)
                    <= relative_error(inverse_square_root_guess, x)
            );
        }

        #[test]
        fn the_plain_formula_is_within_two_roundings(x in f32::MIN_POSITIVE..f32::MAX) {
            prop_assert!(relative_error(plain_inverse_square_root, x) <= 2.0 * f64::from(f32::EPSILON));
        }

        #[test]
        fn the_hardware_instruction_is_within_its_documented_bound(
            values in prop::collection::vec(f32::MIN_POSITIVE..1e30f32, 1..100),
        ) {
            let mut output = vec![f32::NAN; values.len()];
            let name = hardware_inverse_square_root(&values, &mut output);
            // rsqrtps promises 1.5 · 2⁻¹²; vrsqrt14ps, 2⁻¹⁴.
            let bound = if name.starts_with("vrsqrt14ps") { 2f64.powi(-14) } else { 1.5 * 2f64.powi(-12) };
            for (&x, &result) in values.iter().zip(&output) {
                let exact = 1.0 / f64::from(x).sqrt();
                let error = ((f64::from(result) - exact) / exact).abs();
                prop_assert!(error <= bound, "{name}, x = {x}: {result}, error {error}");
            }
        }
    }

    #[test]
    fn the_magic_constant_is_the_shifted_bias_plus_a_correction() {
        // (3/2) · 127 · 2²³ = 0x5f400000; the constant sits just below it.
        let shifted_bias = 3 * 127 * (1 << 23) / 2;
        assert_eq!(shifted_bias, 0x5f40_0000);
        assert!(MAGIC < shifted_bias && shifted_bias - MAGIC < 1 << 20);
    }
}
