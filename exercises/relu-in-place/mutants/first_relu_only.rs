// mutant: missed-rewrite — stops after the first ReLU it rewrites (a `break` left in from debugging)
// expect: which nothing else reads, but it was not rewritten
//! The in-place ReLU: a ReLU that overwrites its input instead of writing a new tensor.
//! The reference solution with the one mistake named in the first line.
//!
//! A ReLU may overwrite its input when the input is a tensor the graph computed (not the
//! graph's input, not a constant) and the ReLU is its only reader.

use galaxy::graph::{Graph, GraphError, Operator, ValidGraph};

/// Turns every `Relu` that may overwrite its input into an `Operator::ReluInPlace`, and
/// leaves every other node exactly as it was.
pub fn rewrite_relus_in_place(graph: &ValidGraph) -> Result<ValidGraph, GraphError> {
    // The readers are those of the graph as given: the rewrite changes operators only,
    // never which node reads which tensor.
    let readers = graph.consumers();
    let mut rewritten: Graph = graph.graph().clone();
    for node in &mut rewritten.nodes {
        if node.operator != Operator::Relu {
            continue;
        }
        let input = node.inputs[0];
        let computed = !matches!(
            graph.graph().node(input).operator,
            Operator::Input { .. } | Operator::Constant(_)
        );
        let only_reader = readers[input.0].len() == 1;
        if computed && only_reader {
            node.operator = Operator::ReluInPlace;
            break;
        }
    }
    // Validation checks the rewrite once more: an illegal in-place ReLU is an error.
    rewritten.validate()
}
