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
/// neighbouring level.
pub fn may_round_either_way(value: f32, scale: f32, ulps: f64) -> bool {
    half_way_points_near(value, scale, ulps, 0.0) > 0
}

/// How many half-way points between levels lie within `ulps` ulp of the `f32` quotient plus
/// `widening` levels of the exact `value / scale`: the most levels by which a quotient that
/// far off can round differently. Decided in `f64`, whose quotient of two `f32`s is exact to
/// 2^-53, far below an `f32` ulp. Half-way points beyond ±126.5 are left out: a quotient
/// there can only be clamped to ±127 either way.
pub fn half_way_points_near(value: f32, scale: f32, ulps: f64, widening: f64) -> u32 {
    let exact = value as f64 / scale as f64;
    let quotient = (value / scale).abs();
    if !exact.is_finite() || !quotient.is_finite() {
        return 0;
    }
    // The spacing of `f32`s at the quotient: the next one up minus the quotient.
    let ulp = (f32::from_bits(quotient.to_bits() + 1) - quotient) as f64;
    let reach = ulps * ulp + widening;
    // Half-way points are n + 0.5 for the integers n from -127 to 126.
    let lowest = ((exact - reach) - 0.5).ceil().max(-127.0);
    let highest = ((exact + reach) - 0.5).floor().min(126.0);
    if highest < lowest {
        0
    } else {
        (highest - lowest) as u32 + 1
    }
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
    let no_error = Tensor2d::zeros(input.rows(), input.columns());
    flip_bounds_with_input_error(input, &no_error, weights)
}
// ANCHOR_END: flip_bounds

/// [`flip_bounds`] for a layer inside a network, whose GPU input may itself differ from the
/// CPU's `input` by up to `input_error` (element by element, from the layers before). That
/// moves each quotient by up to `(error + |x / s| · Δs) / (s − Δs)` levels, where
/// `Δs = largest error / 127` is how far the input's error can move the row scale, and
/// moves the whole product by `Δs` of scale. Where that reasoning breaks down (`Δs` not
/// small against the scale: a row of zeros on the CPU that holds rounding noise on the
/// GPU), the bound falls back on the plain one of rounding to a level: per activation, half
/// a level of the GPU's scale, the input's error and the CPU's own rounding error, times
/// `|w|`. The smaller of the two holds.
pub fn flip_bounds_with_input_error(
    input: &Tensor2d,
    input_error: &Tensor2d,
    weights: &QuantizedWeights,
) -> Result<Tensor2d, QuantizationError> {
    if input.columns() != weights.inputs() || input_error.shape() != input.shape() {
        return Err(QuantizationError::ShapeMismatch {
            input_columns: input.columns(),
            weight_rows: weights.inputs(),
        });
    }
    let quantized = quantize_rows(input)?;
    let mut bounds = Tensor2d::zeros(input.rows(), weights.outputs());
    for row in 0..input.rows() {
        let scale = quantized.scales[row] as f64;
        let values = input.row(row);
        let errors = input_error.row(row);
        let largest = values.iter().fold(0.0f32, |max, &x| max.max(x.abs())) as f64;
        let largest_error = errors.iter().fold(0.0f32, |max, &e| max.max(e.abs())) as f64;
        let scale_change = largest_error / 127.0;
        // The largest scale the GPU may use, with its own division's error on top. A row
        // of zeros has scale 1 on the CPU; its GPU copy either is zeros too (scale 1) or
        // holds noise below the largest error (a scale below `scale_change`).
        let gpu_scale = (scale + scale_change) * (1.0 + SCALE_RELATIVE_ERROR as f64);
        let quotients_usable =
            largest_error == 0.0 || (largest > 0.0 && scale_change < 0.25 * scale);
        let flips: Vec<u32> = values
            .iter()
            .zip(errors)
            .map(|(&value, &error)| {
                let widening = if largest_error == 0.0 {
                    0.0
                } else {
                    (error.abs() as f64 + (value as f64 / scale).abs() * scale_change)
                        / (scale - scale_change)
                };
                half_way_points_near(value, scale as f32, QUOTIENT_ULPS, widening)
            })
            .collect();
        let levels = &quantized.values[row * input.columns()..(row + 1) * input.columns()];
        for output in 0..weights.outputs() {
            let weight_levels = weights.output_values(output);
            let weight_scale = weights.scale(output) as f64;
            let mut flip_levels = 0u64;
            let mut sum = 0i64;
            let mut plain = 0.0f64;
            for (j, &weight) in weight_levels.iter().enumerate() {
                let magnitude = weight.unsigned_abs() as u64;
                flip_levels += flips[j] as u64 * magnitude;
                sum += levels[j] as i64 * weight as i64;
                // |level' s' − level s| ≤ |level' s' − x'| + |x' − x| + |x − level s|: the
                // GPU's rounding (half a level, plus its division's 2.5 ulp of 127), the
                // input's error, and the CPU's own rounding, known exactly.
                let cpu_rounding = (levels[j] as f64 * scale - values[j] as f64).abs();
                plain += magnitude as f64
                    * ((0.5 + 1e-4) * gpu_scale + errors[j].abs() as f64 + cpu_rounding);
            }
            let plain = plain * weight_scale;
            let through_flips = flip_levels as f64 * gpu_scale * weight_scale
                + sum.unsigned_abs() as f64 * scale_change * weight_scale;
            let bound = if quotients_usable {
                through_flips.min(plain)
            } else {
                plain
            };
            // Rounded up a little, so that the bound's own rounding never makes it too tight.
            bounds.set(row, output, (bound * (1.0 + 1e-6)) as f32);
        }
    }
    Ok(bounds)
}

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
    fn an_input_error_widens_the_window_and_a_zero_row_with_noise_falls_back() {
        // 2.45 is 0.05 of a level from 2.5: not flagged alone, flagged with an error of 0.1.
        let input = Tensor2d::from_vec(1, 2, vec![127.0, 2.45]).unwrap();
        let weights = Tensor2d::from_vec(2, 1, vec![0.0, 1.0]).unwrap();
        let quantized = QuantizedWeights::quantize(&weights, Granularity::PerOutput).unwrap();
        assert_eq!(flip_bounds(&input, &quantized).unwrap().get(0, 0), 0.0);
        let error = Tensor2d::from_vec(1, 2, vec![0.0, 0.1]).unwrap();
        let bound = flip_bounds_with_input_error(&input, &error, &quantized).unwrap();
        let one_level = 127.0 * quantized.scale(0);
        assert!(bound.get(0, 0) >= one_level, "{}", bound.get(0, 0));
        // A row of zeros (scale 1) whose GPU copy may hold noise of 1e-6: levels could be
        // anything, but the output moves by at most |w| · (1e-6 + half a level of scale ≤ 1).
        let zeros = Tensor2d::zeros(1, 2);
        let noise = Tensor2d::from_vec(1, 2, vec![1e-6, 1e-6]).unwrap();
        let bound = flip_bounds_with_input_error(&zeros, &noise, &quantized)
            .unwrap()
            .get(0, 0);
        assert!(
            bound > 0.0 && bound <= (1e-6 + 0.5 * (1.0 + 1e-6)) * 1.001,
            "{bound}"
        );
    }

    #[test]
    fn half_way_points_near_counts_every_level_a_wide_window_crosses() {
        assert_eq!(half_way_points_near(2.0, 1.0, 0.0, 0.4), 0);
        assert_eq!(half_way_points_near(2.0, 1.0, 0.0, 0.5), 2);
        assert_eq!(half_way_points_near(2.0, 1.0, 0.0, 1.6), 4);
        // Near the top, only half-way points up to 126.5 count.
        assert_eq!(half_way_points_near(126.0, 1.0, 0.0, 3.0), 4);
        assert_eq!(half_way_points_near(126.0, 1.0, 0.0, 0.6), 2);
        assert_eq!(half_way_points_near(127.0, 1.0, 0.0, 0.6), 1);
    }

    /// A division as a fast GPU does it, `x · (1 / y)`: within about 1.5 ulp, not rounded
    /// correctly.
    fn reciprocal_division(x: f32, y: f32) -> f32 {
        x * (1.0 / y)
    }

    /// The int8 layer with every division done by `divide`, as a GPU's kernels compute it:
    /// `sum · row scale · output scale + bias`.
    fn layer_dividing_with(
        input: &Tensor2d,
        weights: &QuantizedWeights,
        bias: &Tensor2d,
        divide: fn(f32, f32) -> f32,
    ) -> (Tensor2d, Vec<i8>) {
        let mut output = Tensor2d::zeros(input.rows(), weights.outputs());
        let mut all_levels = Vec::new();
        for row in 0..input.rows() {
            let largest = input.row(row).iter().fold(0.0f32, |m, x| m.max(x.abs()));
            let scale = if largest > 0.0 {
                divide(largest, 127.0)
            } else {
                1.0
            };
            let levels: Vec<i8> = input
                .row(row)
                .iter()
                .map(|&x| divide(x, scale).round().clamp(-127.0, 127.0) as i8)
                .collect();
            for o in 0..weights.outputs() {
                let sum: i32 = levels
                    .iter()
                    .zip(weights.output_values(o))
                    .map(|(&a, &b)| a as i32 * b as i32)
                    .sum();
                output.set(
                    row,
                    o,
                    sum as f32 * scale * weights.scale(o) + bias.get(0, o),
                );
            }
            all_levels.extend(levels);
        }
        (output, all_levels)
    }

    #[test]
    fn a_layer_whose_division_is_not_correctly_rounded_stays_within_the_bound() {
        // Rows of activations placed within a few ulp of half-way points, where a division
        // that is off by an ulp picks the other level.
        let (rows, inputs, outputs) = (24, 96, 40);
        let noise = Tensor2d::random(rows, inputs, -1.0..=1.0, 5);
        let mut input = Tensor2d::zeros(rows, inputs);
        for row in 0..rows {
            let scale = (0.37 + 0.05 * row as f32) / 127.0;
            input.set(row, 0, 127.0 * scale);
            for column in 1..inputs {
                let level = ((column * 37 + row * 11) % 253) as f32 - 126.0;
                let half_way = (level + 0.5) * scale;
                let nudge = (4.0 * noise.get(row, column)).round() as i32;
                let bits = (half_way.to_bits() as i32 + nudge) as u32;
                input.set(
                    row,
                    column,
                    f32::from_bits(bits).clamp(-127.0 * scale, 127.0 * scale),
                );
            }
        }
        let weights = Tensor2d::random(inputs, outputs, -1.0..=1.0, 6);
        let bias = Tensor2d::random(1, outputs, -0.1..=0.1, 7);
        let quantized = QuantizedWeights::quantize(&weights, Granularity::PerOutput).unwrap();
        let mut expected = Tensor2d::zeros(rows, outputs);
        crate::cpu::int8::linear_int8_into(&input, &quantized, &bias, false, &mut expected)
            .unwrap();
        let exact = |x: f32, y: f32| x / y;
        let (same, exact_levels) = layer_dividing_with(&input, &quantized, &bias, exact);
        assert_eq!(exact_levels, quantize_rows(&input).unwrap().values);
        let (actual, levels) = layer_dividing_with(&input, &quantized, &bias, reciprocal_division);
        let flipped = levels
            .iter()
            .zip(&exact_levels)
            .filter(|(a, b)| a != b)
            .count();
        assert!(
            flipped > 10,
            "the test must make the reciprocal flip levels: {flipped}"
        );
        let bounds = flip_bounds(&input, &quantized).unwrap();
        let mut beyond_rounding = 0;
        for row in 0..rows {
            for o in 0..outputs {
                let want = expected.get(row, o);
                let product = (want - bias.get(0, o)).abs();
                let rounding = 4.0 * f32::EPSILON * (product + want.abs());
                let difference = (actual.get(row, o) - want).abs();
                assert!((same.get(row, o) - want).abs() <= rounding);
                let allowed = rounding + SCALE_RELATIVE_ERROR * product + bounds.get(row, o);
                assert!(
                    difference <= allowed,
                    "({row}, {o}): {difference} > {allowed}"
                );
                if difference > rounding + SCALE_RELATIVE_ERROR * product {
                    beyond_rounding += 1;
                }
            }
        }
        assert!(beyond_rounding > 0, "some outputs need the flip bound");
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
