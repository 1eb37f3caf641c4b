// mutant: unsafe-rewrite — checks that the ReLU is the only reader but not that its input is computed: a ReLU on the graph's input overwrites the caller's tensor
// expect: which is the graph's input
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
        if only_reader {
            node.operator = Operator::ReluInPlace;
        }
    }
    // Validation checks the rewrite once more: an illegal in-place ReLU is an error.
    rewritten.validate()
}
