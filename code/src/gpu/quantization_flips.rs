//! How far a GPU's int8 layer may honestly be from the CPU's when its division is not exact.
//!
//! `shaders/quantize_rows.wgsl` turns each activation into a level with `round(x / s)`, as
//! the CPU does. Vulkan's precision rules (which WGSL follows) make addition and
//! multiplication correctly rounded but allow a division **2.5 ulp** of error; lavapipe
//! divides exactly, an NVIDIA driver does not. Almost every quotient is far from a half-way
//! point between two levels and rounds to the same level either way. A quotient within a
//! few ulp of a half-way point (`2.4999998` against `2.5`) may land on the neighbouring
//! level, and one level more or less on activation `j` moves output `o` by
//! `|w_level[o][j]| · w_scale[o] · x_scale`: small against the layer's typical output, large
//! against an output that happens to be near zero because its products cancel.
//!
//! [`flip_bounds`] finds, row by row, the activations that may round either way and adds up
//! what their flips can do to each output: the bound a test or a benchmark's check allows
//! on top of the ordinary rounding tolerance, instead of a flat relative tolerance that an
//! output near zero fails by chance.

use crate::cpu::int8::{QuantizationError, QuantizedWeights, quantize_rows};
use crate::tensor::Tensor2d;

/// The error a Vulkan (and so WGSL) division `x / y` may have, in ulp of the result.
pub const DIVISION_ULPS: f64 = 2.5;

// ANCHOR: quotient_ulps
/// How far, in ulp of the `f32` quotient, the GPU's quotient may be from the exact `x / s`
/// of the CPU's scale `s`: 2.5 for the division itself, up to 5 more because the GPU
/// computes the scale `largest / 127` with a division of its own (2.5 ulp of the scale can
/// be 5 ulp of a quotient whose significand is larger than the scale's), and one half more
/// for the CPU's own correctly rounded quotient. Rounded up to 8.
pub const QUOTIENT_ULPS: f64 = 8.0;
// ANCHOR_END: quotient_ulps

/// Largest relative error of the GPU's row scale against the CPU's: 2.5 ulp of the scale
/// is at most `2.5 ε` relative, with `ε = 2^-23`; rounded up to 3. It scales the whole
/// output `sum · x_scale · w_scale`, like a rounding: a check adds
/// `SCALE_RELATIVE_ERROR · |sum · x_scale · w_scale|` to its rounding tolerance.
pub const SCALE_RELATIVE_ERROR: f32 = 3.0 * f32::EPSILON;

// ANCHOR: may_round_either_way
/// Whether `value / scale` lies within `ulps` ulp (of the `f32` quotient) of a half-way
/// point between two levels, so that a division that is not correctly rounded may give the
/// neighbouring level. Decided in `f64`, whose quotient of two `f32`s is exact to 2^-53,
/// far below an `f32` ulp. Half-way points beyond ±126.5 are left out: a quotient there
/// can only be clamped to ±127 either way.
pub fn may_round_either_way(value: f32, scale: f32, ulps: f64) -> bool {
    let exact = value as f64 / scale as f64;
    let quotient = (value / scale).abs();
    if !exact.is_finite() || !quotient.is_finite() {
        return false;
    }
    // The spacing of `f32`s at the quotient: the next one up minus the quotient.
    let ulp = (f32::from_bits(quotient.to_bits() + 1) - quotient) as f64;
    let half_way = exact.floor() + 0.5;
    let nearest_half_way = if (exact - half_way).abs() <= (exact - (half_way - 1.0)).abs() {
        half_way
    } else {
        half_way - 1.0
    };
    nearest_half_way.abs() < 127.0 && (exact - nearest_half_way).abs() <= ulps * ulp
}
// ANCHOR_END: may_round_either_way

// ANCHOR: flip_bounds
/// For every row of `input` and every output of `weights` (`rows × outputs`), the largest
/// change that one-level flips of the GPU's quantisation can make to the layer's output:
/// the sum, over the activations that [`may_round_either_way`] within [`QUOTIENT_ULPS`] of
/// the CPU's row scale, of `|w_level[o][j]| · w_scale[o] · x_scale`. Zero for a row with no
/// such activation.
///
/// The ordinary rounding of `sum · x_scale · w_scale + bias`, and the GPU's scale being
/// [`SCALE_RELATIVE_ERROR`] off, come on top; a ReLU after the layer cannot widen the
/// difference. Errors as [`quantize_rows`] (non-finite input) or when the input's columns
/// are not the weights' inputs.
pub fn flip_bounds(
    input: &Tensor2d,
    weights: &QuantizedWeights,
) -> Result<Tensor2d, QuantizationError> {
    if input.columns() != weights.inputs() {
        return Err(QuantizationError::ShapeMismatch {
            input_columns: input.columns(),
            weight_rows: weights.inputs(),
        });
    }
    let quantized = quantize_rows(input)?;
    let mut bounds = Tensor2d::zeros(input.rows(), weights.outputs());
    for row in 0..input.rows() {
        let scale = quantized.scales[row];
        let flagged: Vec<bool> = input
            .row(row)
            .iter()
            .map(|&value| may_round_either_way(value, scale, QUOTIENT_ULPS))
            .collect();
        for output in 0..weights.outputs() {
            let weight_levels = weights.output_values(output);
            let flip_levels: u32 = flagged
                .iter()
                .zip(weight_levels)
                .filter(|&(&flag, _)| flag)
                .map(|(_, &weight)| weight.unsigned_abs() as u32)
                .sum();
            // Rounded up a little, so that the bound's own rounding never makes it too tight.
            let unit = weights.scale(output) as f64 * scale as f64;
            let bound = flip_levels as f64 * unit * (1.0 + 1e-6);
            bounds.set(row, output, bound as f32);
        }
    }
    Ok(bounds)
}
// ANCHOR_END: flip_bounds

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::int8::Granularity;

    #[test]
    fn a_quotient_exactly_half_way_is_flagged() {
        assert!(may_round_either_way(2.5, 1.0, QUOTIENT_ULPS));
        assert!(may_round_either_way(-0.5, 1.0, QUOTIENT_ULPS));
        // 3 · 0.5 / 0.5 with a scale that is not a power of two.
        let scale = 0.3f32;
        let value = 3.5 * scale;
        assert!(may_round_either_way(value, scale, QUOTIENT_ULPS));
    }

    #[test]
    fn a_quotient_a_few_ulp_from_half_way_is_flagged_and_one_further_is_not() {
        let half_way = 2.5f32;
        let ulp = f32::from_bits(half_way.to_bits() + 1) - half_way;
        assert!(may_round_either_way(half_way + 2.0 * ulp, 1.0, 3.0));
        assert!(may_round_either_way(half_way - 3.0 * ulp, 1.0, 3.0));
        assert!(!may_round_either_way(half_way + 4.0 * ulp, 1.0, 3.0));
        assert!(!may_round_either_way(
            half_way - 9.0 * ulp,
            1.0,
            QUOTIENT_ULPS
        ));
    }

    #[test]
    fn a_quotient_far_from_half_way_is_not_flagged() {
        for value in [0.0, 1.0, 2.2, -3.9, 126.0, 127.0, -127.0] {
            assert!(!may_round_either_way(value, 1.0, QUOTIENT_ULPS), "{value}");
        }
        // 126.5 is the last half-way point that decides a level; 127.5 is clamped either way.
        assert!(may_round_either_way(126.5, 1.0, QUOTIENT_ULPS));
        assert!(!may_round_either_way(127.5, 1.0, QUOTIENT_ULPS));
    }

    #[test]
    fn the_bound_counts_one_level_of_each_flagged_activation_and_only_those() {
        // Row 0: 127 sets the scale to 1; 2.5 and -0.5 are half-way, 1.0 is not. Row 1:
        // nothing is near half-way (a row with none flagged has a zero bound).
        let input =
            Tensor2d::from_vec(2, 4, vec![127.0, 2.5, 1.0, -0.5, 127.0, 2.0, -1.0, 3.3]).unwrap();
        let weights =
            Tensor2d::from_vec(4, 2, vec![0.0, 1.0, 1.0, 0.5, -1.0, 0.25, 0.5, -0.75]).unwrap();
        let quantized = QuantizedWeights::quantize(&weights, Granularity::PerOutput).unwrap();
        let bounds = flip_bounds(&input, &quantized).unwrap();
        for output in 0..2 {
            let levels = quantized.output_values(output);
            let flip_levels = levels[1].unsigned_abs() as f32 + levels[3].unsigned_abs() as f32;
            let want = flip_levels * quantized.scale(output);
            let got = bounds.get(0, output);
            assert!(want > 0.0);
            assert!(
                got >= want && got <= want * (1.0 + 1e-5),
                "output {output}: {got} against {want}"
            );
            assert_eq!(bounds.get(1, output), 0.0, "output {output}");
        }
    }

    #[test]
    fn a_row_of_zeros_and_a_row_far_from_half_way_have_zero_bounds() {
        let weights = QuantizedWeights::quantize(
            &Tensor2d::random(3, 5, -1.0..=1.0, 2),
            Granularity::PerTensor,
        )
        .unwrap();
        // 0.3 / (1 / 127) = 38.1 and 0.62 · 127 = 78.74: both far from half-way.
        let input = Tensor2d::from_vec(2, 3, vec![0.0, 0.0, 0.0, 1.0, 0.3, -0.62]).unwrap();
        let bounds = flip_bounds(&input, &weights).unwrap();
        assert!(
            bounds.as_slice().iter().all(|&bound| bound == 0.0),
            "{bounds:?}"
        );
    }

    #[test]
    fn mismatched_shapes_and_non_finite_input_are_typed_errors() {
        let weights = QuantizedWeights::quantize(
            &Tensor2d::random(3, 2, -1.0..=1.0, 1),
            Granularity::PerTensor,
        )
        .unwrap();
        let error = flip_bounds(&Tensor2d::zeros(1, 4), &weights).unwrap_err();
        assert!(matches!(error, QuantizationError::ShapeMismatch { .. }));
        let mut input = Tensor2d::zeros(1, 3);
        input.set(0, 1, f32::NAN);
        let error = flip_bounds(&input, &weights).unwrap_err();
        assert!(matches!(error, QuantizationError::NonFinite { .. }));
    }
}
