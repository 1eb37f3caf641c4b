//! The op-code runner: every compute node lowered to a program, every program compiled
//! from the WGSL generated for it.
//!
//! Preparation does all the compiling: lower the graph, generate each program's WGSL,
//! compile each distinct text once, upload the constants once, give every computed
//! tensor a buffer, and bind every kernel to its buffers. A run then writes the input,
//! records one dispatch per program into one encoder, submits once and reads back once,
//! like [`GpuGraphRunner::run`](crate::runner::GpuGraphRunner::run). By default each
//! dispatch gets a compute pass of its own; [`OpCodeRunner::prepare_with_passes`] can put
//! all of a run's dispatches into one pass instead, as the graph runner does, so the
//! difference can be measured.
//!
//! Every node gets a buffer of its own, a ReLU meant to run in place included: a
//! generated kernel reads its arguments through read-only bindings and writes a separate
//! output binding, and one buffer may not be bound as both in the same dispatch.

use std::collections::HashMap;

use crate::compiler::opcode::generate::{ELEMENT_TILE, ENTRY_POINT};
use crate::compiler::opcode::{
    LoweredNode, OpCodeError, Program, Template, generate_wgsl, lower_graph,
};
use crate::gpu::dispatch::WorkgroupGrid;
use crate::gpu::record::{BoundDispatch, record_in_one_pass, tile_grid};
use crate::gpu::{GpuContext, GpuError, GpuTensor, Readback, compile_wgsl};
use crate::graph::{Operator, TensorId, ValidGraph};
use crate::runner::RunError;
use crate::runner::gpu::ComputePasses;
use crate::tensor::Tensor2d;

// ANCHOR: compile_program
/// Generates the program's WGSL and compiles it.
pub fn compile_program(
    context: &GpuContext,
    program: &Program,
) -> Result<wgpu::ComputePipeline, RunError> {
    let source = generate_wgsl(program)?;
    Ok(compile_wgsl(
        context,
        &program.name(),
        &source,
        ENTRY_POINT,
        &[],
    )?)
}
// ANCHOR_END: compile_program

// ANCHOR: bind_program
/// Binds `arguments` (one per slot, in slot order) and `output` to a program's compiled
/// kernel and sizes its grid. The generated shader declares the slots as bindings
/// 0, 1, … and the output after them, so that is the order they are bound in.
pub fn bind_program(
    context: &GpuContext,
    pipeline: &wgpu::ComputePipeline,
    program: &Program,
    arguments: &[&GpuTensor],
    output: &GpuTensor,
) -> Result<BoundDispatch, RunError> {
    program.validate()?;
    check_arguments(program, arguments, output)?;
    let (rows, columns) = program.output_shape;
    let grid = match Template::of(program) {
        // Tiles of the output, row tiles spilling into z, as the element template expects.
        Template::Elements => tile_grid(context, rows, columns, ELEMENT_TILE, "op-code kernel")?,
        // One workgroup per row, spread over x and y, as the row template expects.
        Template::Rows => {
            let limit = context.limits().max_compute_workgroups_per_dimension;
            WorkgroupGrid::covering(rows as u64, limit, "op-code row kernel")?
        }
    };
    let mut buffers: Vec<&wgpu::Buffer> = arguments.iter().map(|tensor| tensor.buffer()).collect();
    buffers.push(output.buffer());
    Ok(BoundDispatch::new(context, pipeline, &buffers, grid))
}
// ANCHOR_END: bind_program

fn check_arguments(
    program: &Program,
    arguments: &[&GpuTensor],
    output: &GpuTensor,
) -> Result<(), OpCodeError> {
    if arguments.len() != program.bindings.len() {
        return Err(OpCodeError::ArgumentCount {
            expected: program.bindings.len(),
            given: arguments.len(),
        });
    }
    let expectations = program
        .bindings
        .iter()
        .zip(arguments)
        .enumerate()
        .map(|(slot, (binding, tensor))| {
            let argument = format!("slot {slot} ({})", binding.name);
            (argument, binding.shape(), tensor.shape())
        })
        .chain([("output".to_string(), program.output_shape, output.shape())]);
    for (argument, expected, given) in expectations {
        if expected != given {
            return Err(OpCodeError::ArgumentShape {
                argument,
                expected,
                given,
            });
        }
    }
    Ok(())
}

// ANCHOR: opcode_runner
/// Runs a graph as generated kernels: one per compute node, one submission per run.
pub struct OpCodeRunner<'context> {
    context: &'context GpuContext,
    graph: ValidGraph,
    lowered: Vec<LoweredNode>,
    /// By node: the uploaded constant or the buffer of the computed tensor; `None` for
    /// the output node, which names the tensor it marks.
    tensors: Vec<Option<GpuTensor>>,
    /// By program, in execution order.
    kernels: Vec<BoundDispatch>,
    compilations: usize,
    /// How a run's dispatches are grouped into compute passes.
    passes: ComputePasses,
}
// ANCHOR_END: opcode_runner

impl<'context> OpCodeRunner<'context> {
    // ANCHOR: opcode_prepare
    /// Lowers, generates, compiles and binds everything. The graph runs as given: fuse
    /// it first ([`crate::compiler::fuse`]) to get one kernel per fused operator.
    pub fn prepare(
        context: &'context GpuContext,
        graph: &ValidGraph,
    ) -> Result<OpCodeRunner<'context>, RunError> {
        OpCodeRunner::prepare_with_passes(context, graph, ComputePasses::OnePerDispatch)
    }

    /// [`OpCodeRunner::prepare`] with a choice of compute passes: one per dispatch (what
    /// `prepare` does) or all of a run's dispatches in one.
    pub fn prepare_with_passes(
        context: &'context GpuContext,
        graph: &ValidGraph,
        passes: ComputePasses,
    ) -> Result<OpCodeRunner<'context>, RunError> {
        // Lowering skips a node it has no op codes for; refuse such a graph instead of
        // running it without the node.
        if let Some((node, operator)) = graph
            .graph()
            .nodes
            .iter()
            .enumerate()
            .find(|(_, node)| node.operator == Operator::Add)
            .map(|(index, node)| (index, node.operator.name()))
        {
            return Err(RunError::OperatorNotSupported {
                node,
                operator,
                mode: "OpCode",
            });
        }
        let tensors = allocate_tensors(context, graph)?;
        let lowered = lower_graph(graph);
        // Keyed by the text: two nodes with the same program and shapes share a kernel.
        let mut pipelines: HashMap<String, wgpu::ComputePipeline> = HashMap::new();
        let mut kernels = Vec::with_capacity(lowered.len());
        for node in &lowered {
            let source = generate_wgsl(&node.program)?;
            let pipeline = match pipelines.get(&source) {
                Some(pipeline) => pipeline.clone(),
                None => {
                    let label = node.program.name();
                    let pipeline = compile_wgsl(context, &label, &source, ENTRY_POINT, &[])?;
                    pipelines.insert(source, pipeline.clone());
                    pipeline
                }
            };
            let tensor = |id: TensorId| tensor_of(&tensors, graph, id);
            let arguments: Vec<&GpuTensor> = node.arguments.iter().map(|&id| tensor(id)).collect();
            let output = tensor(node.node);
            kernels.push(bind_program(
                context,
                &pipeline,
                &node.program,
                &arguments,
                output,
            )?);
        }
        Ok(OpCodeRunner {
            context,
            graph: graph.clone(),
            lowered,
            tensors,
            kernels,
            compilations: pipelines.len(),
            passes,
        })
    }
    // ANCHOR_END: opcode_prepare

    /// The programs, in the order they run, with the tensors bound to their slots.
    pub fn programs(&self) -> &[LoweredNode] {
        &self.lowered
    }

    pub fn passes(&self) -> ComputePasses {
        self.passes
    }

    /// How many distinct shader texts were compiled.
    pub fn compilations(&self) -> usize {
        self.compilations
    }

    /// Every computed tensor's buffer (the input's included), for tests that poison them
    /// before a run.
    pub fn buffers(&self) -> Vec<&GpuTensor> {
        let nodes = &self.graph.graph().nodes;
        self.tensors
            .iter()
            .zip(nodes)
            .filter(|(_, node)| !node.operator.is_constant())
            .filter_map(|(tensor, _)| tensor.as_ref())
            .collect()
    }

    // ANCHOR: opcode_run
    /// Runs the graph once: one submission, one readback.
    pub fn run(&self, input: &Tensor2d) -> Result<Tensor2d, RunError> {
        let expected = self.graph.shape(self.graph.input());
        if input.shape() != expected {
            return Err(RunError::InputShape {
                expected,
                given: input.shape(),
            });
        }
        let context = self.context;
        tensor_of(&self.tensors, &self.graph, self.graph.input()).write(context, input)?;
        let mut encoder = context.create_encoder("op-code graph");
        match self.passes {
            ComputePasses::OnePerDispatch => {
                for kernel in &self.kernels {
                    kernel.record(&mut encoder);
                }
            }
            ComputePasses::OnePerRun => record_in_one_pass(&mut encoder, &self.kernels),
        }
        let result = tensor_of(&self.tensors, &self.graph, self.graph.result());
        result.record_copy_to_staging(&mut encoder)?;
        context.submit(encoder);
        Ok(result.read_staging(context)?)
    }
    // ANCHOR_END: opcode_run
}

/// Uploads the constants and allocates a buffer for the input and every computed
/// tensor. Only the result gets a staging buffer, because only it is read back.
fn allocate_tensors(
    context: &GpuContext,
    graph: &ValidGraph,
) -> Result<Vec<Option<GpuTensor>>, GpuError> {
    let result = graph.result();
    let mut tensors = Vec::with_capacity(graph.graph().nodes.len());
    for (index, node) in graph.graph().nodes.iter().enumerate() {
        let readback = if TensorId(index) == result {
            Readback::Needed
        } else {
            Readback::Never
        };
        tensors.push(match &node.operator {
            Operator::Output => None,
            Operator::Constant(tensor) => Some(GpuTensor::upload(context, tensor, readback)?),
            _ => {
                let (rows, columns) = graph.shape(TensorId(index));
                Some(GpuTensor::uninitialized(context, rows, columns, readback)?)
            }
        });
    }
    Ok(tensors)
}

/// The GPU tensor holding `id`; the output node holds the tensor it marks.
fn tensor_of<'tensors>(
    tensors: &'tensors [Option<GpuTensor>],
    graph: &ValidGraph,
    id: TensorId,
) -> &'tensors GpuTensor {
    let node = graph.graph().node(id);
    let id = match node.operator {
        Operator::Output => node.inputs[0],
        _ => id,
    };
    tensors[id.0]
        .as_ref()
        .expect("every node but the output has a tensor")
}
