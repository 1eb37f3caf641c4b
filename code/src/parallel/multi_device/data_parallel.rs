//! Data parallelism: the whole graph on every device, each on its own share of the rows.
//!
//! Preparing uploads the weights to every device (they are *replicated*); a run cuts the
//! input into one block of consecutive rows per device, runs the blocks at the same time,
//! one host thread per device, and writes each result into its rows of the output. No device
//! needs anything from another, so the only costs beyond one device's are starting the
//! threads and the slowest device setting the pace.

use std::ops::Range;
use std::time::Instant;

use crate::gpu::GpuContext;
use crate::graph::ValidGraph;
use crate::runner::{Execution, ExecutionMode, RunError};
use crate::tensor::Tensor2d;

use crate::parallel::multi_device::{MultiDeviceError, Span, require_gpu_mode, with_input_rows};
use crate::parallel::threads::chunk_ranges;

// ANCHOR: runner
/// A graph prepared on several devices, each for its share of the input's rows.
pub struct DataParallelRunner<'context> {
    /// The shape of the whole input, as the graph declares it.
    input_shape: (usize, usize),
    devices: Vec<DeviceShare<'context>>,
    /// The whole result, allocated once: every run writes its rows in place.
    output: Tensor2d,
}

/// What one device runs: its rows of the input, the graph prepared for that many rows, and
/// a host tensor of that shape that its rows are copied into before each run.
struct DeviceShare<'context> {
    rows: Range<usize>,
    context: &'context GpuContext,
    execution: Execution<'context>,
    rows_of_input: Tensor2d,
}
// ANCHOR_END: runner

impl<'context> DataParallelRunner<'context> {
    // ANCHOR: prepare
    /// Prepares `graph` in `mode` on every context, each for an equal share of the rows of
    /// the graph's input (shares differ by at most one row).
    pub fn prepare(
        contexts: &[&'context GpuContext],
        graph: &ValidGraph,
        mode: ExecutionMode,
    ) -> Result<DataParallelRunner<'context>, MultiDeviceError> {
        require_gpu_mode(mode)?;
        if contexts.is_empty() {
            return Err(MultiDeviceError::NoDevices);
        }
        let input_shape = graph.shape(graph.input());
        let rows = input_shape.0;
        if contexts.len() > rows {
            return Err(MultiDeviceError::MoreDevicesThanRows {
                devices: contexts.len(),
                rows,
            });
        }
        // Shares as equal as whole rows allow, as module 2's threads share a slice.
        let devices = chunk_ranges(rows, contexts.len())
            .map_err(|_| MultiDeviceError::NoDevices)?
            .into_iter()
            .zip(contexts)
            .enumerate()
            .map(|(device, (share, &context))| {
                let graph = with_input_rows(graph, share.len())?;
                let execution = mode
                    .prepare(&graph, Some(context))
                    .map_err(|source| device_error(device, context, source))?;
                Ok(DeviceShare {
                    rows_of_input: Tensor2d::zeros(share.len(), input_shape.1),
                    rows: share,
                    context,
                    execution,
                })
            })
            .collect::<Result<_, MultiDeviceError>>()?;
        Ok(DataParallelRunner {
            input_shape,
            devices,
            output: Tensor2d::zeros(rows, graph.shape(graph.result()).1),
        })
    }
    // ANCHOR_END: prepare

    /// Fills every buffer the devices write results into with `value` (tests poison them
    /// with NaN, so that an element no kernel wrote cannot pass for a right one).
    pub fn fill_result_buffers(&self, value: f32) {
        for device in &self.devices {
            for buffer in device.execution.result_buffers() {
                buffer.fill(device.context, value);
            }
        }
    }

    /// Runs the graph on `input`, every device on its rows at the same time. The result
    /// stays in the runner until the next run: clone it to keep it longer.
    pub fn run(&mut self, input: &Tensor2d) -> Result<&Tensor2d, MultiDeviceError> {
        self.run_traced(input).map(|(result, _)| result)
    }

    // ANCHOR: run
    /// As [`DataParallelRunner::run`], also returning when each device worked.
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
        let columns = self.output.columns();
        // Each device gets its own rows of the output to write into.
        let mut unclaimed = self.output.as_mut_slice();
        let mut work = Vec::with_capacity(self.devices.len());
        for (device, share) in self.devices.iter_mut().enumerate() {
            let (mine, rest) =
                std::mem::take(&mut unclaimed).split_at_mut(share.rows.len() * columns);
            unclaimed = rest;
            work.push((device, share, mine));
        }
        // One host thread per device beyond the first, which this thread drives itself:
        // each copies its rows of the input into its own host tensor, uploads them, waits
        // for its device and reads the result back into its rows of the output, while the
        // others do the same. Nothing is allocated per run: on the H100's host, filling a
        // fresh 32 MiB result from a thread other than the main one took about 20 ms more
        // than from the main thread, most likely in page faults: three times the kernels' time.
        let mut work = work.into_iter();
        let first = work
            .next()
            .expect("at least one device: checked when prepared");
        let outcomes: Vec<Result<Span, MultiDeviceError>> = std::thread::scope(|scope| {
            let others: Vec<_> = work
                .map(|(device, share, mine)| {
                    scope.spawn(move || share.run_share(device, input, mine, start))
                })
                .collect();
            let mut outcomes = vec![first.1.run_share(first.0, input, first.2, start)];
            outcomes.extend(
                others
                    .into_iter()
                    .map(|handle| handle.join().expect("a device thread panicked")),
            );
            outcomes
        });
        let spans = outcomes.into_iter().collect::<Result<Vec<_>, _>>()?;
        Ok((&self.output, spans))
    }
    // ANCHOR_END: run
}

impl DeviceShare<'_> {
    /// One device's part of a run: its rows in, its result out into `output`.
    fn run_share(
        &mut self,
        device: usize,
        input: &Tensor2d,
        output: &mut [f32],
        start: Instant,
    ) -> Result<Span, MultiDeviceError> {
        let begun = start.elapsed();
        let columns = input.columns();
        self.rows_of_input
            .as_mut_slice()
            .copy_from_slice(&input.as_slice()[self.rows.start * columns..self.rows.end * columns]);
        // The device reads its result back straight into its rows of the output.
        self.execution
            .run_into(&self.rows_of_input, output)
            .map_err(|source| device_error(device, self.context, source))?;
        Ok(Span {
            device,
            micro_batch: 0,
            start: begun,
            end: start.elapsed(),
        })
    }
}

/// A run error, with the device it happened on.
pub fn device_error(device: usize, context: &GpuContext, source: RunError) -> MultiDeviceError {
    MultiDeviceError::Device {
        device,
        adapter: context.describe(),
        source: Box::new(source),
    }
}
