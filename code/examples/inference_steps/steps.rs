//! The steps of the ladder and the configurations they are points of: which execution mode,
//! which weights and how many images per call.

use clap::ValueEnum;
use galaxy::cpu::int8::Granularity;
use galaxy::runner::ExecutionMode;
use galaxy::runner::execution::WeightStorage;

// ANCHOR: steps
/// The ladder, in the order the page takes it. Each step changes one thing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Step {
    /// The fp32 graph in the `Cpu` mode (one plain operator call after another, each
    /// allocating its result), one image per call.
    Naive,
    /// The `CpuGraph` mode: weights packed once, bias and ReLU added in the product's
    /// epilogue and the softmax on each finished row, one image per call.
    Packed,
    /// `CpuGraph`, 64 images per call.
    Batch64,
    /// `CpuGraph`, the whole test set in one call.
    BatchAll,
    /// As `batch-all`, with int8 weights (the `quantize` pass, one scale per output).
    Int8,
    /// As `batch-all`, on the pruned network (90 % of the weights zero) with its layers
    /// stored sparse (the `sparsify` pass).
    Sparse,
}
// ANCHOR_END: steps

/// Which weights a step runs, and how they are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Weights {
    Float32,
    Int8,
    PrunedSparse,
}

/// Images per call: a fixed number, or the whole test set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Batch {
    Images(usize),
    WholeTestSet,
}

/// One way of running the network: a point of the figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Configuration {
    pub mode: ExecutionMode,
    pub weights: Weights,
    pub batch: Batch,
}

impl Step {
    pub const ALL: [Step; 6] = [
        Step::Naive,
        Step::Packed,
        Step::Batch64,
        Step::BatchAll,
        Step::Int8,
        Step::Sparse,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Step::Naive => "1. fp32, Cpu mode, 1 image per call",
            Step::Packed => "2. fp32, CpuGraph, 1 image per call",
            Step::Batch64 => "3. fp32, CpuGraph, 64 images per call",
            Step::BatchAll => "4. fp32, CpuGraph, whole test set per call",
            Step::Int8 => "5. int8 weights, whole test set per call",
            Step::Sparse => "6. pruned 90 %, sparse, whole test set per call",
        }
    }

    pub fn configuration(self) -> Configuration {
        let (mode, weights, batch) = match self {
            Step::Naive => (ExecutionMode::Cpu, Weights::Float32, Batch::Images(1)),
            Step::Packed => (ExecutionMode::CpuGraph, Weights::Float32, Batch::Images(1)),
            Step::Batch64 => (ExecutionMode::CpuGraph, Weights::Float32, Batch::Images(64)),
            Step::BatchAll => (
                ExecutionMode::CpuGraph,
                Weights::Float32,
                Batch::WholeTestSet,
            ),
            Step::Int8 => (ExecutionMode::CpuGraph, Weights::Int8, Batch::WholeTestSet),
            Step::Sparse => (
                ExecutionMode::CpuGraph,
                Weights::PrunedSparse,
                Batch::WholeTestSet,
            ),
        };
        Configuration {
            mode,
            weights,
            batch,
        }
    }
}

impl Configuration {
    /// The figure's series: one per mode and weights, its points the batch sizes.
    pub fn series(self) -> &'static str {
        match (self.mode, self.weights) {
            (ExecutionMode::Cpu, _) => "fp32, Cpu mode",
            (ExecutionMode::CpuGraph, Weights::Float32) => "fp32, CpuGraph",
            (ExecutionMode::CpuGraph, Weights::Int8) => "int8, CpuGraph",
            (ExecutionMode::CpuGraph, Weights::PrunedSparse) => "pruned 90 %, sparse, CpuGraph",
            (_, Weights::Float32) => "fp32, GraphCompiled",
            (_, Weights::Int8) => "int8, GraphCompiled",
            (_, Weights::PrunedSparse) => "pruned 90 %, sparse, GraphCompiled",
        }
    }

    pub fn storage(self) -> WeightStorage {
        match self.weights {
            Weights::Float32 => WeightStorage::Float32,
            Weights::Int8 => WeightStorage::Int8(Granularity::PerOutput),
            // Every layer sparse, whatever its density: the pass's default threshold
            // (`SPARSE_DENSITY_THRESHOLD`, 3 %) would keep these 10 % layers dense.
            Weights::PrunedSparse => WeightStorage::Sparse {
                maximum_density: 1.0,
            },
        }
    }
}
