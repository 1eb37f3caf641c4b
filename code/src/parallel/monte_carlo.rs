//! A Monte Carlo estimate of π: throw random points at the unit square and count how many
//! land inside the quarter circle. The fraction inside approaches π/4, and its error falls
//! as 1/√n with the number of points n.
//!
//! The points come from counter-based streams ([`crate::parallel::random_streams`]): the
//! samples are cut into blocks of [`SAMPLES_PER_STREAM`], block `s` draws from stream
//! `s`, and the count inside is an integer sum. So the sequential loop, rayon on any
//! number of threads and the GPU all return exactly the same count for the same seed.
//! [`count_inside_locked`] shows the alternative, one generator behind a lock, which is
//! slower and gives a different count on every run.

use rayon::prelude::*;

use crate::gpu::{GpuContext, GpuError, WorkgroupGrid, compile_wgsl};
use crate::parallel::gpu_arrays;
use crate::parallel::random_streams::{SharedGenerator, random_u32};

/// The shader holding the random streams and the Monte Carlo kernel.
pub const RANDOM_STREAMS_SHADER: &str =
    include_str!("../../../shaders/parallel/random_streams.wgsl");

/// Samples per stream: the unit of work one thread or one GPU invocation takes.
pub const SAMPLES_PER_STREAM: u32 = 4096;
/// Invocations per workgroup in random_streams.wgsl.
const WORKGROUP_SIZE: u32 = 256;

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

/// The uniform block of random_streams.wgsl.
#[repr(C)]
#[derive(Debug, Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Parameters {
    seed: u32,
    stream_count: u32,
    per_stream: u32,
    sample_count: u32,
}

/// The two kernels of random_streams.wgsl, compiled once.
pub struct GpuRandomStreams {
    fill_draws: wgpu::ComputePipeline,
    count_inside: wgpu::ComputePipeline,
}

impl GpuRandomStreams {
    pub fn new(context: &GpuContext) -> Result<GpuRandomStreams, GpuError> {
        let compile = |entry_point| {
            compile_wgsl(
                context,
                "random_streams.wgsl",
                RANDOM_STREAMS_SHADER,
                entry_point,
                &[],
            )
        };
        Ok(GpuRandomStreams {
            fill_draws: compile("fill_draws")?,
            count_inside: compile("count_inside")?,
        })
    }

    /// Runs `pipeline` over `invocations` invocations and reads back `output_words`.
    fn run(
        &self,
        context: &GpuContext,
        pipeline: &wgpu::ComputePipeline,
        parameters: Parameters,
        invocations: u32,
        output_words: usize,
    ) -> Result<Vec<u32>, GpuError> {
        let workgroups = u64::from(invocations.div_ceil(WORKGROUP_SIZE));
        let grid = WorkgroupGrid::covering(
            workgroups,
            context.limits().max_compute_workgroups_per_dimension,
            "random streams",
        )?;
        let uniform = gpu_arrays::uniform(context, "random stream parameters", &parameters);
        let output = gpu_arrays::poisoned(context, "random stream output", output_words);
        let bind_group = gpu_arrays::bind(context, pipeline, &[&uniform, &output]);
        let mut encoder = context.create_encoder("random streams");
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor::default());
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, &bind_group, &[]);
            pass.dispatch_workgroups(grid.x, grid.y, grid.z);
        }
        context.submit(encoder);
        gpu_arrays::read_back(context, &output, output_words)
    }

    /// The first `per_stream` words of streams `0..stream_count`, stream after stream.
    pub fn draws(
        &self,
        context: &GpuContext,
        seed: u32,
        stream_count: u32,
        per_stream: u32,
    ) -> Result<Vec<u32>, GpuError> {
        let total = stream_count * per_stream;
        let parameters = Parameters {
            seed,
            stream_count,
            per_stream: per_stream.max(1),
            sample_count: total,
        };
        self.run(context, &self.fill_draws, parameters, total, total as usize)
    }

    // ANCHOR: gpu_count
    /// The count inside on the GPU: one invocation per stream, a tree reduction per
    /// workgroup, and the workgroups' counts added here in 64 bits.
    pub fn count_inside(
        &self,
        context: &GpuContext,
        seed: u32,
        sample_count: u32,
    ) -> Result<u64, GpuError> {
        let streams = stream_count(sample_count);
        let parameters = Parameters {
            seed,
            stream_count: streams,
            per_stream: SAMPLES_PER_STREAM,
            sample_count,
        };
        let workgroups = streams.div_ceil(WORKGROUP_SIZE).max(1);
        let grid = WorkgroupGrid::covering(
            u64::from(workgroups),
            context.limits().max_compute_workgroups_per_dimension,
            "Monte Carlo",
        )?;
        // A grid that spills into y has more workgroups than needed; each writes a count.
        let written = (grid.x * grid.y) as usize;
        let partial_counts = self.run(context, &self.count_inside, parameters, streams, written)?;
        Ok(partial_counts.iter().map(|&count| u64::from(count)).sum())
    }
    // ANCHOR_END: gpu_count
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parallel::random_streams::RandomStream;

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

    #[test]
    fn gpu_streams_are_bit_identical_to_the_cpu_streams() {
        let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
        let streams = GpuRandomStreams::new(context).unwrap();
        for (seed, stream_count, per_stream) in [
            (0, 1, 1),
            (7, 3, 5),
            (123_456, 300, 17),
            (u32::MAX, 1000, 64),
        ] {
            let gpu = streams
                .draws(context, seed, stream_count, per_stream)
                .unwrap();
            let cpu: Vec<u32> = (0..stream_count)
                .flat_map(|stream| RandomStream::new(seed, stream).take(per_stream as usize))
                .collect();
            assert_eq!(
                gpu, cpu,
                "seed {seed}, {stream_count} streams of {per_stream}"
            );
        }
    }

    #[test]
    fn the_gpu_counts_exactly_what_the_cpu_counts() {
        let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
        let streams = GpuRandomStreams::new(context).unwrap();
        for (seed, samples) in [
            (1, 0),
            (2, 1),
            (3, 4095),
            (4, 4097),
            (5, 1_048_576 + 333),
            (6, 3_000_001),
        ] {
            let gpu = streams.count_inside(context, seed, samples).unwrap();
            assert_eq!(
                gpu,
                count_inside_sequential(seed, samples),
                "seed {seed}, {samples} samples"
            );
        }
    }
}
