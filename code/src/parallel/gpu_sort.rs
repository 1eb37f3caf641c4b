//! Sorting on the GPU with a bitonic sorting network.
//!
//! A quicksort decides what to compare next from what it has seen, which suits one core
//! and not thousands of invocations. A *sorting network* fixes every comparison in advance:
//! for n = 2ᵐ keys, m(m + 1)/2 passes, and in each pass the keys form n/2 disjoint pairs
//! that are compared and, if out of order, swapped. Every pair of a pass can go to its own
//! invocation with no coordination at all. The price is n·log² n work instead of n·log n,
//! and a length that must be a power of two: shorter inputs are padded with the largest
//! key, which sorts to the end and is cut off after reading back.
//!
//! The network itself (which pairs each pass compares) is in `sorting_network`. Each pass
//! is one dispatch of `shaders/parallel/bitonic_sort.wgsl`; all passes go into
//! one compute pass of one submission, and wgpu makes each dispatch see the writes of the
//! one before.

use crate::gpu::{GpuContext, GpuError, WorkgroupGrid, compile_wgsl};
use crate::parallel::gpu_arrays;
use crate::parallel::sorting::{f32_to_ordered_u32, ordered_u32_to_f32};
use crate::parallel::sorting_network::bitonic_steps;

/// The compare-and-exchange kernel.
pub const BITONIC_SORT_SHADER: &str = include_str!("../../../shaders/parallel/bitonic_sort.wgsl");
const WORKGROUP_SIZE: u32 = 256;

/// The bitonic sort compiled once, ready to sort any number of arrays.
pub struct GpuSorter {
    pipeline: wgpu::ComputePipeline,
}

impl GpuSorter {
    pub fn new(context: &GpuContext) -> Result<GpuSorter, GpuError> {
        Ok(GpuSorter {
            pipeline: compile_wgsl(
                context,
                "bitonic_sort.wgsl",
                BITONIC_SORT_SHADER,
                "main",
                &[],
            )?,
        })
    }

    // ANCHOR: sort_u32
    /// `keys` sorted in ascending order on the GPU: upload, every pass of the network, read
    /// back. Lengths that are not a power of two are padded with `u32::MAX`.
    pub fn sort_u32(&self, context: &GpuContext, keys: &[u32]) -> Result<Vec<u32>, GpuError> {
        if keys.len() < 2 {
            return Ok(keys.to_vec());
        }
        let padded_length = keys.len().next_power_of_two();
        let limits = context.limits();
        let bytes = padded_length as u64 * 4;
        if padded_length > 1 << 31 || bytes > limits.max_storage_buffer_binding_size {
            return Err(GpuError::TensorTooLarge {
                rows: 1,
                columns: padded_length,
                bytes,
                limit_name: "max_storage_buffer_binding_size",
                limit: limits.max_storage_buffer_binding_size,
            });
        }
        let mut padded = keys.to_vec();
        padded.resize(padded_length, u32::MAX);
        let key_buffer = gpu_arrays::upload(context, "bitonic keys", &padded);
        let steps = bitonic_steps(padded_length as u32);
        let grid = WorkgroupGrid::covering(
            (padded_length as u64 / 2).div_ceil(u64::from(WORKGROUP_SIZE)),
            limits.max_compute_workgroups_per_dimension,
            "bitonic sort",
        )?;
        // One uniform buffer holds every step, each at an offset the device accepts for a
        // uniform binding; one bind group per step points at its slice.
        let stride = u64::from(limits.min_uniform_buffer_offset_alignment).max(16);
        let mut uniform_bytes = vec![0_u8; steps.len() * stride as usize];
        for (index, step) in steps.iter().enumerate() {
            let start = index * stride as usize;
            uniform_bytes[start..start + 12].copy_from_slice(bytemuck::bytes_of(step));
        }
        let step_buffer = gpu_arrays::uniform_bytes(context, "bitonic steps", &uniform_bytes);
        let layout = self.pipeline.get_bind_group_layout(0);
        let bind_groups: Vec<wgpu::BindGroup> = (0..steps.len() as u64)
            .map(|index| {
                context
                    .device()
                    .create_bind_group(&wgpu::BindGroupDescriptor {
                        label: Some("bitonic step"),
                        layout: &layout,
                        entries: &[
                            wgpu::BindGroupEntry {
                                binding: 0,
                                resource: key_buffer.as_entire_binding(),
                            },
                            wgpu::BindGroupEntry {
                                binding: 1,
                                resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                                    buffer: &step_buffer,
                                    offset: index * stride,
                                    size: wgpu::BufferSize::new(16),
                                }),
                            },
                        ],
                    })
            })
            .collect();
        let mut encoder = context.create_encoder("bitonic sort");
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor::default());
            pass.set_pipeline(&self.pipeline);
            for bind_group in &bind_groups {
                pass.set_bind_group(0, bind_group, &[]);
                pass.dispatch_workgroups(grid.x, grid.y, grid.z);
            }
        }
        context.submit(encoder);
        gpu_arrays::read_back(context, &key_buffer, keys.len())
    }
    // ANCHOR_END: sort_u32

    /// Floats sorted in their total order (as `f32::total_cmp`), through the same
    /// order-preserving keys as the radix sort.
    pub fn sort_f32(&self, context: &GpuContext, values: &[f32]) -> Result<Vec<f32>, GpuError> {
        let keys: Vec<u32> = values
            .iter()
            .map(|&value| f32_to_ordered_u32(value))
            .collect();
        let sorted = self.sort_u32(context, &keys)?;
        Ok(sorted.into_iter().map(ordered_u32_to_f32).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parallel::sorting::random_keys;

    #[test]
    fn the_gpu_sorts_like_sort_unstable_on_every_kind_of_length() {
        let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
        let sorter = GpuSorter::new(context).unwrap();
        let lengths = [0, 1, 2, 3, 5, 255, 256, 257, 1000, 4097, 65_535, 300_001];
        for (case, &length) in lengths.iter().enumerate() {
            // Few distinct values (many duplicates) and the full range, u32::MAX included.
            for distinct in [4, u32::MAX] {
                let mut keys = random_keys(length, distinct, case as u64);
                if length > 2 {
                    keys[length / 2] = u32::MAX;
                    keys[1] = 0;
                }
                let mut expected = keys.clone();
                expected.sort_unstable();
                let sorted = sorter.sort_u32(context, &keys).unwrap();
                assert_eq!(sorted.len(), length);
                if let Some(index) = (0..length).find(|&index| sorted[index] != expected[index]) {
                    panic!(
                        "length {length}: element {index} is {} where sort_unstable gives {}",
                        sorted[index], expected[index]
                    );
                }
            }
        }
    }

    #[test]
    fn the_gpu_sorts_floats_in_their_total_order() {
        let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
        let sorter = GpuSorter::new(context).unwrap();
        let mut values: Vec<f32> = random_keys(3001, u32::MAX, 9)
            .into_iter()
            .map(f32::from_bits)
            .collect();
        values.extend([0.0, -0.0, f32::INFINITY, f32::NEG_INFINITY, 1.0, 1.0]);
        let mut expected = values.clone();
        expected.sort_unstable_by(f32::total_cmp);
        let sorted = sorter.sort_f32(context, &values).unwrap();
        let bits = |values: &[f32]| {
            values
                .iter()
                .map(|value| value.to_bits())
                .collect::<Vec<_>>()
        };
        assert_eq!(bits(&sorted), bits(&expected));
    }
}
