//! Data parallelism: the whole graph on every device, each on its own share of the rows.
//!
//! Preparing uploads the weights to every device (they are *replicated*); a run cuts the
//! input into one block of consecutive rows per device, runs the blocks at the same time,
//! one host thread per device, and stacks the results in the input's order. No device
//! needs anything from another, so the only costs beyond one device's are starting the
//! threads and the slowest device setting the pace.

use std::ops::Range;
use std::time::Instant;

use crate::gpu::GpuContext;
use crate::graph::ValidGraph;
use crate::runner::{Execution, ExecutionMode, RunError};
use crate::tensor::Tensor2d;

use super::{MultiDeviceError, Span, require_gpu_mode, split_rows, take_rows, with_input_rows};

// ANCHOR: runner
/// A graph prepared on several devices, each for its share of the input's rows.
pub struct DataParallelRunner<'context> {
    /// The shape of the whole input, as the graph declares it.
    input_shape: (usize, usize),
    /// The number of columns of the graph's result.
    output_columns: usize,
    devices: Vec<DeviceShare<'context>>,
}

/// What one device runs: its rows of the input, and the graph prepared for that many rows.
struct DeviceShare<'context> {
    rows: Range<usize>,
    context: &'context GpuContext,
    execution: Execution<'context>,
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
        let devices = split_rows(rows, contexts.len())
            .into_iter()
            .zip(contexts)
            .enumerate()
            .map(|(device, (share, &context))| {
                let graph = with_input_rows(graph, share.len())?;
                let execution = mode
                    .prepare(&graph, Some(context))
                    .map_err(|source| device_error(device, context, source))?;
                Ok(DeviceShare {
                    rows: share,
                    context,
                    execution,
                })
            })
            .collect::<Result<_, MultiDeviceError>>()?;
        Ok(DataParallelRunner {
            input_shape,
            output_columns: graph.shape(graph.result()).1,
            devices,
        })
    }
    // ANCHOR_END: prepare

    /// The rows each device runs, in device order.
    pub fn shares(&self) -> Vec<Range<usize>> {
        self.devices
            .iter()
            .map(|device| device.rows.clone())
            .collect()
    }

    /// Fills every buffer the devices write results into with `value` (tests poison them
    /// with NaN, so that an element no kernel wrote cannot pass for a right one).
    pub fn fill_result_buffers(&self, value: f32) {
        for device in &self.devices {
            for buffer in device.execution.result_buffers() {
                buffer.fill(device.context, value);
            }
        }
    }

    /// Runs the graph on `input`, every device on its rows at the same time.
    pub fn run(&mut self, input: &Tensor2d) -> Result<Tensor2d, MultiDeviceError> {
        self.run_traced(input).map(|(result, _)| result)
    }

    // ANCHOR: run
    /// As [`DataParallelRunner::run`], also returning when each device worked.
    pub fn run_traced(
        &mut self,
        input: &Tensor2d,
    ) -> Result<(Tensor2d, Vec<Span>), MultiDeviceError> {
        if input.shape() != self.input_shape {
            return Err(RunError::InputShape {
                expected: self.input_shape,
                given: input.shape(),
            }
            .into());
        }
        let start = Instant::now();
        // The result is written in place: each device's thread gets its own rows of it.
        let mut output = vec![0.0; self.input_shape.0 * self.output_columns];
        let mut unclaimed = output.as_mut_slice();
        // One host thread per device: each copies out its rows, uploads them, waits for
        // its device, reads its result back and copies it into its rows of the output,
        // while the others do the same. Even the host's copies run side by side.
        let outcomes: Vec<Result<Span, MultiDeviceError>> = std::thread::scope(|scope| {
            let mut handles = Vec::new();
            for (device, share) in self.devices.iter_mut().enumerate() {
                let (mine, rest) = std::mem::take(&mut unclaimed)
                    .split_at_mut(share.rows.len() * self.output_columns);
                unclaimed = rest;
                handles.push(scope.spawn(move || {
                    let begun = start.elapsed();
                    let rows = take_rows(input, share.rows.clone());
                    let results = share
                        .execution
                        .run(&rows, 1)
                        .map_err(|source| device_error(device, share.context, source))?;
                    mine.copy_from_slice(results[0].as_slice());
                    Ok(Span {
                        device,
                        micro_batch: 0,
                        start: begun,
                        end: start.elapsed(),
                    })
                }));
            }
            handles
                .into_iter()
                .map(|handle| handle.join().expect("a device thread panicked"))
                .collect()
        });
        let spans = outcomes.into_iter().collect::<Result<Vec<_>, _>>()?;
        let result = Tensor2d::from_vec(self.input_shape.0, self.output_columns, output)
            .expect("every row written by its device");
        Ok((result, spans))
    }
    // ANCHOR_END: run
}

/// A run error, with the device it happened on.
pub(super) fn device_error(
    device: usize,
    context: &GpuContext,
    source: RunError,
) -> MultiDeviceError {
    MultiDeviceError::Device {
        device,
        adapter: context.describe(),
        source: Box::new(source),
    }
}
