//! The device's peak fp32 rate, measured: how many fused multiply-adds per second
//! `shaders/peak_fma.wgsl` gets through.
//!
//! A data sheet's peak assumes every arithmetic unit busy every cycle at the boost clock.
//! Measuring it through the same API the kernels use (wgpu, Vulkan) gives the ceiling they
//! can really approach, and checks the data sheet on the way.

use std::time::Instant;

use thiserror::Error;

use crate::gpu::dispatch::WorkgroupGrid;
use crate::gpu::record::{BoundDispatch, uniform_buffer};
use crate::gpu::shader::{ShaderChecks, compile_wgsl_with_checks};
use crate::gpu::{GpuContext, GpuError, GpuTensor, Readback};

/// The shader, baked into the binary like the crate's kernels.
pub const PEAK_FMA_SHADER: &str = include_str!("../../../shaders/peak_fma.wgsl");

/// Invocations per workgroup of peak_fma.wgsl.
const WORKGROUP_SIZE: u32 = 256;
/// Floating-point operations per invocation per loop iteration: 32 vec4 fmas, each four
/// multiplies and four adds.
const FLOPS_PER_ITERATION: u64 = 32 * 4 * 2;
/// The addend of every fma; with a multiplier of 1 each chain grows by this much a step.
const ADDEND: f32 = 1.0e-3;

/// How much work one measurement does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeakSettings {
    /// Workgroups of 256 invocations per dispatch.
    pub workgroups: u32,
    /// Loop iterations per invocation (256 flops each).
    pub iterations: u32,
    /// Dispatches timed back to back, after one warm-up dispatch.
    pub dispatches: usize,
}

impl PeakSettings {
    /// For a large GPU: 8192 workgroups (2 million invocations, far more than an H100 runs
    /// at once) of 2048 iterations, about 1.1 TFLOP per dispatch, 10 dispatches.
    pub const LARGE_GPU: PeakSettings = PeakSettings {
        workgroups: 8192,
        iterations: 2048,
        dispatches: 10,
    };

    /// Enough to check the measurement on a software driver in a test.
    pub const SMALL: PeakSettings = PeakSettings {
        workgroups: 8,
        iterations: 16,
        dispatches: 2,
    };

    /// Floating-point operations one dispatch performs on a grid of `invocations`.
    fn flops(&self, invocations: u64) -> u64 {
        invocations * u64::from(self.iterations) * FLOPS_PER_ITERATION
    }
}

/// What [`gpu_peak`] measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GpuPeak {
    pub gigaflops_per_second: f64,
    pub seconds_per_dispatch: f64,
    pub flops_per_dispatch: u64,
}

/// Why the peak could not be measured.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum PeakError {
    #[error(transparent)]
    Gpu(#[from] GpuError),
    #[error("the peak measurement needs at least one workgroup, one iteration and one dispatch")]
    NothingToMeasure,
    #[error(
        "invocation {invocation} of the peak kernel computed {actual}, not {expected}: the \
         kernel did not do the work it is timed for"
    )]
    WrongResult {
        invocation: usize,
        actual: f32,
        expected: f32,
    },
}

// ANCHOR: gpu_peak
/// Measures the device's fp32 throughput in GFLOP/s: one warm-up dispatch, a check that
/// every invocation did its iterations, then `settings.dispatches` dispatches in one pass
/// and one submission, timed from submission to completion.
pub fn gpu_peak(context: &GpuContext, settings: PeakSettings) -> Result<GpuPeak, PeakError> {
    if settings.workgroups == 0 || settings.iterations == 0 || settings.dispatches == 0 {
        return Err(PeakError::NothingToMeasure);
    }
    let limit = context.limits().max_compute_workgroups_per_dimension;
    let grid = WorkgroupGrid::covering(u64::from(settings.workgroups), limit, "peak_fma")?;
    let invocations = u64::from(grid.x) * u64::from(grid.y) * u64::from(WORKGROUP_SIZE);
    // The loop bound comes from a uniform, so the loop ends: the hidden loop counter can go.
    let pipeline = compile_wgsl_with_checks(
        context,
        "peak_fma",
        PEAK_FMA_SHADER,
        "main",
        &[],
        ShaderChecks::TrustedLoops,
    )?;
    let results = GpuTensor::uninitialized(context, invocations as usize, 4, Readback::Needed)?;
    results.fill(context, f32::NAN);
    let uniform = uniform_buffer(
        context,
        &PeakUniform {
            iterations: settings.iterations,
            multiplier: 1.0,
            addend: ADDEND,
            invocations_per_row: grid.x * WORKGROUP_SIZE,
        },
    );
    let dispatch = BoundDispatch::new(context, &pipeline, &[&uniform, results.buffer()], grid);

    time_dispatches(context, &dispatch, 1)?;
    check_results(&results.download(context)?, settings.iterations)?;
    let seconds = time_dispatches(context, &dispatch, settings.dispatches)?;
    let seconds_per_dispatch = seconds / settings.dispatches as f64;
    let flops_per_dispatch = settings.flops(invocations);
    Ok(GpuPeak {
        gigaflops_per_second: flops_per_dispatch as f64 / seconds_per_dispatch / 1e9,
        seconds_per_dispatch,
        flops_per_dispatch,
    })
}
// ANCHOR_END: gpu_peak

/// The `Settings` uniform of peak_fma.wgsl.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct PeakUniform {
    iterations: u32,
    multiplier: f32,
    addend: f32,
    invocations_per_row: u32,
}

/// Records `dispatches` copies of `dispatch` into one compute pass, submits them, waits
/// for the GPU, and returns the seconds from submission to completion.
pub(crate) fn time_dispatches(
    context: &GpuContext,
    dispatch: &BoundDispatch,
    dispatches: usize,
) -> Result<f64, GpuError> {
    let mut encoder = context
        .device()
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("timed dispatches"),
        });
    {
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: None,
            timestamp_writes: None,
        });
        for _ in 0..dispatches {
            dispatch.record_in(&mut pass);
        }
    }
    let command_buffer = encoder.finish();
    let start = Instant::now();
    let submission = context.queue().submit([command_buffer]);
    context
        .device()
        .poll(wgpu::PollType::Wait {
            submission_index: Some(submission),
            timeout: None,
        })
        .map_err(|error| GpuError::Readback {
            reason: error.to_string(),
        })?;
    Ok(start.elapsed().as_secs_f64())
}

/// Every invocation's sum of its eight chains, recomputed on the CPU: each chain starts
/// where the shader starts it and grows by `ADDEND` per fma (the multiplier is 1).
fn check_results(results: &crate::tensor::Tensor2d, iterations: u32) -> Result<(), PeakError> {
    let steps = 4.0 * f64::from(iterations);
    for invocation in 0..results.rows() {
        let start = f64::from((invocation % 1024) as u32) * 0.001;
        for lane in 0..4 {
            let chain_sum: f64 = (0..8)
                .map(|chain| start + 0.1 * lane as f64 + chain as f64 + steps * f64::from(ADDEND))
                .sum();
            let actual = results.get(invocation, lane);
            // The chains add ADDEND thousands of times in f32: allow a relative 1e-3.
            let close = (f64::from(actual) - chain_sum).abs() <= 1e-3 * chain_sum.abs();
            if !close {
                return Err(PeakError::WrongResult {
                    invocation,
                    actual,
                    expected: chain_sum as f32,
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn context() -> &'static GpuContext {
        GpuContext::shared().unwrap_or_else(|error| panic!("GPU tests need an adapter: {error}"))
    }

    #[test]
    fn the_peak_is_finite_and_positive_on_this_device() {
        let peak = gpu_peak(context(), PeakSettings::SMALL).unwrap();
        assert!(
            peak.gigaflops_per_second.is_finite() && peak.gigaflops_per_second > 0.0,
            "{peak:?}"
        );
        assert_eq!(peak.flops_per_dispatch, 8 * 256 * 16 * 256);
    }

    #[test]
    fn the_check_catches_skipped_iterations() {
        let results = crate::tensor::Tensor2d::filled(4, 4, 1.0);
        assert!(matches!(
            check_results(&results, 16),
            Err(PeakError::WrongResult { invocation: 0, .. })
        ));
        let nan = crate::tensor::Tensor2d::filled(4, 4, f32::NAN);
        assert!(check_results(&nan, 16).is_err());
    }

    #[test]
    fn nothing_to_measure_is_an_error() {
        let settings = PeakSettings {
            iterations: 0,
            ..PeakSettings::SMALL
        };
        assert_eq!(
            gpu_peak(context(), settings).unwrap_err(),
            PeakError::NothingToMeasure
        );
    }
}
