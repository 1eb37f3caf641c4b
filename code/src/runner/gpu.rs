//! The GPU graph runner.
//!
//! Preparation uploads every constant (the weights and biases) once and allocates the
//! buffers of the [`BufferPlan`] on the GPU. A run then writes the input, records every
//! node into one command encoder, adds the copy of the result into a staging buffer,
//! submits once and waits once. Compared with immediate mode, the weights no longer cross
//! the bus on every call, and the GPU gets the whole graph in one go instead of one
//! operator at a time with a round trip in between.

use crate::gpu::record::{BoundDispatch, bind_linear, bind_relu, bind_relu_in_place, bind_softmax};
use crate::gpu::{
    GpuContext, GpuError, GpuTensor, Kernel, PipelineCache, Readback, ShaderCompilation,
};
use crate::graph::{Operator, TensorId, ValidGraph};
use crate::runner::{BufferPlan, RunError};
use crate::tensor::Tensor2d;

// ANCHOR: gpu_graph_runner
/// Runs a graph on the GPU: weights uploaded once, one submission per run.
pub struct GpuGraphRunner<'context> {
    context: &'context GpuContext,
    graph: ValidGraph,
    plan: BufferPlan,
    /// The buffers of the plan, on the GPU.
    buffers: Vec<GpuTensor>,
    /// The uploaded constants, by node.
    constants: Vec<Option<GpuTensor>>,
    /// Scratch buffers for `LinearReluSoftmax`, which runs as two kernels on the GPU.
    scratch: Vec<Option<GpuTensor>>,
    pipelines: PipelineCache,
    /// With cached pipelines, every dispatch of the graph bound once, at preparation.
    bound: Option<Vec<BoundDispatch>>,
}
// ANCHOR_END: gpu_graph_runner

impl<'context> GpuGraphRunner<'context> {
    // ANCHOR: gpu_prepare
    pub fn prepare(
        context: &'context GpuContext,
        graph: &ValidGraph,
        compilation: ShaderCompilation,
    ) -> Result<GpuGraphRunner<'context>, RunError> {
        GpuGraphRunner::prepare_with_plan(context, graph, BufferPlan::new(graph), compilation)
    }

    /// Prepares with a given buffer plan, such as one from
    /// [`crate::compiler::reuse_buffers`].
    pub fn prepare_with_plan(
        context: &'context GpuContext,
        graph: &ValidGraph,
        plan: BufferPlan,
        compilation: ShaderCompilation,
    ) -> Result<GpuGraphRunner<'context>, RunError> {
        let result_buffer = plan.buffer_of[graph.result().0];
        let buffers = plan
            .buffer_shapes
            .iter()
            .enumerate()
            .map(|(index, &(rows, columns))| {
                // Only the result is read back, so only it gets a staging buffer.
                let readback = if Some(index) == result_buffer {
                    Readback::Needed
                } else {
                    Readback::Never
                };
                GpuTensor::uninitialized(context, rows, columns, readback)
            })
            .collect::<Result<Vec<_>, GpuError>>()?;
        let nodes = &graph.graph().nodes;
        let mut constants = Vec::with_capacity(nodes.len());
        let mut scratch = Vec::with_capacity(nodes.len());
        for (index, node) in nodes.iter().enumerate() {
            constants.push(match &node.operator {
                Operator::Constant(tensor) => {
                    Some(GpuTensor::upload(context, tensor, Readback::Never)?)
                }
                _ => None,
            });
            scratch.push(match node.operator {
                Operator::LinearReluSoftmax => {
                    let (rows, columns) = graph.shape(TensorId(index));
                    Some(GpuTensor::uninitialized(
                        context,
                        rows,
                        columns,
                        Readback::Never,
                    )?)
                }
                _ => None,
            });
        }
        let mut runner = GpuGraphRunner {
            context,
            graph: graph.clone(),
            plan,
            buffers,
            constants,
            scratch,
            pipelines: PipelineCache::new(compilation),
            bound: None,
        };
        // Pipelines that are reused can be bound to their buffers once and for all; a
        // run then only records. Without the cache every run compiles, and so binds, anew.
        if compilation == ShaderCompilation::Cached {
            runner.bound = Some(runner.bind_graph()?);
        }
        Ok(runner)
    }
    // ANCHOR_END: gpu_prepare

    pub fn pipelines(&self) -> &PipelineCache {
        &self.pipelines
    }

    /// The buffer of the graph's result, for tests that poison it before a run.
    pub fn result_buffer(&self) -> &GpuTensor {
        &self.buffers[self.plan.buffer_of[self.graph.result().0].expect("the result has a buffer")]
    }

    /// Every computed buffer, for tests that poison them before a run.
    pub fn buffers(&self) -> &[GpuTensor] {
        &self.buffers
    }

    // ANCHOR: gpu_run
    /// Runs the graph once: one submission, one readback.
    pub fn run(&self, input: &Tensor2d) -> Result<Tensor2d, RunError> {
        Ok(self
            .run_loop(input, 1)?
            .pop()
            .expect("one iteration, one result"))
    }

    /// Runs the graph `iterations` times, recorded back to back into one submission. The
    /// result of every iteration is copied out before the next one overwrites it, and all
    /// of them are read back: the graph loop.
    pub fn run_loop(&self, input: &Tensor2d, iterations: usize) -> Result<Vec<Tensor2d>, RunError> {
        self.write_input(input)?;
        let result = self.result_buffer();
        // One staging tensor per iteration: each holds one iteration's result.
        let copies = (0..iterations)
            .map(|_| {
                GpuTensor::uninitialized(
                    self.context,
                    result.rows(),
                    result.columns(),
                    Readback::Needed,
                )
            })
            .collect::<Result<Vec<_>, GpuError>>()?;
        let mut encoder =
            self.context
                .device()
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("graph"),
                });
        for copy in &copies {
            self.record_graph(&mut encoder)?;
            encoder.copy_buffer_to_buffer(
                result.buffer(),
                0,
                copy.buffer(),
                0,
                result.size_in_bytes(),
            );
            copy.record_copy_to_staging(&mut encoder)?;
        }
        self.context.queue().submit([encoder.finish()]);
        Ok(copies
            .iter()
            .map(|copy| copy.read_staging(self.context))
            .collect::<Result<Vec<_>, GpuError>>()?)
    }
    // ANCHOR_END: gpu_run

    fn write_input(&self, input: &Tensor2d) -> Result<(), RunError> {
        let expected = self.graph.shape(self.graph.input());
        if input.shape() != expected {
            return Err(RunError::InputShape {
                expected,
                given: input.shape(),
            });
        }
        let buffer = self.plan.buffer_of[self.graph.input().0].expect("the input has a buffer");
        self.buffers[buffer].write(self.context, input)?;
        Ok(())
    }

    // ANCHOR: record_graph
    /// Records every dispatch of the graph, in dependency order, into `encoder`.
    fn record_graph(&self, encoder: &mut wgpu::CommandEncoder) -> Result<(), GpuError> {
        let freshly_bound;
        let dispatches = match &self.bound {
            Some(bound) => bound,
            None => {
                freshly_bound = self.bind_graph()?;
                &freshly_bound
            }
        };
        for dispatch in dispatches {
            dispatch.record(encoder);
        }
        Ok(())
    }

    /// Fetches the pipeline of every node (compiling it unless the cache has it) and binds
    /// it to the node's buffers.
    fn bind_graph(&self) -> Result<Vec<BoundDispatch>, GpuError> {
        let context = self.context;
        let mut dispatches = Vec::new();
        for &id in self.graph.execution_order() {
            let node = self.graph.graph().node(id);
            let Some(output) = self.plan.buffer_of[id.0].map(|index| &self.buffers[index]) else {
                continue;
            };
            let argument = |position: usize| self.tensor(node.inputs[position]);
            let pipeline = |kernel: Kernel| self.pipelines.pipeline(context, kernel);
            match node.operator {
                Operator::Input { .. } | Operator::Constant(_) | Operator::Output => {}
                Operator::Linear => dispatches.push(bind_linear(
                    context,
                    &pipeline(Kernel::Linear)?,
                    argument(0),
                    argument(1),
                    argument(2),
                    output,
                )?),
                Operator::LinearRelu => dispatches.push(bind_linear(
                    context,
                    &pipeline(Kernel::LinearRelu)?,
                    argument(0),
                    argument(1),
                    argument(2),
                    output,
                )?),
                Operator::LinearReluSoftmax => {
                    let scratch = self.scratch[id.0]
                        .as_ref()
                        .expect("prepared with a scratch buffer");
                    let linear = pipeline(Kernel::LinearRelu)?;
                    dispatches.push(bind_linear(
                        context,
                        &linear,
                        argument(0),
                        argument(1),
                        argument(2),
                        scratch,
                    )?);
                    dispatches.push(bind_softmax(
                        context,
                        &pipeline(Kernel::Softmax)?,
                        scratch,
                        output,
                    )?);
                }
                Operator::ReluInPlace => dispatches.push(bind_relu_in_place(
                    context,
                    &pipeline(Kernel::ReluInPlace)?,
                    output,
                )?),
                Operator::Relu => dispatches.push(bind_relu(
                    context,
                    &pipeline(Kernel::Relu)?,
                    argument(0),
                    output,
                )?),
                Operator::Softmax => dispatches.push(bind_softmax(
                    context,
                    &pipeline(Kernel::Softmax)?,
                    argument(0),
                    output,
                )?),
            }
        }
        Ok(dispatches)
    }
    // ANCHOR_END: record_graph

    /// The GPU tensor holding `id`: an uploaded constant or a plan buffer.
    fn tensor(&self, id: TensorId) -> &GpuTensor {
        match &self.constants[id.0] {
            Some(constant) => constant,
            None => {
                &self.buffers[self.plan.buffer_of[id.0].expect("computed tensors have buffers")]
            }
        }
    }
}
