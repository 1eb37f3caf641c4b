//! One entry point for every execution mode the benchmarks compare.
//!
//! Prepare once with [`ExecutionMode::prepare`], then call [`Execution::run`] as often as
//! needed. `run` executes the graph `iterations` times and returns every result, read
//! back to the host: all modes do the same work and hand back the same numbers, so their
//! timings compare like with like.

use crate::compiler::fused_mlp::FusionRequest;
use crate::compiler::{LinearSelection, fuse, quantize, reuse_buffers, rewrite_in_place, sparsify};
use crate::cpu::int8::Granularity;
use crate::gpu::{GpuContext, GpuTensor, ShaderCompilation};
use crate::graph::{Operator, ValidGraph};
use crate::immediate::ImmediateGpu;
use crate::runner::fused::{FusedMlpRunner, prepare_fused};
use crate::runner::gpu::{ComputePasses, GpuRunnerOptions};
use crate::runner::node_by_node::evaluate_node_by_node;
use crate::runner::{
    BufferPlan, CpuGraphRunner, CpuPrepackedRunner, GpuGraphRunner, OpCodeRunner, RunError,
    reject_cheaper_operators, run_operator_by_operator,
};
use crate::tensor::{ShapeError, Tensor2d};

// ANCHOR: execution_mode
/// How a graph is executed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExecutionMode {
    /// Plain CPU operator calls, each allocating its result.
    Cpu,
    /// The CPU graph runner: weights packed once, bias, ReLU and softmax in the matrix
    /// product's epilogue, every layer run on one block of rows while it is in cache, the
    /// rows shared between threads as a measurement at preparation chose.
    CpuGraph,
    /// One GPU operator at a time: upload, compile, dispatch, read back.
    Immediate,
    /// As `Immediate`, with compiled pipelines reused.
    ImmediateCached,
    /// The whole graph in one submission, weights uploaded once, ReLU in place where
    /// legal, one readback.
    Graph,
    /// `Graph` with compiled pipelines reused. (Every `Graph…` mode records a run's
    /// kernels into one compute pass.)
    GraphCached,
    /// `Graph` on the fused graph.
    GraphFused,
    /// `Graph` on the fused graph, with compiled pipelines reused.
    GraphCachedFused,
    /// All iterations recorded back to back into one submission, each read back.
    GraphLoop,
    GraphLoopCached,
    GraphLoopFused,
    GraphLoopCachedFused,
    /// The graph fused, lowered to op codes and compiled to generated WGSL.
    OpCode,
    /// Everything at once: the graph fused, ReLUs in place, buffers shared by liveness,
    /// pipelines cached and bound once, each linear layer run by the kernel measured
    /// fastest on its shape at preparation (for large enough layers; the rule's choice
    /// otherwise), all of a run's kernels in one compute pass; or, where the fused-MLP
    /// pass expects it to be faster, the whole
    /// chain of layers as one dispatch of the fully fused kernel.
    GraphCompiled,
}
// ANCHOR_END: execution_mode

impl ExecutionMode {
    pub const ALL: [ExecutionMode; 14] = [
        ExecutionMode::Cpu,
        ExecutionMode::CpuGraph,
        ExecutionMode::Immediate,
        ExecutionMode::ImmediateCached,
        ExecutionMode::Graph,
        ExecutionMode::GraphCached,
        ExecutionMode::GraphFused,
        ExecutionMode::GraphCachedFused,
        ExecutionMode::GraphLoop,
        ExecutionMode::GraphLoopCached,
        ExecutionMode::GraphLoopFused,
        ExecutionMode::GraphLoopCachedFused,
        ExecutionMode::OpCode,
        ExecutionMode::GraphCompiled,
    ];

    /// The mode's name, as written in the code (`GraphCompiled`).
    pub fn name(self) -> &'static str {
        match self {
            ExecutionMode::Cpu => "Cpu",
            ExecutionMode::CpuGraph => "CpuGraph",
            ExecutionMode::Immediate => "Immediate",
            ExecutionMode::ImmediateCached => "ImmediateCached",
            ExecutionMode::Graph => "Graph",
            ExecutionMode::GraphCached => "GraphCached",
            ExecutionMode::GraphFused => "GraphFused",
            ExecutionMode::GraphCachedFused => "GraphCachedFused",
            ExecutionMode::GraphLoop => "GraphLoop",
            ExecutionMode::GraphLoopCached => "GraphLoopCached",
            ExecutionMode::GraphLoopFused => "GraphLoopFused",
            ExecutionMode::GraphLoopCachedFused => "GraphLoopCachedFused",
            ExecutionMode::OpCode => "OpCode",
            ExecutionMode::GraphCompiled => "GraphCompiled",
        }
    }

    /// Whether the mode has kernels for module 3's int8 and sparse linear layers: the CPU
    /// modes and every GPU graph mode do. Immediate mode and the op-code runner refuse a
    /// graph that holds one with an error that names the node and the modes that run it.
    pub fn runs_cheaper_operators(self) -> bool {
        !matches!(
            self,
            ExecutionMode::Immediate | ExecutionMode::ImmediateCached | ExecutionMode::OpCode
        )
    }

    pub fn uses_gpu(self) -> bool {
        !matches!(self, ExecutionMode::Cpu | ExecutionMode::CpuGraph)
    }

    fn compilation(self) -> ShaderCompilation {
        match self {
            ExecutionMode::ImmediateCached
            | ExecutionMode::GraphCached
            | ExecutionMode::GraphCachedFused
            | ExecutionMode::GraphLoopCached
            | ExecutionMode::GraphLoopCachedFused
            | ExecutionMode::GraphCompiled => ShaderCompilation::Cached,
            _ => ShaderCompilation::EveryCall,
        }
    }

    fn fuses(self) -> bool {
        matches!(
            self,
            ExecutionMode::GraphFused
                | ExecutionMode::GraphCachedFused
                | ExecutionMode::GraphLoopFused
                | ExecutionMode::GraphLoopCachedFused
        )
    }

    /// Whether the mode runs many iterations in one submission (`Execution::run` with
    /// `iterations > 1` is then one GPU loop, not a loop of runs).
    pub fn loops_on_the_gpu(self) -> bool {
        matches!(
            self,
            ExecutionMode::GraphLoop
                | ExecutionMode::GraphLoopCached
                | ExecutionMode::GraphLoopFused
                | ExecutionMode::GraphLoopCachedFused
        )
    }

    // ANCHOR: prepare_with_weights
    /// Prepares `graph` for this mode after storing its linear layers' weights as
    /// `storage` asks: the `quantize` or `sparsify` pass, then [`ExecutionMode::prepare`].
    pub fn prepare_with_weights<'context>(
        self,
        graph: &ValidGraph,
        storage: WeightStorage,
        context: Option<&'context GpuContext>,
    ) -> Result<Execution<'context>, RunError> {
        let graph = match storage {
            WeightStorage::Float32 => graph.clone(),
            WeightStorage::Int8(granularity) => quantize(graph, granularity)?,
            WeightStorage::Sparse { maximum_density } => sparsify(graph, maximum_density)?,
        };
        self.prepare(&graph, context)
    }
    // ANCHOR_END: prepare_with_weights

    // ANCHOR: prepare_mode
    /// Prepares `graph` for this mode. GPU modes need a context.
    pub fn prepare<'context>(
        self,
        graph: &ValidGraph,
        context: Option<&'context GpuContext>,
    ) -> Result<Execution<'context>, RunError> {
        let gpu = || context.ok_or(RunError::NoGpuContext { mode: self });
        if !self.runs_cheaper_operators() {
            reject_cheaper_operators(graph, self.name())?;
        }
        let runner = match self {
            ExecutionMode::Cpu => Runner::OperatorByOperator(graph.clone()),
            // Weights packed once, epilogues fused, threads chosen by measurement; a graph
            // that is not a chain of layers falls back to the general CPU runner.
            ExecutionMode::CpuGraph => match CpuPrepackedRunner::prepare(graph) {
                Some(runner) => Runner::CpuPrepacked(runner),
                None => Runner::CpuGraph(CpuGraphRunner::prepare(&rewrite_in_place(graph)?)),
            },
            ExecutionMode::Immediate | ExecutionMode::ImmediateCached => Runner::Immediate {
                graph: graph.clone(),
                gpu: ImmediateGpu::new(gpu()?, self.compilation()),
            },
            ExecutionMode::OpCode => Runner::OpCode(OpCodeRunner::prepare(gpu()?, &fuse(graph)?)?),
            ExecutionMode::GraphCompiled => {
                return prepare_compiled_with_fusion(gpu()?, graph, FusionRequest::default());
            }
            _ => {
                let graph = if self.fuses() {
                    fuse(graph)?
                } else {
                    graph.clone()
                };
                let graph = rewrite_in_place(&graph)?;
                let runner = GpuGraphRunner::prepare(gpu()?, &graph, self.compilation())?;
                if self.loops_on_the_gpu() {
                    Runner::GpuGraphLoop(runner)
                } else {
                    Runner::GpuGraph(runner)
                }
            }
        };
        Ok(Execution { mode: self, runner })
    }
    // ANCHOR_END: prepare_mode
}

// ANCHOR: prepare_compiled
/// The `GraphCompiled` mode: every pass of the compiler, then the runner with the fast
/// linear kernels, the subgroup softmax where the device has subgroups, and one compute
/// pass per run.
fn prepare_compiled<'context>(
    context: &'context GpuContext,
    graph: &ValidGraph,
) -> Result<GpuGraphRunner<'context>, RunError> {
    let graph = rewrite_in_place(&fuse(graph)?)?;
    let plan = reuse_buffers(&graph).plan;
    let options = GpuRunnerOptions {
        compilation: ShaderCompilation::Cached,
        linear: LinearSelection::Measured,
        softmax: context.best_reduction_strategy(),
        passes: ComputePasses::OnePerRun,
    };
    GpuGraphRunner::prepare_with_options(context, &graph, plan, options)
}
// ANCHOR_END: prepare_compiled

/// The `GraphCompiled` mode with the fully fused kernel used as `request` asks: where
/// the fused-MLP pass plans one kernel, that kernel; otherwise the per-layer runner.
pub fn prepare_compiled_with_fusion<'context>(
    context: &'context GpuContext,
    graph: &ValidGraph,
    request: FusionRequest,
) -> Result<Execution<'context>, RunError> {
    let runner = match prepare_fused(context, graph, request)? {
        Some(fused) => Runner::FusedMlp(Box::new(fused)),
        None => Runner::GpuGraph(prepare_compiled(context, graph)?),
    };
    Ok(Execution {
        mode: ExecutionMode::GraphCompiled,
        runner,
    })
}

/// Where the compiled mode keeps its tensors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CompiledBuffers {
    /// Buffers shared by tensors whose lifetimes do not overlap (the buffer-reuse pass):
    /// three activation buffers for the standard workload.
    Reused,
    /// One buffer per computed tensor, as in the other graph modes.
    OnePerTensor,
}

/// The runner of `GraphCompiled` with one of its choices changed, to measure what that
/// choice is worth on its own: where its tensors live, and how its dispatches are grouped
/// into compute passes. `(CompiledBuffers::Reused, ComputePasses::OnePerRun)` is the mode
/// itself.
pub fn prepare_compiled_variant<'context>(
    context: &'context GpuContext,
    graph: &ValidGraph,
    buffers: CompiledBuffers,
    passes: ComputePasses,
) -> Result<GpuGraphRunner<'context>, RunError> {
    let graph = rewrite_in_place(&fuse(graph)?)?;
    let plan = match buffers {
        CompiledBuffers::Reused => reuse_buffers(&graph).plan,
        CompiledBuffers::OnePerTensor => BufferPlan::new(&graph),
    };
    let options = GpuRunnerOptions {
        passes,
        ..compiled_runner_options(context)
    };
    GpuGraphRunner::prepare_with_options(context, &graph, plan, options)
}

/// The runner options [`prepare_compiled`] spells out (a test keeps the two the same).
fn compiled_runner_options(context: &GpuContext) -> GpuRunnerOptions {
    GpuRunnerOptions {
        compilation: ShaderCompilation::Cached,
        linear: LinearSelection::Measured,
        softmax: context.best_reduction_strategy(),
        passes: ComputePasses::OnePerRun,
    }
}

/// How the weights of a graph's linear layers are stored when it is prepared.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum WeightStorage {
    /// As the graph holds them: `f32` tensors.
    Float32,
    /// Quantised to int8 by the `quantize` pass.
    Int8(Granularity),
    /// In CSR, by the `sparsify` pass, for the layers with at most this fraction of
    /// non-zero weights (`compiler::SPARSE_DENSITY_THRESHOLD` is the measured crossover).
    Sparse { maximum_density: f64 },
}

/// A graph prepared for one execution mode.
pub struct Execution<'context> {
    mode: ExecutionMode,
    runner: Runner<'context>,
}

enum Runner<'context> {
    OperatorByOperator(ValidGraph),
    CpuGraph(CpuGraphRunner),
    CpuPrepacked(CpuPrepackedRunner),
    Immediate {
        graph: ValidGraph,
        gpu: ImmediateGpu<'context>,
    },
    GpuGraph(GpuGraphRunner<'context>),
    GpuGraphLoop(GpuGraphRunner<'context>),
    OpCode(OpCodeRunner<'context>),
    /// Boxed: the runner holds its plan, which is large beside the other runners.
    FusedMlp(Box<FusedMlpRunner<'context>>),
}

impl Execution<'_> {
    pub fn mode(&self) -> ExecutionMode {
        self.mode
    }

    /// The fused runner, when the graph runs as one dispatch of the fully fused kernel.
    pub fn fused_runner(&self) -> Option<&FusedMlpRunner<'_>> {
        match &self.runner {
            Runner::FusedMlp(runner) => Some(runner.as_ref()),
            _ => None,
        }
    }

    /// The GPU buffers a run writes its results into, for tests that fill them with NaN
    /// first: every buffer of the graph runners, the fused kernel's output. Empty for the
    /// CPU modes, immediate mode and the op-code runner, which allocate per run.
    pub fn result_buffers(&self) -> Vec<&GpuTensor> {
        match &self.runner {
            Runner::GpuGraph(runner) | Runner::GpuGraphLoop(runner) => {
                runner.buffers().iter().collect()
            }
            Runner::FusedMlp(runner) => vec![runner.result_buffer()],
            _ => Vec::new(),
        }
    }

    // ANCHOR: execution_run
    /// Runs the graph `iterations` times on `input` and returns every result, read back.
    pub fn run(&mut self, input: &Tensor2d, iterations: usize) -> Result<Vec<Tensor2d>, RunError> {
        if let Runner::GpuGraphLoop(runner) = &self.runner {
            return runner.run_loop(input, iterations);
        }
        (0..iterations).map(|_| self.run_once(input)).collect()
    }
    // ANCHOR_END: execution_run

    /// Runs the graph once on `input`, writing the result into `output` (as long as the
    /// result). The GPU graph modes and the fused kernel read back straight into it, so a
    /// caller that keeps `output` between runs allocates nothing per run; the other modes
    /// compute a new tensor and copy it.
    pub fn run_into(&mut self, input: &Tensor2d, output: &mut [f32]) -> Result<(), RunError> {
        match &mut self.runner {
            Runner::GpuGraph(runner) | Runner::GpuGraphLoop(runner) => {
                runner.run_into(input, output)
            }
            Runner::FusedMlp(runner) => runner.run_into(input, output),
            _ => {
                let result = self.run_once(input)?;
                if result.len() != output.len() {
                    return Err(ShapeError::Incompatible {
                        operation: "Execution::run_into",
                        expectation: "the output must hold exactly the result's values",
                        left_name: "result",
                        left: result.shape(),
                        right_name: "output of length",
                        right: (output.len(), 1),
                    }
                    .into());
                }
                output.copy_from_slice(result.as_slice());
                Ok(())
            }
        }
    }

    fn run_once(&mut self, input: &Tensor2d) -> Result<Tensor2d, RunError> {
        match &mut self.runner {
            Runner::OperatorByOperator(graph) => run_operator_by_operator(graph, input),
            Runner::CpuGraph(runner) => runner.run(input),
            Runner::CpuPrepacked(runner) => runner.run(input),
            Runner::Immediate { graph, gpu } => run_immediate(graph, gpu, input),
            Runner::GpuGraph(runner) | Runner::GpuGraphLoop(runner) => runner.run(input),
            Runner::OpCode(runner) => runner.run(input),
            Runner::FusedMlp(runner) => runner.run(input),
        }
    }
}

// ANCHOR: run_immediate
/// Walks the graph calling one immediate-mode GPU operator per node: every operator
/// uploads its inputs (the weights included) and reads its result back.
fn run_immediate(
    graph: &ValidGraph,
    gpu: &ImmediateGpu,
    input: &Tensor2d,
) -> Result<Tensor2d, RunError> {
    evaluate_node_by_node(graph, input, |operator, arguments, _| {
        let (first, rest) = (arguments[0], &arguments[1..]);
        Ok(match operator {
            Operator::Linear => gpu.linear(first, rest[0], rest[1])?,
            Operator::LinearRelu => gpu.linear_relu(first, rest[0], rest[1])?,
            Operator::LinearReluSoftmax => {
                gpu.softmax(&gpu.linear_relu(first, rest[0], rest[1])?)?
            }
            Operator::Relu | Operator::ReluInPlace => gpu.relu(first)?,
            Operator::Softmax => gpu.softmax(first)?,
            Operator::Add => gpu.add(first, rest[0])?,
            Operator::Input { .. } | Operator::Constant(_) | Operator::Output => {
                unreachable!("the walk handles inputs, constants and the output itself")
            }
            // Refused when the mode was prepared (`reject_cheaper_operators`).
            Operator::QuantizedConstant(_)
            | Operator::SparseConstant(_)
            | Operator::LinearInt8 { .. }
            | Operator::LinearSparse { .. } => {
                unreachable!("immediate mode has no int8 or sparse kernel")
            }
        })
    })
}
// ANCHOR_END: run_immediate

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::random_mlp;

    #[test]
    fn the_compiled_variants_differ_from_the_mode_only_where_asked() {
        let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
        let workload = random_mlp(8, 4, 11).unwrap();
        let mode = prepare_compiled(context, &workload.graph).unwrap();
        assert_eq!(mode.options(), compiled_runner_options(context));
        let same = prepare_compiled_variant(
            context,
            &workload.graph,
            CompiledBuffers::Reused,
            ComputePasses::OnePerRun,
        )
        .unwrap();
        assert_eq!(same.options(), mode.options());
        assert_eq!(same.buffers().len(), mode.buffers().len());
        let own_buffers = prepare_compiled_variant(
            context,
            &workload.graph,
            CompiledBuffers::OnePerTensor,
            ComputePasses::OnePerDispatch,
        )
        .unwrap();
        assert_eq!(own_buffers.options().passes, ComputePasses::OnePerDispatch);
        assert!(
            own_buffers.buffers().len() > mode.buffers().len(),
            "{} buffers without reuse, {} with",
            own_buffers.buffers().len(),
            mode.buffers().len()
        );
    }
}
