//! Pipeline parallelism: consecutive stages of the graph on consecutive devices, the rows
//! streaming through them in micro-batches.
//!
//! Each device holds only its stage's weights. A run cuts the input into micro-batches;
//! device 0 runs the first stage on micro-batch 0 and hands the result on, then starts on
//! micro-batch 1 while device 1 runs the second stage on micro-batch 0, and so on: after
//! the pipeline has filled, every device works at once. One host thread drives each
//! device, and a channel carries each stage's results to the next — the producer →
//! worker → consumer pipeline of module 2's channels, with a GPU behind every worker.
//!
//! Two costs are new. The *bubble*: with `p` stages and `m` micro-batches, devices wait
//! while the pipeline fills and drains, a fraction (p − 1)/(m + p − 1) of the run if every
//! stage takes the same time. And the *hand-over*: a stage's result goes back to host
//! memory and up to the next device, since WebGPU cannot copy between devices.

use std::ops::Range;
use std::sync::mpsc;
use std::time::Instant;

use crate::gpu::GpuContext;
use crate::graph::ValidGraph;
use crate::runner::{Execution, ExecutionMode, RunError};
use crate::tensor::Tensor2d;

use super::data_parallel::device_error;
use super::{
    MultiDeviceError, Span, require_gpu_mode, split_into_stages, split_rows, with_input_rows,
};

// ANCHOR: runner
/// A graph cut into one stage per device, each stage prepared for the micro-batch sizes.
pub struct PipelineParallelRunner<'context> {
    input_shape: (usize, usize),
    micro_batches: Vec<Range<usize>>,
    stages: Vec<Stage<'context>>,
    /// The whole result, allocated once: every run writes each micro-batch's rows in place.
    output: Tensor2d,
}

/// One device and its stage, prepared once for every size a micro-batch can have (at
/// most two: micro-batches differ by at most one row), with a host tensor of each size that
/// the first stage copies a micro-batch's rows of the input into.
struct Stage<'context> {
    context: &'context GpuContext,
    prepared: Vec<(usize, Execution<'context>, Tensor2d)>,
}
// ANCHOR_END: runner

/// What travels from one stage's thread to the next: a micro-batch's activations, or the
/// error that stopped an earlier stage.
type Handed = Result<(usize, Tensor2d), MultiDeviceError>;

impl<'context> PipelineParallelRunner<'context> {
    // ANCHOR: prepare
    /// Cuts `graph` into one stage per context ([`split_into_stages`]) and prepares each
    /// stage in `mode` on its device, for `micro_batches` micro-batches of the input's rows.
    pub fn prepare(
        contexts: &[&'context GpuContext],
        graph: &ValidGraph,
        mode: ExecutionMode,
        micro_batches: usize,
    ) -> Result<PipelineParallelRunner<'context>, MultiDeviceError> {
        require_gpu_mode(mode)?;
        if contexts.is_empty() {
            return Err(MultiDeviceError::NoDevices);
        }
        let input_shape = graph.shape(graph.input());
        let rows = input_shape.0;
        if micro_batches == 0 {
            return Err(MultiDeviceError::NoMicroBatches);
        }
        if micro_batches > rows {
            return Err(MultiDeviceError::MoreMicroBatchesThanRows {
                micro_batches,
                rows,
            });
        }
        let micro_batches = split_rows(rows, micro_batches);
        let mut sizes: Vec<usize> = micro_batches.iter().map(Range::len).collect();
        sizes.dedup();
        let stages = split_into_stages(graph, contexts.len())?
            .iter()
            .zip(contexts)
            .enumerate()
            .map(|(device, (stage, &context))| {
                let prepared = sizes
                    .iter()
                    .map(|&size| {
                        let graph = with_input_rows(stage, size)?;
                        let execution = mode
                            .prepare(&graph, Some(context))
                            .map_err(|source| device_error(device, context, source))?;
                        let (_, columns) = graph.shape(graph.input());
                        Ok((size, execution, Tensor2d::zeros(size, columns)))
                    })
                    .collect::<Result<_, MultiDeviceError>>()?;
                Ok(Stage { context, prepared })
            })
            .collect::<Result<_, MultiDeviceError>>()?;
        Ok(PipelineParallelRunner {
            input_shape,
            output: Tensor2d::zeros(rows, graph.shape(graph.result()).1),
            micro_batches,
            stages,
        })
    }
    // ANCHOR_END: prepare

    /// The rows of each micro-batch.
    pub fn micro_batches(&self) -> &[Range<usize>] {
        &self.micro_batches
    }

    /// Fills every buffer the stages write results into with `value` (tests poison them
    /// with NaN, so that an element no kernel wrote cannot pass for a right one).
    pub fn fill_result_buffers(&self, value: f32) {
        for stage in &self.stages {
            for (_, execution, _) in &stage.prepared {
                for buffer in execution.result_buffers() {
                    buffer.fill(stage.context, value);
                }
            }
        }
    }

    /// How many stages the graph was cut into (one per device).
    pub fn stage_count(&self) -> usize {
        self.stages.len()
    }

    /// Runs the graph on `input`, the micro-batches streaming through the stages. The
    /// result stays in the runner until the next run: clone it to keep it longer.
    pub fn run(&mut self, input: &Tensor2d) -> Result<&Tensor2d, MultiDeviceError> {
        self.run_traced(input).map(|(result, _)| result)
    }

    // ANCHOR: run
    /// As [`PipelineParallelRunner::run`], also returning when each device worked on each
    /// micro-batch.
    pub fn run_traced(
        &mut self,
        input: &Tensor2d,
    ) -> Result<(&Tensor2d, Vec<Span>), MultiDeviceError> {
        if input.shape() != self.input_shape {
            return Err(RunError::InputShape {
                expected: self.input_shape,
                given: input.shape(),
            }
            .into());
        }
        let start = Instant::now();
        let micro_batches = &self.micro_batches;
        let columns = self.output.columns();
        let output = self.output.as_mut_slice();
        let (spans, failure) = std::thread::scope(|scope| {
            // The first stage reads its micro-batches straight from the input; every later
            // stage receives them from the stage before, over a channel.
            let mut stages = self.stages.iter_mut().enumerate();
            let (_, first) = stages
                .next()
                .expect("at least one stage: checked when prepared");
            let (sender, mut receiver) = mpsc::channel::<Handed>();
            let mut threads =
                vec![scope.spawn(move || first.feed(input, micro_batches, sender, start))];
            for (device, stage) in stages {
                let (sender, next) = mpsc::channel::<Handed>();
                let incoming = std::mem::replace(&mut receiver, next);
                threads.push(scope.spawn(move || stage.work(device, incoming, sender, start)));
            }
            // The last stage's channel brings the results here, to be copied into their
            // rows of the output as they arrive.
            let mut failure = None;
            for handed in receiver.iter() {
                match handed {
                    Ok((index, part)) => {
                        let rows = &micro_batches[index];
                        output[rows.start * columns..rows.end * columns]
                            .copy_from_slice(part.as_slice());
                    }
                    Err(error) => {
                        failure = Some(error);
                        break;
                    }
                }
            }
            drop(receiver);
            let spans: Vec<Span> = threads
                .into_iter()
                .flat_map(|thread| thread.join().expect("a stage's thread panicked"))
                .collect();
            (spans, failure)
        });
        match failure {
            Some(error) => Err(error),
            None => Ok((&self.output, spans)),
        }
    }
    // ANCHOR_END: run
}

impl Stage<'_> {
    // ANCHOR: stage_work
    /// The first stage's thread: copies each micro-batch's rows of the input into the host
    /// tensor prepared for its size (no allocation per run), runs it and passes the result
    /// on. After an error it passes the error on and stops.
    fn feed(
        &mut self,
        input: &Tensor2d,
        micro_batches: &[Range<usize>],
        outgoing: mpsc::Sender<Handed>,
        start: Instant,
    ) -> Vec<Span> {
        let columns = input.columns();
        let mut spans = Vec::new();
        for (index, rows) in micro_batches.iter().enumerate() {
            let begun = start.elapsed();
            let (_, execution, staging) = self
                .prepared
                .iter_mut()
                .find(|(size, ..)| *size == rows.len())
                .expect("prepared for every micro-batch size");
            staging
                .as_mut_slice()
                .copy_from_slice(&input.as_slice()[rows.start * columns..rows.end * columns]);
            let result = execution
                .run(staging, 1)
                .map(|mut results| (index, results.remove(0)))
                .map_err(|source| device_error(0, self.context, source));
            spans.push(Span {
                device: 0,
                micro_batch: index,
                start: begun,
                end: start.elapsed(),
            });
            let failed = result.is_err();
            // The next stage may have stopped after an error of its own: nothing to do.
            if outgoing.send(result).is_err() || failed {
                break;
            }
        }
        spans
    }

    /// A later stage's thread: runs every micro-batch that arrives, in order, and passes
    /// the result on. After an error it passes the error on and stops, so the run ends with
    /// it.
    fn work(
        &mut self,
        device: usize,
        incoming: mpsc::Receiver<Handed>,
        outgoing: mpsc::Sender<Handed>,
        start: Instant,
    ) -> Vec<Span> {
        let mut spans = Vec::new();
        for handed in incoming {
            let (index, activations) = match handed {
                Ok(pair) => pair,
                Err(error) => {
                    let _ = outgoing.send(Err(error));
                    break;
                }
            };
            let begun = start.elapsed();
            let (_, execution, _) = self
                .prepared
                .iter_mut()
                .find(|(rows, ..)| *rows == activations.rows())
                .expect("prepared for every micro-batch size");
            let result = execution
                .run(&activations, 1)
                .map(|mut results| (index, results.remove(0)))
                .map_err(|source| device_error(device, self.context, source));
            spans.push(Span {
                device,
                micro_batch: index,
                start: begun,
                end: start.elapsed(),
            });
            let failed = result.is_err();
            // The next stage may have stopped after an error of its own: nothing to do.
            if outgoing.send(result).is_err() || failed {
                break;
            }
        }
        spans
    }
    // ANCHOR_END: stage_work
}
