//! The real-time loop of module 5, in each of its four steps: runs the standard workload's
//! graph on a seeded sensor stream at a fixed rate, and reports every frame's latency,
//! the deadline misses and the jitter.
//!
//! ```text
//! cargo run --release --example realtime_loop -- [--step prototype,components,single-threaded,optimised]
//!     [--rate-hz 120] [--seconds 10] [--mode CpuGraph|GraphCompiled|…] [--size 256] [--depth 8]
//!     [--decimation 8] [--latency-frames 2] [--wait sleep|spin] [--miss skip|catch-up]
//!     [--out frames.csv] [--figure DIRECTORY] [--figure-id realtime-latency]
//! ```
//!
//! `--out` writes one row per frame (times in ms from the start of the loop); `--figure`
//! writes `<figure-id>.csv` into DIRECTORY: the latency histogram of each step, in the
//! figure format of `figures/data/`, and `<figure-id>-drift.csv`: the latency of every
//! tenth frame against its number. The summary goes to standard output, with the
//! machine and the GPU adapter named.

use std::fmt::Write as _;
use std::time::Duration;

use clap::Parser;
use galaxy::bench::hardware_description;
use galaxy::figure::{Axis, Figure, Point};
use galaxy::gpu::GpuContext;
use galaxy::realtime::components::{
    ComponentTimes, LoopSettings, StepRun, WorkloadSettings, run_components,
};
use galaxy::realtime::fixed_rate::{FixedRate, MissPolicy, Waiting};
use galaxy::realtime::frame_stats::{FrameRecord, FrameSummary, Histogram, percentile};
use galaxy::realtime::optimised::{WhenBusy, run_optimised};
use galaxy::realtime::prototype::run_prototype;
use galaxy::realtime::single_threaded::run_single_threaded;
use galaxy::runner::ExecutionMode;

#[derive(Parser)]
#[command(about = "Run the real-time loop of module 5 and report its frame times")]
struct Arguments {
    /// The steps to run, one after the other.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "prototype,components,single-threaded,optimised"
    )]
    step: Vec<Step>,
    /// Frames per second.
    #[arg(long, default_value_t = 120.0)]
    rate_hz: f64,
    /// How long each step runs.
    #[arg(long, default_value_t = 10.0)]
    seconds: f64,
    /// The execution mode of the model, by its name in the book (`CpuGraph`,
    /// `GraphCompiled`, …).
    #[arg(long, default_value = "CpuGraph")]
    mode: String,
    /// Channels of the sensor and side of the model's square input.
    #[arg(long, default_value_t = 256)]
    size: usize,
    /// Linear layers of the model.
    #[arg(long, default_value_t = 8)]
    depth: usize,
    /// Raw samples averaged into one model input sample.
    #[arg(long, default_value_t = 8)]
    decimation: usize,
    /// A frame's deadline, in periods after its release.
    #[arg(long, default_value_t = 2)]
    latency_frames: u32,
    /// How the loop of steps 3 and 4 waits for a release: `sleep`, or `spin` (sleep until
    /// 1 ms before, then spin).
    #[arg(long, default_value = "sleep")]
    wait: String,
    /// What the loop of steps 3 and 4 does after a miss: `skip` or `catch-up`.
    #[arg(long, default_value = "skip")]
    miss: String,
    #[arg(long, default_value_t = 20261124)]
    seed: u64,
    /// Write every frame's times to this CSV file.
    #[arg(long)]
    out: Option<std::path::PathBuf>,
    /// Write the latency histograms as a figure's CSV into this directory.
    #[arg(long)]
    figure: Option<std::path::PathBuf>,
    #[arg(long, default_value = "realtime-latency")]
    figure_id: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Step {
    Prototype,
    Components,
    SingleThreaded,
    Optimised,
}

impl Step {
    fn name(self) -> &'static str {
        match self {
            Step::Prototype => "1 prototype",
            Step::Components => "2 components",
            Step::SingleThreaded => "3 single-threaded",
            Step::Optimised => "4 optimised",
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let arguments = Arguments::parse();
    let command = format!(
        "realtime_loop {}",
        std::env::args().skip(1).collect::<Vec<_>>().join(" ")
    );
    let mode = ExecutionMode::ALL
        .into_iter()
        .find(|mode| format!("{mode:?}").eq_ignore_ascii_case(&arguments.mode))
        .ok_or_else(|| format!("`{}` is not an execution mode", arguments.mode))?;
    let rate = FixedRate::hertz(arguments.rate_hz)?;
    let waiting = match arguments.wait.as_str() {
        "sleep" => Waiting::Sleep,
        "spin" => Waiting::SleepThenSpin(Duration::from_millis(1)),
        other => return Err(format!("--wait must be `sleep` or `spin`, not `{other}`").into()),
    };
    let miss_policy = match arguments.miss.as_str() {
        "skip" => MissPolicy::Skip,
        "catch-up" => MissPolicy::CatchUp,
        other => return Err(format!("--miss must be `skip` or `catch-up`, not `{other}`").into()),
    };
    let workload = WorkloadSettings {
        size: arguments.size,
        depth: arguments.depth,
        decimation: arguments.decimation,
        seed: arguments.seed,
        mode,
    };
    let settings = LoopSettings {
        rate,
        frames: rate.frames_in(arguments.seconds),
        miss_policy,
        waiting,
        latency_budget: arguments.latency_frames,
        keep_outputs: false,
    };
    let context = if mode.uses_gpu() {
        Some(GpuContext::shared()?)
    } else {
        None
    };
    let hardware = hardware_description(context);
    let period = rate.period();
    println!("# hardware: {hardware}");
    println!("# command: {command}");
    println!(
        "# {} Hz (period {:.3} ms), deadline {} periods after release, {mode:?}, size {}, \
         depth {}, decimation {}, {} frames per step, wait {}, after a miss {}",
        arguments.rate_hz,
        milliseconds(period),
        arguments.latency_frames,
        arguments.size,
        arguments.depth,
        arguments.decimation,
        settings.frames,
        arguments.wait,
        arguments.miss
    );
    println!(
        "step,released,finished,late,skipped,misses,latency_p50_ms,latency_p99_ms,\
         latency_max_ms,work_p50_ms,work_p99_ms,start_lag_p50_ms,start_lag_p99_ms,\
         start_jitter_ms,achieved_hz"
    );

    let mut frames_csv = format!(
        "# hardware: {hardware}\n# command: {command}\n\
         step,frame,release_ms,start_ms,finish_ms,deadline_ms,latency_ms,work_ms,missed\n"
    );
    let mut figure = Figure {
        id: arguments.figure_id.clone(),
        title: format!(
            "Latency of each frame, {} Hz, {mode:?} {}×{}",
            arguments.rate_hz, arguments.size, arguments.depth
        ),
        x: Axis {
            label: "latency: result ready after the frame's release (ms)".to_string(),
            logarithmic: false,
        },
        y: Axis {
            label: "frames (%)".to_string(),
            logarithmic: false,
        },
        hardware: hardware.clone(),
        command: format!("{command} ({})", today()),
        series: Vec::new(),
    };
    // The same frames against their number: drift shows as a line that climbs.
    let mut drift = Figure {
        id: format!("{}-drift", arguments.figure_id),
        title: format!(
            "Latency against frame number, {} Hz, {mode:?} {}×{}",
            arguments.rate_hz, arguments.size, arguments.depth
        ),
        x: Axis {
            label: "frame number".to_string(),
            logarithmic: false,
        },
        y: Axis {
            label: "latency (ms)".to_string(),
            logarithmic: true,
        },
        ..figure.clone()
    };
    for step in &arguments.step {
        let run = match step {
            Step::Prototype => run_prototype(&workload, &settings)?,
            Step::Components => run_components(&workload, &settings)?,
            Step::SingleThreaded => run_single_threaded(&workload, &settings)?,
            Step::Optimised => run_optimised(&workload, &settings, WhenBusy::Drop)?,
        };
        report(step.name(), &run, period)?;
        for record in &run.records {
            write_frame(&mut frames_csv, step.name(), record);
        }
        add_histogram(&mut figure, step.name(), &run.records, &settings)?;
        // Every tenth finished frame: enough points for the eye, a small file.
        for record in run.records.iter().step_by(10) {
            drift.push(
                step.name(),
                Point {
                    x: record.index as f64,
                    y: (milliseconds(record.latency()) * 1e3).round() / 1e3,
                },
            );
        }
    }
    if let Some(path) = &arguments.out {
        std::fs::write(path, frames_csv)?;
    }
    if let Some(directory) = &arguments.figure {
        figure.write_csv(directory)?;
        drift.write_csv(directory)?;
    }
    Ok(())
}

/// One summary row, and for step 2 the median time of each component.
fn report(name: &str, run: &StepRun, period: Duration) -> Result<(), Box<dyn std::error::Error>> {
    let summary = FrameSummary::new(&run.records, run.skipped)?;
    let (first, last) = (&run.records[0], &run.records[run.records.len() - 1]);
    // The rate the loop really ran at: frames started per second of starting.
    let span = (last.start - first.start).as_secs_f64();
    let achieved = if span > 0.0 {
        (run.records.len() - 1) as f64 / span
    } else {
        0.0
    };
    // How long after its release each frame began: what the waiting strategy decides.
    let lags: Vec<Duration> = run
        .records
        .iter()
        .map(|record| record.start.saturating_sub(record.release))
        .collect();
    println!(
        "{name},{},{},{},{},{},{:.3},{:.3},{:.3},{:.3},{:.3},{:.3},{:.3},{:.3},{achieved:.1}",
        summary.released,
        summary.finished,
        summary.late,
        summary.skipped,
        summary.deadline_misses(),
        milliseconds(summary.latency_p50),
        milliseconds(summary.latency_p99),
        milliseconds(summary.latency_max),
        milliseconds(summary.work_p50),
        milliseconds(summary.work_p99),
        milliseconds(percentile(&lags, 50.0)?),
        milliseconds(percentile(&lags, 99.0)?),
        milliseconds(summary.start_jitter),
    );
    if !run.component_times.is_empty() {
        let median =
            |part: fn(&ComponentTimes) -> Duration| -> Result<f64, Box<dyn std::error::Error>> {
                let times: Vec<Duration> = run.component_times.iter().map(part).collect();
                Ok(milliseconds(percentile(&times, 50.0)?))
            };
        println!(
            "# components, median ms per frame (period {:.3} ms): sensor {:.3}, conditioning {:.3}, \
             model {:.3}, decision {:.3}",
            milliseconds(period),
            median(|times| times.sensor)?,
            median(|times| times.conditioning)?,
            median(|times| times.model)?,
            median(|times| times.decision)?,
        );
    }
    Ok(())
}

fn write_frame(csv: &mut String, step: &str, record: &FrameRecord) {
    let _ = writeln!(
        csv,
        "{step},{},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4},{}",
        record.index,
        milliseconds(record.release),
        milliseconds(record.start),
        milliseconds(record.finish),
        milliseconds(record.deadline),
        milliseconds(record.latency()),
        milliseconds(record.work()),
        u8::from(record.missed())
    );
}

/// The step's latency histogram as one series: bins of a tenth of a period up to one
/// period past the deadline; the last point holds every frame later than that.
fn add_histogram(
    figure: &mut Figure,
    name: &str,
    records: &[FrameRecord],
    settings: &LoopSettings,
) -> Result<(), Box<dyn std::error::Error>> {
    let bin_width = settings.rate.period() / 10;
    let bins = 10 * (settings.latency_budget as usize + 1) + 1;
    let latencies: Vec<Duration> = records.iter().map(FrameRecord::latency).collect();
    let histogram = Histogram::new(&latencies, bin_width, bins)?;
    for (index, count) in histogram.counts.iter().enumerate() {
        figure.push(
            name,
            Point {
                // Rounded to 0.1 µs, far below a bin width, so that the file reads easily.
                x: (milliseconds(histogram.bin_start(index) + bin_width / 2) * 1e4).round() / 1e4,
                y: 100.0 * *count as f64 / records.len() as f64,
            },
        );
    }
    Ok(())
}

fn milliseconds(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

/// Today's date (UTC), for the figure's command line.
fn today() -> String {
    let days = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_secs() / 86_400) as i64;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}
