//! `linear-kernels-…`: GFLOP/s of the GPU linear kernels on square matrices, by size,
//! under the device's measured fp32 peak.
//!
//! Each point multiplies an `n×n` input by `n×n` weights and adds a bias row: `2·n³`
//! floating-point operations. The operands stay on the GPU; each kernel is checked
//! against the CPU first ([`LinearBenchmark::check`]), then timed as dispatches recorded
//! back to back into one compute pass and one submission, so neither transfers nor
//! submissions are in the number: this is the kernel alone.

use crate::bench::figure::{Figure, Point};
use crate::bench::gpu_peak::{GpuPeak, PeakSettings, gpu_peak};
use crate::bench::linear_throughput::LinearBenchmark;
use crate::bench::sweeps::timing::{Budget, Measurement, SeriesLimit, measure};
use crate::bench::sweeps::{
    Progress, SweepError, SweepSettings, gigaflops_per_second, measure_point, push_repeats,
};
use crate::compiler::LinearStrategy;
use crate::compiler::linear_strategy::PREFERRED_CONFIGURATIONS;
use crate::gpu::GpuContext;

/// The matrix sizes of the sweep.
pub const SIZES: [usize; 7] = [64, 128, 256, 512, 1024, 2048, 4096];

/// The name of the series that runs whatever [`LinearStrategy::for_shape`] picks.
pub const CHOSEN_PER_SHAPE: &str = "chosen per shape";

/// The name of the horizontal line of the device's measured peak.
pub const PEAK_SERIES: &str = "fp32 peak (peak_fma, measured once)";

/// One line of the figure: a fixed kernel, or the compiled mode's chooser.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpuLinearKernel {
    Fixed(LinearStrategy),
    ChosenPerShape,
}

impl GpuLinearKernel {
    pub fn name(&self) -> String {
        match self {
            GpuLinearKernel::Fixed(strategy) => strategy.to_string(),
            GpuLinearKernel::ChosenPerShape => CHOSEN_PER_SHAPE.to_string(),
        }
    }
}

/// The GPU linear kernels the sweep and the report compare: the naive kernel, the tiled
/// one with 16 × 16 tiles, each register-blocked configuration the chooser prefers, and
/// the chooser itself. Those the device cannot run are left out.
pub struct GpuLinearKernels<'context> {
    context: &'context GpuContext,
    kernels: Vec<GpuLinearKernel>,
}

impl<'context> GpuLinearKernels<'context> {
    pub fn new(context: &'context GpuContext) -> Self {
        let fixed = [LinearStrategy::Naive, LinearStrategy::Tiled { edge: 16 }]
            .into_iter()
            .chain(
                PREFERRED_CONFIGURATIONS
                    .into_iter()
                    .map(LinearStrategy::RegisterBlocked),
            )
            // Shape 4 × 4 passes every shape rule: this asks only about the device.
            .filter(|strategy| strategy.check(context, 4, 4).is_ok())
            .map(GpuLinearKernel::Fixed);
        GpuLinearKernels {
            context,
            kernels: fixed.chain([GpuLinearKernel::ChosenPerShape]).collect(),
        }
    }

    pub fn kernels(&self) -> &[GpuLinearKernel] {
        &self.kernels
    }

    /// The kernels' names, which are also the names of their series.
    pub fn names(&self) -> Vec<String> {
        self.kernels.iter().map(GpuLinearKernel::name).collect()
    }

    // ANCHOR: measure_kernel
    /// Checks kernel number `kernel` on random `size × size` operands, then measures one
    /// dispatch. Returns the measurement and the strategy that ran.
    pub fn measure(
        &self,
        kernel: usize,
        size: usize,
        budget: &Budget,
    ) -> Result<(Measurement, LinearStrategy), SweepError> {
        let kernel = self.kernels[kernel];
        let what = format!("the {} linear kernel at {size}³", kernel.name());
        let strategy = match kernel {
            GpuLinearKernel::Fixed(strategy) => strategy,
            GpuLinearKernel::ChosenPerShape => {
                LinearStrategy::for_shape(self.context, size, size, size).map_err(|source| {
                    SweepError::Strategy {
                        what: what.clone(),
                        source: Box::new(source),
                    }
                })?
            }
        };
        let measurement = self.measure_strategy(strategy, size, budget)?;
        Ok((measurement, strategy))
    }
    // ANCHOR_END: measure_kernel

    /// Checks `strategy` on random `size × size` operands, then measures one dispatch.
    pub fn measure_strategy(
        &self,
        strategy: LinearStrategy,
        size: usize,
        budget: &Budget,
    ) -> Result<Measurement, SweepError> {
        let what = format!("the {strategy} linear kernel at {size}³");
        let throughput_error = |source| SweepError::Throughput {
            what: what.clone(),
            source: Box::new(source),
        };
        let benchmark = LinearBenchmark::prepare(self.context, strategy, (size, size, size), 2026)
            .map_err(|source| SweepError::Gpu {
                what: what.clone(),
                source: Box::new(source),
            })?;
        benchmark.check().map_err(throughput_error)?;
        measure(budget, |dispatches| {
            benchmark
                .time(dispatches)
                .map(|_| ())
                .map_err(throughput_error)
        })
    }
}

/// How much work the peak measurement does: the full-size measurement for a real GPU, a
/// thousand times less for a software rasteriser (about a GFLOP per dispatch), which
/// would otherwise take minutes.
pub fn peak_settings(context: &GpuContext) -> PeakSettings {
    if context.adapter_info().device_type == wgpu::DeviceType::Cpu {
        PeakSettings {
            workgroups: 64,
            iterations: 256,
            dispatches: 3,
        }
    } else {
        PeakSettings::LARGE_GPU
    }
}

/// The device's measured fp32 peak.
pub fn measured_peak(context: &GpuContext) -> Result<GpuPeak, SweepError> {
    gpu_peak(context, peak_settings(context)).map_err(|error| SweepError::Peak(Box::new(error)))
}

/// Measures every kernel at every size, and the device's peak once.
pub fn sweep(
    id: String,
    sizes: &[usize],
    settings: &SweepSettings,
    context: &GpuContext,
    progress: &mut dyn Progress,
) -> Result<Figure, SweepError> {
    let mut figure = settings.figure(
        id,
        "GPU linear kernels on square matrices (operands on the GPU, no transfers)",
        ("matrix size n (n×n times n×n)", true),
        ("GFLOP/s", true),
        Some(context),
    );
    let kernels = GpuLinearKernels::new(context);
    let names = kernels.names();
    progress.begin(&figure.id, sizes.len() * names.len() + 1);
    let peak = measured_peak(context)?;
    progress.advance("fp32 peak");
    let mut limits = vec![SeriesLimit::default(); names.len()];
    for &size in sizes {
        let wanted: Vec<bool> = limits
            .iter()
            .map(|limit| limit.allows_next(&settings.budget))
            .collect();
        let measured = measure_point(settings, &mut limits, &wanted, |kernel, budget| {
            kernels
                .measure(kernel, size, budget)
                .map(|(measurement, _)| measurement)
        })?;
        for (name, measurements) in names.iter().zip(measured) {
            let rates = measurements
                .iter()
                .map(|m| gigaflops_per_second(size, size, size, m.seconds_per_run))
                .collect();
            push_repeats(&mut figure, name, size as f64, rates);
            progress.advance(&format!("{name}, {size}³"));
        }
        progress.partial(&figure);
    }
    if let (Some(&first), Some(&last)) = (sizes.first(), sizes.last()) {
        for size in [first, last] {
            figure.push(
                PEAK_SERIES,
                Point {
                    x: size as f64,
                    y: peak.gigaflops_per_second,
                },
            );
        }
    }
    Ok(figure)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::sweeps::Silent;

    #[test]
    fn a_tiny_kernel_sweep_measures_every_kernel_under_the_peak_line() {
        let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
        let settings = SweepSettings::single_sample_for_tests();
        let figure = sweep(
            "linear-kernels-test".to_string(),
            &[8, 36],
            &settings,
            context,
            &mut Silent,
        )
        .unwrap();
        let kernels = GpuLinearKernels::new(context);
        assert_eq!(figure.series.len(), kernels.names().len() + 1);
        assert!(kernels.names().contains(&"naive".to_string()));
        assert!(kernels.names().contains(&CHOSEN_PER_SHAPE.to_string()));
        for series in &figure.series {
            assert_eq!(series.points.len(), 2, "{}", series.name);
            assert!(
                series.points.iter().all(|p| p.y.is_finite() && p.y > 0.0),
                "{series:?}"
            );
        }
        let peak = figure.series.last().unwrap();
        assert_eq!(peak.name, PEAK_SERIES);
        assert_eq!(peak.points[0].y, peak.points[1].y);
    }
}
