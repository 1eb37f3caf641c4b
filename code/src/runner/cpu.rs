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
use crate::runner::node_by_node::evaluate_node_by_node;
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
            }
            Operator::LinearRelu => {
                cpu::linear_relu_into(tensor(0), tensor(1), tensor(2), &mut output)
            }
            Operator::LinearReluSoftmax => {
                cpu::linear_relu_softmax_into(tensor(0), tensor(1), tensor(2), &mut output)
            }
            Operator::ReluInPlace => {
                cpu::relu_in_place(&mut output);
                Ok(())
            }
            Operator::Relu => cpu::relu_into(tensor(0), &mut output),
            Operator::Add => cpu::add_into(tensor(0), tensor(1), &mut output),
            Operator::Softmax => {
                output.as_mut_slice().copy_from_slice(tensor(0).as_slice());
                cpu::softmax_in_place(&mut output)
            }
            Operator::Constant(_) | Operator::Output => Ok(()),
        };
        self.buffers[target] = output;
        Ok(result?)
    }
}

// ANCHOR: operator_by_operator
/// The graph evaluated with plain operator calls, each allocating its result: the `Cpu`
/// execution mode, and the reference every other mode is compared against.
pub fn run_operator_by_operator(
    graph: &ValidGraph,
    input: &Tensor2d,
) -> Result<Tensor2d, RunError> {
    evaluate_node_by_node(graph, input, |operator, arguments| {
        let linear = || cpu::linear_naive(arguments[0], arguments[1], arguments[2]);
        Ok(match operator {
            Operator::Linear => linear()?,
            Operator::LinearRelu => cpu::relu(&linear()?),
            Operator::LinearReluSoftmax => cpu::softmax(&cpu::relu(&linear()?))?,
            Operator::Relu | Operator::ReluInPlace => cpu::relu(arguments[0]),
            Operator::Softmax => cpu::softmax(arguments[0])?,
            Operator::Add => cpu::add(arguments[0], arguments[1])?,
            Operator::Input { .. } | Operator::Constant(_) | Operator::Output => {
                unreachable!("the walk handles inputs, constants and the output itself")
            }
        })
    })
}
// ANCHOR_END: operator_by_operator
