// alternative: counts every tensor's readers itself in one pass over the nodes (instead of `consumers()`), decides with a `match` on the input's operator, and rewrites through indices
//! The in-place ReLU: a ReLU that overwrites its input instead of writing a new tensor.

use galaxy::graph::{GraphError, Operator, ValidGraph};

/// Turns every `Relu` that may overwrite its input into an `Operator::ReluInPlace`, and
/// leaves every other node exactly as it was.
pub fn rewrite_relus_in_place(graph: &ValidGraph) -> Result<ValidGraph, GraphError> {
    let mut rewritten = graph.graph().clone();
    let mut reader_count = vec![0_usize; rewritten.nodes.len()];
    for node in &rewritten.nodes {
        for input in &node.inputs {
            reader_count[input.0] += 1;
        }
    }
    let relus: Vec<usize> = (0..rewritten.nodes.len())
        .filter(|&index| rewritten.nodes[index].operator == Operator::Relu)
        .collect();
    for index in relus {
        let input = rewritten.nodes[index].inputs[0].0;
        let may_overwrite = match rewritten.nodes[input].operator {
            Operator::Input { .. } | Operator::Constant(_) => false,
            _ => reader_count[input] == 1,
        };
        if may_overwrite {
            rewritten.nodes[index].operator = Operator::ReluInPlace;
        }
    }
    rewritten.validate()
}
