//! Compiling WGSL into a compute pipeline.
//!
//! wgpu reports shader errors through the device's error scopes rather than as return
//! values. Wrapping the compilation in a scope turns a bad shader into a
//! `GpuError::ShaderCompilation` instead of a panic from the default error handler.

use crate::gpu::{GpuContext, GpuError, Kernel};

// ANCHOR: compile_wgsl
/// Compiles WGSL source into a compute pipeline for `entry_point`.
pub fn compile_wgsl(
    context: &GpuContext,
    label: &str,
    source: &str,
    entry_point: &str,
    constants: &[(&str, f64)],
) -> Result<wgpu::ComputePipeline, GpuError> {
    let device = context.device();
    // Error scopes are per thread, so parallel compilations do not see each other's errors.
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(label),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(label),
        // `None` asks wgpu to derive the bind group layout from the shader's bindings.
        layout: None,
        module: &module,
        entry_point: Some(entry_point),
        compilation_options: wgpu::PipelineCompilationOptions {
            constants,
            ..Default::default()
        },
        cache: None,
    });
    match pollster::block_on(scope.pop()) {
        None => Ok(pipeline),
        Some(error) => Err(GpuError::ShaderCompilation {
            label: label.to_string(),
            message: error.to_string(),
        }),
    }
}
// ANCHOR_END: compile_wgsl

/// Compiles one of the crate's hand-written kernels.
pub fn compile_kernel(
    context: &GpuContext,
    kernel: Kernel,
) -> Result<wgpu::ComputePipeline, GpuError> {
    // Checked here because a shader that uses a missing feature fails validation with a
    // message about the shader, not about the device.
    let missing = kernel.required_features() - context.device().features();
    if !missing.is_empty() {
        return Err(GpuError::MissingFeature {
            kernel: kernel.label(),
            feature: format!("{missing:?}"),
        });
    }
    compile_wgsl(
        context,
        kernel.label(),
        kernel.source(),
        kernel.entry_point(),
        kernel.constants(),
    )
}
