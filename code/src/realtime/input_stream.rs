//! A deterministic, seeded stream of sensor readings: the input of the real-time loop.
//!
//! The stream stands in for a sensor array: `channels` channels, each a sum of two sine
//! waves (amplitudes, frequencies and phases drawn from the seed) plus noise. Every frame
//! delivers a block of `samples_per_frame` consecutive samples per channel.
//!
//! Sample `n` of channel `c` is a pure function of `(seed, c, n)`: the noise comes from a
//! hash of the three, not from a generator that has to be stepped. So block `k` can be
//! produced at any time, on any thread, without producing blocks `0..k` first. Two things
//! depend on that: a loop that skips frames still sees exactly the input the frame number
//! says, and the regression tests compare any two versions of the loop frame by frame.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use thiserror::Error;

use crate::tensor::Tensor2d;

/// Why a stream could not be made.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum StreamError {
    #[error(
        "a sensor stream needs at least one channel and one sample per frame, not {channels} channels of {samples_per_frame} samples"
    )]
    Empty {
        channels: usize,
        samples_per_frame: usize,
    },
}

/// The noise's amplitude beside the signal's (amplitudes 0.5 to 1).
const NOISE_AMPLITUDE: f32 = 0.1;

/// One channel's signal: two sines.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Channel {
    amplitudes: [f32; 2],
    /// In cycles per sample: below 0.05, so a sine spans at least twenty samples.
    frequencies: [f32; 2],
    phases: [f32; 2],
}

/// The stream: its channels and its block length.
#[derive(Debug, Clone, PartialEq)]
pub struct SensorStream {
    channels: Vec<Channel>,
    samples_per_frame: usize,
    seed: u64,
}

impl SensorStream {
    pub fn new(
        channels: usize,
        samples_per_frame: usize,
        seed: u64,
    ) -> Result<SensorStream, StreamError> {
        if channels == 0 || samples_per_frame == 0 {
            return Err(StreamError::Empty {
                channels,
                samples_per_frame,
            });
        }
        let mut generator = ChaCha8Rng::seed_from_u64(seed);
        let channels = (0..channels)
            .map(|_| Channel {
                amplitudes: [0; 2].map(|_| generator.random_range(0.5..1.0)),
                frequencies: [0; 2].map(|_| generator.random_range(0.001..0.05)),
                phases: [0; 2].map(|_| generator.random_range(0.0..std::f32::consts::TAU)),
            })
            .collect();
        Ok(SensorStream {
            channels,
            samples_per_frame,
            seed,
        })
    }

    pub fn channels(&self) -> usize {
        self.channels.len()
    }

    pub fn samples_per_frame(&self) -> usize {
        self.samples_per_frame
    }

    // ANCHOR: block
    /// Block `frame`: one row per channel, `samples_per_frame` samples in each.
    pub fn block(&self, frame: u64) -> Tensor2d {
        let first_sample = frame * self.samples_per_frame as u64;
        let mut block = Tensor2d::zeros(self.channels.len(), self.samples_per_frame);
        for (index, channel) in self.channels.iter().enumerate() {
            for (offset, value) in block.row_mut(index).iter_mut().enumerate() {
                let sample = first_sample + offset as u64;
                // The phase is reduced modulo one cycle in f64 first: an f32 product of a
                // frequency and a sample number near 10⁸ would keep no fractional digits.
                let mut signal = 0.0;
                for wave in 0..2 {
                    let cycles = (f64::from(channel.frequencies[wave]) * sample as f64).fract();
                    let angle = std::f32::consts::TAU * cycles as f32 + channel.phases[wave];
                    signal += channel.amplitudes[wave] * angle.sin();
                }
                *value = signal + NOISE_AMPLITUDE * noise(self.seed, index as u64, sample);
            }
        }
        block
    }
    // ANCHOR_END: block
}

// ANCHOR: condition
/// Turns a raw block into the model's input: each run of `decimation` samples is
/// averaged into one (a box filter that also lowers the rate), then each channel is
/// moved to mean 0 and root mean square 1 so that the model sees the same scale whatever
/// the sensor's gain. A channel that is constant stays all zeros.
pub fn condition(raw: &Tensor2d, decimation: usize) -> Tensor2d {
    let decimation = decimation.max(1);
    let samples = raw.columns() / decimation;
    let mut conditioned = Tensor2d::zeros(raw.rows(), samples);
    for channel in 0..raw.rows() {
        let row = conditioned.row_mut(channel);
        for (value, run) in row
            .iter_mut()
            .zip(raw.row(channel).chunks_exact(decimation))
        {
            *value = run.iter().sum::<f32>() / decimation as f32;
        }
        let mean = row.iter().sum::<f32>() / samples as f32;
        let spread =
            (row.iter().map(|value| (value - mean).powi(2)).sum::<f32>() / samples as f32).sqrt();
        let scale = if spread > 0.0 { 1.0 / spread } else { 0.0 };
        for value in row.iter_mut() {
            *value = (*value - mean) * scale;
        }
    }
    conditioned
}
// ANCHOR_END: condition

/// Uniform noise in [−1, 1), a pure function of its three arguments (SplitMix64's mixing
/// function applied to their combination).
fn noise(seed: u64, channel: u64, sample: u64) -> f32 {
    let mut bits = seed ^ channel.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ sample.rotate_left(29);
    bits = (bits ^ (bits >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    bits = (bits ^ (bits >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    bits ^= bits >> 31;
    // The top 24 bits as a fraction in [0, 1), then moved to [−1, 1).
    (bits >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_stream_is_an_error() {
        assert_eq!(
            SensorStream::new(0, 8, 1),
            Err(StreamError::Empty {
                channels: 0,
                samples_per_frame: 8
            })
        );
        assert!(SensorStream::new(4, 0, 1).is_err());
    }

    #[test]
    fn a_block_depends_only_on_the_seed_and_the_frame_number() {
        let stream = SensorStream::new(5, 16, 42).unwrap();
        let again = SensorStream::new(5, 16, 42).unwrap();
        // Out of order, and after other blocks: the same values.
        let seventh = stream.block(7);
        let _ = stream.block(3);
        assert_eq!(again.block(7), seventh);
        assert_ne!(stream.block(8), seventh);
        assert_ne!(SensorStream::new(5, 16, 43).unwrap().block(7), seventh);
    }

    #[test]
    fn consecutive_blocks_continue_the_same_signal() {
        // Two blocks of 8 are one block of 16 cut in two: the stream is a function of the
        // sample number, and a block is a window on it.
        let short = SensorStream::new(3, 8, 9).unwrap();
        let long = SensorStream::new(3, 16, 9).unwrap();
        let (first, second, whole) = (short.block(4), short.block(5), long.block(2));
        for channel in 0..3 {
            let joined: Vec<f32> = [first.row(channel), second.row(channel)].concat();
            assert_eq!(joined.as_slice(), whole.row(channel));
        }
    }

    #[test]
    fn conditioning_averages_runs_and_normalises_each_channel() {
        // Channel 0: runs of two average to 1, 3, 5, 7 → mean 4, RMS √5.
        // Channel 1: constant, stays zero.
        let raw = Tensor2d::from_vec(
            2,
            8,
            vec![
                0.0, 2.0, 2.0, 4.0, 4.0, 6.0, 6.0, 8.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0,
            ],
        )
        .unwrap();
        let conditioned = condition(&raw, 2);
        assert_eq!(conditioned.shape(), (2, 4));
        let root_five = 5.0f32.sqrt();
        let expected = [
            -3.0 / root_five,
            -1.0 / root_five,
            1.0 / root_five,
            3.0 / root_five,
        ];
        for (value, expected) in conditioned.row(0).iter().zip(expected) {
            assert!(
                (value - expected).abs() < 1e-6,
                "{value} against {expected}"
            );
        }
        assert_eq!(conditioned.row(1), &[0.0; 4]);
    }

    #[test]
    fn values_are_finite_bounded_and_not_constant() {
        let stream = SensorStream::new(8, 64, 3).unwrap();
        let block = stream.block(1_000_000);
        assert!(
            block
                .as_slice()
                .iter()
                .all(|value| value.is_finite() && value.abs() <= 2.1)
        );
        let first = block.get(0, 0);
        assert!(
            block
                .row(0)
                .iter()
                .any(|&value| (value - first).abs() > 0.05)
        );
        let noise_values: Vec<f32> = (0..1000).map(|sample| noise(3, 1, sample)).collect();
        assert!(noise_values.iter().all(|value| (-1.0..1.0).contains(value)));
        let mean = noise_values.iter().sum::<f32>() / 1000.0;
        assert!(mean.abs() < 0.1, "mean {mean}");
    }
}
