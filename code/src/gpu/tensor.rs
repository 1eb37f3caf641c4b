//! `GpuTensor`: a tensor that lives in GPU memory.
//!
//! The data sits in a storage buffer the shaders read and write. The CPU cannot read a
//! storage buffer directly: reading back means copying it into a *staging* buffer that can
//! be mapped into the CPU's address space. Only tensors that are read back need one, so
//! the staging buffer is optional, and weights, for example, never get one.

use std::sync::mpsc;

use crate::gpu::probe::{self, HostPhase};
use crate::gpu::{GpuContext, GpuError, waiting};
use crate::tensor::{ShapeError, Tensor2d};

/// Whether a GPU tensor will be read back to the CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Readback {
    /// Only shaders read it: no staging buffer.
    Never,
    /// `download` will be called: allocate a staging buffer for it.
    Needed,
}

// ANCHOR: gpu_tensor
/// A `rows × columns` tensor of `f32` in a GPU storage buffer.
pub struct GpuTensor {
    rows: usize,
    columns: usize,
    storage: wgpu::Buffer,
    staging: Option<wgpu::Buffer>,
}
// ANCHOR_END: gpu_tensor

impl GpuTensor {
    /// Allocates a tensor on the GPU without initialising it.
    ///
    /// Sizes are checked against the device's limits first, so an oversized tensor is a
    /// `GpuError::TensorTooLarge` instead of a panic inside wgpu.
    pub fn uninitialized(
        context: &GpuContext,
        rows: usize,
        columns: usize,
        readback: Readback,
    ) -> Result<GpuTensor, GpuError> {
        let bytes = check_size(context, rows, columns)?;
        let storage = context.device().create_buffer(&wgpu::BufferDescriptor {
            label: Some("tensor storage"),
            size: bytes,
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let staging = (readback == Readback::Needed).then(|| {
            context.device().create_buffer(&wgpu::BufferDescriptor {
                label: Some("tensor staging"),
                size: bytes,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        });
        Ok(GpuTensor {
            rows,
            columns,
            storage,
            staging,
        })
    }

    // ANCHOR: upload
    /// Copies a CPU tensor to a new GPU tensor.
    pub fn upload(
        context: &GpuContext,
        tensor: &Tensor2d,
        readback: Readback,
    ) -> Result<GpuTensor, GpuError> {
        let gpu_tensor =
            GpuTensor::uninitialized(context, tensor.rows(), tensor.columns(), readback)?;
        gpu_tensor.write(context, tensor)?;
        Ok(gpu_tensor)
    }

    /// Overwrites the GPU copy with `tensor`, which must have the same shape.
    pub fn write(&self, context: &GpuContext, tensor: &Tensor2d) -> Result<(), GpuError> {
        if tensor.shape() != self.shape() {
            return Err(ShapeError::Incompatible {
                operation: "GpuTensor::write",
                expectation: "the CPU tensor must have the GPU tensor's shape",
                left_name: "GPU tensor",
                left: self.shape(),
                right_name: "CPU tensor",
                right: tensor.shape(),
            }
            .into());
        }
        // The queue copies the bytes into a staging area of its own and uploads them
        // before the next submission runs.
        context
            .queue()
            .write_buffer(&self.storage, 0, bytemuck::cast_slice(tensor.as_slice()));
        Ok(())
    }
    // ANCHOR_END: upload

    /// Fills the tensor with one value. Tests fill outputs with NaN before a dispatch so
    /// that an element the shader forgot to write cannot pass for a correct one.
    pub fn fill(&self, context: &GpuContext, value: f32) {
        let values = vec![value; self.len()];
        context
            .queue()
            .write_buffer(&self.storage, 0, bytemuck::cast_slice(&values));
    }

    // ANCHOR: download
    /// Copies the tensor back to the CPU: storage buffer → staging buffer → mapped memory.
    pub fn download(&self, context: &GpuContext) -> Result<Tensor2d, GpuError> {
        let mut encoder = context.create_encoder("download");
        self.record_copy_to_staging(&mut encoder)?;
        context.submit(encoder);
        self.read_staging(context)
    }

    /// Records the copy into the staging buffer into an encoder, so that a whole graph
    /// and its readback can go to the GPU in one submission.
    pub fn record_copy_to_staging(
        &self,
        encoder: &mut wgpu::CommandEncoder,
    ) -> Result<(), GpuError> {
        let staging = self.staging()?;
        encoder.copy_buffer_to_buffer(&self.storage, 0, staging, 0, self.size_in_bytes());
        Ok(())
    }

    /// Maps the staging buffer, waits for the GPU, and copies the values out. Call after
    /// submitting an encoder that holds `record_copy_to_staging`. (The `probe::in_phase`
    /// calls cost nothing unless the time breakdown is measuring this thread.)
    pub fn read_staging(&self, context: &GpuContext) -> Result<Tensor2d, GpuError> {
        let mut values = vec![0.0; self.len()];
        self.read_staging_into(context, &mut values)?;
        Ok(Tensor2d::from_vec(self.rows, self.columns, values)?)
    }

    /// As [`GpuTensor::read_staging`], into `destination` (as long as the tensor) instead
    /// of a new tensor: a caller that runs many times keeps one buffer and allocates nothing.
    pub fn read_staging_into(
        &self,
        context: &GpuContext,
        destination: &mut [f32],
    ) -> Result<(), GpuError> {
        let readback = |error: &dyn std::fmt::Display| GpuError::Readback {
            reason: error.to_string(),
        };
        if destination.len() != self.len() {
            return Err(ShapeError::Incompatible {
                operation: "GpuTensor::read_staging_into",
                expectation: "the destination must hold exactly the GPU tensor's values",
                left_name: "GPU tensor",
                left: self.shape(),
                right_name: "destination of length",
                right: (destination.len(), 1),
            }
            .into());
        }
        let staging = self.staging()?;
        let slice = staging.slice(..);
        let (sender, receiver) = mpsc::channel();
        slice.map_async(wgpu::MapMode::Read, move |result| {
            // The receiver is alive until we have read from it below.
            let _ = sender.send(result);
        });
        // Waits until the queue has finished the submission that fills the staging buffer
        // and the map callback above has run (spinning briefly first: see `gpu::waiting`).
        probe::in_phase(HostPhase::Waiting, || {
            waiting::wait_for_callback(context, &receiver, "the readback")
        })?
        .map_err(|error| readback(&error))?;
        // The buffer is mapped from here on: unmap it whatever happens next, or every later
        // readback of this tensor would fail.
        let copied = match probe::in_phase(HostPhase::Mapping, || slice.get_mapped_range()) {
            Ok(mapped) => {
                probe::in_phase(HostPhase::CopyingOut, || {
                    destination.copy_from_slice(bytemuck::cast_slice(&mapped));
                });
                probe::in_phase(HostPhase::Mapping, || drop(mapped));
                Ok(())
            }
            Err(error) => Err(readback(&error)),
        };
        probe::in_phase(HostPhase::Mapping, || staging.unmap());
        copied
    }
    // ANCHOR_END: download

    fn staging(&self) -> Result<&wgpu::Buffer, GpuError> {
        self.staging.as_ref().ok_or(GpuError::NotReadable {
            rows: self.rows,
            columns: self.columns,
        })
    }

    pub fn rows(&self) -> usize {
        self.rows
    }

    pub fn columns(&self) -> usize {
        self.columns
    }

    pub fn shape(&self) -> (usize, usize) {
        (self.rows, self.columns)
    }

    pub fn len(&self) -> usize {
        self.rows * self.columns
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn size_in_bytes(&self) -> u64 {
        self.storage.size()
    }

    /// The storage buffer, for binding to a shader.
    pub fn buffer(&self) -> &wgpu::Buffer {
        &self.storage
    }

    pub fn is_readable(&self) -> bool {
        self.staging.is_some()
    }
}

// ANCHOR: check_size
/// The size in bytes of a `rows × columns` f32 tensor, if the device can hold and bind it.
fn check_size(context: &GpuContext, rows: usize, columns: usize) -> Result<u64, GpuError> {
    if rows == 0 || columns == 0 {
        return Err(ShapeError::Empty {
            operation: "GpuTensor",
            rows,
            columns,
        }
        .into());
    }
    let bytes = (rows as u64)
        .checked_mul(columns as u64)
        .and_then(|elements| elements.checked_mul(std::mem::size_of::<f32>() as u64))
        .unwrap_or(u64::MAX);
    let limits = context.limits();
    let checks = [
        ("max_buffer_size", limits.max_buffer_size),
        (
            "max_storage_buffer_binding_size",
            limits.max_storage_buffer_binding_size,
        ),
        // The shaders index elements with u32.
        (
            "u32 element indexing of the shaders",
            u64::from(u32::MAX) * std::mem::size_of::<f32>() as u64,
        ),
    ];
    for (limit_name, limit) in checks {
        if bytes > limit {
            return Err(GpuError::TensorTooLarge {
                rows,
                columns,
                bytes,
                limit_name,
                limit,
            });
        }
    }
    Ok(bytes)
}
// ANCHOR_END: check_size
