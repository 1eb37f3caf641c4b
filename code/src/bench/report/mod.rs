//! The benchmark report: one run, one table, the numbers the book quotes.
//!
//! Its parts ([`ReportPart`]), each of which can be left out:
//!
//! - **workload**: every execution mode on the standard workload (`random_mlp(256, 64)`
//!   unless told otherwise), upload and readback included in every run, and how many
//!   times faster than `Immediate` each mode is ([`workload`]).
//! - **comparisons**: pairs measured side by side that each answer one question
//!   ([`comparisons`]): does looping on the GPU pay, what a round trip costs per operator,
//!   what a compute pass per kernel costs (graph, op-code and compiled runners), what
//!   buffer reuse is worth, in-place ReLU against ReLU, where the CPU graph runner stops
//!   beating the GPU.
//! - **compile-time**: `create_shader_module` and `create_compute_pipeline` timed
//!   separately ([`crate::bench::compile_time`]).
//! - **gpu-linear**: GFLOP/s of each GPU linear kernel at 1024³, 2048³ and 4096³ (operands
//!   on the GPU, no transfers), as a fraction of the device's fp32 peak measured in the
//!   same run ([`kernels`]).
//! - **cpu-linear**: GFLOP/s of each CPU linear variant and of `matrixmultiply` at 1024³,
//!   and how many times faster `CpuGraph` runs the standard workload than `Cpu`.
//! - **breakdown**: where one run of each GPU mode spends its time, by the host's clock
//!   and the GPU's ([`breakdown`]), optionally written as the figure's CSV file.
//!
//! Every measurement is the median of several samples. With `repeats` above one, each is
//! repeated that many times, interleaved with the other contenders of its comparison
//! ([`crate::bench::repeats`]): the table gives the median of the repeats and the fastest
//! and slowest, and every ratio is taken repeat by repeat, between measurements made side
//! by side.
//!
//! The `bench_report` binary prints it and writes it as Markdown
//! (`cargo run --release -p galaxy --bin bench_report -- --help`).

pub mod breakdown;
pub mod comparisons;
pub mod contenders;
pub mod cpu_anchors;
pub mod kernels;
mod options;
pub mod workload;

use std::fmt::Write as _;

use crate::bench::hardware::hardware_description;
use crate::bench::repeats::{Repeats, interleaved};
use crate::bench::sweeps::{Measurement, Progress, SweepError};
use crate::gpu::GpuContext;

pub use options::{ComparisonSizes, ReportOptions, ReportPart, compiles_every_run};

/// One line of the report's table.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportRow {
    pub part: &'static str,
    pub name: String,
    pub size: String,
    /// Milliseconds, one value per repeat: the table shows their median and range.
    pub milliseconds: Option<Repeats>,
    pub gigaflops_per_second: Option<f64>,
    /// A ratio or a fraction, already written out (`12.3× Immediate`, `41% of peak`).
    pub compared: String,
    /// `samples × runs per sample`, and the repeats.
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
            "| part | what | size | time (ms) | fastest–slowest (ms) | GFLOP/s | compared | samples × runs |\n\
             |---|---|---|---:|---:|---:|---|---|\n",
        );
        let number = |value: Option<f64>| value.map_or("n/a".to_string(), significant);
        for row in &self.rows {
            let median = row.milliseconds.as_ref().map(Repeats::median);
            let range = row.milliseconds.as_ref().and_then(Repeats::spread).map_or(
                String::new(),
                |spread| {
                    format!(
                        "{}–{}",
                        significant(spread.minimum),
                        significant(spread.maximum)
                    )
                },
            );
            let _ = writeln!(
                text,
                "| {} | {} | {} | {} | {} | {} | {} | {} |",
                row.part,
                row.name,
                row.size,
                number(median),
                range,
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
pub fn significant(value: f64) -> String {
    if value == 0.0 || !value.is_finite() {
        return format!("{value}");
    }
    let digits = (3 - value.abs().log10().floor() as i32).clamp(0, 6) as usize;
    format!("{value:.digits$}")
}

/// A value measured repeat by repeat, written as its median and, for several repeats,
/// its range: `2.345` or `2.345 (2.1–2.9)`.
pub fn with_range(values: &Repeats) -> String {
    match values.spread() {
        None => significant(values.median()),
        Some(spread) => format!(
            "{} ({}–{})",
            significant(values.median()),
            significant(spread.minimum),
            significant(spread.maximum)
        ),
    }
}

/// One contender of a comparison, measured once per repeat.
#[derive(Debug, Clone, PartialEq)]
pub struct Timed {
    /// Seconds per run, one value per repeat.
    pub seconds: Repeats,
    /// Samples and runs per sample of the first repeat (all repeats use the same plan
    /// unless the runs' length changed a lot).
    pub samples: usize,
    pub runs_per_sample: usize,
}

impl Timed {
    pub fn milliseconds(&self) -> Repeats {
        self.seconds.map(|seconds| seconds * 1e3)
    }

    /// `samples × runs`, plus the number of repeats when there were several.
    pub fn sample_text(&self) -> String {
        let repeats = self.seconds.count();
        if repeats > 1 {
            format!(
                "{} × {}, {repeats} repeats",
                self.samples, self.runs_per_sample
            )
        } else {
            format!("{} × {}", self.samples, self.runs_per_sample)
        }
    }

    /// `self / other`, repeat by repeat: how many times longer this one took.
    pub fn ratio_to(&self, other: &Timed) -> Repeats {
        self.seconds
            .paired_with(&other.seconds, |mine, theirs| mine / theirs)
            .unwrap_or_else(|| {
                // Unequal numbers of repeats cannot be paired: compare the medians.
                Repeats::new(vec![self.seconds.median() / other.seconds.median()])
                    .expect("one value")
            })
    }
}

// ANCHOR: time_interleaved
/// Measures `contenders` things, each `options.repeats` times, interleaved: every
/// contender once, then every contender again. `measure(i)` measures contender `i` once.
pub fn time_interleaved(
    options: &ReportOptions,
    contenders: usize,
    mut measure: impl FnMut(usize) -> Result<Measurement, SweepError>,
) -> Result<Vec<Timed>, SweepError> {
    let measured = interleaved(contenders, options.repeats, |contender, _| {
        measure(contender).map(Some)
    })?;
    Ok(measured
        .into_iter()
        .map(|measurements| Timed {
            seconds: Repeats::new(measurements.iter().map(|m| m.seconds_per_run).collect())
                .expect("every contender is measured at least once"),
            samples: measurements[0].samples,
            runs_per_sample: measurements[0].runs_per_sample,
        })
        .collect())
}
// ANCHOR_END: time_interleaved

/// How many measurements each part takes, for the progress bar.
fn planned_measurements(options: &ReportOptions, context: Option<&GpuContext>) -> usize {
    let mut planned = 0;
    if options.includes(ReportPart::Workload) {
        planned += workload::modes(options, context).len();
    }
    if context.is_some() {
        if options.includes(ReportPart::Comparisons) {
            planned += comparisons::planned(options);
        }
        if options.includes(ReportPart::CompileTime) {
            planned += 1;
        }
        if let (true, Some(context)) = (options.includes(ReportPart::Breakdown), context) {
            planned += breakdown::planned(options, context);
        }
        if options.includes(ReportPart::GpuLinear) && !options.gpu_linear_sizes.is_empty() {
            let kernels = context.map_or(0, |context| {
                crate::bench::sweeps::linear_kernels::GpuLinearKernels::new(context)
                    .names()
                    .len()
            });
            // Every kernel, and the one chosen by measuring, at every size.
            planned += 1 + (kernels + 1) * options.gpu_linear_sizes.len();
        }
    }
    if options.includes(ReportPart::CpuLinear) && !options.skip_cpu {
        planned += crate::bench::sweeps::cpu_linear::variants().len();
    }
    planned * options.repeats.max(1)
}

/// Runs the report. GPU parts need `context`; without one they are left out with a note.
pub fn run_report(
    options: &ReportOptions,
    context: Option<&GpuContext>,
    progress: &mut dyn Progress,
) -> Result<Report, SweepError> {
    let mut report = Report {
        hardware: hardware_description(context),
        command: options.command.clone(),
        rows: Vec::new(),
        notes: Vec::new(),
    };
    progress.begin("bench report", planned_measurements(options, context));
    if options.includes(ReportPart::Workload) {
        workload::standard_workload(options, context, progress, &mut report)?;
        workload::cpu_ratio(options, &mut report);
    }
    match context {
        Some(context) => {
            if options.includes(ReportPart::Comparisons) {
                comparisons::all(options, context, progress, &mut report)?;
            }
            if options.includes(ReportPart::CompileTime) {
                kernels::compile_time(options, context, progress, &mut report)?;
            }
            if options.includes(ReportPart::GpuLinear) {
                kernels::gpu_linear(options, context, progress, &mut report)?;
            }
            if options.includes(ReportPart::Breakdown) {
                breakdown::time_breakdown(options, context, progress, &mut report)?;
            }
        }
        None => report.notes.push(
            "No GPU context: the GPU modes, comparisons and kernels were not measured.".to_string(),
        ),
    }
    if options.includes(ReportPart::CpuLinear) {
        kernels::cpu_linear(options, progress, &mut report)?;
        if !options.skip_cpu {
            cpu_anchors::cpu_peak(options, &mut report);
        }
        if let Some(directory) = &options.cpu_anchors {
            cpu_anchors::anchor_rows(directory, &mut report)?;
        }
    }
    if options.repeats > 1 {
        report.notes.push(format!(
            "Every measurement was repeated {} times, interleaved with the other contenders \
             of its comparison (A, B, C, then A, B, C again). Time: the median of the repeats \
             (each itself the median of its samples); fastest–slowest: their range. Ratios \
             are taken repeat by repeat, between measurements made side by side, and given \
             as median (fastest–slowest).",
            options.repeats
        ));
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::sweeps::Silent;
    use crate::runner::ExecutionMode;

    /// The workload part alone on a 4 × 4 workload of depth 1, one sample per mode,
    /// without the modes that compile every shader on every run.
    fn tiny_workload_options(repeats: usize) -> ReportOptions {
        ReportOptions {
            size: 4,
            depth: 1,
            samples: 1,
            minimum_sample_seconds: 0.0,
            repeats,
            parts: vec![ReportPart::Workload],
            skip_uncached: true,
            command: "cargo test".to_string(),
            ..ReportOptions::default()
        }
    }

    #[test]
    fn numbers_keep_four_significant_digits() {
        assert_eq!(significant(7.5512), "7.551");
        assert_eq!(significant(146.13), "146.1");
        assert_eq!(significant(0.3094), "0.3094");
        assert_eq!(significant(51234.0), "51234");
        let repeats = Repeats::new(vec![2.0, 1.5, 3.0]).unwrap();
        assert_eq!(with_range(&repeats), "2.000 (1.500–3.000)");
    }

    #[test]
    fn parts_have_names_for_the_command_line() {
        for part in ReportPart::ALL {
            assert_eq!(ReportPart::from_name(part.name()), Some(part));
        }
        assert_eq!(ReportPart::from_name("everything"), None);
    }

    #[test]
    fn a_small_report_measures_every_mode_and_writes_one_table() {
        let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
        let options = ReportOptions {
            size: 8,
            depth: 2,
            samples: 1,
            minimum_sample_seconds: 0.0,
            parts: vec![
                ReportPart::Workload,
                ReportPart::GpuLinear,
                ReportPart::CpuLinear,
            ],
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
            let milliseconds = row.milliseconds.as_ref().unwrap().median();
            assert!(milliseconds.is_finite() && milliseconds > 0.0, "{row:?}");
            assert!(row.compared.ends_with("× Immediate"), "{row:?}");
        }
        let immediate = workload_rows
            .iter()
            .find(|r| r.name == "Immediate")
            .unwrap();
        assert_eq!(immediate.compared, "1.000× Immediate");
        assert!(report.rows.iter().any(|row| row.part == "GPU linear"));
        let chosen = report
            .rows
            .iter()
            .find(|row| row.name.starts_with(kernels::MEASURED_CHOICE))
            .expect("a row for the kernel chosen by measuring");
        assert!(chosen.compared.contains("chosen vs best"), "{chosen:?}");
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
        let options = tiny_workload_options(1);
        let report = run_report(&options, Some(context), &mut Silent).unwrap();
        assert!(report.rows.iter().all(|row| row.name != "Immediate"));
        let parts: Vec<&str> = report.rows.iter().map(|row| row.part).collect();
        assert!(
            parts
                .iter()
                .all(|&part| part == "standard workload" || part == "CPU"),
            "{parts:?}"
        );
        let cached = report
            .rows
            .iter()
            .find(|row| row.name == "ImmediateCached")
            .unwrap();
        assert_eq!(cached.compared, "1.000× ImmediateCached");
    }

    #[test]
    fn skipping_the_cpu_leaves_out_every_cpu_mode_and_comparison() {
        let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
        let options = ReportOptions {
            skip_cpu: true,
            parts: vec![
                ReportPart::Workload,
                ReportPart::Comparisons,
                ReportPart::CpuLinear,
            ],
            comparison_sizes: ComparisonSizes {
                pairs: Vec::new(),
                buffer_reuse: Vec::new(),
                relu: 8,
                crossover: vec![4],
            },
            cpu_linear_size: 8,
            ..tiny_workload_options(1)
        };
        let report = run_report(&options, Some(context), &mut Silent).unwrap();
        let cpu_names = ["Cpu", "CpuGraph", "Cpu / CpuGraph"];
        for row in &report.rows {
            assert!(!cpu_names.contains(&row.name.as_str()), "{row:?}");
            assert!(
                !["CPU", "CPU linear", "CPU against GPU"].contains(&row.part),
                "{row:?}"
            );
        }
        assert!(report.rows.iter().any(|row| row.name == "GraphCompiled"));
        assert!(report.rows.iter().any(|row| row.part == "ReLU in place"));
    }

    #[test]
    fn repeats_give_ranges_and_paired_ratios() {
        let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
        let options = tiny_workload_options(3);
        let report = run_report(&options, Some(context), &mut Silent).unwrap();
        let cpu_ratio = report.rows.iter().find(|row| row.name == "Cpu / CpuGraph");
        assert!(
            cpu_ratio.unwrap().compared.contains('–'),
            "a ratio of repeats has a range: {cpu_ratio:?}"
        );
        for row in report
            .rows
            .iter()
            .filter(|row| row.part == "standard workload")
        {
            let milliseconds = row.milliseconds.as_ref().unwrap();
            assert_eq!(milliseconds.count(), 3, "{row:?}");
            assert!(milliseconds.spread().is_some(), "{row:?}");
            assert!(row.samples.ends_with("3 repeats"), "{row:?}");
        }
        let markdown = report.to_markdown();
        assert!(markdown.contains("repeated 3 times"), "{markdown}");
    }
}
