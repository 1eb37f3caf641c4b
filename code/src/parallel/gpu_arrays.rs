//! Plain arrays of `u32` or `f32` on the GPU: upload, poison, read back.
//!
//! The irregular kernels (sorting, sparse products, Monte Carlo) work on flat arrays of
//! keys, indices and counts rather than on `Tensor2d`, so they share these few helpers
//! instead of each creating buffers and mapping them by hand.

use std::sync::mpsc;

use wgpu::util::DeviceExt;

use crate::gpu::{GpuContext, GpuError};

/// The word written into every output buffer before a kernel runs, so that an element the
/// kernel forgets to write shows up in the comparison with the CPU instead of passing as a
/// zero. As an `f32` it is a NaN.
pub const POISON: u32 = 0x7FC0_DEAD;

/// Usage of every array buffer: the kernel reads and writes it, the host fills it and
/// copies it out.
const ARRAY_USAGE: wgpu::BufferUsages = wgpu::BufferUsages::STORAGE
    .union(wgpu::BufferUsages::COPY_SRC)
    .union(wgpu::BufferUsages::COPY_DST);

/// A storage buffer holding `values`. An empty slice gets one word, because a binding
/// may not be empty; the kernels know the real length from their uniform.
pub fn upload<T: bytemuck::Pod>(context: &GpuContext, label: &str, values: &[T]) -> wgpu::Buffer {
    let bytes: &[u8] = bytemuck::cast_slice(values);
    let padded;
    let contents = if bytes.is_empty() {
        padded = POISON.to_ne_bytes();
        &padded[..]
    } else {
        bytes
    };
    context
        .device()
        .create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(label),
            contents,
            usage: ARRAY_USAGE,
        })
}

/// A storage buffer of `words` 32-bit words, every one set to [`POISON`].
pub fn poisoned(context: &GpuContext, label: &str, words: usize) -> wgpu::Buffer {
    upload(context, label, &vec![POISON; words.max(1)])
}

/// A uniform buffer holding `value`.
pub fn uniform<T: bytemuck::Pod>(context: &GpuContext, label: &str, value: &T) -> wgpu::Buffer {
    context
        .device()
        .create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(label),
            contents: bytemuck::bytes_of(value),
            usage: wgpu::BufferUsages::UNIFORM,
        })
}

/// A uniform buffer holding raw bytes (several uniform blocks at aligned offsets).
pub fn uniform_bytes(context: &GpuContext, label: &str, bytes: &[u8]) -> wgpu::Buffer {
    context
        .device()
        .create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(label),
            contents: bytes,
            usage: wgpu::BufferUsages::UNIFORM,
        })
}

/// Copies the first `count` elements of `buffer` back to the host, waiting for every
/// submission before it.
pub fn read_back<T: bytemuck::Pod>(
    context: &GpuContext,
    buffer: &wgpu::Buffer,
    count: usize,
) -> Result<Vec<T>, GpuError> {
    if count == 0 {
        return Ok(Vec::new());
    }
    let bytes = (count * std::mem::size_of::<T>()) as u64;
    let staging = context.device().create_buffer(&wgpu::BufferDescriptor {
        label: Some("array readback"),
        size: bytes,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = context.create_encoder("array readback");
    encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, bytes);
    context.submit(encoder);
    let failed = |error: &dyn std::fmt::Display| GpuError::Readback {
        reason: error.to_string(),
    };
    let slice = staging.slice(..);
    let (sender, receiver) = mpsc::channel();
    slice.map_async(wgpu::MapMode::Read, move |result| {
        // The receiver lives until the `recv` below.
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
    let mapped = slice.get_mapped_range().map_err(|error| failed(&error))?;
    let values = bytemuck::cast_slice(&mapped).to_vec();
    drop(mapped);
    staging.unmap();
    Ok(values)
}

/// A bind group for group 0 of `pipeline` with `buffers` at bindings 0, 1, 2, …
pub fn bind(
    context: &GpuContext,
    pipeline: &wgpu::ComputePipeline,
    buffers: &[&wgpu::Buffer],
) -> wgpu::BindGroup {
    let entries: Vec<wgpu::BindGroupEntry> = buffers
        .iter()
        .enumerate()
        .map(|(binding, buffer)| wgpu::BindGroupEntry {
            binding: binding as u32,
            resource: buffer.as_entire_binding(),
        })
        .collect();
    context
        .device()
        .create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.get_bind_group_layout(0),
            entries: &entries,
        })
}

/// A bind group for group 0 of `pipeline` with each buffer at the binding number given,
/// for a shader whose entry points use different subsets of its bindings.
pub fn bind_at(
    context: &GpuContext,
    pipeline: &wgpu::ComputePipeline,
    buffers: &[(u32, &wgpu::Buffer)],
) -> wgpu::BindGroup {
    let entries: Vec<wgpu::BindGroupEntry> = buffers
        .iter()
        .map(|&(binding, buffer)| wgpu::BindGroupEntry {
            binding,
            resource: buffer.as_entire_binding(),
        })
        .collect();
    context
        .device()
        .create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.get_bind_group_layout(0),
            entries: &entries,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_come_back_as_they_went_up_and_poison_is_a_nan() {
        let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
        let values: Vec<u32> = (0..1000).map(|index| index * 7 + 3).collect();
        let buffer = upload(context, "test", &values);
        assert_eq!(read_back::<u32>(context, &buffer, 1000).unwrap(), values);
        assert_eq!(
            read_back::<u32>(context, &buffer, 0).unwrap(),
            Vec::<u32>::new()
        );
        let poisoned_buffer = poisoned(context, "poisoned", 5);
        let read: Vec<f32> = read_back(context, &poisoned_buffer, 5).unwrap();
        assert!(read.iter().all(|value| value.is_nan()));
    }
}
