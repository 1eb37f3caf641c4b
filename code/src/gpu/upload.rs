//! `UploadBuffer`: a staging buffer for the input, kept mapped between runs.
//!
//! [`GpuTensor::write`] hands the bytes to `Queue::write_buffer`, which is simple and
//! right for data written once, such as weights. For an input written on every run it
//! costs more than it looks: wgpu allocates a fresh staging buffer for every call, copies
//! the bytes into it and records the copy into a command buffer of its own.
//!
//! A runner that uploads on every run does better with a staging buffer of its own that
//! lives as long as the runner. The host writes the input straight into its mapped
//! memory, the run's own encoder copies it into the storage buffer (so the upload, the
//! kernels and the readback are one submission), and right after submitting, the runner
//! asks for the buffer to be mapped again. The run's one wait for the GPU completes that
//! request too, so the next run finds the buffer mapped and waits for nothing.

use std::sync::{Arc, Mutex};

use crate::gpu::probe::{self, HostPhase};
use crate::gpu::{GpuContext, GpuError, GpuTensor};
use crate::tensor::{ShapeError, Tensor2d};

// ANCHOR: upload_buffer
/// A `MAP_WRITE` staging buffer the size of one tensor, mapped whenever no copy out of it
/// is pending.
pub struct UploadBuffer {
    rows: usize,
    columns: usize,
    buffer: wgpu::Buffer,
    /// Where the buffer's mapping stands; the map callback updates it.
    state: Arc<Mutex<MapState>>,
}
// ANCHOR_END: upload_buffer

/// Where an upload buffer's mapping stands (wgpu does not say, so the buffer keeps
/// track).
#[derive(Debug, Clone, PartialEq)]
enum MapState {
    /// The host may write.
    Mapped,
    /// Unmapped for a copy, and no map requested yet.
    Unmapped,
    /// Map requested; the callback has not run yet.
    Pending,
    /// The map request failed, for this reason.
    Failed(String),
}

impl UploadBuffer {
    /// A staging buffer for tensors of `target`'s shape, mapped from the start.
    pub fn for_tensor(context: &GpuContext, target: &GpuTensor) -> UploadBuffer {
        let buffer = context.device().create_buffer(&wgpu::BufferDescriptor {
            label: Some("input upload staging"),
            size: target.size_in_bytes(),
            usage: wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: true,
        });
        UploadBuffer {
            rows: target.rows(),
            columns: target.columns(),
            buffer,
            state: Arc::new(Mutex::new(MapState::Mapped)),
        }
    }

    // ANCHOR: upload_write
    /// Writes `tensor` into the mapped buffer and unmaps it, ready for
    /// [`UploadBuffer::record_copy`].
    ///
    /// The buffer is normally mapped already (the previous run's wait completed the map
    /// request of [`UploadBuffer::request_map`]); if that request is still pending, this
    /// waits for it.
    pub fn write(&self, context: &GpuContext, tensor: &Tensor2d) -> Result<(), GpuError> {
        if tensor.shape() != (self.rows, self.columns) {
            return Err(ShapeError::Incompatible {
                operation: "UploadBuffer::write",
                expectation: "the tensor must have the shape the upload buffer was made for",
                left_name: "upload buffer",
                left: (self.rows, self.columns),
                right_name: "tensor",
                right: tensor.shape(),
            }
            .into());
        }
        self.wait_until_mapped(context)?;
        {
            let mut mapped = self
                .buffer
                .get_mapped_range_mut(..)
                .map_err(|error| upload_error(&error))?;
            mapped.copy_from_slice(bytemuck::cast_slice(tensor.as_slice()));
        }
        self.buffer.unmap();
        *self.lock_state() = MapState::Unmapped;
        Ok(())
    }
    // ANCHOR_END: upload_write

    /// Records the copy of the written values into `target` (which must have the shape
    /// this buffer was made for).
    pub fn record_copy(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        target: &GpuTensor,
    ) -> Result<(), GpuError> {
        if target.shape() != (self.rows, self.columns) {
            return Err(ShapeError::Incompatible {
                operation: "UploadBuffer::record_copy",
                expectation: "the target must have the shape the upload buffer was made for",
                left_name: "upload buffer",
                left: (self.rows, self.columns),
                right_name: "target",
                right: target.shape(),
            }
            .into());
        }
        encoder.copy_buffer_to_buffer(&self.buffer, 0, target.buffer(), 0, self.buffer.size());
        Ok(())
    }

    /// Asks for the buffer to be mapped again once the submitted copy out of it has run.
    /// Call right after submitting: the run's wait for its result completes the request.
    pub fn request_map(&self) {
        let mut state = self.lock_state();
        if *state != MapState::Unmapped {
            return;
        }
        *state = MapState::Pending;
        let shared = Arc::clone(&self.state);
        self.buffer
            .map_async(wgpu::MapMode::Write, .., move |result| {
                let mut state = shared.lock().unwrap_or_else(|poison| poison.into_inner());
                *state = match result {
                    Ok(()) => MapState::Mapped,
                    Err(error) => MapState::Failed(error.to_string()),
                };
            });
    }

    /// Makes sure the buffer is mapped: requests it if nobody did, waits if the request
    /// is pending.
    fn wait_until_mapped(&self, context: &GpuContext) -> Result<(), GpuError> {
        if *self.lock_state() == MapState::Mapped {
            return Ok(());
        }
        self.request_map();
        probe::in_phase(HostPhase::Waiting, || {
            context.device().poll(wgpu::PollType::wait_indefinitely())
        })
        .map_err(|error| upload_error(&error))?;
        let state = self.lock_state().clone();
        match state {
            MapState::Mapped => Ok(()),
            MapState::Failed(reason) => Err(upload_error(&reason)),
            other => Err(upload_error(&format!(
                "the buffer is still not mapped after waiting for the GPU ({other:?})"
            ))),
        }
    }

    fn lock_state(&self) -> std::sync::MutexGuard<'_, MapState> {
        self.state
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}

fn upload_error(error: &dyn std::fmt::Display) -> GpuError {
    GpuError::Readback {
        reason: format!("writing the input into its upload buffer: {error}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::Readback;

    #[test]
    fn values_written_twice_reach_the_storage_buffer_each_time() {
        let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
        let target = GpuTensor::uninitialized(context, 3, 5, Readback::Needed).unwrap();
        let upload = UploadBuffer::for_tensor(context, &target);
        for seed in [1, 2] {
            target.fill(context, f32::NAN);
            let tensor = Tensor2d::random(3, 5, -2.0..=2.0, seed);
            upload.write(context, &tensor).unwrap();
            let mut encoder = context
                .device()
                .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
            upload.record_copy(&mut encoder, &target).unwrap();
            target.record_copy_to_staging(&mut encoder).unwrap();
            context.queue().submit([encoder.finish()]);
            upload.request_map();
            assert_eq!(target.read_staging(context).unwrap(), tensor, "seed {seed}");
        }
    }

    #[test]
    fn a_write_without_a_map_request_still_works_and_shapes_are_checked() {
        let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
        let target = GpuTensor::uninitialized(context, 2, 2, Readback::Needed).unwrap();
        let upload = UploadBuffer::for_tensor(context, &target);
        let tensor = Tensor2d::random(2, 2, -2.0..=2.0, 7);
        upload.write(context, &tensor).unwrap();
        // No copy and no request: the next write has to map the buffer itself.
        upload.write(context, &tensor).unwrap();
        assert!(matches!(
            upload.write(context, &Tensor2d::random(2, 3, -2.0..=2.0, 7)),
            Err(GpuError::Shape(_))
        ));
        let wrong = GpuTensor::uninitialized(context, 1, 4, Readback::Never).unwrap();
        let mut encoder = context
            .device()
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        assert!(upload.record_copy(&mut encoder, &wrong).is_err());
    }
}
