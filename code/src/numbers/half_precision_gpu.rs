//! A tree sum on the GPU in three precisions, to measure what half precision costs in
//! accuracy and what it saves in time:
//!
//! - [`SumPrecision::Single`]: `f32` values, `f32` additions (the crate's `reduce.wgsl`);
//! - [`SumPrecision::HalfStorage`]: `f16` values converted to `f32` as they are loaded
//!   (`reduce_f16_to_f32.wgsl`), then `f32` passes: half the bytes read, `f32` additions;
//! - [`SumPrecision::Half`]: `f16` values and `f16` additions in every pass
//!   (`reduce_f16.wgsl`).
//!
//! The two `f16` kernels need the device feature `SHADER_F16` (WGSL `enable f16;`):
//! [`HalfPrecisionSums::new`] is a [`GpuError::MissingFeature`] on a device without it.
//! The data stays on the GPU between sums, so a timing measures the kernels, not the
//! upload.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::gpu::{GpuContext, GpuError, WorkgroupGrid, compile_wgsl};

/// How many values one workgroup of the reduction kernels sums.
const BLOCK_SIZE: usize = 1024;

/// Which precision a sum stores its values in and adds them in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SumPrecision {
    Single,
    HalfStorage,
    Half,
}

impl SumPrecision {
    pub const ALL: [SumPrecision; 3] = [
        SumPrecision::Single,
        SumPrecision::HalfStorage,
        SumPrecision::Half,
    ];

    /// A short name for tables and figure series.
    pub fn name(self) -> &'static str {
        match self {
            SumPrecision::Single => "f32 values, f32 sums",
            SumPrecision::HalfStorage => "f16 values, f32 sums",
            SumPrecision::Half => "f16 values, f16 sums",
        }
    }

    /// Bytes per stored value.
    fn value_bytes(self) -> usize {
        match self {
            SumPrecision::Single => 4,
            SumPrecision::HalfStorage | SumPrecision::Half => 2,
        }
    }
}

/// Values uploaded once in one precision, ready to be summed many times.
pub struct GpuValues {
    buffer: wgpu::Buffer,
    count: usize,
    precision: SumPrecision,
}

impl GpuValues {
    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
}

/// The three sums' pipelines on one device.
pub struct HalfPrecisionSums<'context> {
    context: &'context GpuContext,
    single: wgpu::ComputePipeline,
    half_to_single: wgpu::ComputePipeline,
    half: wgpu::ComputePipeline,
}

impl<'context> HalfPrecisionSums<'context> {
    /// Compiles the three kernels, or says that the device cannot run the `f16` ones.
    pub fn new(context: &'context GpuContext) -> Result<Self, GpuError> {
        if !context
            .device()
            .features()
            .contains(wgpu::Features::SHADER_F16)
        {
            return Err(GpuError::MissingFeature {
                kernel: "reduce_f16",
                feature: "SHADER_F16".to_string(),
            });
        }
        let single = compile_wgsl(
            context,
            "reduce",
            include_str!("../../../shaders/reduce.wgsl"),
            "sum",
            &[],
        )?;
        let half_to_single = compile_wgsl(
            context,
            "reduce_f16_to_f32",
            include_str!("../../../shaders/reduce_f16_to_f32.wgsl"),
            "sum_in_single",
            &[],
        )?;
        let half = compile_wgsl(
            context,
            "reduce_f16",
            include_str!("../../../shaders/reduce_f16.wgsl"),
            "sum_in_half",
            &[],
        )?;
        Ok(HalfPrecisionSums {
            context,
            single,
            half_to_single,
            half,
        })
    }

    /// Uploads `values`, rounded to `f16` for the two half-precision sums.
    pub fn upload(&self, values: &[f32], precision: SumPrecision) -> GpuValues {
        let bytes: Vec<u8> = match precision {
            SumPrecision::Single => bytemuck::cast_slice(values).to_vec(),
            SumPrecision::HalfStorage | SumPrecision::Half => values
                .iter()
                .flat_map(|&value| half::f16::from_f32(value).to_bits().to_le_bytes())
                .collect(),
        };
        let buffer = self.storage_buffer(bytes.len(), "half-precision sum values");
        if !bytes.is_empty() {
            // write_buffer needs a multiple of 4 bytes; the padding is never read.
            let mut padded = bytes;
            padded.resize(padded.len().next_multiple_of(4), 0);
            self.context.queue().write_buffer(&buffer, 0, &padded);
        }
        GpuValues {
            buffer,
            count: values.len(),
            precision,
        }
    }

    /// Sums `values` on the GPU and reads the result back as `f32`.
    pub fn sum(&self, values: &GpuValues) -> Result<f32, GpuError> {
        if values.is_empty() {
            return Ok(0.0);
        }
        let mut encoder = self.encoder();
        let (result, result_is_half) = self.record(&mut encoder, values)?;
        let staging = self
            .context
            .device()
            .create_buffer(&wgpu::BufferDescriptor {
                label: Some("half-precision sum staging"),
                size: 4,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
        encoder.copy_buffer_to_buffer(&result, 0, &staging, 0, 4);
        self.context.queue().submit([encoder.finish()]);
        let bytes = read_mapped(self.context, &staging)?;
        Ok(if result_is_half {
            half::f16::from_bits(u16::from_le_bytes([bytes[0], bytes[1]])).to_f32()
        } else {
            f32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]])
        })
    }

    // ANCHOR: time_sums
    /// The time of one sum: `repeats` sums recorded into one submission, timed from the
    /// submission to the GPU's completion, divided by `repeats`. Recording happens before
    /// the clock starts, so what is timed is the GPU's work plus one submission.
    pub fn time_per_sum(&self, values: &GpuValues, repeats: usize) -> Result<Duration, GpuError> {
        let mut encoder = self.encoder();
        for _ in 0..repeats.max(1) {
            self.record(&mut encoder, values)?;
        }
        let commands = encoder.finish();
        let start = Instant::now();
        self.context.queue().submit([commands]);
        self.context
            .device()
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|error| GpuError::Readback {
                reason: error.to_string(),
            })?;
        Ok(start.elapsed() / repeats.max(1) as u32)
    }
    // ANCHOR_END: time_sums

    /// Records every pass of one sum; returns the buffer that will hold the result and
    /// whether it holds an `f16`.
    fn record(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        values: &GpuValues,
    ) -> Result<(wgpu::Buffer, bool), GpuError> {
        let mut remaining = values.count;
        let mut source = values.buffer.clone();
        let mut first_pass = true;
        loop {
            let blocks = remaining.div_ceil(BLOCK_SIZE);
            let (pipeline, output_is_half) = match (values.precision, first_pass) {
                (SumPrecision::Half, _) => (&self.half, true),
                (SumPrecision::HalfStorage, true) => (&self.half_to_single, false),
                _ => (&self.single, false),
            };
            let output_bytes = blocks * if output_is_half { 2 } else { 4 };
            let output = self.storage_buffer(output_bytes, "half-precision sum partials");
            self.dispatch(encoder, pipeline, &source, &output, remaining, blocks)?;
            if blocks == 1 {
                return Ok((output, output_is_half));
            }
            source = output;
            remaining = blocks;
            first_pass = false;
        }
    }

    fn dispatch(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        pipeline: &wgpu::ComputePipeline,
        input: &wgpu::Buffer,
        output: &wgpu::Buffer,
        element_count: usize,
        blocks: usize,
    ) -> Result<(), GpuError> {
        let device = self.context.device();
        // A uniform block is at least 16 bytes; only the first 4 hold the count.
        let count = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("element count"),
            size: 16,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut uniform = [0u32; 4];
        uniform[0] = element_count as u32;
        self.context
            .queue()
            .write_buffer(&count, 0, bytemuck::cast_slice(&uniform));
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("half-precision sum"),
            layout: &pipeline.get_bind_group_layout(0),
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: input.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: output.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 2,
                    resource: count.as_entire_binding(),
                },
            ],
        });
        let limit = self.context.limits().max_compute_workgroups_per_dimension;
        let grid = WorkgroupGrid::covering(blocks as u64, limit, "half-precision sum")?;
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("half-precision sum"),
            timestamp_writes: None,
        });
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, &bind_group, &[]);
        pass.dispatch_workgroups(grid.x, grid.y, grid.z);
        Ok(())
    }

    /// A storage buffer of at least `bytes` bytes, rounded up to a multiple of 4 (a
    /// binding's size must be).
    fn storage_buffer(&self, bytes: usize, label: &str) -> wgpu::Buffer {
        self.context
            .device()
            .create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: bytes.max(4).next_multiple_of(4) as u64,
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_SRC
                    | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
    }

    fn encoder(&self) -> wgpu::CommandEncoder {
        self.context
            .device()
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("half-precision sum"),
            })
    }
}

/// Bytes per value each precision reads in its first pass, for bandwidth figures.
pub fn bytes_read(precision: SumPrecision, count: usize) -> usize {
    precision.value_bytes() * count
}

/// Maps a staging buffer after the submission that fills it, and copies its bytes out.
fn read_mapped(context: &GpuContext, staging: &wgpu::Buffer) -> Result<Vec<u8>, GpuError> {
    let slice = staging.slice(..);
    let (sender, receiver) = mpsc::channel();
    slice.map_async(wgpu::MapMode::Read, move |result| {
        let _ = sender.send(result);
    });
    let readback_error = |reason: String| GpuError::Readback { reason };
    context
        .device()
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|error| readback_error(error.to_string()))?;
    receiver
        .recv()
        .map_err(|error| readback_error(error.to_string()))?
        .map_err(|error| readback_error(error.to_string()))?;
    let bytes = slice
        .get_mapped_range()
        .map_err(|error| readback_error(error.to_string()))?
        .to_vec();
    staging.unmap();
    Ok(bytes)
}
