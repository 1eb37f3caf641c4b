//! The GPU graph runner.
//!
//! Preparation uploads every constant (the weights and biases) once and allocates the
//! buffers of the [`BufferPlan`] on the GPU, with a staging buffer for the input and one
//! for the result that live as long as the runner. A run then writes the input into its
//! staging buffer, records the copy of the input, every node and the copy of the result
//! into one command encoder, submits once and waits once. Compared with immediate mode, the weights no longer cross
//! the bus on every call, and the GPU gets the whole graph in one go instead of one
//! operator at a time with a round trip in between.
//!
//! Module 3's cheaper layers run here too: an int8 layer as two kernels (its input
//! quantised row by row, then `i32` dot products; [`crate::gpu::linear_int8`]) and a
//! sparse one as one kernel over its weights by column ([`crate::gpu::linear_sparse`]).
//! Their weights are uploaded at preparation, like every other constant.

use std::sync::{Mutex, MutexGuard};

use crate::compiler::linear_strategy::LinearSelection;
use crate::cpu::int8::QuantizationError;
use crate::cpu::int8_matmul::{Int8MatmulError, MAXIMUM_INPUTS};
use crate::gpu::linear_int8::{GpuInt8Layer, Int8Kernel};
use crate::gpu::linear_sparse::{SparseWeights, bind_linear_sparse, linear_sparse_pipeline};
use crate::gpu::record::{
    BoundDispatch, bind_add, bind_relu, bind_relu_in_place, bind_softmax, record_in_one_pass,
};
use crate::gpu::{
    GpuContext, GpuError, GpuTensor, Kernel, PipelineCache, Readback, ReductionStrategy,
    ShaderCompilation, UploadBuffer,
};
use crate::graph::{Operator, TensorId, ValidGraph};
use crate::runner::{BufferPlan, RunError};
use crate::tensor::Tensor2d;

/// How a run's dispatches are grouped into compute passes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ComputePasses {
    /// Every dispatch in a pass of its own: the simplest way to order kernels, and one
    /// begin/end of a pass per kernel.
    OnePerDispatch,
    /// All the dispatches of one run in one pass; wgpu still puts a barrier between
    /// dependent kernels (see [`record_in_one_pass`]).
    OnePerRun,
}

/// Everything a GPU graph runner can be asked to do differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GpuRunnerOptions {
    pub compilation: ShaderCompilation,
    /// The linear kernel of every linear layer; the naive one by default.
    pub linear: LinearSelection,
    /// How the softmax combines a row's values; workgroup memory by default.
    pub softmax: ReductionStrategy,
    pub passes: ComputePasses,
}

impl GpuRunnerOptions {
    /// The options of the book's graph modes: naive linear kernel, tree-reduction
    /// softmax, one pass per run.
    pub fn new(compilation: ShaderCompilation) -> GpuRunnerOptions {
        GpuRunnerOptions {
            compilation,
            linear: LinearSelection::default(),
            softmax: ReductionStrategy::WorkgroupMemory,
            passes: ComputePasses::OnePerRun,
        }
    }
}

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
    /// The int8 and sparse layers, by node, with their weights uploaded.
    cheaper: Vec<Option<CheaperLayer>>,
    /// Whether an int8 layer reads the graph's input, which must then be finite.
    input_feeds_int8: bool,
    pipelines: PipelineCache,
    options: GpuRunnerOptions,
    /// With cached pipelines, every dispatch of the graph bound once, at preparation.
    bound: Option<Vec<BoundDispatch>>,
    /// The graph loop's staging tensors, one per iteration, kept from run to run and
    /// only ever added to.
    loop_copies: Mutex<Vec<GpuTensor>>,
    /// The input's staging buffer, mapped between runs. The lock also keeps two runs of
    /// one runner from interleaving: they share every buffer.
    upload: Mutex<UploadBuffer>,
}
// ANCHOR_END: gpu_graph_runner

/// A prepared int8 or sparse layer.
enum CheaperLayer {
    Int8(GpuInt8Layer),
    Sparse { weights: SparseWeights, relu: bool },
}

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
        let options = GpuRunnerOptions::new(compilation);
        GpuGraphRunner::prepare_with_options(context, graph, plan, options)
    }

    /// Prepares with a buffer plan and a choice of linear kernels and compute passes.
    pub fn prepare_with_options(
        context: &'context GpuContext,
        graph: &ValidGraph,
        plan: BufferPlan,
        options: GpuRunnerOptions,
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
        let mut cheaper = Vec::with_capacity(nodes.len());
        let pipelines = PipelineCache::new(options.compilation);
        // The packed dot product where the device compiles it, found once per runner.
        let mut int8_kernel = None;
        for (index, node) in nodes.iter().enumerate() {
            // A linear layer's weights are its second input.
            let weights = node.inputs.get(1).map(|id| &nodes[id.0].operator);
            cheaper.push(match (&node.operator, weights) {
                (&Operator::LinearInt8 { relu }, Some(Operator::QuantizedConstant(weights))) => {
                    // The kernel sums in `i32` as the CPU does, and would wrap around where
                    // the CPU's product refuses the layer: refuse it here with the same error.
                    if weights.inputs() > MAXIMUM_INPUTS {
                        return Err(QuantizationError::Product(Int8MatmulError::TooManyInputs {
                            inputs: weights.inputs(),
                        })
                        .into());
                    }
                    let kernel = *int8_kernel
                        .get_or_insert_with(|| Int8Kernel::best_for(context, &pipelines));
                    let rows = graph.shape(TensorId(index)).0;
                    Some(CheaperLayer::Int8(GpuInt8Layer::prepare(
                        context,
                        weights,
                        rows,
                        kernel,
                        relu,
                        Readback::Never,
                    )?))
                }
                (&Operator::LinearSparse { relu }, Some(Operator::SparseConstant(weights))) => {
                    Some(CheaperLayer::Sparse {
                        weights: SparseWeights::upload(context, weights),
                        relu,
                    })
                }
                _ => None,
            });
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
        let input_feeds_int8 = nodes.iter().any(|node| {
            matches!(node.operator, Operator::LinearInt8 { .. }) && node.inputs[0] == graph.input()
        });
        let input_buffer = plan.buffer_of[graph.input().0].expect("the input has a buffer");
        let upload = Mutex::new(UploadBuffer::for_tensor(context, &buffers[input_buffer]));
        let mut runner = GpuGraphRunner {
            context,
            graph: graph.clone(),
            plan,
            buffers,
            constants,
            scratch,
            cheaper,
            input_feeds_int8,
            pipelines,
            options,
            bound: None,
            loop_copies: Mutex::new(Vec::new()),
            upload,
        };
        // Pipelines that are reused can be bound to their buffers once and for all; a
        // run then only records. Without the cache every run compiles, and so binds, anew.
        if options.compilation == ShaderCompilation::Cached {
            runner.bound = Some(runner.bind_graph()?);
        }
        Ok(runner)
    }
    // ANCHOR_END: gpu_prepare

    pub fn pipelines(&self) -> &PipelineCache {
        &self.pipelines
    }

    /// The options the runner was prepared with.
    pub fn options(&self) -> GpuRunnerOptions {
        self.options
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
    /// Runs the graph once: the input's upload, every kernel and the copy of the result
    /// in one submission, one wait, one readback (straight from the result's own
    /// staging buffer). Nothing is allocated on the GPU.
    pub fn run(&self, input: &Tensor2d) -> Result<Tensor2d, RunError> {
        let result = self.result_buffer();
        let mut values = vec![0.0; result.len()];
        self.run_into(input, &mut values)?;
        Ok(Tensor2d::from_vec(result.rows(), result.columns(), values)?)
    }

    /// As [`GpuGraphRunner::run`], writing the result into `output` (as long as the
    /// result) rather than into a new tensor.
    pub fn run_into(&self, input: &Tensor2d, output: &mut [f32]) -> Result<(), RunError> {
        let upload = self.write_input(input)?;
        let result = self.result_buffer();
        let mut encoder = self.context.create_encoder("graph");
        upload.record_copy(&mut encoder, self.input_buffer())?;
        self.record_graph(&mut encoder)?;
        result.record_copy_to_staging(&mut encoder)?;
        self.context.submit(encoder);
        // Completed by the wait inside `read_staging_into`: the next run finds it mapped.
        upload.request_map();
        Ok(result.read_staging_into(self.context, output)?)
    }

    /// Runs the graph `iterations` times, recorded back to back into one submission. The
    /// result of every iteration is copied out before the next one overwrites it, and all
    /// of them are read back: the graph loop.
    pub fn run_loop(&self, input: &Tensor2d, iterations: usize) -> Result<Vec<Tensor2d>, RunError> {
        let upload = self.write_input(input)?;
        let result = self.result_buffer();
        // One staging tensor per iteration, each holding one iteration's result. They are
        // kept for the next call: allocating GPU memory on every run is slow.
        let mut copies = self
            .loop_copies
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        while copies.len() < iterations {
            copies.push(GpuTensor::uninitialized(
                self.context,
                result.rows(),
                result.columns(),
                Readback::Needed,
            )?);
        }
        let copies = &copies[..iterations];
        let mut encoder = self.context.create_encoder("graph loop");
        upload.record_copy(&mut encoder, self.input_buffer())?;
        for copy in copies {
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
        self.context.submit(encoder);
        upload.request_map();
        Ok(copies
            .iter()
            .map(|copy| copy.read_staging(self.context))
            .collect::<Result<Vec<_>, GpuError>>()?)
    }
    // ANCHOR_END: gpu_run

    /// Checks the input's shape and writes it into the input's staging buffer. Returns
    /// the locked staging buffer: the run holds it until it has submitted.
    fn write_input(&self, input: &Tensor2d) -> Result<MutexGuard<'_, UploadBuffer>, RunError> {
        let expected = self.graph.shape(self.graph.input());
        if input.shape() != expected {
            return Err(RunError::InputShape {
                expected,
                given: input.shape(),
            });
        }
        // The CPU refuses to quantise a non-finite value; the GPU kernel can only turn its
        // row into NaN. Where the value comes straight from the caller, say so as the CPU does.
        if self.input_feeds_int8 {
            crate::cpu::int8::check_finite(input, "input")?;
        }
        let upload = self
            .upload
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        upload.write(self.context, input)?;
        Ok(upload)
    }

    /// The buffer of the graph's input.
    fn input_buffer(&self) -> &GpuTensor {
        &self.buffers[self.plan.buffer_of[self.graph.input().0].expect("the input has a buffer")]
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
        match self.options.passes {
            ComputePasses::OnePerRun => record_in_one_pass(encoder, dispatches),
            ComputePasses::OnePerDispatch => {
                for dispatch in dispatches {
                    dispatch.record(encoder);
                }
            }
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
            // A linear layer with the runner's linear kernel (chosen for its shape, if so
            // asked), written to `destination`.
            let linear = |apply_relu: bool, destination: &GpuTensor| {
                let (input, weights) = (argument(0), argument(1));
                let strategy = self.options.linear.strategy_for(
                    context,
                    input.rows(),
                    input.columns(),
                    weights.columns(),
                )?;
                let pipeline = strategy.pipeline(context, &self.pipelines, apply_relu)?;
                strategy.bind(context, &pipeline, input, weights, argument(2), destination)
            };
            match node.operator {
                Operator::Input { .. }
                | Operator::Constant(_)
                | Operator::QuantizedConstant(_)
                | Operator::SparseConstant(_)
                | Operator::Output => {}
                // The weights were uploaded at preparation; the bias is a plain tensor.
                Operator::LinearInt8 { .. } | Operator::LinearSparse { .. } => {
                    match self.cheaper[id.0]
                        .as_ref()
                        .expect("prepared with its weights")
                    {
                        CheaperLayer::Int8(layer) => dispatches.extend(layer.bind(
                            context,
                            &self.pipelines,
                            argument(0),
                            argument(2),
                            output,
                        )?),
                        CheaperLayer::Sparse { weights, relu } => {
                            dispatches.push(bind_linear_sparse(
                                context,
                                &linear_sparse_pipeline(context, &self.pipelines, *relu)?,
                                argument(0),
                                weights,
                                argument(2),
                                output,
                            )?)
                        }
                    }
                }
                Operator::Linear => dispatches.push(linear(false, output)?),
                Operator::LinearRelu => dispatches.push(linear(true, output)?),
                // Two kernels: the linear layer (with its ReLU) into a scratch buffer, then
                // the softmax, one workgroup per row. Fusing them would need a workgroup to
                // own whole rows, which the fast kernels' two-dimensional tiles do not.
                Operator::LinearReluSoftmax => {
                    let scratch = self.scratch[id.0]
                        .as_ref()
                        .expect("prepared with a scratch buffer");
                    dispatches.push(linear(true, scratch)?);
                    dispatches.push(bind_softmax(
                        context,
                        &pipeline(self.options.softmax.softmax_kernel())?,
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
                Operator::Add => dispatches.push(bind_add(
                    context,
                    &pipeline(Kernel::Add)?,
                    argument(0),
                    argument(1),
                    output,
                )?),
                Operator::Softmax => dispatches.push(bind_softmax(
                    context,
                    &pipeline(self.options.softmax.softmax_kernel())?,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compiler::quantize;
    use crate::cpu::int8::Granularity;
    use crate::graph::ChainBuilder;

    #[test]
    fn an_int8_layer_whose_sums_could_overflow_is_refused_as_on_the_cpu() {
        let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
        for (inputs, refused) in [(MAXIMUM_INPUTS, false), (MAXIMUM_INPUTS + 1, true)] {
            let weights = Tensor2d::random(inputs, 1, -1.0..=1.0, 5);
            let graph = ChainBuilder::input(1, inputs)
                .linear(weights, Tensor2d::zeros(1, 1))
                .output()
                .unwrap();
            let graph = quantize(&graph, Granularity::PerTensor).unwrap();
            let result = GpuGraphRunner::prepare(context, &graph, ShaderCompilation::Cached);
            match result {
                Err(RunError::Quantization(QuantizationError::Product(
                    Int8MatmulError::TooManyInputs { inputs: found },
                ))) => assert!(refused && found == inputs, "{inputs} inputs refused"),
                Err(other) => panic!("{inputs} inputs: {other}"),
                Ok(_) => assert!(!refused, "{inputs} inputs accepted"),
            }
        }
    }
}
