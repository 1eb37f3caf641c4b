//! `sweep`: runs the figure sweeps and writes one CSV file per figure.
//!
//! ```text
//! cargo run --release -p galaxy --bin sweep -- [--full] [--repeats R] [--out DIR] [--only GLOB…]
//!     [--skip-cpu] [--skip-gpu]
//! ```
//!
//! `--repeats 3` measures every point of the GPU and mode sweeps three times, the series
//! taking turns, and writes the median with the fastest and slowest
//! (`series,x,y,y_min,y_max`); each repeat gets a third of the point's time budget.
//!
//! `cargo xtask figures` runs it and then draws the CSV files. The measurements live in
//! `galaxy::bench::sweeps`; this file only reads the options, shows progress and writes.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;
use galaxy::bench::Figure;
use galaxy::bench::sweeps::{Progress, SweepOptions, SweepSettings, run_sweep, selected_sweeps};
use galaxy::gpu::GpuContext;
use indicatif::{ProgressBar, ProgressStyle};

#[derive(Parser)]
#[command(about = "Run the figure sweeps and write their CSV files")]
struct Arguments {
    /// The book's figures: a budget of about 3 s per run instead of 0.3 s.
    #[arg(long)]
    full: bool,
    /// Measure every point of the GPU and mode sweeps this many times (interleaved) and
    /// write the median with the range (`y_min,y_max`).
    #[arg(long, default_value_t = 1)]
    repeats: usize,
    /// Where the CSV files go.
    #[arg(long, default_value = "figures/data")]
    out: PathBuf,
    /// Only the figures whose id matches one of these patterns (`*` and `?`).
    #[arg(long, num_args = 1..)]
    only: Vec<String>,
    /// Leave out the figures that measure only the CPU.
    #[arg(long)]
    skip_cpu: bool,
    /// Leave out the figures that need a GPU adapter.
    #[arg(long)]
    skip_gpu: bool,
    /// The command recorded in each CSV file (default: this command line).
    #[arg(long)]
    command: Option<String>,
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
    if arguments.repeats == 0 {
        return Err("--repeats must be at least 1".to_string());
    }
    let command = arguments.command.clone().unwrap_or_else(|| {
        let words: Vec<String> = std::env::args().skip(1).collect();
        format!("sweep {}", words.join(" ")).trim_end().to_string()
    });
    let options = SweepOptions {
        full: arguments.full,
        only: arguments.only,
        skip_cpu: arguments.skip_cpu,
        skip_gpu: arguments.skip_gpu,
        repeats: arguments.repeats,
        command,
    };
    // A reader without any adapter is told what to install, unless they asked for the
    // CPU figures only.
    let context =
        if options.skip_gpu {
            None
        } else {
            Some(GpuContext::shared().map_err(|error| {
                format!("{error}\n(pass --skip-gpu to draw only the CPU figures)")
            })?)
        };
    let sweeps = selected_sweeps(&options, context);
    if sweeps.is_empty() {
        return Err(format!(
            "no figure matches the options (--only {:?}, --skip-cpu {}, --skip-gpu {})",
            options.only, options.skip_cpu, options.skip_gpu
        ));
    }
    if let Some(context) = context {
        eprintln!("GPU adapter: {}", context.describe());
    }
    let settings = SweepSettings::new(&options);
    let started = Instant::now();
    for (sweep, ids) in sweeps {
        let mut bar = Bar::new(&arguments.out, &ids);
        let begun = Instant::now();
        let figures = run_sweep(sweep, &settings, context, &mut bar)
            .map_err(|error| format!("{}: {error}", ids.join(", ")))?;
        bar.finish();
        for figure in figures.iter().filter(|figure| ids.contains(&figure.id)) {
            figure
                .write_csv(&arguments.out)
                .map_err(|error| error.to_string())?;
            let points: usize = figure.series.iter().map(|s| s.points.len()).sum();
            eprintln!(
                "wrote {} ({} series, {points} points)",
                arguments.out.join(format!("{}.csv", figure.id)).display(),
                figure.series.len(),
            );
        }
        eprintln!("  {:?} took {:.0} s", sweep, begun.elapsed().as_secs_f64());
    }
    eprintln!(
        "all sweeps done in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// An indicatif progress bar per figure. indicatif draws nothing when standard error is
/// not a terminal, so logs of remote runs stay clean. It also writes each figure's CSV
/// file as the points come in, so a run that is stopped keeps what it measured.
struct Bar {
    bar: Option<ProgressBar>,
    out: PathBuf,
    ids: Vec<String>,
}

impl Bar {
    fn new(out: &Path, ids: &[String]) -> Bar {
        Bar {
            bar: None,
            out: out.to_path_buf(),
            ids: ids.to_vec(),
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

impl Progress for Bar {
    fn begin(&mut self, figure: &str, points: usize) {
        // Zero points means the sweep does not know in advance: a spinner then.
        let (bar, template) = if points == 0 {
            (
                ProgressBar::new_spinner(),
                "{prefix:>24} [{elapsed_precise}] {spinner} {msg}",
            )
        } else {
            (
                ProgressBar::new(points as u64),
                "{prefix:>24} [{elapsed_precise}] {wide_bar} {pos}/{len} {msg}",
            )
        };
        let style = ProgressStyle::with_template(template).expect("the template is valid");
        bar.set_style(style);
        bar.set_prefix(figure.to_string());
        bar.enable_steady_tick(Duration::from_millis(250));
        self.bar = Some(bar);
    }

    fn advance(&mut self, point: &str) {
        if let Some(bar) = &self.bar {
            bar.set_message(point.to_string());
            bar.inc(1);
        }
    }

    fn partial(&mut self, figure: &Figure) {
        if self.ids.contains(&figure.id)
            && let Err(error) = figure.write_csv(&self.out)
        {
            eprintln!("warning: writing the points so far: {error}");
        }
    }
}
