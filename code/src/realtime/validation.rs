//! Validate everything before the hot loop: checking each sample inside the loop, against
//! checking the whole input once and then running a loop with no error paths in it.
//!
//! Both compute a weighted sum of samples in 16 running sums (the same order of additions,
//! so bit-identical results) and reject a non-finite sample with the same error. The
//! difference is the shape of the loop: a check that can return in the middle of the sums
//! forces the compiler to keep them scalar, one sample at a time, while the loop after a
//! separate validation pass has no exit and becomes vector instructions.

use thiserror::Error;

/// Why a frame of samples was refused.
#[derive(Debug, Error, Clone, Copy, PartialEq)]
pub enum SampleError {
    #[error("sample {index} is {value}; every sample must be a finite number")]
    NotFinite { index: usize, value: f32 },
    #[error("the frame has {samples} samples but there are {weights} weights; they must match")]
    LengthMismatch { samples: usize, weights: usize },
}

/// The number of running sums: 16 lanes fill one 512-bit or two 256-bit vector registers.
const LANES: usize = 16;

// ANCHOR: checking_inside
/// The weighted sum of `samples`, checking every sample as it is used. The `return` inside
/// the inner loop means that the sums must stop at exactly the failing sample, so the 16
/// lanes run one after the other, each with a compare and a branch.
pub fn weighted_sum_checking_inside(samples: &[f32], weights: &[f32]) -> Result<f32, SampleError> {
    check_lengths(samples, weights)?;
    let mut sums = [0.0f32; LANES];
    let mut chunk_start = 0;
    for (sample_chunk, weight_chunk) in samples.chunks_exact(LANES).zip(weights.chunks_exact(LANES))
    {
        for lane in 0..LANES {
            let value = sample_chunk[lane];
            if !value.is_finite() {
                return Err(SampleError::NotFinite {
                    index: chunk_start + lane,
                    value,
                });
            }
            sums[lane] += value * weight_chunk[lane];
        }
        chunk_start += LANES;
    }
    let mut tail = 0.0;
    for (index, (&value, &weight)) in samples.iter().zip(weights).enumerate().skip(chunk_start) {
        if !value.is_finite() {
            return Err(SampleError::NotFinite { index, value });
        }
        tail += value * weight;
    }
    Ok(sums.iter().sum::<f32>() + tail)
}
// ANCHOR_END: checking_inside

// ANCHOR: finite_samples
/// Samples that are known to be finite: the only way to make one is [`FiniteSamples::new`],
/// which checks. A function that takes `FiniteSamples` needs no check of its own, and the
/// type says so in its signature.
#[derive(Debug, Clone, Copy)]
pub struct FiniteSamples<'a>(&'a [f32]);

impl<'a> FiniteSamples<'a> {
    /// Checks every sample in one pass. The pass folds with `&` instead of stopping at the
    /// first bad sample, so it has no early exit and is vectorised; only when it fails does
    /// a second search find which sample it was.
    pub fn new(samples: &'a [f32]) -> Result<FiniteSamples<'a>, SampleError> {
        let all_finite = samples
            .iter()
            .fold(true, |all_finite, value| all_finite & value.is_finite());
        if all_finite {
            return Ok(FiniteSamples(samples));
        }
        let index = samples
            .iter()
            .position(|value| !value.is_finite())
            .unwrap_or_default();
        Err(SampleError::NotFinite {
            index,
            value: samples[index],
        })
    }

    /// The checked samples.
    pub fn as_slice(&self) -> &'a [f32] {
        self.0
    }
}
// ANCHOR_END: finite_samples

// ANCHOR: validated_first
/// The same weighted sum after validation: the lengths and every sample are checked before
/// the loop, so the loop itself cannot fail.
pub fn weighted_sum_validated_first(samples: &[f32], weights: &[f32]) -> Result<f32, SampleError> {
    check_lengths(samples, weights)?;
    let samples = FiniteSamples::new(samples)?;
    Ok(weighted_sum(samples, weights))
}

/// The hot loop: no error path, so the 16 sums become vector registers.
fn weighted_sum(samples: FiniteSamples<'_>, weights: &[f32]) -> f32 {
    let samples = samples.as_slice();
    let mut sums = [0.0f32; LANES];
    let sample_chunks = samples.chunks_exact(LANES);
    let weight_chunks = weights.chunks_exact(LANES);
    let tail: f32 = sample_chunks
        .remainder()
        .iter()
        .zip(weight_chunks.remainder())
        .fold(0.0, |tail, (value, weight)| tail + value * weight);
    for (sample_chunk, weight_chunk) in sample_chunks.zip(weight_chunks) {
        for lane in 0..LANES {
            sums[lane] += sample_chunk[lane] * weight_chunk[lane];
        }
    }
    sums.iter().sum::<f32>() + tail
}
// ANCHOR_END: validated_first

fn check_lengths(samples: &[f32], weights: &[f32]) -> Result<(), SampleError> {
    if samples.len() == weights.len() {
        Ok(())
    } else {
        Err(SampleError::LengthMismatch {
            samples: samples.len(),
            weights: weights.len(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn random_values(random: &mut ChaCha8Rng, length: usize) -> Vec<f32> {
        (0..length)
            .map(|_| random.random_range(-1.0f32..1.0))
            .collect()
    }

    #[test]
    fn both_give_bit_identical_sums_for_many_lengths() {
        let mut random = ChaCha8Rng::seed_from_u64(52);
        for length in [0, 1, 15, 16, 17, 100, 1024, 4099] {
            let samples = random_values(&mut random, length);
            let weights = random_values(&mut random, length);
            let inside = weighted_sum_checking_inside(&samples, &weights).unwrap();
            let first = weighted_sum_validated_first(&samples, &weights).unwrap();
            assert_eq!(inside.to_bits(), first.to_bits(), "length {length}");
            let plain: f64 = samples
                .iter()
                .zip(&weights)
                .map(|(&value, &weight)| f64::from(value) * f64::from(weight))
                .sum();
            assert!((f64::from(first) - plain).abs() < 1e-3, "length {length}");
        }
    }

    #[test]
    fn both_report_the_first_bad_sample_wherever_it_is() {
        let mut random = ChaCha8Rng::seed_from_u64(53);
        let weights = random_values(&mut random, 100);
        for (index, bad) in [
            (0, f32::NAN),
            (15, f32::INFINITY),
            (16, f32::NAN),
            (99, -f32::INFINITY),
        ] {
            let mut samples = random_values(&mut random, 100);
            samples[index] = bad;
            // A second bad sample later must not be the one reported.
            if index + 3 < samples.len() {
                samples[index + 3] = f32::NAN;
            }
            let inside = weighted_sum_checking_inside(&samples, &weights).unwrap_err();
            let first = weighted_sum_validated_first(&samples, &weights).unwrap_err();
            match (inside, first) {
                (
                    SampleError::NotFinite { index: a, value: x },
                    SampleError::NotFinite { index: b, value: y },
                ) => {
                    assert_eq!((a, b), (index, index));
                    assert_eq!(x.to_bits(), bad.to_bits());
                    assert_eq!(y.to_bits(), bad.to_bits());
                }
                other => panic!("expected NotFinite at {index}, got {other:?}"),
            }
        }
    }

    #[test]
    fn mismatched_lengths_are_a_clear_error() {
        let error = weighted_sum_validated_first(&[1.0; 3], &[1.0; 4]).unwrap_err();
        assert_eq!(
            error,
            SampleError::LengthMismatch {
                samples: 3,
                weights: 4
            }
        );
        assert_eq!(
            error.to_string(),
            "the frame has 3 samples but there are 4 weights; they must match"
        );
        assert_eq!(
            weighted_sum_checking_inside(&[1.0; 3], &[1.0; 4]).unwrap_err(),
            error
        );
    }
}
