//! One graph on several GPUs: the crate's counterpart of data-distributed and
//! model-distributed parallelism.
//!
//! Every operator of a graph treats the rows of its input independently, so a graph can be
//! spread over several devices in two ways:
//!
//! - **data parallelism** ([`data_parallel`]): every device holds all the weights and runs
//!   the whole graph on its own share of the rows;
//! - **pipeline parallelism** ([`pipeline_parallel`]): the graph is cut into consecutive
//!   stages ([`stages`]), each device runs one stage, and the rows go through the stages in
//!   *micro-batches*, so that while device 1 works on the first micro-batch device 0 already
//!   works on the second.
//!
//! WebGPU has no copy from one device's memory into another's, so whatever a device hands
//! on goes through host memory: read back from one, written to the next. [`hand_over`]
//! measures what that costs, and it is what decides when pipeline parallelism pays.
//!
//! Read the files in this order: this one (errors, the same graph for a
//! different number of rows, the timeline a run records), `data_parallel`, `stages`,
//! `pipeline_parallel`, `hand_over`.

pub mod data_parallel;
pub mod hand_over;
pub mod pipeline_parallel;
pub mod stages;

pub use data_parallel::DataParallelRunner;
pub use hand_over::{HandOverTimes, hand_over, measure_hand_over};
pub use pipeline_parallel::PipelineParallelRunner;
pub use stages::{cut_points, split_into_stages};

use std::time::Duration;

use thiserror::Error;

use crate::graph::{Operator, ValidGraph};
use crate::runner::{ExecutionMode, RunError};

// ANCHOR: error
/// Why a graph could not be spread over several devices, or a run failed.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum MultiDeviceError {
    #[error("a multi-device runner needs at least one GPU context, and none was given")]
    NoDevices,
    #[error(
        "{devices} devices cannot share an input of {rows} rows: every device needs at least one row"
    )]
    MoreDevicesThanRows { devices: usize, rows: usize },
    #[error(
        "the {mode} mode runs on the CPU; a multi-device runner needs a GPU mode such as GraphCompiled"
    )]
    NotAGpuMode { mode: &'static str },
    #[error("pipeline parallelism needs at least one micro-batch")]
    NoMicroBatches,
    #[error(
        "{micro_batches} micro-batches cannot be cut from {rows} rows: every micro-batch needs at least one row"
    )]
    MoreMicroBatchesThanRows { micro_batches: usize, rows: usize },
    #[error(
        "the graph can be cut into at most {possible} consecutive stages (a cut must leave exactly one tensor crossing it), but {requested} devices were given"
    )]
    TooFewCuts { requested: usize, possible: usize },
    #[error(
        "the graph cannot be split by rows: its input has {original} rows, and with {rows} rows it is no longer valid ({reason})"
    )]
    RowsNotIndependent {
        original: usize,
        rows: usize,
        reason: String,
    },
    #[error("device {device} ({adapter}): {source}")]
    Device {
        device: usize,
        adapter: String,
        /// Boxed: a run error is large beside the other variants.
        source: Box<RunError>,
    },
    #[error(transparent)]
    Run(#[from] RunError),
}
// ANCHOR_END: error

// ANCHOR: with_input_rows
/// The same graph for an input of `rows` rows. Every operator treats rows independently
/// (a linear layer multiplies each row by the weights, softmax normalises each row), so
/// changing the number of rows changes nothing else — unless the graph mixes its input
/// with a constant of the input's shape, which validation then rejects.
pub fn with_input_rows(graph: &ValidGraph, rows: usize) -> Result<ValidGraph, MultiDeviceError> {
    let input = graph.input();
    let (original, columns) = graph.shape(input);
    let mut changed = graph.graph().clone();
    changed.nodes[input.0].operator = Operator::Input { rows, columns };
    changed
        .validate()
        .map_err(|error| MultiDeviceError::RowsNotIndependent {
            original,
            rows,
            reason: error.to_string(),
        })
}
// ANCHOR_END: with_input_rows

/// Refuses the CPU modes: the runners here place work on GPU devices.
pub fn require_gpu_mode(mode: ExecutionMode) -> Result<(), MultiDeviceError> {
    if mode.uses_gpu() {
        Ok(())
    } else {
        Err(MultiDeviceError::NotAGpuMode { mode: mode.name() })
    }
}

// ANCHOR: span
/// One piece of work of a run, for the timeline: which device did it, on which
/// micro-batch (0 for data parallelism), and when it started and ended, counted from the
/// start of the run. A piece includes the upload of its rows and the readback of its
/// result: everything the device's thread waited for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Span {
    pub device: usize,
    pub micro_batch: usize,
    pub start: Duration,
    pub end: Duration,
}
// ANCHOR_END: span

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{GraphBuilder, random_mlp};
    use crate::tensor::Tensor2d;

    #[test]
    fn the_standard_workload_runs_on_any_number_of_rows() {
        let workload = random_mlp(8, 3, 1).unwrap();
        let smaller = with_input_rows(&workload.graph, 3).unwrap();
        assert_eq!(smaller.shape(smaller.input()), (3, 8));
        assert_eq!(smaller.shape(smaller.result()), (3, 8));
    }

    #[test]
    fn a_graph_that_adds_a_constant_of_the_inputs_shape_cannot_be_split_by_rows() {
        let mut builder = GraphBuilder::new();
        let input = builder.input(4, 2);
        let constant = builder.constant(Tensor2d::filled(4, 2, 1.0));
        let sum = builder.add(input, constant);
        builder.output(sum);
        let graph = builder.build().unwrap();
        let error = with_input_rows(&graph, 2).unwrap_err();
        assert!(matches!(
            error,
            MultiDeviceError::RowsNotIndependent {
                original: 4,
                rows: 2,
                ..
            }
        ));
        assert!(
            error.to_string().contains("cannot be split by rows"),
            "{error}"
        );
    }
}
