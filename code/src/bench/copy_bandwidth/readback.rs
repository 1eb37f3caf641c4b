//! Reading a device buffer back to the host, for the check of every copy and for the
//! timestamps: copy into a staging buffer, map it, wait for the GPU, copy out.

use std::sync::mpsc;

use crate::gpu::{GpuContext, GpuError};

/// Copies `length` bytes of `buffer` from `offset` into a staging buffer and reads them.
pub(super) fn read_words(
    context: &GpuContext,
    buffer: &wgpu::Buffer,
    offset: u64,
    length: u64,
) -> Result<Vec<u32>, GpuError> {
    let staging = context.device().create_buffer(&wgpu::BufferDescriptor {
        label: Some("copy check staging"),
        size: length,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = context
        .device()
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("copy check readback"),
        });
    encoder.copy_buffer_to_buffer(buffer, offset, &staging, 0, length);
    context.queue().submit([encoder.finish()]);
    let bytes = map_and_read(context, &staging, 0, length)?;
    Ok(bytemuck::cast_slice(&bytes).to_vec())
}

/// Maps a `MAP_READ` buffer, waits for the GPU, and copies `length` bytes out as 8-byte
/// words (so that both u32 and u64 views of them are aligned).
pub(super) fn map_and_read(
    context: &GpuContext,
    staging: &wgpu::Buffer,
    offset: u64,
    length: u64,
) -> Result<Vec<u64>, GpuError> {
    let readback = |error: &dyn std::fmt::Display| GpuError::Readback {
        reason: error.to_string(),
    };
    let slice = staging.slice(offset..offset + length);
    let (sender, receiver) = mpsc::channel();
    slice.map_async(wgpu::MapMode::Read, move |result| {
        // The receiver is alive until we have read from it below.
        let _ = sender.send(result);
    });
    context
        .device()
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|error| readback(&error))?;
    receiver
        .recv()
        .map_err(|error| readback(&error))?
        .map_err(|error| readback(&error))?;
    let words = {
        let mapped = slice.get_mapped_range().map_err(|error| readback(&error))?;
        let mut words = vec![0u64; (length as usize).div_ceil(8)];
        bytemuck::cast_slice_mut::<u64, u8>(&mut words)[..length as usize].copy_from_slice(&mapped);
        words
    };
    staging.unmap();
    Ok(words)
}
