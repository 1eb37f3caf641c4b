//! A Monte Carlo estimate of π: throw random points at the unit square and count how many
//! land inside the quarter circle. The fraction inside approaches π/4, and its error falls
//! as 1/√n with the number of points n.
//!
//! The points come from counter-based streams ([`crate::parallel::random_streams`]): the
//! samples are cut into blocks of [`SAMPLES_PER_STREAM`], block `s` draws from stream
//! `s`, and the count inside is an integer sum. So the sequential loop, rayon on any
//! number of threads and the GPU all return exactly the same count for the same seed.
//! [`count_inside_locked`] shows the alternative, one generator behind a lock, which is
//! slower and gives a different count on every run. `gpu_monte_carlo` runs the same
//! streams on the GPU.

use rayon::prelude::*;

use crate::parallel::random_streams::{SharedGenerator, random_u32};

/// Samples per stream: the unit of work one thread or one GPU invocation takes.
pub const SAMPLES_PER_STREAM: u32 = 4096;

// ANCHOR: is_inside
/// Whether the centre of lattice cell (x, y) lies inside the quarter circle of radius
/// 2¹⁶, with x and y the top 16 bits of two random words. In integers,
/// (x + ½)² + (y + ½)² < 2³² is x(x + 1) + y(y + 1) < 2³², and each product fits a u32:
/// exact arithmetic, so the GPU's answer cannot differ by a rounding.
pub fn is_inside(x_word: u32, y_word: u32) -> bool {
    let (x, y) = (x_word >> 16, y_word >> 16);
    let x_part = x * (x + 1);
    let y_part = y * (y + 1);
    y_part <= u32::MAX - x_part
}
// ANCHOR_END: is_inside

// ANCHOR: count_stream
/// How many of stream `stream`'s samples fall inside. The stream holds samples
/// `stream · SAMPLES_PER_STREAM` onwards, at most `SAMPLES_PER_STREAM` of them and none
/// past `sample_count`; sample `i` uses the stream's words `2i` and `2i + 1`.
pub fn count_stream(seed: u32, stream: u32, sample_count: u32) -> u64 {
    let first = u64::from(stream) * u64::from(SAMPLES_PER_STREAM);
    let samples =
        (u64::from(sample_count).saturating_sub(first)).min(u64::from(SAMPLES_PER_STREAM)) as u32;
    (0..samples)
        .filter(|&sample| {
            is_inside(
                random_u32(seed, stream, 2 * sample),
                random_u32(seed, stream, 2 * sample + 1),
            )
        })
        .count() as u64
}

/// The number of streams `sample_count` samples need.
pub fn stream_count(sample_count: u32) -> u32 {
    sample_count.div_ceil(SAMPLES_PER_STREAM)
}

/// All samples, one stream after another.
pub fn count_inside_sequential(seed: u32, sample_count: u32) -> u64 {
    (0..stream_count(sample_count))
        .map(|stream| count_stream(seed, stream, sample_count))
        .sum()
}

/// The same streams spread over rayon's threads. The streams, not the threads, own the
/// random numbers, so the count is the same for any number of threads.
pub fn count_inside_parallel(seed: u32, sample_count: u32) -> u64 {
    (0..stream_count(sample_count))
        .into_par_iter()
        .map(|stream| count_stream(seed, stream, sample_count))
        .sum()
}
// ANCHOR_END: count_stream

// ANCHOR: count_locked
/// The estimate with one generator behind a lock shared by `threads` threads. Every draw
/// takes the lock, and which thread gets which number depends on the schedule: the count
/// is a fair estimate, but not the same from one run to the next.
pub fn count_inside_locked(generator: &SharedGenerator, sample_count: u32, threads: usize) -> u64 {
    let threads = threads.max(1) as u32;
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|thread| {
                let share = sample_count / threads + u32::from(thread < sample_count % threads);
                scope.spawn(move || {
                    (0..share)
                        .filter(|_| is_inside(generator.next_u32(), generator.next_u32()))
                        .count() as u64
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|worker| worker.join().expect("a counting thread panicked"))
            .sum()
    })
}
// ANCHOR_END: count_locked

/// The estimate of π from a count: four times the fraction inside. `None` for no samples.
pub fn estimate_pi(inside: u64, sample_count: u32) -> Option<f64> {
    (sample_count > 0).then(|| 4.0 * inside as f64 / f64::from(sample_count))
}

/// The standard deviation of the estimate for n samples: each sample is 4 with
/// probability π/4 and 0 otherwise, so its variance is π(4 − π), and the mean of n of
/// them has a standard deviation of √(π(4 − π)/n) ≈ 1.64/√n.
pub fn expected_error(sample_count: u32) -> f64 {
    let pi = std::f64::consts::PI;
    (pi * (4.0 - pi) / f64::from(sample_count)).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_integer_test_agrees_with_the_geometry() {
        // Corners and edges of the quarter circle, by the top 16 bits.
        assert!(is_inside(0, 0));
        assert!(is_inside(0, u32::MAX));
        assert!(!is_inside(u32::MAX, u32::MAX));
        // Against the same test in f64 on a grid of cells.
        for x in (0..65_536_u32).step_by(97) {
            for y in (0..65_536_u32).step_by(89) {
                let (centre_x, centre_y) = (f64::from(x) + 0.5, f64::from(y) + 0.5);
                let expected = centre_x * centre_x + centre_y * centre_y < 4_294_967_296.0;
                assert_eq!(is_inside(x << 16, y << 16), expected, "cell ({x}, {y})");
            }
        }
    }

    #[test]
    fn the_count_is_the_same_for_every_thread_count() {
        let samples = 1_000_003;
        let sequential = count_inside_sequential(17, samples);
        for threads in [1, 2, 3, 7] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            assert_eq!(
                pool.install(|| count_inside_parallel(17, samples)),
                sequential
            );
        }
        let estimate = estimate_pi(sequential, samples).unwrap();
        // Six standard deviations: a failure here means a biased generator or test.
        assert!((estimate - std::f64::consts::PI).abs() < 6.0 * expected_error(samples));
    }

    #[test]
    fn the_locked_generator_is_still_a_fair_estimate() {
        let samples = 200_000;
        let count = count_inside_locked(&SharedGenerator::new(3), samples, 3);
        let estimate = estimate_pi(count, samples).unwrap();
        assert!((estimate - std::f64::consts::PI).abs() < 6.0 * expected_error(samples));
        assert_eq!(estimate_pi(0, 0), None);
    }
}
