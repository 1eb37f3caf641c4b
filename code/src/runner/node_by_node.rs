//! Walking a graph one node at a time, every result a fresh tensor.
//!
//! The `Cpu` and `Immediate` modes work this way: no buffers are planned, each operator
//! call allocates (and, on the GPU, uploads and reads back) what it needs. They differ
//! only in which function computes a node, so the walk itself is written once, here.

use crate::cpu::int8::QuantizedWeights;
use crate::cpu::sparse::CsrMatrix;
use crate::graph::{Operator, ValidGraph};
use crate::runner::RunError;
use crate::tensor::Tensor2d;

/// Weights a node reads that are not a tensor: int8 or sparse (module 3).
#[derive(Debug, Clone, Copy)]
pub enum StoredWeights<'graph> {
    Quantized(&'graph QuantizedWeights),
    Sparse(&'graph CsrMatrix),
}

// ANCHOR: evaluate_node_by_node
/// Evaluates `graph` on `input` in dependency order. `compute` is called for every
/// operator that computes something, with the tensors its inputs name, and with the
/// weights of an int8 or sparse linear layer (which are not tensors; an empty tensor takes
/// their place among the arguments).
pub fn evaluate_node_by_node(
    graph: &ValidGraph,
    input: &Tensor2d,
    mut compute: impl FnMut(
        &Operator,
        &[&Tensor2d],
        Option<StoredWeights<'_>>,
    ) -> Result<Tensor2d, RunError>,
) -> Result<Tensor2d, RunError> {
    let placeholder = Tensor2d::zeros(0, 0);
    let expected = graph.shape(graph.input());
    if input.shape() != expected {
        return Err(RunError::InputShape {
            expected,
            given: input.shape(),
        });
    }
    let nodes = &graph.graph().nodes;
    let mut results: Vec<Option<Tensor2d>> = vec![None; nodes.len()];
    for &id in graph.execution_order() {
        let node = &nodes[id.0];
        let arguments: Vec<&Tensor2d> = node
            .inputs
            .iter()
            .map(|source| match &nodes[source.0].operator {
                Operator::Constant(tensor) => tensor,
                Operator::QuantizedConstant(_) | Operator::SparseConstant(_) => &placeholder,
                _ => results[source.0]
                    .as_ref()
                    .expect("inputs are computed first"),
            })
            .collect();
        let weights = node
            .inputs
            .iter()
            .find_map(|source| match &nodes[source.0].operator {
                Operator::QuantizedConstant(weights) => Some(StoredWeights::Quantized(weights)),
                Operator::SparseConstant(weights) => Some(StoredWeights::Sparse(weights)),
                _ => None,
            });
        let result = match &node.operator {
            Operator::Input { .. } => Some(input.clone()),
            operator if operator.is_constant() => None,
            Operator::Output => Some(arguments[0].clone()),
            operator => Some(compute(operator, &arguments, weights)?),
        };
        results[id.0] = result;
    }
    Ok(results[graph.output().0]
        .take()
        .expect("the output node ran"))
}
// ANCHOR_END: evaluate_node_by_node
