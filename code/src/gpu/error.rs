//! The errors of the GPU side. Every way a GPU call can fail on user input is a variant
//! here, so callers get a message instead of a wgpu panic.

use thiserror::Error;

use crate::gpu::linear_strategy::LinearStrategyError;
use crate::tensor::ShapeError;

/// Everything that can go wrong on the GPU side.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum GpuError {
    /// wgpu found no adapter at all.
    #[error(
        "no GPU adapter found. On Debian or Ubuntu, `sudo apt-get install mesa-vulkan-drivers libvulkan1` \
         installs lavapipe, a Vulkan driver that runs on the CPU; on other systems install your GPU's \
         driver and the Vulkan loader (Linux), or use Metal (macOS) or DirectX 12 (Windows). \
         `cargo run --example adapters` lists what wgpu can see"
    )]
    NoAdapter,

    /// `GALAXY_ADAPTER` (or an explicit selection) matched none of the adapters present.
    #[error("no GPU adapter is {requested}; the adapters found are: {}", available.join(", "))]
    NoMatchingAdapter {
        requested: String,
        available: Vec<String>,
    },

    /// The adapter refused to create a device.
    #[error("the adapter {adapter:?} could not create a device: {reason}")]
    DeviceRequest { adapter: String, reason: String },

    /// A tensor is larger than a buffer limit of the device.
    #[error(
        "a {rows}×{columns} tensor needs {bytes} bytes, more than the device's {limit_name} of {limit} bytes"
    )]
    TensorTooLarge {
        rows: usize,
        columns: usize,
        bytes: u64,
        limit_name: &'static str,
        limit: u64,
    },

    /// A dispatch would need more workgroups than the device allows, even spread over
    /// the three dimensions of the dispatch grid.
    #[error(
        "{operation} needs {workgroups} workgroups along one axis, more than the device allows \
         ({limit} per dimension)"
    )]
    DispatchTooLarge {
        operation: &'static str,
        workgroups: u64,
        limit: u32,
    },

    /// The tensors do not fit the operation.
    #[error(transparent)]
    Shape(#[from] ShapeError),

    /// `download` on a tensor that was created without a staging buffer.
    #[error(
        "this {rows}×{columns} GPU tensor was created with `Readback::Never`, so it has no staging \
         buffer to read it back through"
    )]
    NotReadable { rows: usize, columns: usize },

    /// The shader did not compile, or the pipeline could not be created from it.
    #[error("the shader {label:?} failed to compile: {message}")]
    ShaderCompilation { label: String, message: String },

    /// A kernel needs a device feature this device was created without.
    #[error(
        "the kernel {kernel:?} needs the device feature {feature}, which this device does not have"
    )]
    MissingFeature {
        kernel: &'static str,
        feature: String,
    },

    /// A linear kernel configuration that cannot run: on this device, or on these shapes.
    #[error(transparent)]
    LinearStrategy(#[from] LinearStrategyError),

    /// Mapping a staging buffer or waiting for the device failed (for example because the
    /// device was lost).
    #[error("reading a result back from the GPU failed: {reason}")]
    Readback { reason: String },

    /// Waiting for the GPU to finish submitted work failed (the device was lost, or the
    /// wait timed out).
    #[error("waiting for the GPU to finish {what} failed: {reason}")]
    Wait { what: &'static str, reason: String },
}
