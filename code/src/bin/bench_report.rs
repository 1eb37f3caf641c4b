//! `bench_report`: one run, one table: every execution mode on the standard workload, the
//! comparisons measured side by side, shader compile times, the GPU linear kernels, the
//! CPU linear variants, naming the CPU and the GPU at the top.
//!
//! ```text
//! cargo run --release -p galaxy --bin bench_report -- [--size 256] [--depth 64] [--samples 10]
//!     [--repeats 1] [--parts workload,comparisons,compile-time,gpu-linear,cpu-linear]
//!     [--skip-uncached] [--skip-cpu] [--skip-gpu] [--sizes 1024,2048,4096] [--cpu-size 1024]
//!     [--pair-sizes 64,256] [--reuse-sizes 256,1024] [--relu-size 1024]
//!     [--crossover-sizes 16,32,64,128,256] [--compile-iterations 20]
//!     [--breakdown-sizes 4,64,256] [--breakdown-runs 5] [--breakdown-csv DIR] [--out report.md]
//! ```
//!
//! `--parts breakdown --breakdown-csv figures/data` writes `time-breakdown-gpu.csv` (or
//! `-software.csv` on lavapipe), the data of the book's time-breakdown figure.
//!
//! With `--repeats 3` every measurement is repeated three times, interleaved with the
//! others of its comparison, and the table gives the median and the range of the repeats.
//! The measurements live in `galaxy::bench::report`; this file reads the options, shows
//! progress, prints the table and writes it.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use galaxy::bench::report::{ComparisonSizes, ReportOptions, ReportPart, run_report};
use galaxy::bench::sweeps::Progress;
use galaxy::gpu::GpuContext;
use indicatif::{ProgressBar, ProgressStyle};

#[derive(Parser)]
#[command(
    about = "Measure every execution mode, the side-by-side comparisons, compile times and the \
             linear kernels in one run and print one table"
)]
struct Arguments {
    /// Size of the standard workload (input rows = layer width).
    #[arg(long, default_value_t = 256)]
    size: usize,
    /// Depth of the standard workload and of the comparisons (linear layers).
    #[arg(long, default_value_t = 64)]
    depth: usize,
    /// The median is taken over this many samples.
    #[arg(long, default_value_t = 10)]
    samples: usize,
    /// Runs shorter than this many milliseconds are grouped into one sample.
    #[arg(long, default_value_t = 20.0)]
    minimum_sample_ms: f64,
    /// Repeat every measurement this many times, interleaved, and report median and range.
    #[arg(long, default_value_t = 1)]
    repeats: usize,
    /// The parts to measure, comma-separated: workload, comparisons, compile-time,
    /// gpu-linear, cpu-linear, breakdown.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "workload,comparisons,compile-time,gpu-linear,cpu-linear,breakdown",
        value_parser = parse_part
    )]
    parts: Vec<ReportPart>,
    /// Leave out the modes that compile every shader on every run (slow on lavapipe).
    #[arg(long)]
    skip_uncached: bool,
    /// Leave out everything that runs on the CPU: the CPU modes of the standard workload,
    /// the CPU-against-GPU comparison and the CPU linear variants.
    #[arg(long)]
    skip_cpu: bool,
    /// Measure the CPU only (no GPU adapter needed).
    #[arg(long)]
    skip_gpu: bool,
    /// Matrix sizes of the GPU linear kernels, comma-separated; `--sizes` alone skips them.
    #[arg(long, value_delimiter = ',', num_args = 0.., default_value = "1024,2048,4096")]
    sizes: Vec<usize>,
    /// Matrix size of the CPU linear variants.
    #[arg(long, default_value_t = 1024)]
    cpu_size: usize,
    /// Sizes of the round-trip, graph-loop and compute-pass comparisons.
    #[arg(long, value_delimiter = ',', num_args = 0.., default_value = "64,256")]
    pair_sizes: Vec<usize>,
    /// Sizes of the buffer-reuse comparison.
    #[arg(long, value_delimiter = ',', num_args = 0.., default_value = "256,1024")]
    reuse_sizes: Vec<usize>,
    /// Edge of the square tensor of the in-place ReLU comparison.
    #[arg(long, default_value_t = 1024)]
    relu_size: usize,
    /// Sizes of the CPU-against-GPU comparison.
    #[arg(long, value_delimiter = ',', num_args = 0.., default_value = "16,32,64,128,256")]
    crossover_sizes: Vec<usize>,
    /// Compilations timed per kernel and kind of source.
    #[arg(long, default_value_t = 20)]
    compile_iterations: usize,
    /// Sizes of the standard workload the time breakdown splits a run of.
    #[arg(long, value_delimiter = ',', num_args = 0.., default_value = "4,64,256")]
    breakdown_sizes: Vec<usize>,
    /// Runs probed per mode and size of the time breakdown (the median one is shown).
    #[arg(long, default_value_t = 5)]
    breakdown_runs: usize,
    /// Write the time breakdown's CSV file into this folder (e.g. figures/data).
    #[arg(long)]
    breakdown_csv: Option<PathBuf>,
    /// A directory with the CPU anchors' CSV files (anchors/onnx/run_all.sh copies them to
    /// figures/data): NumPy and ONNX Runtime rows beside CpuGraph.
    #[arg(long)]
    cpu_anchors: Option<PathBuf>,
    /// Also write the report, as Markdown, into this file.
    #[arg(long)]
    out: Option<PathBuf>,
}

fn parse_part(name: &str) -> Result<ReportPart, String> {
    ReportPart::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = ReportPart::ALL.iter().map(|part| part.name()).collect();
        format!(
            "`{name}` is not a part of the report; the parts are {}",
            names.join(", ")
        )
    })
}

fn main() -> ExitCode {
    let arguments = Arguments::parse();
    match run(arguments) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run(arguments: Arguments) -> Result<(), String> {
    if arguments.size == 0
        || arguments.depth == 0
        || arguments.samples == 0
        || arguments.repeats == 0
        || arguments.compile_iterations == 0
    {
        return Err(
            "--size, --depth, --samples, --repeats and --compile-iterations must be at least 1"
                .to_string(),
        );
    }
    let all_sizes = arguments
        .sizes
        .iter()
        .chain(&arguments.pair_sizes)
        .chain(&arguments.reuse_sizes)
        .chain(&arguments.crossover_sizes)
        .chain(&arguments.breakdown_sizes)
        .chain([&arguments.cpu_size, &arguments.relu_size]);
    if all_sizes.into_iter().any(|&size| size == 0) {
        return Err("matrix and workload sizes must be at least 1".to_string());
    }
    let words: Vec<String> = std::env::args().skip(1).collect();
    let options = ReportOptions {
        size: arguments.size,
        depth: arguments.depth,
        samples: arguments.samples,
        minimum_sample_seconds: arguments.minimum_sample_ms / 1e3,
        repeats: arguments.repeats,
        parts: arguments.parts,
        skip_uncached: arguments.skip_uncached,
        skip_cpu: arguments.skip_cpu,
        gpu_linear_sizes: arguments.sizes,
        cpu_linear_size: arguments.cpu_size,
        comparison_sizes: ComparisonSizes {
            pairs: arguments.pair_sizes,
            buffer_reuse: arguments.reuse_sizes,
            relu: arguments.relu_size,
            crossover: arguments.crossover_sizes,
        },
        compile_iterations: arguments.compile_iterations,
        breakdown_sizes: arguments.breakdown_sizes,
        breakdown_runs: arguments.breakdown_runs.max(1),
        breakdown_csv: arguments.breakdown_csv,
        cpu_anchors: arguments.cpu_anchors,
        command: format!("bench_report {}", words.join(" "))
            .trim_end()
            .to_string(),
    };
    let context = if arguments.skip_gpu {
        None
    } else {
        Some(
            GpuContext::shared()
                .map_err(|error| format!("{error}\n(pass --skip-gpu to measure the CPU only)"))?,
        )
    };
    let mut bar = Bar(None);
    let report = run_report(&options, context, &mut bar).map_err(|error| error.to_string())?;
    if let Some(bar) = &bar.0 {
        bar.finish_and_clear();
    }
    let markdown = report.to_markdown();
    println!("{markdown}");
    if let Some(path) = &arguments.out {
        std::fs::write(path, &markdown).map_err(|error| format!("{}: {error}", path.display()))?;
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}

/// An indicatif progress bar when standard error is a terminal; otherwise (a run logged
/// to a file, such as the H100 runs) one line per finished measurement, with the time
/// since the start, so that a long run shows where it is.
struct Bar(Option<ProgressBar>);

impl Progress for Bar {
    fn begin(&mut self, figure: &str, points: usize) {
        let bar = ProgressBar::new(points as u64);
        let style = ProgressStyle::with_template(
            "{prefix} [{elapsed_precise}] {wide_bar} {pos}/{len} {msg}",
        )
        .expect("the template is valid");
        bar.set_style(style);
        bar.set_prefix(figure.to_string());
        if std::io::stderr().is_terminal() {
            bar.enable_steady_tick(std::time::Duration::from_millis(250));
        } else {
            bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
        }
        self.0 = Some(bar);
    }

    fn advance(&mut self, point: &str) {
        if let Some(bar) = &self.0 {
            bar.set_message(point.to_string());
            bar.inc(1);
            if bar.is_hidden() {
                eprintln!(
                    "[{:>4}/{} {:>7.1} s] {point}",
                    bar.position(),
                    bar.length().unwrap_or(0),
                    bar.elapsed().as_secs_f64()
                );
            }
        }
    }
}
