//! Running the independent branches of a graph at the same time.
//!
//! The sequential CPU runner ([`crate::runner::CpuGraphRunner`]) walks one topological
//! order: node after node, even where two nodes have nothing to do with each other. The
//! graph says which nodes are independent (neither reads what the other computes, directly
//! or not), and this runner uses that: it keeps, for every node, a count of the inputs not
//! computed yet; a node becomes *ready* when its count reaches zero, and ready nodes run
//! on rayon's pool of threads, which steals work from busy threads for idle ones.
//!
//! Three decisions, each with its reason:
//!
//! - **Buffers**: one buffer per computed tensor ([`BufferPlan::new`]), allocated at
//!   preparation as the sequential runner does. A plan that shares a buffer between
//!   tensors whose lifetimes do not overlap *in one order* ([`crate::compiler::reuse_buffers`])
//!   is wrong here: in another order two branches could write it at once. Each buffer sits
//!   in an `RwLock`; the schedule already guarantees that nobody writes a buffer someone
//!   else reads, so the locks are never contended, and they let the compiler check that.
//! - **Continuing on the same thread**: a node that finishes and makes exactly one
//!   consumer ready runs that consumer itself instead of handing it to the pool. A chain
//!   of layers then stays on one thread and costs nothing extra; only a node that makes
//!   several nodes ready (a fork) gives the extra ones to the pool, one `spawn` each.
//!   rayon boxes each spawned job, so a run allocates one small job per extra branch and
//!   nothing per node of a chain; the tensors themselves are never allocated in a run,
//!   except the copy of the result that is handed back (as the sequential runner does).
//! - **Which linear kernel**: the sequential runner's linear layers split their rows
//!   between all cores ([`cpu::linear_parallel_into`]). Inside a branch that already runs
//!   beside others, that inner parallelism competes with the branch parallelism for the
//!   same cores. [`LinearKernel`] chooses: the row-parallel kernel, or the same
//!   register-blocked kernel on one thread ([`cpu::linear_register_blocked_into`]).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, RwLock, RwLockReadGuard};

use crate::cpu;
use crate::graph::{Node, Operator, ValidGraph};
use crate::runner::{BufferPlan, RunError};
use crate::tensor::{ShapeError, Tensor2d};

/// Which kernel runs each linear layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LinearKernel {
    /// Rows split between all threads of the pool: parallelism inside each layer as well
    /// as between branches.
    RowParallel,
    /// One thread per layer: the only parallelism is between branches.
    SingleThreaded,
}

// ANCHOR: parallel_graph_runner
/// Runs a graph on the CPU, independent nodes at the same time.
pub struct ParallelGraphRunner {
    graph: ValidGraph,
    plan: BufferPlan,
    buffers: Vec<RwLock<Tensor2d>>,
    /// For every node, the nodes that read it (each once), constants left out.
    consumers: Vec<Vec<usize>>,
    /// For every node, how many distinct computed tensors it reads.
    input_count: Vec<usize>,
    /// During a run: for every node, how many of its inputs are not computed yet.
    waiting_on: Vec<AtomicUsize>,
    /// The nodes that read no computed tensor (the input node): where a run starts.
    starts: Vec<usize>,
    linear: LinearKernel,
}
// ANCHOR_END: parallel_graph_runner

impl ParallelGraphRunner {
    // ANCHOR: parallel_prepare
    /// Prepares `graph`: one buffer per computed tensor, and the dependency counts.
    pub fn prepare(graph: &ValidGraph, linear: LinearKernel) -> ParallelGraphRunner {
        let plan = BufferPlan::new(graph);
        let buffers = plan
            .buffer_shapes
            .iter()
            .map(|&(rows, columns)| RwLock::new(Tensor2d::zeros(rows, columns)))
            .collect();
        let nodes = &graph.graph().nodes;
        let is_constant = |index: usize| nodes[index].operator.is_constant();
        let consumers: Vec<Vec<usize>> = graph
            .consumers()
            .into_iter()
            .map(|readers| readers.into_iter().map(|reader| reader.0).collect())
            .collect();
        // A constant is ready before the run starts, so it is not waited on.
        let input_count: Vec<usize> = (0..nodes.len())
            .map(|index| {
                let mut computed: Vec<usize> = nodes[index]
                    .inputs
                    .iter()
                    .map(|input| input.0)
                    .filter(|&input| !is_constant(input))
                    .collect();
                computed.sort_unstable();
                computed.dedup();
                computed.len()
            })
            .collect();
        let starts = (0..nodes.len())
            .filter(|&index| input_count[index] == 0 && !is_constant(index))
            .collect();
        ParallelGraphRunner {
            graph: graph.clone(),
            plan,
            buffers,
            waiting_on: input_count.iter().map(|_| AtomicUsize::new(0)).collect(),
            consumers,
            input_count,
            starts,
            linear,
        }
    }
    // ANCHOR_END: parallel_prepare

    pub fn linear_kernel(&self) -> LinearKernel {
        self.linear
    }

    /// How many buffers preparation allocated.
    pub fn buffer_count(&self) -> usize {
        self.buffers.len()
    }

    // ANCHOR: parallel_run
    /// Runs the graph on `input` and returns the result.
    pub fn run(&mut self, input: &Tensor2d) -> Result<Tensor2d, RunError> {
        let expected = self.graph.shape(self.graph.input());
        if input.shape() != expected {
            return Err(RunError::InputShape {
                expected,
                given: input.shape(),
            });
        }
        for (waiting, &count) in self.waiting_on.iter().zip(&self.input_count) {
            waiting.store(count, Ordering::Relaxed);
        }
        let first_error: Mutex<Option<RunError>> = Mutex::new(None);
        let runner = &*self;
        rayon::scope(|scope| {
            for &start in &runner.starts {
                let first_error = &first_error;
                scope.spawn(move |scope| runner.run_from(start, input, scope, first_error));
            }
        });
        if let Some(error) = first_error.into_inner().unwrap_or_else(|p| p.into_inner()) {
            return Err(error);
        }
        let result = self.plan.buffer_of[self.graph.result().0].expect("the result has a buffer");
        let result = self.buffers[result]
            .read()
            .unwrap_or_else(|poison| poison.into_inner());
        Ok(result.clone())
    }

    /// Runs `node`, then every consumer it makes ready: the first on this thread, the
    /// others spawned for any idle thread to take.
    fn run_from<'scope>(
        &'scope self,
        mut node: usize,
        input: &'scope Tensor2d,
        scope: &rayon::Scope<'scope>,
        first_error: &'scope Mutex<Option<RunError>>,
    ) {
        loop {
            if let Err(error) = self.compute(node, input) {
                // Stop this path; what it feeds never becomes ready, so the run ends.
                let mut slot = first_error.lock().unwrap_or_else(|p| p.into_inner());
                slot.get_or_insert(error);
                return;
            }
            let mut next = None;
            for &consumer in &self.consumers[node] {
                // AcqRel: the last input to finish sees (acquires) what the others wrote.
                if self.waiting_on[consumer].fetch_sub(1, Ordering::AcqRel) == 1 {
                    match next {
                        None => next = Some(consumer),
                        Some(_) => {
                            scope.spawn(move |scope| {
                                self.run_from(consumer, input, scope, first_error)
                            });
                        }
                    }
                }
            }
            match next {
                Some(consumer) => node = consumer,
                None => return,
            }
        }
    }
    // ANCHOR_END: parallel_run

    // ANCHOR: parallel_compute
    /// Computes one node into its buffer. Its inputs are finished, and nothing else
    /// touches its buffer until it is: the locks are never waited on.
    fn compute(&self, index: usize, input: &Tensor2d) -> Result<(), RunError> {
        let node = &self.graph.graph().nodes[index];
        let Some(target) = self.plan.buffer_of[index] else {
            return Ok(()); // a constant: it lives in the graph
        };
        if node.operator == Operator::Output {
            return Ok(()); // it marks its input's buffer as the result
        }
        let mut output = self.buffers[target]
            .write()
            .unwrap_or_else(|poison| poison.into_inner());
        let argument = |position: usize| self.argument(node, position);
        match node.operator {
            Operator::Input { .. } => {
                output.as_mut_slice().copy_from_slice(input.as_slice());
                Ok(())
            }
            Operator::Linear | Operator::LinearRelu | Operator::LinearReluSoftmax => {
                let (data, weights, bias) = (argument(0), argument(1), argument(2));
                self.linear(data.tensor(), weights.tensor(), bias.tensor(), &mut output)?;
                if node.operator != Operator::Linear {
                    cpu::relu_in_place(&mut output);
                }
                if node.operator == Operator::LinearReluSoftmax {
                    cpu::softmax_in_place(&mut output)?;
                }
                Ok(())
            }
            // Module 3's int8 and sparse layers: their weights live in their constant nodes.
            Operator::LinearInt8 { relu } => {
                let (data, bias) = (argument(0), argument(2));
                let Operator::QuantizedConstant(weights) =
                    &self.graph.graph().node(node.inputs[1]).operator
                else {
                    unreachable!("validation checked the weights' kind")
                };
                let (data, bias) = (data.tensor(), bias.tensor());
                Ok(cpu::int8::linear_int8_into(
                    data,
                    weights,
                    bias,
                    relu,
                    &mut output,
                )?)
            }
            Operator::LinearSparse { relu } => {
                let (data, bias) = (argument(0), argument(2));
                let Operator::SparseConstant(weights) =
                    &self.graph.graph().node(node.inputs[1]).operator
                else {
                    unreachable!("validation checked the weights' kind")
                };
                let (data, bias) = (data.tensor(), bias.tensor());
                Ok(cpu::linear_sparse::linear_sparse_into(
                    data,
                    weights,
                    bias,
                    relu,
                    &mut output,
                )?)
            }
            // Its buffer is its input's, locked for writing above.
            Operator::ReluInPlace => {
                cpu::relu_in_place(&mut output);
                Ok(())
            }
            Operator::Relu => Ok(cpu::relu_into(argument(0).tensor(), &mut output)?),
            Operator::Add => Ok(cpu::add_into(
                argument(0).tensor(),
                argument(1).tensor(),
                &mut output,
            )?),
            Operator::Softmax => {
                output
                    .as_mut_slice()
                    .copy_from_slice(argument(0).tensor().as_slice());
                Ok(cpu::softmax_in_place(&mut output)?)
            }
            Operator::Constant(_)
            | Operator::QuantizedConstant(_)
            | Operator::SparseConstant(_)
            | Operator::Output => Ok(()),
        }
    }

    /// Input `position` of `node`: a constant of the graph, or a finished buffer, locked
    /// for reading while the node uses it.
    fn argument<'runner>(&'runner self, node: &'runner Node, position: usize) -> Argument<'runner> {
        let source = node.inputs[position].0;
        match &self.graph.graph().nodes[source].operator {
            Operator::Constant(tensor) => Argument::Constant(tensor),
            Operator::QuantizedConstant(_) | Operator::SparseConstant(_) => {
                unreachable!("int8 and sparse weights are read from their nodes, not as tensors")
            }
            _ => {
                let buffer = self.plan.buffer_of[source].expect("computed tensors have buffers");
                let guard = self.buffers[buffer]
                    .read()
                    .unwrap_or_else(|poison| poison.into_inner());
                Argument::Buffer(guard)
            }
        }
    }
    // ANCHOR_END: parallel_compute

    fn linear(
        &self,
        input: &Tensor2d,
        weights: &Tensor2d,
        bias: &Tensor2d,
        output: &mut Tensor2d,
    ) -> Result<(), ShapeError> {
        match self.linear {
            LinearKernel::RowParallel => cpu::linear_parallel_into(input, weights, bias, output),
            LinearKernel::SingleThreaded => {
                cpu::linear_register_blocked_into(input, weights, bias, output)
            }
        }
    }
}

/// An input of a node: a constant of the graph, or a computed buffer held for reading.
enum Argument<'a> {
    Constant(&'a Tensor2d),
    Buffer(RwLockReadGuard<'a, Tensor2d>),
}

impl Argument<'_> {
    fn tensor(&self) -> &Tensor2d {
        match self {
            Argument::Constant(tensor) => tensor,
            Argument::Buffer(guard) => guard,
        }
    }
}
