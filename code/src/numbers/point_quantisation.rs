//! The precision of a lossy point cloud: positions quantised to `bits` bits per axis over
//! the cloud's bounding cube, the first step of compressors such as Draco.
//!
//! With `q` bits an axis of extent `R` is cut into `2^q - 1` steps of `R / (2^q - 1)`, and
//! rounding to the nearest step moves a coordinate by at most half a step. A point can be
//! off by half a step on all three axes at once, so the largest error in 3D is
//! `√3 / 2` steps. [`quantisation_error`] measures it on random points so the text can set
//! the measurement beside that bound.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

// ANCHOR: quantise_points
/// Quantises every coordinate of `points` to `bits` bits over the cube of side `extent`
/// that starts at `origin`, and returns the positions the decoder reconstructs.
pub fn quantise_points(
    points: &[[f64; 3]],
    origin: [f64; 3],
    extent: f64,
    bits: u32,
) -> Vec<[f64; 3]> {
    let largest = f64::from((1u32 << bits) - 1);
    let step = extent / largest;
    points
        .iter()
        .map(|point| {
            std::array::from_fn(|axis| {
                let stored = ((point[axis] - origin[axis]) / step)
                    .round()
                    .clamp(0.0, largest);
                origin[axis] + stored * step
            })
        })
        .collect()
}
// ANCHOR_END: quantise_points

/// The largest and the mean distance between `count` random points in a cube of side
/// `extent` and their quantised copies, and the bound `√3/2 · step`.
pub fn quantisation_error(count: usize, extent: f64, bits: u32, seed: u64) -> (f64, f64, f64) {
    let mut random = ChaCha8Rng::seed_from_u64(seed);
    let points: Vec<[f64; 3]> = (0..count)
        .map(|_| std::array::from_fn(|_| random.random_range(0.0..extent)))
        .collect();
    let decoded = quantise_points(&points, [0.0; 3], extent, bits);
    let distances: Vec<f64> = points
        .iter()
        .zip(&decoded)
        .map(|(a, b)| (0..3).map(|i| (a[i] - b[i]).powi(2)).sum::<f64>().sqrt())
        .collect();
    let largest = distances.iter().copied().fold(0.0, f64::max);
    let mean = distances.iter().sum::<f64>() / distances.len().max(1) as f64;
    let bound = 3f64.sqrt() / 2.0 * extent / f64::from((1u32 << bits) - 1);
    (largest, mean, bound)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_error_stays_under_the_bound_and_approaches_it() {
        for bits in [8, 11, 14] {
            let (largest, mean, bound) = quantisation_error(200_000, 10.0, bits, 4);
            assert!(
                largest <= bound * (1.0 + 1e-9),
                "{bits}: {largest} > {bound}"
            );
            assert!(largest > 0.8 * bound, "{bits}: {largest} far below {bound}");
            assert!(mean < largest);
        }
    }

    #[test]
    fn every_extra_bit_halves_the_error() {
        let (_, mean_10, _) = quantisation_error(100_000, 1.0, 10, 2);
        let (_, mean_11, _) = quantisation_error(100_000, 1.0, 11, 2);
        let ratio = mean_10 / mean_11;
        assert!((1.9..2.1).contains(&ratio), "{ratio}");
    }
}
