//! The report's time-breakdown part: one run of every GPU mode split into host phases and
//! GPU time ([`crate::bench::time_breakdown`]), at a few sizes of the standard workload,
//! and the CSV file the book's figure is drawn from.

use std::path::Path;

use crate::bench::hardware::hardware_description;
use crate::bench::repeats::Repeats;
use crate::bench::report::workload::modes;
use crate::bench::report::{Report, ReportOptions, ReportRow};
use crate::bench::sweeps::modes::SEED;
use crate::bench::sweeps::{Progress, SweepError, gpu_suffix};
use crate::bench::time_breakdown::{TimeBreakdown, WARM_UP_RUNS, measure_breakdown};
use crate::figure::{Axis, Figure, Point};
use crate::gpu::probe::HostPhase;
use crate::gpu::{GpuContext, TimestampSupport};
use crate::graph::random_mlp;
use crate::runner::ExecutionMode;

/// The series of the figure besides the host phases.
pub const WALL_SERIES: &str = "wall";
pub const WALL_WITHOUT_PROBE_SERIES: &str = "wall without the probe";
pub const GPU_KERNELS_SERIES: &str = "GPU kernels";
pub const GPU_SUBMISSIONS_SERIES: &str = "GPU first to last command";

/// The GPU modes the breakdown measures: those of the workload part, without the CPU.
pub fn breakdown_modes(options: &ReportOptions, context: &GpuContext) -> Vec<ExecutionMode> {
    modes(options, Some(context))
        .into_iter()
        .filter(|mode| mode.uses_gpu())
        .collect()
}

/// How many measurements the part takes, for the progress bar.
pub fn planned(options: &ReportOptions, context: &GpuContext) -> usize {
    breakdown_modes(options, context).len() * options.breakdown_sizes.len()
}

/// Measures the breakdown of every GPU mode at every breakdown size, adds one row per
/// mode and size, and writes the figure's CSV file when asked.
pub fn time_breakdown(
    options: &ReportOptions,
    context: &GpuContext,
    progress: &mut dyn Progress,
    report: &mut Report,
) -> Result<(), SweepError> {
    let depth = options.depth;
    let modes = breakdown_modes(options, context);
    let support = TimestampSupport::of(context);
    let mut figure = breakdown_figure(options, context);
    for &size in &options.breakdown_sizes {
        let workload = random_mlp(size, depth, SEED)?;
        for &mode in &modes {
            let breakdown = measure_breakdown(mode, &workload, context, options.breakdown_runs)?;
            progress.advance(&format!("breakdown {mode:?}, size {size}"));
            report.rows.push(ReportRow {
                part: "time breakdown",
                name: format!("{mode:?}"),
                size: format!("{size}, depth {depth}"),
                milliseconds: Some(Repeats::new(vec![breakdown.wall * 1e3]).expect("one value")),
                gigaflops_per_second: None,
                compared: breakdown.summary(),
                samples: format!("median of {} runs", options.breakdown_runs.max(1)),
            });
            push_points(&mut figure, size, &breakdown);
        }
    }
    report.notes.push(format!(
        "Time breakdown: one run of each GPU mode on random_mlp(size, {depth}, seed {SEED}), \
         the run with the median wall time of {} after {} warm-up runs. Host phases by the \
         host's clock: encoding (writing the input, binding, recording), submitting \
         (Queue::submit), waiting (Device::poll until the GPU is done), mapping, copying \
         out; they add up to the wall time. By the GPU's clock: {}. The GPU works while the \
         host waits: its times are part of the waiting, not added to it. \"Without the \
         probe\": the median of as many runs without timestamps or phase clocks; the \
         difference is what observing costs.",
        options.breakdown_runs.max(1),
        WARM_UP_RUNS,
        support.describe()
    ));
    if context.adapter_info().device_type == wgpu::DeviceType::Cpu {
        report.notes.push(
            "This adapter is a software rasteriser: its \"GPU\" is the CPU's own threads, so \
             its timestamps tell when those threads reached each command, and the kernels \
             compete with the host for the same cores."
                .to_string(),
        );
    }
    if let Some(directory) = &options.breakdown_csv {
        write_figure(&figure, directory)?;
        report.notes.push(format!(
            "Time breakdown written to {}.",
            directory.join(format!("{}.csv", figure.id)).display()
        ));
    }
    Ok(())
}

/// The figure's id: `time-breakdown-software` on lavapipe, `time-breakdown-gpu` elsewhere.
pub fn figure_id(context: &GpuContext) -> String {
    format!("time-breakdown-{}", gpu_suffix(context))
}

/// An empty figure: time per run against size, one series per mode and part.
fn breakdown_figure(options: &ReportOptions, context: &GpuContext) -> Figure {
    let support = TimestampSupport::of(context);
    Figure {
        id: figure_id(context),
        title: format!(
            "Where one run's time goes, by mode (standard workload, depth {})",
            options.depth
        ),
        x: Axis {
            label: "size (input rows = layer width)".to_string(),
            logarithmic: true,
        },
        y: Axis {
            label: "time per run (ms)".to_string(),
            logarithmic: true,
        },
        hardware: format!(
            "{}; GPU timestamps: {}",
            hardware_description(Some(context)),
            support_words(support)
        ),
        command: format!("{} ({})", options.command, utc_date_today()),
        series: Vec::new(),
    }
}

/// The support in a few words, for the CSV header.
fn support_words(support: TimestampSupport) -> String {
    match support {
        TimestampSupport::EveryDispatch => "every dispatch".to_string(),
        other => format!("missing {}", other.missing_features().join(", ")),
    }
}

/// Series `<mode>: <part>`, in ms: the wall time, each host phase, and the GPU's times.
/// A part that took no measurable time is left out (the axis is logarithmic).
fn push_points(figure: &mut Figure, size: usize, breakdown: &TimeBreakdown) {
    let mode = format!("{:?}", breakdown.mode);
    let mut push = |part: &str, seconds: f64| {
        if seconds > 0.0 {
            let point = Point {
                x: size as f64,
                y: seconds * 1e3,
            };
            figure.push(&format!("{mode}: {part}"), point);
        }
    };
    push(WALL_SERIES, breakdown.wall);
    push(WALL_WITHOUT_PROBE_SERIES, breakdown.wall_without_probe);
    for phase in HostPhase::ALL {
        push(phase.name(), breakdown.host_time(phase));
    }
    if let Some(gpu) = &breakdown.gpu {
        push(GPU_KERNELS_SERIES, gpu.kernels);
        if let Some(submissions) = gpu.submissions {
            push(GPU_SUBMISSIONS_SERIES, submissions);
        }
    }
}

fn write_figure(figure: &Figure, directory: &Path) -> Result<(), SweepError> {
    figure.write_csv(directory).map_err(SweepError::from)
}

/// Today's date in UTC, `YYYY-MM-DD`, from the system clock (days since 1970 to a
/// civil date: Howard Hinnant's algorithm).
fn utc_date_today() -> String {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs());
    let (year, month, day) = civil_date((seconds / 86_400) as i64);
    format!("{year:04}-{month:02}-{day:02}")
}

fn civil_date(days_since_1970: i64) -> (i64, u32, u32) {
    let z = days_since_1970 + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * shifted_month + 2) / 5 + 1) as u32;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::report::{ReportPart, run_report};
    use crate::bench::sweeps::Silent;

    #[test]
    fn dates_are_civil_dates() {
        assert_eq!(civil_date(0), (1970, 1, 1));
        assert_eq!(civil_date(20_416), (2025, 11, 24));
        assert_eq!(civil_date(11_016), (2000, 2, 29));
    }

    #[test]
    fn the_breakdown_part_writes_one_row_per_mode_and_size_and_a_csv_file() {
        let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
        let directory =
            std::env::temp_dir().join(format!("galaxy-breakdown-test-{}", std::process::id()));
        let options = ReportOptions {
            depth: 2,
            samples: 1,
            minimum_sample_seconds: 0.0,
            parts: vec![ReportPart::Breakdown],
            skip_uncached: true,
            breakdown_sizes: vec![4, 8],
            breakdown_runs: 2,
            breakdown_csv: Some(directory.clone()),
            command: "cargo test".to_string(),
            ..ReportOptions::default()
        };
        let report = run_report(&options, Some(context), &mut Silent).unwrap();
        let rows: Vec<&ReportRow> = report
            .rows
            .iter()
            .filter(|row| row.part == "time breakdown")
            .collect();
        let modes = breakdown_modes(&options, context);
        assert_eq!(rows.len(), 2 * modes.len());
        assert!(modes.iter().all(|mode| mode.uses_gpu()));
        for row in &rows {
            assert!(row.compared.contains("waiting"), "{row:?}");
            let gpu_timed = TimestampSupport::of(context) != TimestampSupport::None;
            assert_eq!(row.compared.contains("GPU kernels"), gpu_timed, "{row:?}");
            assert_eq!(
                !row.compared.contains("GPU not timed"),
                gpu_timed,
                "{row:?}"
            );
        }
        let support = TimestampSupport::of(context).describe();
        assert!(report.notes.iter().any(|note| note.contains(&support)));
        let path = directory.join(format!("{}.csv", figure_id(context)));
        let figure = Figure::read_csv(&path).unwrap();
        let wall = format!("{:?}: {WALL_SERIES}", ExecutionMode::GraphCompiled);
        let series = figure
            .series
            .iter()
            .find(|series| series.name == wall)
            .unwrap();
        assert_eq!(series.points.len(), 2);
        assert!(figure.hardware.contains("GPU timestamps"));
        std::fs::remove_dir_all(&directory).unwrap();
    }
}
