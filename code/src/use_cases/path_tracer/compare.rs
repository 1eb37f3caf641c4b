//! When a GPU image counts as the CPU reference's image.
//!
//! Both trace the same paths with the same random numbers, but not with the same
//! rounding: the GPU's `sin`, `cos` and division may differ from the CPU's in the last
//! bits, and a direction that differs in the last bit can, once in a while, graze past a
//! sphere that the other one hits. From then on the two paths have nothing in common, and
//! that pixel differs by a lot. So the rule is not "every pixel within a tolerance" but:
//!
//! - no pixel is NaN or infinite (outputs start as NaN, so a pixel never written fails);
//! - at least [`REQUIRED_FRACTION`] of the pixels agree in all three channels within
//!   [`PIXEL_TOLERANCE`] (relative to the reference, absolute below 1);
//! - the means of the two images agree within [`MEAN_TOLERANCE`] (relative), so the few
//!   pixels that differ cannot add up to a brighter or darker image.

// ANCHOR: rule
/// How close a channel must be, relative to the reference value (absolute below 1).
pub const PIXEL_TOLERANCE: f32 = 1e-3;
/// The fraction of pixels that must be within the tolerance.
pub const REQUIRED_FRACTION: f64 = 0.99;
/// How close the two images' means must be, relative.
pub const MEAN_TOLERANCE: f64 = 1e-3;
// ANCHOR_END: rule

/// How two images of three channels per pixel compare.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Agreement {
    pub pixels: usize,
    /// Pixels whose three channels are all within the tolerance.
    pub pixels_within: usize,
    /// Channels of the candidate that are NaN or infinite.
    pub not_finite: usize,
    pub reference_mean: f64,
    pub candidate_mean: f64,
    /// The largest difference of one channel.
    pub largest_difference: f32,
}

impl Agreement {
    /// `reference` and `candidate`: three floats per pixel, the same number of pixels.
    pub fn of(reference: &[f32], candidate: &[f32]) -> Agreement {
        let pixels = reference.len().min(candidate.len()) / 3;
        let mut pixels_within = 0;
        let mut largest_difference = 0.0_f32;
        for (want, got) in reference.chunks_exact(3).zip(candidate.chunks_exact(3)) {
            let mut within = true;
            for (&want, &got) in want.iter().zip(got) {
                let difference = (want - got).abs();
                // A NaN difference fails this test, as it should.
                within &= difference <= PIXEL_TOLERANCE * want.abs().max(1.0);
                largest_difference = largest_difference.max(difference);
            }
            pixels_within += usize::from(within);
        }
        let mean = |values: &[f32]| {
            values.iter().map(|&value| f64::from(value)).sum::<f64>() / values.len().max(1) as f64
        };
        Agreement {
            pixels: if reference.len() == candidate.len() {
                pixels
            } else {
                usize::MAX
            },
            pixels_within,
            not_finite: candidate.iter().filter(|value| !value.is_finite()).count(),
            reference_mean: mean(reference),
            candidate_mean: mean(candidate),
            largest_difference,
        }
    }

    pub fn fraction_within(&self) -> f64 {
        self.pixels_within as f64 / self.pixels.max(1) as f64
    }

    /// Whether the rule of this module holds.
    pub fn passes(&self) -> bool {
        let mean_error = (self.candidate_mean - self.reference_mean).abs();
        self.pixels != usize::MAX
            && self.not_finite == 0
            && self.fraction_within() >= REQUIRED_FRACTION
            && mean_error <= MEAN_TOLERANCE * self.reference_mean.abs().max(1e-6)
    }

    /// One line for a report or a failed test.
    pub fn describe(&self) -> String {
        if self.pixels == usize::MAX {
            return "the two images have different sizes".to_string();
        }
        format!(
            "{:.3} % of {} pixels within {PIXEL_TOLERANCE} (rule: {} %), means {:.6} and {:.6}, \
             largest difference {:.3e}, {} values not finite",
            100.0 * self.fraction_within(),
            self.pixels,
            100.0 * REQUIRED_FRACTION,
            self.reference_mean,
            self.candidate_mean,
            self.largest_difference,
            self.not_finite
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule_allows_a_few_flipped_pixels_but_not_a_shift_or_a_nan() {
        let reference: Vec<f32> = (0..3000).map(|index| (index % 17) as f32 * 0.25).collect();
        assert!(Agreement::of(&reference, &reference).passes());
        // Five of a thousand pixels wildly different, the rest exact: passes, since the
        // mean moves by less than 1e-3 only if the outliers are small. Make them balanced.
        let mut flipped = reference.clone();
        for pixel in [10, 300, 700] {
            flipped[3 * pixel] += 0.5;
            flipped[3 * pixel + 3] -= 0.5;
        }
        let agreement = Agreement::of(&reference, &flipped);
        assert_eq!(agreement.pixels_within, 994);
        assert!(agreement.passes(), "{}", agreement.describe());
        // Every pixel off by 0.2 %: fails, both the fraction and the mean.
        let shifted: Vec<f32> = reference
            .iter()
            .map(|value| value * 1.002 + 0.002)
            .collect();
        assert!(!Agreement::of(&reference, &shifted).passes());
        // One NaN fails.
        let mut poisoned = reference.clone();
        poisoned[5] = f32::NAN;
        assert!(!Agreement::of(&reference, &poisoned).passes());
        // Two percent of the pixels off: fails even with the mean kept.
        let mut many = reference.clone();
        for pixel in 0..10 {
            many[3 * 100 * pixel] += 0.5;
            many[3 * 100 * pixel + 3] -= 0.5;
        }
        assert!(!Agreement::of(&reference, &many).passes());
        // Different sizes fail.
        assert!(!Agreement::of(&reference, &reference[..2997]).passes());
    }
}
