//! The in-place rewrite: a ReLU that is the only reader of a computed tensor overwrites
//! it instead of writing a new one.
//!
//! ReLU reads one element and writes one element at the same position, so no invocation
//! ever reads a value another one has already overwritten. What makes the rewrite legal
//! is the graph: it lists every reader of every tensor, so the pass can see that nothing
//! else will look at the input afterwards.

use crate::graph::{Graph, GraphError, Operator, ValidGraph};

// ANCHOR: rewrite_in_place
/// Turns every `Relu` that may overwrite its input into a `ReluInPlace`.
pub fn rewrite_in_place(graph: &ValidGraph) -> Result<ValidGraph, GraphError> {
    let consumers = graph.consumers();
    let mut rewritten: Graph = graph.graph().clone();
    for node in &mut rewritten.nodes {
        if node.operator != Operator::Relu {
            continue;
        }
        let input = node.inputs[0].0;
        let source = &graph.graph().nodes[input].operator;
        let computed = !(matches!(source, Operator::Input { .. }) || source.is_constant());
        if computed && consumers[input].len() == 1 {
            node.operator = Operator::ReluInPlace;
        }
    }
    rewritten.validate()
}
// ANCHOR_END: rewrite_in_place
