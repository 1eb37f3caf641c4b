//! The in-place ReLU: a ReLU that overwrites its input instead of writing a new tensor.
//!
//! ReLU reads one element and writes one element at the same place, so the kernel can
//! safely write over its own input. Whether the *graph* allows it is another question:
//! the input must be a tensor the graph computed (never the caller's input, never the
//! weights), and nothing else may read it, or that reader would see the ReLU's result
//! instead of the value it expected.
//!
//! The graph records every reader of every tensor, so the rewrite can decide this for
//! each ReLU. [`ValidGraph::consumers`] lists the readers; validation rejects an illegal
//! `Operator::ReluInPlace`, so a wrong rewrite fails loudly rather than silently.

use galaxy::graph::{Graph, GraphError, ValidGraph};

/// Turns every `Relu` that may overwrite its input into an `Operator::ReluInPlace`, and
/// leaves every other node exactly as it was.
pub fn rewrite_relus_in_place(graph: &ValidGraph) -> Result<ValidGraph, GraphError> {
    let rewritten: Graph = graph.graph().clone();
    // TODO: for each node of `rewritten` whose operator is `Operator::Relu`, look at the
    // node it reads (`node.inputs[0]`): if it is computed and this ReLU is its only
    // reader, change the operator to `Operator::ReluInPlace`.
    rewritten.validate()
}
