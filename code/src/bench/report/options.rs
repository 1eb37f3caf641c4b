//! What the report measures: its parts, the sizes of its comparisons, and every other
//! option of the `bench_report` binary, with the defaults the book's numbers use.

use std::path::PathBuf;

use crate::bench::sweeps::Budget;
use crate::runner::ExecutionMode;

/// The parts of the report, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReportPart {
    Workload,
    Comparisons,
    CompileTime,
    GpuLinear,
    CpuLinear,
    /// Where one run's time goes, mode by mode (`time_breakdown`).
    Breakdown,
}

impl ReportPart {
    pub const ALL: [ReportPart; 6] = [
        ReportPart::Workload,
        ReportPart::Comparisons,
        ReportPart::CompileTime,
        ReportPart::GpuLinear,
        ReportPart::CpuLinear,
        ReportPart::Breakdown,
    ];

    /// The name on the command line (`--parts workload,comparisons`).
    pub fn name(self) -> &'static str {
        match self {
            ReportPart::Workload => "workload",
            ReportPart::Comparisons => "comparisons",
            ReportPart::CompileTime => "compile-time",
            ReportPart::GpuLinear => "gpu-linear",
            ReportPart::CpuLinear => "cpu-linear",
            ReportPart::Breakdown => "breakdown",
        }
    }

    pub fn from_name(name: &str) -> Option<ReportPart> {
        ReportPart::ALL.into_iter().find(|part| part.name() == name)
    }
}

/// The sizes the comparisons run at (the depth is the report's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComparisonSizes {
    /// Loop pairs, round trips and compute passes.
    pub pairs: Vec<usize>,
    /// The compiled mode with and without buffer reuse.
    pub buffer_reuse: Vec<usize>,
    /// The edge of the square tensor of ReLU against in-place ReLU.
    pub relu: usize,
    /// `CpuGraph` against `GraphCompiled`.
    pub crossover: Vec<usize>,
}

impl Default for ComparisonSizes {
    fn default() -> Self {
        ComparisonSizes {
            pairs: vec![64, 256],
            buffer_reuse: vec![256, 1024],
            relu: 1024,
            crossover: vec![16, 32, 64, 128, 256],
        }
    }
}

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
    /// How many times each measurement is repeated, interleaved with the others of its
    /// comparison (at least 1).
    pub repeats: usize,
    /// The parts to measure.
    pub parts: Vec<ReportPart>,
    /// Leave out the modes that compile their shaders on every run.
    pub skip_uncached: bool,
    /// Leave out everything that runs on the CPU: the CPU modes of the standard workload
    /// (`Cpu`, `CpuGraph`), the CPU side of the CPU-against-GPU comparison, and the CPU
    /// linear variants.
    pub skip_cpu: bool,
    /// Matrix sizes of the GPU linear kernels (none: neither they nor the peak are measured).
    pub gpu_linear_sizes: Vec<usize>,
    /// Matrix size of the CPU linear variants.
    pub cpu_linear_size: usize,
    pub comparison_sizes: ComparisonSizes,
    /// Compilations timed per kernel and kind of source.
    pub compile_iterations: usize,
    /// Sizes of the standard workload the time breakdown splits a run of.
    pub breakdown_sizes: Vec<usize>,
    /// Runs probed per mode and size; the breakdown shown is the median one's.
    pub breakdown_runs: usize,
    /// Where to write the breakdown's CSV file (`time-breakdown-<gpu|software>.csv`).
    pub breakdown_csv: Option<PathBuf>,
    /// A directory holding the CPU anchors' CSV files (`anchors/onnx/cpu_anchor.py`):
    /// their rows join the CPU part.
    pub cpu_anchors: Option<PathBuf>,
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
            repeats: 1,
            parts: ReportPart::ALL.to_vec(),
            skip_uncached: false,
            skip_cpu: false,
            gpu_linear_sizes: vec![1024, 2048, 4096],
            cpu_linear_size: 1024,
            comparison_sizes: ComparisonSizes::default(),
            compile_iterations: 20,
            breakdown_sizes: vec![4, 64, 256],
            breakdown_runs: 5,
            breakdown_csv: None,
            cpu_anchors: None,
            command: String::new(),
        }
    }
}

impl ReportOptions {
    pub fn includes(&self, part: ReportPart) -> bool {
        self.parts.contains(&part)
    }

    /// The CPU-against-GPU sizes to measure: none with `skip_cpu`.
    pub fn crossover_sizes(&self) -> &[usize] {
        if self.skip_cpu {
            &[]
        } else {
            &self.comparison_sizes.crossover
        }
    }

    /// Every measurement takes exactly `samples` samples, however long a run takes.
    pub fn budget(&self) -> Budget {
        Budget {
            seconds_per_run: f64::INFINITY,
            seconds_per_point: 0.0,
            minimum_sample_seconds: self.minimum_sample_seconds,
            minimum_samples: self.samples.max(1),
            maximum_samples: self.samples.max(1),
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
