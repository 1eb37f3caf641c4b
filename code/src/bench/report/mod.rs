//! The benchmark report: one run, one table, the numbers the book quotes.
//!
//! - Every execution mode on the standard workload (`random_mlp(256, 64)` unless told
//!   otherwise), upload and readback included in every run, as the median of several
//!   samples, and how many times faster than `Immediate` each mode is.
//! - GFLOP/s of each GPU linear kernel at 1024³, 2048³ and 4096³ (operands on the GPU,
//!   no transfers), and the fraction of the device's fp32 peak, measured in the same run.
//! - GFLOP/s of each CPU linear variant and of `matrixmultiply` at 1024³, and how many
//!   times faster `CpuGraph` runs the standard workload than `Cpu`.
//!
//! The `bench_report` binary prints it and writes it as Markdown
//! (`cargo run --release -p galaxy --bin bench_report -- --help`).

use std::fmt::Write as _;

use crate::bench::hardware::hardware_description;
use crate::bench::sweeps::cpu_linear::{self, CpuOperands};
use crate::bench::sweeps::linear_kernels::{GpuLinearKernel, GpuLinearKernels, measured_peak};
use crate::bench::sweeps::modes::{SEED, time_mode};
use crate::bench::sweeps::{Budget, Measurement, Progress, SweepError, gigaflops_per_second};
use crate::gpu::GpuContext;
use crate::graph::random_mlp;
use crate::runner::ExecutionMode;

/// What the report measures.
#[derive(Debug, Clone)]
pub struct ReportOptions {
    /// Size and depth of the standard workload.
    pub size: usize,
    pub depth: usize,
    /// The median is taken over this many samples.
    pub samples: usize,
    /// Runs shorter than this are grouped into one sample (graph-loop modes record the
    /// runs of one sample into one submission).
    pub minimum_sample_seconds: f64,
    /// Leave out the modes that compile their shaders on every run.
    pub skip_uncached: bool,
    /// Leave out the CPU linear variants.
    pub skip_cpu: bool,
    /// Matrix sizes of the GPU linear kernels (none: neither they nor the peak are measured).
    pub gpu_linear_sizes: Vec<usize>,
    /// Matrix size of the CPU linear variants.
    pub cpu_linear_size: usize,
    /// The command line, recorded in the report.
    pub command: String,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            size: 256,
            depth: 64,
            samples: 10,
            minimum_sample_seconds: 0.02,
            skip_uncached: false,
            skip_cpu: false,
            gpu_linear_sizes: vec![1024, 2048, 4096],
            cpu_linear_size: 1024,
            command: String::new(),
        }
    }
}

/// The modes that compile every shader on every run: minutes on a software rasteriser.
pub fn compiles_every_run(mode: ExecutionMode) -> bool {
    matches!(
        mode,
        ExecutionMode::Immediate
            | ExecutionMode::Graph
            | ExecutionMode::GraphFused
            | ExecutionMode::GraphLoop
            | ExecutionMode::GraphLoopFused
    )
}

/// One line of the report's table.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportRow {
    pub part: &'static str,
    pub name: String,
    pub size: String,
    pub milliseconds: Option<f64>,
    pub gigaflops_per_second: Option<f64>,
    /// A ratio or a fraction, already written out (`12.3× Immediate`, `41% of peak`).
    pub compared: String,
    /// `samples × runs per sample`.
    pub samples: String,
}

/// The whole report.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub hardware: String,
    pub command: String,
    pub rows: Vec<ReportRow>,
    pub notes: Vec<String>,
}

impl Report {
    // ANCHOR: report_markdown
    /// The report as Markdown: the hardware and the command, one table, then notes.
    pub fn to_markdown(&self) -> String {
        let mut text = String::new();
        let _ = writeln!(text, "# Benchmark report\n");
        let _ = writeln!(text, "- Hardware: {}", self.hardware);
        let _ = writeln!(text, "- Command: `{}`\n", self.command);
        text.push_str(
            "| part | what | size | time (ms) | GFLOP/s | compared | samples × runs |\n\
             |---|---|---|---:|---:|---|---|\n",
        );
        let number = |value: Option<f64>| value.map_or("n/a".to_string(), significant);
        for row in &self.rows {
            let _ = writeln!(
                text,
                "| {} | {} | {} | {} | {} | {} | {} |",
                row.part,
                row.name,
                row.size,
                number(row.milliseconds),
                number(row.gigaflops_per_second),
                row.compared,
                row.samples
            );
        }
        if !self.notes.is_empty() {
            text.push('\n');
            for note in &self.notes {
                let _ = writeln!(text, "- {note}");
            }
        }
        text
    }
    // ANCHOR_END: report_markdown
}

/// A number with four significant digits and no exponent for the usual range.
fn significant(value: f64) -> String {
    if value == 0.0 || !value.is_finite() {
        return format!("{value}");
    }
    let digits = (3 - value.abs().log10().floor() as i32).clamp(0, 6) as usize;
    format!("{value:.digits$}")
}

fn sample_text(measurement: &Measurement) -> String {
    format!("{} × {}", measurement.samples, measurement.runs_per_sample)
}

/// Runs the report. GPU parts need `context`; without one they are left out with a note.
pub fn run_report(
    options: &ReportOptions,
    context: Option<&GpuContext>,
    progress: &mut dyn Progress,
) -> Result<Report, SweepError> {
    let budget = Budget {
        seconds_per_run: f64::INFINITY,
        seconds_per_point: 0.0,
        minimum_sample_seconds: options.minimum_sample_seconds,
        minimum_samples: options.samples.max(1),
        maximum_samples: options.samples.max(1),
    };
    let mut report = Report {
        hardware: hardware_description(context),
        command: options.command.clone(),
        rows: Vec::new(),
        notes: Vec::new(),
    };
    let modes: Vec<ExecutionMode> = ExecutionMode::ALL
        .into_iter()
        .filter(|mode| context.is_some() || !mode.uses_gpu())
        .filter(|mode| !(options.skip_uncached && compiles_every_run(*mode)))
        .collect();
    let gpu_kernels = context.map(GpuLinearKernels::new);
    let kernel_names = gpu_kernels.as_ref().map_or(Vec::new(), |k| k.names());
    let cpu_variants = if options.skip_cpu {
        Vec::new()
    } else {
        cpu_linear::variants()
    };
    progress.begin(
        "bench report",
        modes.len() + 1 + kernel_names.len() * options.gpu_linear_sizes.len() + cpu_variants.len(),
    );

    standard_workload(options, &budget, &modes, context, progress, &mut report)?;
    if let (Some(kernels), Some(context)) = (&gpu_kernels, context) {
        gpu_linear(options, &budget, context, kernels, progress, &mut report)?;
    } else {
        report
            .notes
            .push("No GPU context: the GPU modes and kernels were not measured.".to_string());
    }
    cpu_linear_rows(options, &budget, &cpu_variants, progress, &mut report)?;
    cpu_ratio(options, &mut report);
    if options.skip_uncached {
        report.notes.push(
            "The modes that compile their shaders on every run were skipped (--skip-uncached)."
                .to_string(),
        );
    }
    Ok(report)
}

/// Every selected mode on the standard workload, compared with `Immediate` (or, when it
/// was skipped, with `ImmediateCached`).
fn standard_workload(
    options: &ReportOptions,
    budget: &Budget,
    modes: &[ExecutionMode],
    context: Option<&GpuContext>,
    progress: &mut dyn Progress,
    report: &mut Report,
) -> Result<(), SweepError> {
    let (size, depth) = (options.size, options.depth);
    let workload = random_mlp(size, depth, SEED)?;
    let mut measured = Vec::new();
    for &mode in modes {
        let measurement = time_mode(mode, &workload, context, budget)?;
        measured.push((mode, measurement));
        progress.advance(&format!("{mode:?}"));
    }
    let reference = [ExecutionMode::Immediate, ExecutionMode::ImmediateCached]
        .into_iter()
        .find_map(|wanted| {
            measured
                .iter()
                .find(|(mode, _)| *mode == wanted)
                .map(|(mode, measurement)| (*mode, measurement.seconds_per_run))
        });
    for (mode, measurement) in &measured {
        let seconds = measurement.seconds_per_run;
        report.rows.push(ReportRow {
            part: "standard workload",
            name: format!("{mode:?}"),
            size: format!("{size}, depth {depth}"),
            milliseconds: Some(seconds * 1e3),
            gigaflops_per_second: Some(
                gigaflops_per_second(size, size, size, seconds) * depth as f64,
            ),
            compared: reference.map_or("n/a".to_string(), |(reference, reference_seconds)| {
                format!(
                    "{}× {reference:?}",
                    significant(reference_seconds / seconds)
                )
            }),
            samples: sample_text(measurement),
        });
    }
    report.notes.push(format!(
        "Standard workload: random_mlp({size}, {depth}, seed {SEED}); every run uploads the input \
         and reads the output back. GFLOP/s counts the linear layers only (2·size³ per layer). \
         \"n× Immediate\": how many times faster than Immediate."
    ));
    Ok(())
}

/// Each GPU linear kernel at each size, as a fraction of the device's measured fp32 peak.
fn gpu_linear(
    options: &ReportOptions,
    budget: &Budget,
    context: &GpuContext,
    kernels: &GpuLinearKernels,
    progress: &mut dyn Progress,
    report: &mut Report,
) -> Result<(), SweepError> {
    if options.gpu_linear_sizes.is_empty() {
        return Ok(());
    }
    let peak = measured_peak(context)?;
    report.rows.push(ReportRow {
        part: "GPU peak",
        name: "fp32 fma (shaders/peak_fma.wgsl)".to_string(),
        size: format!("{:.3} GFLOP per dispatch", peak.flops_per_dispatch as f64 / 1e9),
        milliseconds: Some(peak.seconds_per_dispatch * 1e3),
        gigaflops_per_second: Some(peak.gigaflops_per_second),
        compared: "100% of peak".to_string(),
        samples: String::new(),
    });
    progress.advance("fp32 peak");
    for &size in &options.gpu_linear_sizes {
        for (kernel, name) in kernels.names().iter().enumerate() {
            let (measurement, strategy) = kernels.measure(kernel, size, budget)?;
            let seconds = measurement.seconds_per_run;
            let rate = gigaflops_per_second(size, size, size, seconds);
            let name = match kernels.kernels()[kernel] {
                GpuLinearKernel::ChosenPerShape => format!("{name}: {strategy}"),
                GpuLinearKernel::Fixed(_) => name.clone(),
            };
            report.rows.push(ReportRow {
                part: "GPU linear",
                name,
                size: format!("{size}³"),
                milliseconds: Some(seconds * 1e3),
                gigaflops_per_second: Some(rate),
                compared: format!("{:.1}% of peak", 100.0 * rate / peak.gigaflops_per_second),
                samples: sample_text(&measurement),
            });
            progress.advance(&format!("{strategy}, {size}³"));
        }
    }
    report.notes.push(
        "GPU linear: operands stay on the GPU; one sample is that many dispatches recorded \
         into one compute pass and one submission. The peak is the measured rate of \
         independent fp32 fma chains."
            .to_string(),
    );
    Ok(())
}

/// Each CPU linear variant at one size, compared with `matrixmultiply`.
fn cpu_linear_rows(
    options: &ReportOptions,
    budget: &Budget,
    variants: &[(&'static str, cpu_linear::CpuLinear)],
    progress: &mut dyn Progress,
    report: &mut Report,
) -> Result<(), SweepError> {
    if variants.is_empty() {
        return Ok(());
    }
    let size = options.cpu_linear_size;
    let operands = CpuOperands::random(size);
    let mut measured = Vec::new();
    for &(name, linear) in variants {
        let measurement = cpu_linear::measure_variant(name, linear, &operands, budget)?;
        measured.push((name, measurement));
        progress.advance(&format!("{name}, {size}³"));
    }
    let yardstick = measured
        .iter()
        .find(|(name, _)| name.starts_with("matrixmultiply"))
        .map(|(name, measurement)| (*name, measurement.seconds_per_run));
    for (name, measurement) in &measured {
        let seconds = measurement.seconds_per_run;
        report.rows.push(ReportRow {
            part: "CPU linear",
            name: name.to_string(),
            size: format!("{size}³"),
            milliseconds: Some(seconds * 1e3),
            gigaflops_per_second: Some(gigaflops_per_second(size, size, size, seconds)),
            compared: yardstick.map_or("n/a".to_string(), |(yardstick, yardstick_seconds)| {
                format!("{:.0}% of {yardstick}", 100.0 * yardstick_seconds / seconds)
            }),
            samples: sample_text(measurement),
        });
    }
    Ok(())
}

/// How many times faster `CpuGraph` runs the standard workload than `Cpu`.
fn cpu_ratio(options: &ReportOptions, report: &mut Report) {
    let time_of = |wanted: &str| {
        report
            .rows
            .iter()
            .find(|row| row.part == "standard workload" && row.name == wanted)
            .and_then(|row| row.milliseconds)
    };
    if let (Some(cpu), Some(cpu_graph)) = (time_of("Cpu"), time_of("CpuGraph")) {
        report.rows.push(ReportRow {
            part: "CPU",
            name: "Cpu / CpuGraph".to_string(),
            size: format!("{}, depth {}", options.size, options.depth),
            milliseconds: None,
            gigaflops_per_second: None,
            compared: format!("{}×", significant(cpu / cpu_graph)),
            samples: String::new(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::sweeps::Silent;

    #[test]
    fn numbers_keep_four_significant_digits() {
        assert_eq!(significant(7.5512), "7.551");
        assert_eq!(significant(146.13), "146.1");
        assert_eq!(significant(0.3094), "0.3094");
        assert_eq!(significant(51234.0), "51234");
    }

    #[test]
    fn a_small_report_measures_every_mode_and_writes_one_table() {
        let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
        let options = ReportOptions {
            size: 8,
            depth: 2,
            samples: 1,
            minimum_sample_seconds: 0.0,
            gpu_linear_sizes: vec![16],
            cpu_linear_size: 16,
            command: "cargo test".to_string(),
            ..ReportOptions::default()
        };
        let report = run_report(&options, Some(context), &mut Silent).unwrap();
        let workload_rows: Vec<&ReportRow> = report
            .rows
            .iter()
            .filter(|row| row.part == "standard workload")
            .collect();
        assert_eq!(workload_rows.len(), ExecutionMode::ALL.len());
        for row in &workload_rows {
            let milliseconds = row.milliseconds.unwrap();
            assert!(milliseconds.is_finite() && milliseconds > 0.0, "{row:?}");
            assert!(row.compared.ends_with("× Immediate"), "{row:?}");
        }
        let immediate = workload_rows
            .iter()
            .find(|r| r.name == "Immediate")
            .unwrap();
        assert_eq!(immediate.compared, "1.000× Immediate");
        assert!(report.rows.iter().any(|row| row.part == "GPU linear"));
        assert!(report.rows.iter().any(|row| row.name == "Cpu / CpuGraph"));
        let markdown = report.to_markdown();
        assert!(markdown.contains(&report.hardware), "{markdown}");
        assert_eq!(
            markdown.matches("| standard workload |").count(),
            ExecutionMode::ALL.len()
        );
        assert!(
            markdown.contains("% of matrixmultiply::sgemm"),
            "{markdown}"
        );
    }

    #[test]
    fn skipping_uncached_modes_compares_with_immediate_cached() {
        let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
        let options = ReportOptions {
            size: 4,
            depth: 1,
            samples: 1,
            minimum_sample_seconds: 0.0,
            skip_uncached: true,
            skip_cpu: true,
            gpu_linear_sizes: Vec::new(),
            command: "cargo test".to_string(),
            ..ReportOptions::default()
        };
        let report = run_report(&options, Some(context), &mut Silent).unwrap();
        assert!(report.rows.iter().all(|row| row.name != "Immediate"));
        assert!(report.rows.iter().all(|row| row.part != "CPU linear"));
        let cached = report
            .rows
            .iter()
            .find(|row| row.name == "ImmediateCached")
            .unwrap();
        assert_eq!(cached.compared, "1.000× ImmediateCached");
    }
}
