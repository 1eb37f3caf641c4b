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

use crate::parallel::multi_device::data_parallel::device_error;
use crate::parallel::multi_device::{
    MultiDeviceError, Span, require_gpu_mode, split_into_stages, with_input_rows,
};
use crate::parallel::threads::chunk_ranges;

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
/// the first stage copies a micro-batch's rows of the input into, and (for every stage but
/// the last) one host tensor per micro-batch that its result is read back into and handed
/// on from. Nothing is allocated per run.
struct Stage<'context> {
    context: &'context GpuContext,
    prepared: Vec<(usize, Execution<'context>, Tensor2d)>,
    results: Vec<Tensor2d>,
}

/// Where a stage puts a micro-batch's result: into its own tensor, to hand on to the next
/// stage, or (the last stage) straight into the micro-batch's rows of the output.
enum Destination<'run> {
    HandedOn(&'run mut Tensor2d),
    Output(&'run mut [f32]),
}
// ANCHOR_END: runner

/// What travels from one stage's thread to the next: which micro-batch, and the stage's
/// result for it (a tensor the sending stage owns and does not touch again during the run).
/// A stage that fails stops and drops both ends of its channels: the stages after it stop
/// when nothing more arrives, the stages before it at their next hand-over, and the run
/// returns the first error in pipeline order.
type Handed<'run> = (usize, &'run Tensor2d);

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
        let micro_batches =
            chunk_ranges(rows, micro_batches).map_err(|_| MultiDeviceError::NoMicroBatches)?;
        let mut sizes: Vec<usize> = micro_batches.iter().map(Range::len).collect();
        sizes.dedup();
        let stage_graphs = split_into_stages(graph, contexts.len())?;
        let last = stage_graphs.len() - 1;
        let stages = stage_graphs
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
                let columns = stage.shape(stage.result()).1;
                let results = if device == last {
                    Vec::new()
                } else {
                    micro_batches
                        .iter()
                        .map(|rows| Tensor2d::zeros(rows.len(), columns))
                        .collect()
                };
                Ok(Stage {
                    context,
                    prepared,
                    results,
                })
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
        // The last stage writes each micro-batch straight into its rows of the output.
        let mut unclaimed = self.output.as_mut_slice();
        let mut output_rows = Vec::with_capacity(micro_batches.len());
        for rows in micro_batches {
            let (mine, rest) = std::mem::take(&mut unclaimed).split_at_mut(rows.len() * columns);
            unclaimed = rest;
            output_rows.push(mine);
        }
        let outcome = std::thread::scope(|scope| {
            let count = self.stages.len();
            let mut threads = Vec::with_capacity(count);
            let mut receiver: Option<mpsc::Receiver<Handed>> = None;
            let mut output_rows = Some(output_rows);
            for (device, stage) in self.stages.iter_mut().enumerate() {
                let destinations: Vec<Destination> = if device + 1 == count {
                    let rows = output_rows.take().expect("one last stage");
                    rows.into_iter().map(Destination::Output).collect()
                } else {
                    stage
                        .results
                        .iter_mut()
                        .map(Destination::HandedOn)
                        .collect()
                };
                let (sender, next) = mpsc::channel::<Handed>();
                let sender = (device + 1 < count).then_some(sender);
                let incoming = receiver.replace(next);
                let prepared = &mut stage.prepared;
                let context = stage.context;
                threads.push(scope.spawn(move || {
                    let work = StageWork {
                        device,
                        context,
                        prepared,
                        start,
                    };
                    match incoming {
                        // The first stage reads its micro-batches straight from the input.
                        None => work.feed(input, micro_batches, destinations, sender),
                        Some(incoming) => work.pass_on(incoming, destinations, sender),
                    }
                }));
            }
            let mut spans = Vec::new();
            let mut failure = None;
            for thread in threads {
                let (mut stage_spans, error) = thread.join().expect("a stage's thread panicked");
                spans.append(&mut stage_spans);
                // The first error in pipeline order is the one that stopped the run.
                failure = failure.or(error);
            }
            (spans, failure)
        });
        match outcome {
            (_, Some(error)) => Err(error),
            (spans, None) => Ok((&self.output, spans)),
        }
    }
    // ANCHOR_END: run
}

/// What one stage's thread works with during a run.
struct StageWork<'run, 'context> {
    device: usize,
    context: &'context GpuContext,
    prepared: &'run mut Vec<(usize, Execution<'context>, Tensor2d)>,
    start: Instant,
}

impl<'run> StageWork<'run, '_> {
    // ANCHOR: stage_work
    /// The first stage: copies each micro-batch's rows of the input into the host tensor
    /// prepared for its size, runs it, and hands the result on.
    fn feed(
        self,
        input: &Tensor2d,
        micro_batches: &[Range<usize>],
        destinations: Vec<Destination<'run>>,
        outgoing: Option<mpsc::Sender<Handed<'run>>>,
    ) -> (Vec<Span>, Option<MultiDeviceError>) {
        let columns = input.columns();
        let mut spans = Vec::new();
        for ((index, rows), destination) in micro_batches.iter().enumerate().zip(destinations) {
            let begun = self.start.elapsed();
            let (_, execution, staging) = prepared_for(self.prepared, rows.len());
            staging
                .as_mut_slice()
                .copy_from_slice(&input.as_slice()[rows.start * columns..rows.end * columns]);
            let outcome = run_into_destination(execution, staging, destination);
            // The span ends before the hand-over, so that the next stage starts after it.
            spans.push(self.span(index, begun));
            match outcome {
                Ok(result) => {
                    if !hand_on(&outgoing, index, result) {
                        break;
                    }
                }
                Err(source) => {
                    return (spans, Some(device_error(self.device, self.context, source)));
                }
            }
        }
        (spans, None)
    }

    /// A later stage: runs every micro-batch that arrives, in order, and hands the result
    /// on (the last stage leaves it in the output). It stops after an error of its own,
    /// when the stage before it stops sending, or when the stage after it has stopped.
    fn pass_on(
        self,
        incoming: mpsc::Receiver<Handed<'run>>,
        destinations: Vec<Destination<'run>>,
        outgoing: Option<mpsc::Sender<Handed<'run>>>,
    ) -> (Vec<Span>, Option<MultiDeviceError>) {
        let mut spans = Vec::new();
        for ((index, activations), destination) in incoming.iter().zip(destinations) {
            let begun = self.start.elapsed();
            let (_, execution, _) = prepared_for(self.prepared, activations.rows());
            let outcome = run_into_destination(execution, activations, destination);
            // The span ends before the hand-over, so that the next stage starts after it.
            spans.push(self.span(index, begun));
            match outcome {
                Ok(result) => {
                    if !hand_on(&outgoing, index, result) {
                        break;
                    }
                }
                Err(source) => {
                    return (spans, Some(device_error(self.device, self.context, source)));
                }
            }
        }
        (spans, None)
    }
    // ANCHOR_END: stage_work

    fn span(&self, micro_batch: usize, begun: std::time::Duration) -> Span {
        Span {
            device: self.device,
            micro_batch,
            start: begun,
            end: self.start.elapsed(),
        }
    }
}

/// The execution and input tensor prepared for micro-batches of `rows` rows.
fn prepared_for<'a, 'context>(
    prepared: &'a mut [(usize, Execution<'context>, Tensor2d)],
    rows: usize,
) -> &'a mut (usize, Execution<'context>, Tensor2d) {
    prepared
        .iter_mut()
        .find(|(size, ..)| *size == rows)
        .expect("prepared for every micro-batch size")
}

/// Runs one micro-batch, reading the result back into `destination`; returns the result
/// when it is to be handed on.
fn run_into_destination<'run>(
    execution: &mut Execution<'_>,
    input: &Tensor2d,
    destination: Destination<'run>,
) -> Result<Option<&'run Tensor2d>, RunError> {
    match destination {
        Destination::Output(rows) => execution.run_into(input, rows).map(|()| None),
        Destination::HandedOn(tensor) => {
            execution.run_into(input, tensor.as_mut_slice())?;
            // From here on the tensor is only read, by the next stage.
            Ok(Some(tensor))
        }
    }
}

/// Hands a micro-batch's result to the next stage. Returns `false` when the next stage has
/// stopped (after an error of its own it closes its end of the channel): the run is failing,
/// so this stage stops too rather than compute what nobody will read.
fn hand_on<'run>(
    outgoing: &Option<mpsc::Sender<Handed<'run>>>,
    index: usize,
    result: Option<&'run Tensor2d>,
) -> bool {
    match (outgoing, result) {
        (Some(sender), Some(result)) => sender.send((index, result)).is_ok(),
        _ => true,
    }
}
