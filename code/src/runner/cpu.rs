//! The CPU graph runner.
//!
//! Preparation allocates the buffers of the [`BufferPlan`] once; a run only computes. A
//! ReLU whose input is read by nothing else overwrites that input instead of taking a
//! buffer of its own: the graph makes that visible, because it records every reader.
//!
//! This is the optimised CPU path (`ExecutionMode::CpuGraph`): linear layers, fused or
//! not, run the register-blocked kernel on every core ([`cpu::linear_parallel_into`]).
//! The plain path, [`run_operator_by_operator`], keeps the textbook
//! [`cpu::linear_naive`].

use crate::cpu;
use crate::graph::{Operator, TensorId, ValidGraph};
use crate::runner::node_by_node::{StoredWeights, evaluate_node_by_node};
use crate::runner::{BufferPlan, RunError};
use crate::tensor::Tensor2d;

/// Runs a graph on the CPU with buffers allocated once.
pub struct CpuGraphRunner {
    graph: ValidGraph,
    plan: BufferPlan,
    buffers: Vec<Tensor2d>,
}

impl CpuGraphRunner {
    // ANCHOR: prepare
    pub fn prepare(graph: &ValidGraph) -> CpuGraphRunner {
        CpuGraphRunner::prepare_with_plan(graph, BufferPlan::new(graph))
    }

    /// Prepares with a given buffer plan, such as one from
    /// [`crate::compiler::reuse_buffers`].
    pub fn prepare_with_plan(graph: &ValidGraph, plan: BufferPlan) -> CpuGraphRunner {
        let buffers = plan
            .buffer_shapes
            .iter()
            .map(|&(rows, columns)| Tensor2d::zeros(rows, columns))
            .collect();
        CpuGraphRunner {
            graph: graph.clone(),
            plan,
            buffers,
        }
    }
    // ANCHOR_END: prepare

    /// How many buffers preparation allocated (in-place ReLUs need none).
    pub fn buffer_count(&self) -> usize {
        self.buffers.len()
    }

    // ANCHOR: run
    /// Runs the graph on `input` and returns the result.
    pub fn run(&mut self, input: &Tensor2d) -> Result<Tensor2d, RunError> {
        let expected = self.graph.shape(self.graph.input());
        if input.shape() != expected {
            return Err(RunError::InputShape {
                expected,
                given: input.shape(),
            });
        }
        for index in 0..self.graph.execution_order().len() {
            let id = self.graph.execution_order()[index];
            self.run_node(id, input)?;
        }
        let result = self.plan.buffer_of[self.graph.result().0].expect("the result has a buffer");
        Ok(self.buffers[result].clone())
    }
    // ANCHOR_END: run

    fn run_node(&mut self, id: TensorId, input: &Tensor2d) -> Result<(), RunError> {
        let node = &self.graph.graph().nodes[id.0];
        let Some(target) = self.plan.buffer_of[id.0] else {
            return Ok(());
        };
        // Take the output buffer out of the list, so that the inputs can be borrowed
        // from the list while it is written.
        let mut output = std::mem::replace(&mut self.buffers[target], Tensor2d::zeros(0, 0));
        let tensor = |position: usize| -> &Tensor2d {
            let source = node.inputs[position];
            match &self.graph.graph().node(source).operator {
                Operator::Constant(tensor) => tensor,
                _ => {
                    &self.buffers
                        [self.plan.buffer_of[source.0].expect("computed tensors have buffers")]
                }
            }
        };
        let result = match node.operator {
            Operator::Input { .. } => {
                output.as_mut_slice().copy_from_slice(input.as_slice());
                Ok(())
            }
            // The fast kernel, on every core: this runner is the optimised CPU path.
            Operator::Linear => {
                cpu::linear_parallel_into(tensor(0), tensor(1), tensor(2), &mut output)
                    .map_err(RunError::from)
            }
            Operator::LinearRelu => {
                cpu::linear_relu_into(tensor(0), tensor(1), tensor(2), &mut output)
                    .map_err(RunError::from)
            }
            Operator::LinearReluSoftmax => {
                cpu::linear_relu_softmax_into(tensor(0), tensor(1), tensor(2), &mut output)
                    .map_err(RunError::from)
            }
            Operator::ReluInPlace => {
                cpu::relu_in_place(&mut output);
                Ok(())
            }
            Operator::Relu => cpu::relu_into(tensor(0), &mut output).map_err(RunError::from),
            Operator::Add => {
                cpu::add_into(tensor(0), tensor(1), &mut output).map_err(RunError::from)
            }
            Operator::Softmax => {
                output.as_mut_slice().copy_from_slice(tensor(0).as_slice());
                cpu::softmax_in_place(&mut output).map_err(RunError::from)
            }
            // Int8 and sparse weights live in their constant nodes, read where they are.
            Operator::LinearInt8 { relu } => {
                let Operator::QuantizedConstant(weights) =
                    &self.graph.graph().node(node.inputs[1]).operator
                else {
                    unreachable!("validation checked the weights' kind")
                };
                cpu::int8::linear_int8_into(tensor(0), weights, tensor(2), relu, &mut output)
                    .map_err(RunError::from)
            }
            Operator::LinearSparse { relu } => {
                let Operator::SparseConstant(weights) =
                    &self.graph.graph().node(node.inputs[1]).operator
                else {
                    unreachable!("validation checked the weights' kind")
                };
                cpu::linear_sparse::linear_sparse_into(
                    tensor(0),
                    weights,
                    tensor(2),
                    relu,
                    &mut output,
                )
                .map_err(RunError::from)
            }
            Operator::Constant(_)
            | Operator::QuantizedConstant(_)
            | Operator::SparseConstant(_)
            | Operator::Output => Ok(()),
        };
        self.buffers[target] = output;
        result
    }
}

// ANCHOR: operator_by_operator
/// The graph evaluated with plain operator calls, each allocating its result: the `Cpu`
/// execution mode, and the reference every other mode is compared against.
pub fn run_operator_by_operator(
    graph: &ValidGraph,
    input: &Tensor2d,
) -> Result<Tensor2d, RunError> {
    evaluate_node_by_node(graph, input, |operator, arguments, weights| {
        Ok(match (operator, weights) {
            (Operator::LinearInt8 { relu }, Some(StoredWeights::Quantized(weights))) => {
                cpu_int8_linear(arguments[0], weights, arguments[2], *relu)?
            }
            (Operator::LinearSparse { relu }, Some(StoredWeights::Sparse(weights))) => {
                let (rows, columns) = (arguments[0].rows(), weights.columns());
                let mut output = Tensor2d::zeros(rows, columns);
                cpu::linear_sparse::linear_sparse_into(
                    arguments[0],
                    weights,
                    arguments[2],
                    *relu,
                    &mut output,
                )?;
                output
            }
            (operator, _) => plain_operator(operator, arguments)?,
        })
    })
}
// ANCHOR_END: operator_by_operator

/// One int8 linear layer into a new tensor.
fn cpu_int8_linear(
    input: &Tensor2d,
    weights: &crate::cpu::int8::QuantizedWeights,
    bias: &Tensor2d,
    relu: bool,
) -> Result<Tensor2d, RunError> {
    let mut output = Tensor2d::zeros(input.rows(), weights.outputs());
    cpu::int8::linear_int8_into(input, weights, bias, relu, &mut output)?;
    Ok(output)
}

/// One operator of module 1's graphs, its result a new tensor.
fn plain_operator(operator: &Operator, arguments: &[&Tensor2d]) -> Result<Tensor2d, RunError> {
    let linear = || cpu::linear_naive(arguments[0], arguments[1], arguments[2]);
    Ok(match operator {
        Operator::Linear => linear()?,
        Operator::LinearRelu => cpu::relu(&linear()?),
        Operator::LinearReluSoftmax => cpu::softmax(&cpu::relu(&linear()?))?,
        Operator::Relu | Operator::ReluInPlace => cpu::relu(arguments[0]),
        Operator::Softmax => cpu::softmax(arguments[0])?,
        Operator::Add => cpu::add(arguments[0], arguments[1])?,
        Operator::Input { .. }
        | Operator::Constant(_)
        | Operator::QuantizedConstant(_)
        | Operator::SparseConstant(_)
        | Operator::Output => {
            unreachable!("the walk handles inputs, constants and the output itself")
        }
        Operator::LinearInt8 { .. } | Operator::LinearSparse { .. } => {
            unreachable!("validation gives every int8 or sparse layer its weights")
        }
    })
}
