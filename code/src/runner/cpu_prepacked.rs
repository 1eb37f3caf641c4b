//! The fast CPU graph runner behind `ExecutionMode::CpuGraph`: what an inference engine
//! such as ONNX Runtime does when it prepares a network for the CPU, and one step more.
//!
//! Preparation, once per graph:
//!
//! 1. the graph is read as a chain of stages, each a linear layer followed by row-wise
//!    operations (ReLU, softmax), which is what an MLP is;
//! 2. every weight matrix is packed into the micro-kernel's order
//!    ([`PrepackedLinear`]), so a run never copies a weight;
//! 3. bias and ReLU go into the matrix product's epilogue, softmax runs on each finished
//!    row while it is in cache;
//! 4. the rows are cut into blocks that go through *every* layer before the next block
//!    starts ([`LayerStack`]), and the way the rows are shared between threads (one
//!    thread, or a few tasks per thread) is chosen by timing the candidates.
//!
//! A graph that is not such a chain (a weight computed from the input, say) is run by the
//! general [`crate::runner::CpuGraphRunner`] instead; [`CpuPrepackedRunner::prepare`]
//! says so by returning `None`.

use std::time::Duration;

use crate::cpu::layer_stack::{LayerStack, RowOperation, Stage, ThreadSplit};
use crate::cpu::prepacked::PrepackedLinear;
use crate::graph::{Operator, TensorId, ValidGraph};
use crate::runner::RunError;
use crate::tensor::Tensor2d;

/// A chain-shaped graph prepared for the CPU: weights packed, epilogues fused, threads
/// chosen by measurement.
pub struct CpuPrepackedRunner {
    stack: LayerStack,
    /// What the split measurement found: every candidate with its best time.
    split_timings: Vec<(ThreadSplit, Duration)>,
    input_shape: (usize, usize),
    output_shape: (usize, usize),
}

impl CpuPrepackedRunner {
    // ANCHOR: prepare
    /// Prepares `graph`, measuring how to share its rows between threads. `None` when
    /// the graph is not a chain of linear layers and row-wise operations.
    pub fn prepare(graph: &ValidGraph) -> Option<CpuPrepackedRunner> {
        let mut runner = CpuPrepackedRunner::prepare_on_one_thread(graph)?;
        runner.split_timings = runner.stack.choose_split();
        Some(runner)
    }

    /// [`CpuPrepackedRunner::prepare`] without the measurement: everything on the
    /// calling thread until [`CpuPrepackedRunner::set_split`] says otherwise.
    pub fn prepare_on_one_thread(graph: &ValidGraph) -> Option<CpuPrepackedRunner> {
        let stages = chain_stages(graph)?;
        let input_shape = graph.shape(graph.input());
        let output_shape = graph.shape(graph.result());
        let stack = LayerStack::new(input_shape.0, input_shape.1, stages).ok()?;
        Some(CpuPrepackedRunner {
            stack,
            split_timings: Vec::new(),
            input_shape,
            output_shape,
        })
    }
    // ANCHOR_END: prepare

    /// How the rows are shared between threads.
    pub fn split(&self) -> ThreadSplit {
        self.stack.split()
    }

    pub fn set_split(&mut self, split: ThreadSplit) {
        self.stack.set_split(split);
    }

    /// Every split [`CpuPrepackedRunner::prepare`] measured, with its best time on the
    /// first layers (empty when the runner was prepared without measuring).
    pub fn split_timings(&self) -> &[(ThreadSplit, Duration)] {
        &self.split_timings
    }

    /// Runs the graph on `input` and returns the result.
    pub fn run(&mut self, input: &Tensor2d) -> Result<Tensor2d, RunError> {
        if input.shape() != self.input_shape {
            return Err(RunError::InputShape {
                expected: self.input_shape,
                given: input.shape(),
            });
        }
        let (rows, columns) = self.output_shape;
        let mut output = Tensor2d::zeros(rows, columns);
        self.stack
            .run_into(input.as_slice(), output.as_mut_slice())?;
        Ok(output)
    }
}

// ANCHOR: chain_stages
/// The graph as stages, input first, or `None` if it is not a chain: every tensor on the
/// way from the input to the result is computed from the one before it, and every
/// linear layer's weights and bias are constants.
fn chain_stages(graph: &ValidGraph) -> Option<Vec<Stage>> {
    let nodes = &graph.graph().nodes;
    // Walk back from the result to the input along each operator's data input.
    let mut chain = Vec::new();
    let mut id = graph.result();
    while !matches!(nodes[id.0].operator, Operator::Input { .. }) {
        chain.push(id);
        id = *nodes[id.0].inputs.first()?;
    }
    chain.reverse();

    let constant = |id: TensorId| match &nodes[id.0].operator {
        Operator::Constant(tensor) => Some(tensor),
        _ => None,
    };
    let mut stages: Vec<Stage> = Vec::new();
    for id in chain {
        let node = &nodes[id.0];
        let operations: &[RowOperation] = match node.operator {
            Operator::Linear => &[],
            Operator::LinearRelu => &[RowOperation::Relu],
            Operator::LinearReluSoftmax => &[RowOperation::Relu, RowOperation::Softmax],
            Operator::Relu | Operator::ReluInPlace => &[RowOperation::Relu],
            Operator::Softmax => &[RowOperation::Softmax],
            // Two branches meeting: the graph is not a chain.
            Operator::Add => return None,
            Operator::Input { .. } | Operator::Constant(_) | Operator::Output => return None,
            // Int8 and sparse layers run in the general CPU runner, which has their kernels.
            Operator::QuantizedConstant(_)
            | Operator::SparseConstant(_)
            | Operator::LinearInt8 { .. }
            | Operator::LinearSparse { .. } => return None,
        };
        if matches!(
            node.operator,
            Operator::Linear | Operator::LinearRelu | Operator::LinearReluSoftmax
        ) {
            let weights = constant(node.inputs[1])?;
            let bias = constant(node.inputs[2])?;
            stages.push(Stage {
                linear: Some(PrepackedLinear::new(weights, bias).ok()?),
                row_operations: operations.to_vec(),
            });
        } else {
            if stages.is_empty() {
                stages.push(Stage {
                    linear: None,
                    row_operations: Vec::new(),
                });
            }
            let stage = stages.last_mut().expect("a stage was just made");
            stage.row_operations.extend_from_slice(operations);
        }
    }
    Some(stages)
}
// ANCHOR_END: chain_stages

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compiler::{fuse, rewrite_in_place};
    use crate::graph::{ChainBuilder, random_mlp};
    use crate::runner::run_operator_by_operator;
    use crate::tensor::Tolerance;

    #[test]
    fn the_standard_workload_matches_the_operator_by_operator_result() {
        let workload = random_mlp(37, 5, 3).unwrap();
        let expected = run_operator_by_operator(&workload.graph, &workload.input).unwrap();
        let fused = rewrite_in_place(&fuse(&workload.graph).unwrap()).unwrap();
        for graph in [&workload.graph, &fused] {
            let mut runner = CpuPrepackedRunner::prepare(graph).expect("a chain");
            let output = runner.run(&workload.input).unwrap();
            let comparison = output
                .compare(&expected, Tolerance::new(1e-4, 1e-6))
                .unwrap();
            assert!(comparison.passed(), "{comparison}");
        }
    }

    #[test]
    fn relus_and_softmax_before_any_layer_form_a_stage_of_their_own() {
        let input = Tensor2d::from_vec(1, 2, vec![-1.0, 2.0]).unwrap();
        let graph = ChainBuilder::input(1, 2).relu().softmax().output().unwrap();
        let mut runner = CpuPrepackedRunner::prepare(&graph).unwrap();
        let expected = run_operator_by_operator(&graph, &input).unwrap();
        let output = runner.run(&input).unwrap();
        assert!(
            output
                .compare(&expected, Tolerance::new(1e-6, 1e-7))
                .unwrap()
                .passed()
        );
    }

    #[test]
    fn a_wrong_input_shape_is_an_error() {
        let workload = random_mlp(4, 1, 3).unwrap();
        let mut runner = CpuPrepackedRunner::prepare(&workload.graph).unwrap();
        assert_eq!(
            runner.run(&Tensor2d::zeros(4, 5)),
            Err(RunError::InputShape {
                expected: (4, 4),
                given: (4, 5)
            })
        );
    }
}
