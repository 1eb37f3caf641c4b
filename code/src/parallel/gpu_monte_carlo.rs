//! The Monte Carlo estimate of π on the GPU, and the GPU's own copy of the random streams.
//!
//! `shaders/parallel/random_streams.wgsl` holds the same hash as
//! [`crate::parallel::random_streams`] and the counting kernel: invocation `s` takes
//! stream `s`, exactly the samples
//! [`count_stream`](crate::parallel::monte_carlo::count_stream) counts on the CPU, so the GPU's count
//! equals the CPU's to the last sample.

use crate::gpu::{GpuContext, GpuError, WorkgroupGrid, compile_wgsl};
use crate::parallel::gpu_arrays;
use crate::parallel::monte_carlo::{SAMPLES_PER_STREAM, stream_count};

/// The shader holding the random streams and the Monte Carlo kernel.
pub const RANDOM_STREAMS_SHADER: &str =
    include_str!("../../../shaders/parallel/random_streams.wgsl");

/// Invocations per workgroup in random_streams.wgsl.
const WORKGROUP_SIZE: u32 = 256;

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
    use crate::parallel::monte_carlo::count_inside_sequential;
    use crate::parallel::random_streams::RandomStream;

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
