//! The data-parallel workload on the GPU: one invocation per item.
//!
//! A CPU thread pool splits the items into a handful of pieces, one per core. A GPU goes
//! the other way: the kernel is written for *one* item (shaders/parallel/process_items.wgsl),
//! and the dispatch launches one invocation per item, hundreds of thousands of them, in
//! workgroups of 256. The hardware runs the invocations of a subgroup (32 on NVIDIA) in
//! lockstep on the lanes of one SIMD unit, and switches between many subgroups to hide
//! the time each one waits for memory.
//!
//! A call here does everything an immediate-mode operator of module 1 does: upload the
//! seeds and step counts, fill the output with NaN (so that an item the kernel forgot
//! stays visibly wrong), dispatch, copy to a staging buffer and read back. The times the
//! chapter compares include all of it.

use std::sync::mpsc;

use wgpu::util::DeviceExt;

use crate::gpu::dispatch::{WorkgroupGrid, workgroups_for};
use crate::gpu::record::{BoundDispatch, uniform_buffer};
use crate::gpu::{GpuContext, GpuError, compile_wgsl};
use crate::parallel::workloads::{DataParallelError, Workload, check_output};

/// What can go wrong running the workload on the GPU.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GpuMapError {
    #[error(transparent)]
    Gpu(#[from] GpuError),
    #[error(transparent)]
    Data(#[from] DataParallelError),
}

const WORKGROUP_SIZE: u32 = 256;

/// The `Dimensions` uniform of process_items.wgsl.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Dimensions {
    item_count: u32,
}

/// The compiled kernel, reused for every call.
pub struct GpuItemProcessor {
    pipeline: wgpu::ComputePipeline,
}

impl GpuItemProcessor {
    /// Compiles process_items.wgsl.
    pub fn new(context: &GpuContext) -> Result<GpuItemProcessor, GpuError> {
        let source = include_str!("../../../shaders/parallel/process_items.wgsl");
        let pipeline = compile_wgsl(context, "process_items", source, "main", &[])?;
        Ok(GpuItemProcessor { pipeline })
    }

    // ANCHOR: run
    /// Processes every item of `workload` on the GPU into `output`: upload, dispatch,
    /// read back.
    pub fn run(
        &self,
        context: &GpuContext,
        workload: &Workload,
        output: &mut [f32],
    ) -> Result<(), GpuMapError> {
        check_output(workload, output, "GpuItemProcessor::run")?;
        if workload.is_empty() {
            return Ok(());
        }
        let bytes = check_size(context, workload.len())?;
        let storage = |label: &str, contents: &[u8], usage: wgpu::BufferUsages| {
            context
                .device()
                .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some(label),
                    contents,
                    usage: wgpu::BufferUsages::STORAGE | usage,
                })
        };
        let seeds = storage(
            "seeds",
            bytemuck::cast_slice(&workload.seeds),
            wgpu::BufferUsages::empty(),
        );
        let steps = storage(
            "steps",
            bytemuck::cast_slice(&workload.steps),
            wgpu::BufferUsages::empty(),
        );
        // Poisoned: an item the kernel does not write stays NaN.
        let poison = vec![f32::NAN; workload.len()];
        let results = storage(
            "results",
            bytemuck::cast_slice(&poison),
            wgpu::BufferUsages::COPY_SRC,
        );
        let staging = context.device().create_buffer(&wgpu::BufferDescriptor {
            label: Some("results staging"),
            size: bytes,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let dimensions = uniform_buffer(
            context,
            &Dimensions {
                item_count: workload.len() as u32,
            },
        );
        let grid = WorkgroupGrid::covering(
            workgroups_for(workload.len(), WORKGROUP_SIZE),
            context.limits().max_compute_workgroups_per_dimension,
            "process_items",
        )?;
        let dispatch = BoundDispatch::new(
            context,
            &self.pipeline,
            &[&seeds, &steps, &results, &dimensions],
            grid,
        );
        let mut encoder = context.create_encoder("process_items");
        dispatch.record(&mut encoder);
        encoder.copy_buffer_to_buffer(&results, 0, &staging, 0, bytes);
        context.submit(encoder);
        read_back(context, &staging, output)?;
        Ok(())
    }
    // ANCHOR_END: run
}

/// The output's size in bytes, if one storage buffer may hold it.
fn check_size(context: &GpuContext, items: usize) -> Result<u64, GpuError> {
    let bytes = items as u64 * 4;
    let limit = context.limits().max_storage_buffer_binding_size;
    if bytes > limit || items > u32::MAX as usize {
        return Err(GpuError::TensorTooLarge {
            rows: 1,
            columns: items,
            bytes,
            limit_name: "max_storage_buffer_binding_size",
            limit,
        });
    }
    Ok(bytes)
}

/// Maps `staging`, waits for the GPU, and copies its floats into `output`.
fn read_back(
    context: &GpuContext,
    staging: &wgpu::Buffer,
    output: &mut [f32],
) -> Result<(), GpuError> {
    let failed = |error: &dyn std::fmt::Display| GpuError::Readback {
        reason: error.to_string(),
    };
    let slice = staging.slice(..);
    let (sender, receiver) = mpsc::channel();
    slice.map_async(wgpu::MapMode::Read, move |result| {
        let _ = sender.send(result);
    });
    context
        .device()
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|error| failed(&error))?;
    receiver
        .recv()
        .map_err(|error| failed(&error))?
        .map_err(|error| failed(&error))?;
    {
        let mapped = slice.get_mapped_range().map_err(|error| failed(&error))?;
        output.copy_from_slice(bytemuck::cast_slice(&mapped));
    }
    staging.unmap();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parallel::workloads::{Balance, process_sequential};

    fn context() -> &'static GpuContext {
        GpuContext::shared().unwrap_or_else(|error| panic!("GPU tests need an adapter: {error}"))
    }

    #[test]
    fn the_gpu_gives_the_same_bits_as_the_cpu_for_every_length() {
        let processor = GpuItemProcessor::new(context()).unwrap();
        // Around the workgroup size, and over a thousand workgroups. (Spilling into a
        // second row of the dispatch grid needs more than 16.8 million items, too slow for
        // lavapipe; `WorkgroupGrid`'s own tests cover that layout.)
        for items in [1, 2, 255, 256, 257, 1000, 4099, 262_145] {
            for balance in [Balance::Balanced, Balance::Unbalanced] {
                let workload = Workload::new(balance, items, 9, items as u64);
                let mut expected = vec![f32::NAN; items];
                process_sequential(&workload, &mut expected).unwrap();
                let mut output = vec![f32::NAN; items];
                processor.run(context(), &workload, &mut output).unwrap();
                for (index, (&gpu, &cpu)) in output.iter().zip(&expected).enumerate() {
                    assert!(
                        gpu.to_bits() == cpu.to_bits(),
                        "{balance:?}, {items} items: item {index} is {gpu} on the GPU, {cpu} on the CPU"
                    );
                }
            }
        }
    }

    #[test]
    fn an_empty_workload_and_a_wrong_output_length() {
        let processor = GpuItemProcessor::new(context()).unwrap();
        let empty = Workload::new(Balance::Balanced, 0, 3, 0);
        processor.run(context(), &empty, &mut []).unwrap();
        let workload = Workload::new(Balance::Balanced, 10, 3, 0);
        let mut short = vec![0.0; 9];
        assert!(matches!(
            processor.run(context(), &workload, &mut short),
            Err(GpuMapError::Data(DataParallelError::LengthMismatch { .. }))
        ));
    }
}
