//! A small graph of GPU steps: the graph level of the max-pooling and convolution
//! exercises.
//!
//! The crate's own graph knows a fixed set of operators, and a new operator would mean
//! editing the crate. This graph is open instead: a step is anything that can say which
//! shape it produces and bind its kernel to an input and an output buffer. That is enough
//! to show what the graph level adds to immediate mode:
//!
//! - every shape is worked out when the graph is built, so a step that cannot run on its
//!   input is an error before any buffer exists;
//! - buffers are allocated and kernels bound once, when the graph is prepared;
//! - a run writes the input, records every step into one command encoder, submits once
//!   and reads back only the result.

use galaxy::gpu::record::{BoundDispatch, bind_linear, bind_relu};
use galaxy::gpu::{GpuContext, GpuError, GpuTensor, Kernel, Readback, compile_kernel};
use galaxy::{ShapeError, Tensor2d};
use thiserror::Error;

use crate::kernel_run::TIME_LIMIT;

/// One step of a [`StepGraph`].
pub trait Step {
    /// A name for messages.
    fn name(&self) -> String;

    /// The shape of the step's result for an input of shape `input`, or why the step
    /// cannot run on it.
    fn output_shape(&self, input: (usize, usize)) -> Result<(usize, usize), ShapeError>;

    /// Binds the step's kernel to its buffers (uploading any constants it needs). Called
    /// once, when the graph is prepared.
    fn bind(
        &self,
        context: &GpuContext,
        input: &GpuTensor,
        output: &GpuTensor,
    ) -> Result<BoundDispatch, GpuError>;
}

#[derive(Debug, Error)]
pub enum StepGraphError {
    #[error("step {index} ({name}) cannot run on a {}×{} input: {source}", input.0, input.1)]
    Shape {
        index: usize,
        name: String,
        input: (usize, usize),
        // Boxed, as the crate boxes its sources: errors are rare, and a small error
        // keeps every `Result` small.
        source: Box<ShapeError>,
    },
    #[error("step {index} ({name}) could not be bound: {source}")]
    Bind {
        index: usize,
        name: String,
        source: Box<GpuError>,
    },
    #[error("wgpu rejected step {index} ({name}): {message}")]
    Rejected {
        index: usize,
        name: String,
        message: String,
    },
    #[error("the input is {}×{}, but the graph was built for {}×{}", given.0, given.1, expected.0, expected.1)]
    InputShape {
        expected: (usize, usize),
        given: (usize, usize),
    },
    #[error("wgpu rejected the run: {message}")]
    Run { message: String },
    #[error("the graph did not finish within {} s", TIME_LIMIT.as_secs())]
    Timeout,
    #[error(transparent)]
    Gpu(Box<GpuError>),
}

impl From<GpuError> for StepGraphError {
    fn from(error: GpuError) -> StepGraphError {
        StepGraphError::Gpu(Box::new(error))
    }
}

/// A chain of steps, each reading the result of the one before, with every shape known.
pub struct StepGraph {
    steps: Vec<Box<dyn Step>>,
    /// `shapes[0]` is the input; `shapes[i + 1]` the result of step `i`.
    shapes: Vec<(usize, usize)>,
}

impl StepGraph {
    /// Works out every step's shape, or names the first step that cannot run.
    pub fn new(
        input: (usize, usize),
        steps: Vec<Box<dyn Step>>,
    ) -> Result<StepGraph, StepGraphError> {
        let mut shapes = vec![input];
        for (index, step) in steps.iter().enumerate() {
            let current = *shapes.last().expect("starts with the input");
            let next = step
                .output_shape(current)
                .map_err(|source| StepGraphError::Shape {
                    index,
                    name: step.name(),
                    input: current,
                    source: Box::new(source),
                })?;
            shapes.push(next);
        }
        Ok(StepGraph { steps, shapes })
    }

    pub fn output_shape(&self) -> (usize, usize) {
        *self.shapes.last().expect("starts with the input")
    }

    /// Allocates one buffer per tensor and binds every step once. Every step's result
    /// can be read back, so that a checker can look at one step on its own.
    pub fn prepare<'context>(
        &self,
        context: &'context GpuContext,
    ) -> Result<PreparedStepGraph<'context>, StepGraphError> {
        let buffers = self
            .shapes
            .iter()
            .enumerate()
            .map(|(index, &(rows, columns))| {
                let readback = if index == 0 {
                    Readback::Never
                } else {
                    Readback::Needed
                };
                GpuTensor::uninitialized(context, rows, columns, readback)
            })
            .collect::<Result<Vec<_>, GpuError>>()?;
        let mut dispatches = Vec::with_capacity(self.steps.len());
        for (index, step) in self.steps.iter().enumerate() {
            let scope = context
                .device()
                .push_error_scope(wgpu::ErrorFilter::Validation);
            let bound = step.bind(context, &buffers[index], &buffers[index + 1]);
            let rejected = pollster::block_on(scope.pop());
            let bound = bound.map_err(|source| StepGraphError::Bind {
                index,
                name: step.name(),
                source: Box::new(source),
            })?;
            if let Some(error) = rejected {
                return Err(StepGraphError::Rejected {
                    index,
                    name: step.name(),
                    message: error.to_string(),
                });
            }
            dispatches.push(bound);
        }
        Ok(PreparedStepGraph {
            context,
            buffers,
            dispatches,
        })
    }
}

/// A step graph with its buffers allocated and its kernels bound.
pub struct PreparedStepGraph<'context> {
    context: &'context GpuContext,
    buffers: Vec<GpuTensor>,
    dispatches: Vec<BoundDispatch>,
}

impl PreparedStepGraph<'_> {
    /// Fills every buffer with `poison` (a NaN): a step that writes nothing cannot pass
    /// for one that works.
    pub fn poison(&self, poison: f32) {
        for buffer in &self.buffers {
            buffer.fill(self.context, poison);
        }
    }

    /// Runs the graph on `input`: one submission, one readback.
    pub fn run(&self, input: &Tensor2d) -> Result<Tensor2d, StepGraphError> {
        let mut results = self.run_reading(input, self.buffers.len() - 1)?;
        Ok(results.pop().expect("one result was read"))
    }

    /// Runs the graph on `input` in one submission, as [`PreparedStepGraph::run`], and
    /// reads back the result of every step: element `i` is the result of step `i`.
    pub fn run_reading_every_step(
        &self,
        input: &Tensor2d,
    ) -> Result<Vec<Tensor2d>, StepGraphError> {
        self.run_reading(input, 1)
    }

    /// Runs the graph and reads back the buffers from `first_read` to the last.
    fn run_reading(
        &self,
        input: &Tensor2d,
        first_read: usize,
    ) -> Result<Vec<Tensor2d>, StepGraphError> {
        let context = self.context;
        let first = &self.buffers[0];
        if input.shape() != first.shape() {
            return Err(StepGraphError::InputShape {
                expected: first.shape(),
                given: input.shape(),
            });
        }
        first.write(context, input)?;
        let read = &self.buffers[first_read..];
        let scope = context
            .device()
            .push_error_scope(wgpu::ErrorFilter::Validation);
        let mut encoder =
            context
                .device()
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("step graph"),
                });
        for dispatch in &self.dispatches {
            dispatch.record(&mut encoder);
        }
        for result in read {
            result.record_copy_to_staging(&mut encoder)?;
        }
        let submission = context.queue().submit([encoder.finish()]);
        if let Some(error) = pollster::block_on(scope.pop()) {
            return Err(StepGraphError::Run {
                message: error.to_string(),
            });
        }
        context
            .device()
            .poll(wgpu::PollType::Wait {
                submission_index: Some(submission),
                timeout: Some(TIME_LIMIT),
            })
            .map_err(|_| StepGraphError::Timeout)?;
        read.iter()
            .map(|result| Ok(result.read_staging(context)?))
            .collect()
    }
}

/// `input · weights + bias`, with the crate's linear kernel.
pub struct LinearStep {
    pub weights: Tensor2d,
    pub bias: Tensor2d,
}

impl Step for LinearStep {
    fn name(&self) -> String {
        "linear".to_string()
    }

    fn output_shape(&self, input: (usize, usize)) -> Result<(usize, usize), ShapeError> {
        galaxy::tensor::linear_output_shape(input, self.weights.shape(), self.bias.shape())
    }

    fn bind(
        &self,
        context: &GpuContext,
        input: &GpuTensor,
        output: &GpuTensor,
    ) -> Result<BoundDispatch, GpuError> {
        let pipeline = compile_kernel(context, Kernel::Linear)?;
        // The bind group keeps the uploaded weights alive after these handles go.
        let weights = GpuTensor::upload(context, &self.weights, Readback::Never)?;
        let bias = GpuTensor::upload(context, &self.bias, Readback::Never)?;
        bind_linear(context, &pipeline, input, &weights, &bias, output)
    }
}

/// `max(input, 0)`, with the crate's ReLU kernel.
pub struct ReluStep;

impl Step for ReluStep {
    fn name(&self) -> String {
        "relu".to_string()
    }

    fn output_shape(&self, input: (usize, usize)) -> Result<(usize, usize), ShapeError> {
        Ok(input)
    }

    fn bind(
        &self,
        context: &GpuContext,
        input: &GpuTensor,
        output: &GpuTensor,
    ) -> Result<BoundDispatch, GpuError> {
        let pipeline = compile_kernel(context, Kernel::Relu)?;
        bind_relu(context, &pipeline, input, output)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu_context_for_tests;
    use galaxy::Tolerance;

    #[test]
    fn a_linear_relu_chain_matches_the_cpu() {
        let context = gpu_context_for_tests();
        let weights = Tensor2d::random(5, 3, -1.0..=1.0, 1);
        let bias = Tensor2d::random(1, 3, -1.0..=1.0, 2);
        let graph = StepGraph::new(
            (4, 5),
            vec![
                Box::new(LinearStep {
                    weights: weights.clone(),
                    bias: bias.clone(),
                }),
                Box::new(ReluStep),
            ],
        )
        .unwrap();
        assert_eq!(graph.output_shape(), (4, 3));
        let prepared = graph.prepare(context).unwrap();
        prepared.poison(f32::NAN);
        let input = Tensor2d::random(4, 5, -1.0..=1.0, 3);
        let result = prepared.run(&input).unwrap();
        let linear = galaxy::cpu::linear_naive(&input, &weights, &bias).unwrap();
        let expected = galaxy::cpu::relu(&linear);
        let comparison = result
            .compare(&expected, Tolerance::new(1e-5, 1e-6))
            .unwrap();
        assert!(comparison.passed(), "{comparison}");
        // Every step's result, from the same kind of run.
        let every_step = prepared.run_reading_every_step(&input).unwrap();
        assert_eq!(every_step.len(), 2);
        let tolerance = Tolerance::new(1e-5, 1e-6);
        assert!(every_step[0].compare(&linear, tolerance).unwrap().passed());
        assert!(
            every_step[1]
                .compare(&expected, tolerance)
                .unwrap()
                .passed()
        );
    }

    #[test]
    fn a_step_that_cannot_run_is_named_before_anything_is_allocated() {
        let weights = Tensor2d::zeros(5, 3);
        let bias = Tensor2d::zeros(1, 3);
        let error = StepGraph::new(
            (4, 6),
            vec![Box::new(ReluStep), Box::new(LinearStep { weights, bias })],
        )
        .err()
        .expect("a 4×6 input does not fit 5×3 weights");
        assert!(
            matches!(error, StepGraphError::Shape { index: 1, .. }),
            "{error}"
        );
        assert!(
            error
                .to_string()
                .starts_with("step 1 (linear) cannot run on a 4×6 input")
        );
    }
}
