//! The report's kernel parts: the GPU linear kernels under the measured fp32 peak, the
//! CPU linear variants against `matrixmultiply`, and the two steps of compiling a shader.

use crate::bench::compile_time::measure_compile_times;
use crate::bench::gpu_peak::gpu_peak;
use crate::bench::repeats::Repeats;
use crate::bench::report::{
    Report, ReportOptions, ReportRow, Timed, significant, time_interleaved, with_range,
};
use crate::bench::sweeps::cpu_linear::{self, CpuOperands};
use crate::bench::sweeps::linear_kernels::{GpuLinearKernel, GpuLinearKernels, peak_settings};
use crate::bench::sweeps::{Measurement, Progress, SweepError, gigaflops_per_second};
use crate::gpu::GpuContext;
use crate::gpu::linear_search::{LinearShape, measured_strategy};

/// The name of the row of the kernel chosen by measuring.
pub const MEASURED_CHOICE: &str = "chosen by measuring";

/// Each GPU linear kernel at each size, as a fraction of the device's fp32 peak, which is
/// measured in the same run (once per repeat).
pub fn gpu_linear(
    options: &ReportOptions,
    context: &GpuContext,
    progress: &mut dyn Progress,
    report: &mut Report,
) -> Result<(), SweepError> {
    if options.gpu_linear_sizes.is_empty() {
        return Ok(());
    }
    let settings = peak_settings(context);
    let mut flops_per_dispatch = 0;
    let peaks = time_interleaved(options, 1, |_| {
        let peak =
            gpu_peak(context, settings).map_err(|error| SweepError::Peak(Box::new(error)))?;
        flops_per_dispatch = peak.flops_per_dispatch;
        progress.advance("fp32 peak");
        Ok(Measurement {
            seconds_per_run: peak.seconds_per_dispatch,
            over_budget: false,
            samples: 1,
            runs_per_sample: settings.dispatches,
        })
    })?;
    let peak = &peaks[0];
    let peak_rates = peak
        .seconds
        .map(|seconds| flops_per_dispatch as f64 / seconds / 1e9);
    let peak_rate = peak_rates.median();
    report.rows.push(ReportRow {
        part: "GPU peak",
        name: "fp32 fma (shaders/peak_fma.wgsl)".to_string(),
        size: format!("{:.3} GFLOP per dispatch", flops_per_dispatch as f64 / 1e9),
        milliseconds: Some(peak.milliseconds()),
        gigaflops_per_second: Some(peak_rate),
        compared: format!("100% of peak ({} GFLOP/s)", with_range(&peak_rates)),
        samples: peak.sample_text(),
    });
    let kernels = GpuLinearKernels::new(context);
    let names = kernels.names();
    let budget = options.budget();
    for &size in &options.gpu_linear_sizes {
        // The compiled mode's choice by measuring: searched here (or answered from the
        // context's cache), then timed beside every fixed kernel as one more contender.
        let shape = LinearShape {
            rows: size,
            inner: size,
            columns: size,
        };
        let searched = measured_strategy(context, shape).map_err(|source| SweepError::Gpu {
            what: format!("choosing a linear kernel for {size}³ by measuring"),
            source: Box::new(source),
        })?;
        let mut strategies = vec![String::new(); names.len()];
        let measured = time_interleaved(options, names.len() + 1, |kernel| {
            let (measurement, strategy) = if kernel == names.len() {
                let measurement = kernels.measure_strategy(searched, size, &budget)?;
                (measurement, searched)
            } else {
                kernels.measure(kernel, size, &budget)?
            };
            if kernel < names.len() {
                strategies[kernel] = strategy.to_string();
            }
            progress.advance(&format!("{strategy}, {size}³"));
            Ok(measurement)
        })?;
        let (measured, searched_timed) = measured.split_at(names.len());
        let rate = |timed: &Timed| {
            timed
                .seconds
                .map(|seconds| gigaflops_per_second(size, size, size, seconds))
                .median()
        };
        let best = kernels
            .kernels()
            .iter()
            .zip(measured)
            .filter(|(kernel, _)| matches!(kernel, GpuLinearKernel::Fixed(_)))
            .map(|(kernel, timed)| (kernel.name(), rate(timed)))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        let searched_rate = rate(&searched_timed[0]);
        report.rows.push(ReportRow {
            part: "GPU linear",
            name: format!("{MEASURED_CHOICE}: {searched}"),
            size: format!("{size}³"),
            milliseconds: Some(searched_timed[0].milliseconds()),
            gigaflops_per_second: Some(searched_rate),
            compared: match &best {
                Some((best_name, best_rate)) => format!(
                    "{:.1}% of peak; chosen vs best: {:.1}% of {best_name} ({} GFLOP/s)",
                    100.0 * searched_rate / peak_rate,
                    100.0 * searched_rate / best_rate,
                    significant(*best_rate)
                ),
                None => format!("{:.1}% of peak", 100.0 * searched_rate / peak_rate),
            },
            samples: searched_timed[0].sample_text(),
        });
        for (kernel, timed) in measured.iter().enumerate() {
            let rates = timed
                .seconds
                .map(|seconds| gigaflops_per_second(size, size, size, seconds));
            let name = match kernels.kernels()[kernel] {
                GpuLinearKernel::ChosenPerShape => {
                    format!("{}: {}", names[kernel], strategies[kernel])
                }
                GpuLinearKernel::Fixed(_) => names[kernel].clone(),
            };
            report.rows.push(ReportRow {
                part: "GPU linear",
                name,
                size: format!("{size}³"),
                milliseconds: Some(timed.milliseconds()),
                gigaflops_per_second: Some(rates.median()),
                compared: format!("{:.1}% of peak", 100.0 * rates.median() / peak_rate),
                samples: timed.sample_text(),
            });
        }
    }
    report.notes.push(format!(
        "GPU linear: operands stay on the GPU; one sample is that many dispatches recorded \
         into one compute pass and one submission. The peak is the measured rate of \
         independent fp32 fma chains. \"{MEASURED_CHOICE}\": the kernel GraphCompiled runs, \
         the fastest of a search over the candidates timed at preparation (a few dispatches \
         each, cached per shape), measured again here beside the others; \"chosen vs best\": \
         its rate as a share of the fastest fixed kernel's in this run."
    ));
    Ok(())
}

/// Each CPU linear variant at one size, compared with `matrixmultiply`.
pub fn cpu_linear(
    options: &ReportOptions,
    progress: &mut dyn Progress,
    report: &mut Report,
) -> Result<(), SweepError> {
    if options.skip_cpu {
        return Ok(());
    }
    let variants = cpu_linear::variants();
    let size = options.cpu_linear_size;
    let operands = CpuOperands::random(size);
    let budget = options.budget();
    let measured = time_interleaved(options, variants.len(), |index| {
        let (name, linear) = variants[index];
        let measurement = cpu_linear::measure_variant(name, linear, &operands, &budget)?;
        progress.advance(&format!("{name}, {size}³"));
        Ok(measurement)
    })?;
    let yardstick: Option<(&str, &Timed)> = variants
        .iter()
        .zip(&measured)
        .find(|((name, _), _)| name.starts_with("matrixmultiply"))
        .map(|((name, _), timed)| (*name, timed));
    for ((name, _), timed) in variants.iter().zip(&measured) {
        let seconds = timed.seconds.median();
        report.rows.push(ReportRow {
            part: "CPU linear",
            name: name.to_string(),
            size: format!("{size}³"),
            milliseconds: Some(timed.milliseconds()),
            gigaflops_per_second: Some(gigaflops_per_second(size, size, size, seconds)),
            compared: yardstick.map_or("n/a".to_string(), |(yardstick, yardstick_timed)| {
                let fraction = yardstick_timed.ratio_to(timed).median();
                format!("{:.0}% of {yardstick}", 100.0 * fraction)
            }),
            samples: timed.sample_text(),
        });
    }
    Ok(())
}

/// `create_shader_module` and `create_compute_pipeline`, each timed on its own, for every
/// kernel of [`crate::bench::compile_time`], with a new source each time and with the same.
pub fn compile_time(
    options: &ReportOptions,
    context: &GpuContext,
    progress: &mut dyn Progress,
    report: &mut Report,
) -> Result<(), SweepError> {
    let iterations = options.compile_iterations.max(1);
    let times = measure_compile_times(context, iterations).map_err(|source| SweepError::Gpu {
        what: "timing shader compilation".to_string(),
        source: Box::new(source),
    })?;
    for _ in 0..options.repeats.max(1) {
        progress.advance("compile time");
    }
    for time in &times {
        let to_milliseconds = |seconds: &Repeats| seconds.map(|value| value * 1e3);
        let module = to_milliseconds(&time.shader_module);
        let pipeline = to_milliseconds(&time.compute_pipeline);
        let total = module
            .paired_with(&pipeline, |module, pipeline| module + pipeline)
            .expect("both steps are timed in every iteration");
        let share = pipeline
            .paired_with(&total, |pipeline, total| 100.0 * pipeline / total)
            .expect("both steps are timed in every iteration");
        let size = time.sources.name().to_string();
        let samples = format!("{iterations} calls");
        let kernel = time.kernel.name();
        report.rows.push(ReportRow {
            part: "compile time",
            name: format!("{kernel}: create_shader_module"),
            size: size.clone(),
            milliseconds: Some(module),
            gigaflops_per_second: None,
            compared: String::new(),
            samples: samples.clone(),
        });
        report.rows.push(ReportRow {
            part: "compile time",
            name: format!("{kernel}: create_compute_pipeline"),
            size,
            milliseconds: Some(pipeline),
            gigaflops_per_second: None,
            compared: format!(
                "{}% of both steps (median {} ms together)",
                significant(share.median()),
                significant(total.median())
            ),
            samples,
        });
    }
    report.notes.push(format!(
        "Compile time: each step timed alone with the CPU clock, {iterations} calls per \
         kernel and kind of source after one warm-up, all kernels taking turns; the range is \
         over single calls. \"A new source each time\" renames the entry point in every \
         call (main_<nonce>_<i>), so the SPIR-V differs and no driver cache can answer; \"the \
         same source each time\" is what the modes that compile on every run pay. \
         create_shader_module: naga parses and validates the WGSL; create_compute_pipeline: \
         naga writes SPIR-V and the driver compiles it."
    ));
    Ok(())
}
