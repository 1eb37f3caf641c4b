//! The figure sweeps: measurements over a range of sizes or depths, each written as one
//! [`Figure`] (and from there as a CSV file that `cargo xtask figures` draws).
//!
//! | figure id | what it shows |
//! |---|---|
//! | `modes-by-size-{software,gpu}` | every [`ExecutionMode`] on the standard workload at depth 64, sizes 4…1024 |
//! | `modes-by-depth-{software,gpu}` | the same at size 256, depths 4…128 |
//! | `linear-kernels-{software,gpu}` | GFLOP/s of the GPU linear kernels, by size |
//! | `reductions-{software,gpu}` | a GPU sum: workgroup-memory tree against subgroup operations, by size |
//! | `gpu-copy-bandwidth-{software,gpu}` | device-to-device copy bandwidth by buffer size, two ways ([`crate::bench::copy_bandwidth`]) |
//! | `cpu-linear` | GFLOP/s of every CPU linear variant and of the `matrixmultiply` crate, by size |
//! | `memory-*` | the memory-hierarchy chapter's six figures ([`crate::memory::sweeps`]) |
//!
//! The GPU figures end in `-software` when the adapter is a software rasteriser (device
//! type `Cpu`, such as lavapipe) and in `-gpu` otherwise. A reader with a real GPU who
//! reruns the sweeps redraws the `-gpu` figures for their machine, and a run on a machine
//! without one writes `-software` files and leaves the book's GPU figures alone.
//!
//! Every time of an execution mode includes everything a user of the mode would wait for:
//! uploads, the dispatches and the readback of the result. The binary `sweep` runs them
//! (`cargo run --release -p galaxy --bin sweep -- --help`).
//!
//! With `repeats` above one, every point of the GPU sweeps and of the mode sweeps is
//! measured that many times, the series of one point taking turns
//! ([`crate::bench::repeats`]); the CSV then gives the median and the range
//! (`series,x,y,y_min,y_max`). The CPU-only figures are measured once.
//!
//! [`ExecutionMode`]: crate::runner::ExecutionMode

pub mod copy_bandwidth;
pub mod cpu_linear;
pub mod linear_kernels;
pub mod modes;
pub mod reductions;
pub mod timing;

pub use timing::{Budget, Measurement, SeriesLimit, measure, measure_timed, median};

use thiserror::Error;

use crate::bench::copy_bandwidth::CopyError;
use crate::bench::figure::{Axis, Figure, FigureError, Point};
pub use crate::bench::glob::glob_matches;
use crate::bench::gpu_peak::PeakError;
use crate::bench::hardware::hardware_description;
use crate::bench::linear_throughput::ThroughputError;
use crate::bench::repeats::{Repeats, interleaved};
use crate::compiler::LinearStrategyError;
use crate::gpu::{GpuContext, GpuError};
use crate::graph::GraphError;
use crate::runner::RunError;
use crate::tensor::ShapeError;

/// Why a sweep could not finish. The causes are boxed: they are large, and a sweep's
/// results should not pay for its errors.
#[derive(Debug, Error)]
pub enum SweepError {
    #[error("{what}: {source}")]
    Run { what: String, source: Box<RunError> },
    #[error("{what}: {source}")]
    Gpu { what: String, source: Box<GpuError> },
    #[error("{what}: {source}")]
    Throughput {
        what: String,
        source: Box<ThroughputError>,
    },
    #[error("{what}: {source}")]
    Strategy {
        what: String,
        source: Box<LinearStrategyError>,
    },
    #[error("measuring the device's fp32 peak: {0}")]
    Peak(Box<PeakError>),
    #[error("{what}: {source}")]
    Copy {
        what: String,
        source: Box<CopyError>,
    },
    #[error(transparent)]
    Graph(Box<GraphError>),
    #[error(transparent)]
    Shape(Box<ShapeError>),
    #[error(transparent)]
    Figure(Box<FigureError>),
    /// A result that is NaN or infinite comes from a broken kernel or workload; timing
    /// it would measure a bug.
    #[error("{what} returned a value that is not finite: a bug, not a measurement")]
    NotFinite { what: String },
    /// The result differs from the CPU reference.
    #[error("{what} differs from the CPU reference: {details}")]
    WrongResult { what: String, details: String },
}

impl From<GraphError> for SweepError {
    fn from(error: GraphError) -> Self {
        SweepError::Graph(Box::new(error))
    }
}

impl From<ShapeError> for SweepError {
    fn from(error: ShapeError) -> Self {
        SweepError::Shape(Box::new(error))
    }
}

impl From<FigureError> for SweepError {
    fn from(error: FigureError) -> Self {
        SweepError::Figure(Box::new(error))
    }
}

/// What to run and how long to spend on it.
#[derive(Debug, Clone)]
pub struct SweepOptions {
    /// The book's figures (budget [`Budget::FULL`]) rather than a quick look
    /// ([`Budget::QUICK`]).
    pub full: bool,
    /// Glob patterns (`*`, `?`) on figure ids; empty means every figure.
    pub only: Vec<String>,
    /// Leave out the figures that measure only the CPU.
    pub skip_cpu: bool,
    /// Leave out the figures that need a GPU adapter.
    pub skip_gpu: bool,
    /// How many times each point of the GPU and mode sweeps is measured (at least 1).
    pub repeats: usize,
    /// The command line recorded in each CSV file.
    pub command: String,
}

impl SweepOptions {
    pub fn budget(&self) -> Budget {
        if self.full {
            Budget::FULL
        } else {
            Budget::QUICK
        }
    }
}

// ANCHOR: sweep_list
/// One sweep. Each writes one figure, except `Memory`, which writes the six figures of
/// the memory-hierarchy chapter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sweep {
    ModesBySize,
    ModesByDepth,
    LinearKernels,
    Reductions,
    CopyBandwidth,
    CpuLinear,
    Memory,
}

impl Sweep {
    pub const ALL: [Sweep; 7] = [
        Sweep::Memory,
        Sweep::CpuLinear,
        Sweep::CopyBandwidth,
        Sweep::LinearKernels,
        Sweep::Reductions,
        Sweep::ModesByDepth,
        Sweep::ModesBySize,
    ];

    /// Whether the sweep runs anything on the GPU (its id then carries the suffix).
    pub fn needs_gpu(self) -> bool {
        !matches!(self, Sweep::CpuLinear | Sweep::Memory)
    }

    /// The ids of the figures the sweep writes, with the GPU suffix where the sweep uses
    /// the GPU.
    pub fn figure_ids(self, gpu_suffix: &str) -> Vec<String> {
        let stem = match self {
            Sweep::ModesBySize => "modes-by-size",
            Sweep::ModesByDepth => "modes-by-depth",
            Sweep::LinearKernels => "linear-kernels",
            Sweep::Reductions => "reductions",
            Sweep::CopyBandwidth => "gpu-copy-bandwidth",
            Sweep::CpuLinear => return vec!["cpu-linear".to_string()],
            Sweep::Memory => {
                return crate::memory::sweeps::FIGURE_IDS
                    .iter()
                    .map(|id| id.to_string())
                    .collect();
            }
        };
        vec![format!("{stem}-{gpu_suffix}")]
    }
}
// ANCHOR_END: sweep_list

/// `software` for a software rasteriser such as lavapipe, `gpu` for any other adapter.
pub fn gpu_suffix(context: &GpuContext) -> &'static str {
    if context.adapter_info().device_type == wgpu::DeviceType::Cpu {
        "software"
    } else {
        "gpu"
    }
}

/// The sweeps the options select, with the ids of their selected figures. GPU sweeps
/// need `context`; with none they are left out (the caller decides whether that is an
/// error). The memory sweeps always measure all six figures; `--only` then chooses which
/// are kept.
pub fn selected_sweeps(
    options: &SweepOptions,
    context: Option<&GpuContext>,
) -> Vec<(Sweep, Vec<String>)> {
    Sweep::ALL
        .into_iter()
        .filter(|sweep| {
            if sweep.needs_gpu() {
                !options.skip_gpu && context.is_some()
            } else {
                !options.skip_cpu
            }
        })
        .map(|sweep| {
            let suffix = context.map_or("gpu", gpu_suffix);
            let ids = sweep.figure_ids(suffix);
            (
                sweep,
                ids.into_iter()
                    .filter(|id| selected(&options.only, id))
                    .collect(),
            )
        })
        .filter(|(_, ids): &(Sweep, Vec<String>)| !ids.is_empty())
        .collect()
}

/// Whether `id` matches one of `patterns` (or there are none).
pub fn selected(patterns: &[String], id: &str) -> bool {
    patterns.is_empty() || patterns.iter().any(|pattern| glob_matches(pattern, id))
}

/// Reports how far a sweep has got (the `sweep` binary draws a progress bar from it).
pub trait Progress {
    /// A figure begins; `points` measurements are planned (some may be skipped by the
    /// budget, and still count as done; 0 means unknown).
    fn begin(&mut self, figure: &str, points: usize);
    /// One planned point is done; `point` names it.
    fn advance(&mut self, point: &str);
    /// The figure as measured so far, after each x value of the sweeps that use the GPU:
    /// the `sweep` binary writes it out, so that a run stopped early keeps what it measured.
    fn partial(&mut self, _figure: &Figure) {}
}

/// Progress that goes nowhere, for tests.
pub struct Silent;

impl Progress for Silent {
    fn begin(&mut self, _figure: &str, _points: usize) {}
    fn advance(&mut self, _point: &str) {}
}

/// What every sweep needs to know besides its own parameters.
#[derive(Debug, Clone)]
pub struct SweepSettings {
    pub budget: Budget,
    /// How many times each point is measured (the CPU-only sweeps ignore it).
    pub repeats: usize,
    pub command: String,
    /// The book's figures rather than a quick look (the memory sweeps have their own
    /// budgets and only need to know which).
    pub full: bool,
}

impl SweepSettings {
    pub fn new(options: &SweepOptions) -> SweepSettings {
        SweepSettings {
            budget: options.budget(),
            repeats: options.repeats.max(1),
            command: options.command.clone(),
            full: options.full,
        }
    }

    /// One sample per point and no budget worth speaking of: for tests that check a sweep
    /// measures every series, not how fast anything is.
    #[cfg(test)]
    pub(crate) fn single_sample_for_tests() -> SweepSettings {
        SweepSettings {
            budget: Budget {
                seconds_per_run: 60.0,
                seconds_per_point: 0.0,
                minimum_sample_seconds: 0.0,
                minimum_samples: 1,
                maximum_samples: 1,
            },
            repeats: 1,
            command: "cargo test".to_string(),
            full: false,
        }
    }

    /// An empty figure with its labels, naming the hardware of this machine.
    pub fn figure(
        &self,
        id: String,
        title: &str,
        x: (&str, bool),
        y: (&str, bool),
        context: Option<&GpuContext>,
    ) -> Figure {
        let axis = |(label, logarithmic): (&str, bool)| Axis {
            label: label.to_string(),
            logarithmic,
        };
        Figure {
            id,
            title: title.to_string(),
            x: axis(x),
            y: axis(y),
            hardware: hardware_description(context),
            command: self.command.clone(),
            series: Vec::new(),
        }
    }
}

/// Runs one sweep with its standard parameters and returns its figures.
pub fn run_sweep(
    sweep: Sweep,
    settings: &SweepSettings,
    context: Option<&GpuContext>,
    progress: &mut dyn Progress,
) -> Result<Vec<Figure>, SweepError> {
    let gpu = || context.expect("selected_sweeps only selects GPU sweeps with a context");
    let suffix = context.map_or("gpu", gpu_suffix);
    let id = sweep.figure_ids(suffix).remove(0);
    let figure = match sweep {
        Sweep::ModesBySize => modes::modes_by_size(
            id,
            &modes::SIZES,
            modes::SIZE_SWEEP_DEPTH,
            settings,
            gpu(),
            progress,
        ),
        Sweep::ModesByDepth => modes::modes_by_depth(
            id,
            modes::DEPTH_SWEEP_SIZE,
            &modes::DEPTHS,
            settings,
            gpu(),
            progress,
        ),
        Sweep::LinearKernels => {
            linear_kernels::sweep(id, &linear_kernels::SIZES, settings, gpu(), progress)
        }
        Sweep::Reductions => {
            reductions::sweep(id, &reductions::ELEMENTS, settings, gpu(), progress)
        }
        Sweep::CopyBandwidth => copy_bandwidth::sweep(
            id,
            &crate::bench::copy_bandwidth::SIZES,
            settings,
            gpu(),
            progress,
        ),
        Sweep::CpuLinear => cpu_linear::sweep(id, &cpu_linear::SIZES, settings, progress),
        Sweep::Memory => return Ok(memory_figures(settings, progress)),
    }?;
    Ok(vec![figure])
}

/// The memory-hierarchy chapter's figures, with this machine's CPU and the command
/// filled in.
fn memory_figures(settings: &SweepSettings, progress: &mut dyn Progress) -> Vec<Figure> {
    progress.begin("memory-*", 0);
    // The memory sweeps report through a `&dyn Fn`; the cell lets it reach `progress`.
    let progress = std::cell::RefCell::new(progress);
    let report = |point: &str| progress.borrow_mut().advance(point);
    let mut figures = crate::memory::sweeps::figures(!settings.full, &report);
    let hardware = hardware_description(None);
    for figure in &mut figures {
        figure.hardware = hardware.clone();
        figure.command = settings.command.clone();
    }
    figures
}

// ANCHOR: measure_point
/// Measures one point of every series `wanted` selects, `settings.repeats` times, the
/// series taking turns, each repeat with its share of the point's time budget. A series
/// whose run went over the budget is measured once. Each series' limit records the
/// median of its repeats. Returns every series' measurements (none where not wanted).
pub(crate) fn measure_point<E>(
    settings: &SweepSettings,
    limits: &mut [SeriesLimit],
    wanted: &[bool],
    mut measure_one: impl FnMut(usize, &Budget) -> Result<Measurement, E>,
) -> Result<Vec<Vec<Measurement>>, E> {
    let budget = settings.budget.per_repeat(settings.repeats);
    let measured = interleaved(limits.len(), settings.repeats, |series, earlier| {
        let over_budget = earlier.iter().any(|m: &Measurement| m.over_budget);
        if !wanted[series] || over_budget {
            return Ok(None);
        }
        measure_one(series, &budget).map(Some)
    })?;
    for (limit, measurements) in limits.iter_mut().zip(&measured) {
        if let Some(seconds) =
            Repeats::new(measurements.iter().map(|m| m.seconds_per_run).collect())
        {
            limit.record(&Measurement {
                seconds_per_run: seconds.median(),
                over_budget: measurements.iter().any(|m| m.over_budget),
                samples: measurements.iter().map(|m| m.samples).sum(),
                runs_per_sample: measurements[0].runs_per_sample,
            });
        }
    }
    Ok(measured)
}
// ANCHOR_END: measure_point

/// Adds the point `x` to `series`: the median of `values`, with their range when there is
/// more than one. Nothing is added for no values.
pub(crate) fn push_repeats(figure: &mut Figure, series: &str, x: f64, values: Vec<f64>) {
    let Some(repeats) = Repeats::new(values) else {
        return;
    };
    let point = Point {
        x,
        y: repeats.median(),
    };
    match repeats.spread() {
        Some(spread) => figure.push_with_spread(series, point, spread),
        None => figure.push(series, point),
    }
}

/// Milliseconds, the unit the time figures use.
pub(crate) fn milliseconds(seconds: f64) -> f64 {
    seconds * 1e3
}

/// GFLOP/s of an `m×k` by `k×n` product (`2·m·k·n` floating-point operations).
pub fn gigaflops_per_second(rows: usize, inner: usize, columns: usize, seconds: f64) -> f64 {
    2.0 * rows as f64 * inner as f64 * columns as f64 / seconds / 1e9
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_figures_have_no_suffix_and_gpu_figures_do() {
        assert_eq!(Sweep::CpuLinear.figure_ids("software"), ["cpu-linear"]);
        assert_eq!(
            Sweep::ModesBySize.figure_ids("software"),
            ["modes-by-size-software"]
        );
        assert_eq!(Sweep::Reductions.figure_ids("gpu"), ["reductions-gpu"]);
        assert_eq!(Sweep::Memory.figure_ids("gpu").len(), 6);
        assert_eq!(
            Sweep::CopyBandwidth.figure_ids("gpu"),
            ["gpu-copy-bandwidth-gpu"]
        );
    }

    #[test]
    fn options_select_sweeps() {
        let options = SweepOptions {
            full: false,
            only: vec!["modes-*".to_string(), "cpu-linear".to_string()],
            skip_cpu: false,
            skip_gpu: false,
            repeats: 1,
            command: "test".to_string(),
        };
        // Without a context only the CPU figures can run.
        let ids: Vec<Vec<String>> = selected_sweeps(&options, None)
            .into_iter()
            .map(|(_, ids)| ids)
            .collect();
        assert_eq!(ids, [["cpu-linear"]]);
        let memory = SweepOptions {
            only: vec!["memory-trans*".to_string()],
            ..options.clone()
        };
        assert_eq!(
            selected_sweeps(&memory, None),
            [(Sweep::Memory, vec!["memory-transpose".to_string()])]
        );
        let skip_cpu = SweepOptions {
            skip_cpu: true,
            ..options
        };
        assert!(selected_sweeps(&skip_cpu, None).is_empty());
    }
}
