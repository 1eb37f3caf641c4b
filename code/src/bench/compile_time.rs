//! How long turning WGSL into a compute pipeline takes, in its two steps.
//!
//! - `create_shader_module`: wgpu hands the WGSL to naga, which parses and validates it.
//! - `create_compute_pipeline`: naga writes the module out for the backend (SPIR-V on
//!   Vulkan) and the driver compiles that to the GPU's machine code.
//!
//! Each step is timed on its own with the CPU's clock, for four kernels (ReLU, the naive
//! linear layer, softmax and the register-blocked linear layer the standard workload's
//! 256 × 256 layers get), in two ways:
//!
//! - [`Sources::Distinct`]: every compilation gets a text of its own. The entry point is
//!   renamed (`main` becomes `main_<process nonce>_<iteration>`), which changes the SPIR-V
//!   the driver receives, so no cache keyed by the shader (in memory or on disk, from this
//!   run or an earlier one) can hand back a binary compiled before: the cost of compiling
//!   a shader the driver has never seen.
//! - [`Sources::Identical`]: the same text every time, as the modes that compile on every
//!   run do. A driver that caches compiled shaders answers from its cache here.
//!
//! The two ways alternate with the kernels (one compilation of each in turn, then the
//! next round), after one warm-up compilation of each, so that a slow moment of the
//! machine touches all of them alike.

use std::time::{Instant, SystemTime, UNIX_EPOCH};

use crate::bench::repeats::{Repeats, interleaved};
use crate::gpu::linear_strategy::{LinearStrategy, PREFERRED_CONFIGURATIONS};
use crate::gpu::register_blocked_linear::{KernelLimits, RegisterBlockedConfig};
use crate::gpu::{GpuContext, GpuError, Kernel, ShaderChecks};

/// The kernels whose compilation is timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CompiledKernel {
    Relu,
    Linear,
    Softmax,
    /// The register-blocked linear kernel with the configuration the chooser gives a
    /// 256 × 256 layer.
    RegisterBlockedLinear,
}

impl CompiledKernel {
    pub const ALL: [CompiledKernel; 4] = [
        CompiledKernel::Relu,
        CompiledKernel::Linear,
        CompiledKernel::Softmax,
        CompiledKernel::RegisterBlockedLinear,
    ];

    pub fn name(self) -> &'static str {
        match self {
            CompiledKernel::Relu => "relu",
            CompiledKernel::Linear => "linear (naive)",
            CompiledKernel::Softmax => "softmax",
            CompiledKernel::RegisterBlockedLinear => "linear (register-blocked)",
        }
    }

    /// The WGSL, its pipeline constants and the checks the crate compiles it with.
    fn source(self, context: &GpuContext) -> Result<KernelSource, GpuError> {
        let hand_written = |kernel: Kernel| KernelSource {
            text: kernel.source().to_string(),
            constants: kernel.constants().to_vec(),
            checks: ShaderChecks::Full,
        };
        Ok(match self {
            CompiledKernel::Relu => hand_written(Kernel::Relu),
            CompiledKernel::Linear => hand_written(Kernel::Linear),
            CompiledKernel::Softmax => hand_written(Kernel::Softmax),
            CompiledKernel::RegisterBlockedLinear => {
                let limits = KernelLimits::of(&context.limits());
                let config = standard_layer_configuration(context, &limits);
                let text = config
                    .source(&limits)
                    .map_err(|error| GpuError::ShaderCompilation {
                        label: self.name().to_string(),
                        message: error.to_string(),
                    })?;
                KernelSource {
                    text,
                    constants: vec![("apply_relu", 0.0)],
                    checks: ShaderChecks::TrustedLoops,
                }
            }
        })
    }
}

/// The register-blocked configuration for a 256 × 256 layer: the chooser's, or, where the
/// chooser picks another kind of kernel on this device, the first preferred configuration
/// the device can run.
fn standard_layer_configuration(
    context: &GpuContext,
    limits: &KernelLimits,
) -> RegisterBlockedConfig {
    match LinearStrategy::for_shape(context, 256, 256, 256) {
        Ok(LinearStrategy::RegisterBlocked(config)) => config,
        _ => PREFERRED_CONFIGURATIONS
            .into_iter()
            .find(|config| config.check(limits).is_ok())
            .unwrap_or(PREFERRED_CONFIGURATIONS[PREFERRED_CONFIGURATIONS.len() - 1]),
    }
}

struct KernelSource {
    text: String,
    constants: Vec<(&'static str, f64)>,
    checks: ShaderChecks,
}

/// Whether every compilation sees a new text or the same one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Sources {
    /// A different entry-point name every time: nothing to find in any cache.
    Distinct,
    /// The same text every time: what a mode without a pipeline cache compiles.
    Identical,
}

impl Sources {
    pub const ALL: [Sources; 2] = [Sources::Distinct, Sources::Identical];

    pub fn name(self) -> &'static str {
        match self {
            Sources::Distinct => "a new source each time",
            Sources::Identical => "the same source each time",
        }
    }
}

/// The two steps' times, in seconds per call, for one kernel compiled one way.
#[derive(Debug, Clone, PartialEq)]
pub struct CompileTime {
    pub kernel: CompiledKernel,
    pub sources: Sources,
    pub shader_module: Repeats,
    pub compute_pipeline: Repeats,
}

// ANCHOR: measure_compile_times
/// Times `create_shader_module` and `create_compute_pipeline` separately, `iterations`
/// times for every kernel and both kinds of source, after one warm-up of each.
pub fn measure_compile_times(
    context: &GpuContext,
    iterations: usize,
) -> Result<Vec<CompileTime>, GpuError> {
    let iterations = iterations.max(1);
    let nonce = process_nonce();
    let mut cases = Vec::new();
    for kernel in CompiledKernel::ALL {
        let source = kernel.source(context)?;
        for sources in Sources::ALL {
            cases.push((
                kernel,
                sources,
                source.text.clone(),
                source.constants.clone(),
                source.checks,
            ));
        }
    }
    // The warm-up compilations (round 0) are measured and dropped.
    let rounds = interleaved(cases.len(), iterations + 1, |case, earlier| {
        let (kernel, sources, text, constants, checks) = &cases[case];
        let entry_point = match sources {
            Sources::Distinct => format!("main_{nonce}_{}", earlier.len()),
            Sources::Identical => "main".to_string(),
        };
        let text = match sources {
            Sources::Distinct => rename_entry_point(text, &entry_point).ok_or_else(|| {
                GpuError::ShaderCompilation {
                    label: kernel.name().to_string(),
                    message: "the source has no `fn main(` to rename".to_string(),
                }
            })?,
            Sources::Identical => text.clone(),
        };
        time_both_steps(
            context,
            kernel.name(),
            &text,
            &entry_point,
            constants,
            *checks,
        )
        .map(Some)
    })?;
    Ok(cases
        .iter()
        .zip(rounds)
        .map(|((kernel, sources, ..), times)| {
            let timed = &times[1..];
            CompileTime {
                kernel: *kernel,
                sources: *sources,
                shader_module: Repeats::new(timed.iter().map(|(module, _)| *module).collect())
                    .expect("at least one iteration"),
                compute_pipeline: Repeats::new(
                    timed.iter().map(|(_, pipeline)| *pipeline).collect(),
                )
                .expect("at least one iteration"),
            }
        })
        .collect())
}
// ANCHOR_END: measure_compile_times

/// The seconds `create_shader_module` and `create_compute_pipeline` took for this text,
/// as the crate's `compile_wgsl` would call them (same checks, same constants).
fn time_both_steps(
    context: &GpuContext,
    label: &str,
    text: &str,
    entry_point: &str,
    constants: &[(&str, f64)],
    checks: ShaderChecks,
) -> Result<(f64, f64), GpuError> {
    let device = context.device();
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let descriptor = wgpu::ShaderModuleDescriptor {
        label: Some(label),
        source: wgpu::ShaderSource::Wgsl(text.into()),
    };
    let start = Instant::now();
    let module = match checks {
        ShaderChecks::Full => device.create_shader_module(descriptor),
        ShaderChecks::TrustedLoops => {
            let runtime_checks = wgpu::ShaderRuntimeChecks {
                force_loop_bounding: false,
                ..wgpu::ShaderRuntimeChecks::checked()
            };
            // SAFETY: as in `gpu::shader::compile_wgsl_with_checks`, the only check removed
            // is the loop counter, and `TrustedLoops` is only passed for the crate's
            // register-blocked template, whose loops count to constants or to the inner
            // dimension read from a uniform and so always end.
            unsafe { device.create_shader_module_trusted(descriptor, runtime_checks) }
        }
    };
    let module_seconds = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(label),
        layout: None,
        module: &module,
        entry_point: Some(entry_point),
        compilation_options: wgpu::PipelineCompilationOptions {
            constants,
            zero_initialize_workgroup_memory: checks == ShaderChecks::Full,
        },
        cache: None,
    });
    let pipeline_seconds = start.elapsed().as_secs_f64();
    drop(pipeline);
    match pollster::block_on(scope.pop()) {
        None => Ok((module_seconds, pipeline_seconds)),
        Some(error) => Err(GpuError::ShaderCompilation {
            label: label.to_string(),
            message: error.to_string(),
        }),
    }
}

/// `text` with its entry point `fn main(` renamed; `None` if there is not exactly one.
fn rename_entry_point(text: &str, name: &str) -> Option<String> {
    (text.matches("fn main(").count() == 1)
        .then(|| text.replacen("fn main(", &format!("fn {name}("), 1))
}

/// A number that differs from one run of the program to the next, so that the distinct
/// sources of this run are not those of an earlier one (a driver may keep its cache on
/// disk).
fn process_nonce() -> u64 {
    let nanoseconds = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos() as u64);
    nanoseconds ^ u64::from(std::process::id()).rotate_left(40)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kernel_and_both_kinds_of_source_get_positive_times() {
        let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
        let times = measure_compile_times(context, 2).unwrap();
        assert_eq!(times.len(), CompiledKernel::ALL.len() * Sources::ALL.len());
        for time in &times {
            for repeats in [&time.shader_module, &time.compute_pipeline] {
                assert_eq!(repeats.count(), 2, "{time:?}");
                assert!(
                    repeats.values().iter().all(|s| s.is_finite() && *s > 0.0),
                    "{time:?}"
                );
            }
        }
    }

    #[test]
    fn renaming_the_entry_point_changes_only_its_name() {
        let renamed = rename_entry_point(Kernel::Relu.source(), "main_7_0").unwrap();
        assert!(renamed.contains("fn main_7_0("));
        assert!(!renamed.contains("fn main("));
        assert_eq!(renamed.len(), Kernel::Relu.source().len() + "_7_0".len());
        assert_eq!(rename_entry_point("fn other() {}", "x"), None);
        for kernel in CompiledKernel::ALL {
            let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
            let source = kernel.source(context).unwrap();
            assert!(
                rename_entry_point(&source.text, "x").is_some(),
                "{kernel:?}"
            );
        }
    }
}
