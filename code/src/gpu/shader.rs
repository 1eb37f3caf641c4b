//! Compiling WGSL into a compute pipeline.
//!
//! wgpu reports shader errors through the device's error scopes rather than as return
//! values. Wrapping the compilation in a scope turns a bad shader into a
//! `GpuError::ShaderCompilation` instead of a panic from the default error handler.

use crate::gpu::{GpuContext, GpuError, Kernel};

// ANCHOR: shader_checks
/// The safety nets wgpu adds to every shader it compiles, which cost time in tight loops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ShaderChecks {
    /// Everything wgpu adds by default: every array access kept inside its array (by a
    /// check naga inserts, or for buffers by the driver where the device guarantees robust
    /// buffer access), a hidden counter in every loop that ends it if it would run forever,
    /// and zeroed workgroup memory at the start of every workgroup.
    Full,
    /// Bounds checks kept; no loop counters, no zeroing. Only for shaders whose every loop
    /// provably ends and that write workgroup memory before reading it. The hidden loop
    /// counter is a 64-bit decrement and test in every iteration, and it can keep the
    /// driver's compiler from unrolling short constant loops, which the register-blocked
    /// kernel needs to keep its sums in registers (wgpu issue #7698 reports a compute
    /// pipeline slowed from 0.1 ms to 10 ms by it).
    TrustedLoops,
}
// ANCHOR_END: shader_checks

// ANCHOR: compile_wgsl
/// Compiles WGSL source into a compute pipeline for `entry_point`.
pub fn compile_wgsl(
    context: &GpuContext,
    label: &str,
    source: &str,
    entry_point: &str,
    constants: &[(&str, f64)],
) -> Result<wgpu::ComputePipeline, GpuError> {
    compile_wgsl_with_checks(
        context,
        label,
        source,
        entry_point,
        constants,
        ShaderChecks::Full,
    )
}

/// [`compile_wgsl`] with a choice of the safety nets wgpu adds. Crate-private: removing the
/// loop counter is only sound for shaders known to end, and the crate knows which of its
/// own those are; a shader from outside always gets every check.
pub(crate) fn compile_wgsl_with_checks(
    context: &GpuContext,
    label: &str,
    source: &str,
    entry_point: &str,
    constants: &[(&str, f64)],
    checks: ShaderChecks,
) -> Result<wgpu::ComputePipeline, GpuError> {
    let device = context.device();
    // Error scopes are per thread, so parallel compilations do not see each other's errors.
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let descriptor = wgpu::ShaderModuleDescriptor {
        label: Some(label),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    };
    let module = match checks {
        ShaderChecks::Full => device.create_shader_module(descriptor),
        ShaderChecks::TrustedLoops => {
            let runtime_checks = wgpu::ShaderRuntimeChecks {
                force_loop_bounding: false,
                ..wgpu::ShaderRuntimeChecks::checked()
            };
            // SAFETY: bounds checks stay on; the one check removed is the loop counter. The
            // crate passes `TrustedLoops` only for its own register-blocked linear kernels
            // and peak_fma.wgsl, whose loops all count up to a constant or to a size read
            // from a uniform, and so always end.
            unsafe { device.create_shader_module_trusted(descriptor, runtime_checks) }
        }
    };
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(label),
        // `None` asks wgpu to derive the bind group layout from the shader's bindings.
        layout: None,
        module: &module,
        entry_point: Some(entry_point),
        compilation_options: wgpu::PipelineCompilationOptions {
            constants,
            zero_initialize_workgroup_memory: checks == ShaderChecks::Full,
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
