//! Operator fusion: `Linear → Relu` becomes `LinearRelu` (a second ReLU after it folds
//! in too), and `LinearRelu → Softmax` becomes `LinearReluSoftmax`. The int8 and sparse
//! layers of module 3 take a ReLU after them the same way.
//!
//! A fused operator computes the same values, but never writes the intermediate tensor
//! to memory and never reads it back: the ReLU is applied while the linear layer's sum is
//! still in a register. Fusion is only legal when nothing else reads the intermediate.

use crate::graph::{Graph, GraphError, Operator, TensorId, ValidGraph};

// ANCHOR: fuse
/// Fuses every `Linear → Relu` and `LinearRelu → Softmax` pair whose intermediate
/// result has no other reader.
pub fn fuse(graph: &ValidGraph) -> Result<ValidGraph, GraphError> {
    let nodes = &graph.graph().nodes;
    let consumers = graph.consumers();
    let mut operators: Vec<Operator> = nodes.iter().map(|node| node.operator.clone()).collect();
    // `absorbed_into[i] = Some(j)`: node i's work now happens inside node j.
    let mut absorbed_into: Vec<Option<usize>> = vec![None; nodes.len()];
    let producer = |absorbed_into: &[Option<usize>], mut id: usize| {
        while let Some(next) = absorbed_into[id] {
            id = next;
        }
        id
    };

    // Dependencies first, so a Linear is fused with its Relu before that pair meets the
    // Softmax after it.
    for &id in graph.execution_order() {
        let node = &nodes[id.0];
        let Some(&read) = node.inputs.first() else {
            continue;
        };
        let sole_reader = consumers[read.0].len() == 1;
        let source = producer(&absorbed_into, read.0);
        let fused = match (&node.operator, &operators[source]) {
            (Operator::Relu | Operator::ReluInPlace, Operator::Linear) if sole_reader => {
                Operator::LinearRelu
            }
            // relu(relu(x)) = relu(x): a second ReLU adds nothing.
            (Operator::Relu | Operator::ReluInPlace, Operator::LinearRelu) if sole_reader => {
                Operator::LinearRelu
            }
            (Operator::Softmax, Operator::LinearRelu) if sole_reader => Operator::LinearReluSoftmax,
            // Int8 and sparse layers take their ReLU into the same loop that scales or
            // stores each sum. A softmax stays a node of its own: it needs whole rows,
            // which these kernels finish one block at a time, and it runs once per graph.
            (Operator::Relu | Operator::ReluInPlace, Operator::LinearInt8 { .. })
                if sole_reader =>
            {
                Operator::LinearInt8 { relu: true }
            }
            (Operator::Relu | Operator::ReluInPlace, Operator::LinearSparse { .. })
                if sole_reader =>
            {
                Operator::LinearSparse { relu: true }
            }
            _ => continue,
        };
        operators[source] = fused;
        absorbed_into[id.0] = Some(source);
    }

    // Renumber the nodes that remain; readers of an absorbed node read its fused node.
    let mut new_index = vec![usize::MAX; nodes.len()];
    let mut kept = 0;
    for (index, absorbed) in absorbed_into.iter().enumerate() {
        if absorbed.is_none() {
            new_index[index] = kept;
            kept += 1;
        }
    }
    let mut fused_graph = Graph::new();
    for (index, node) in nodes.iter().enumerate() {
        if absorbed_into[index].is_some() {
            continue;
        }
        let inputs = node
            .inputs
            .iter()
            .map(|input| TensorId(new_index[producer(&absorbed_into, input.0)]))
            .collect();
        fused_graph.push(operators[index].clone(), inputs);
    }
    fused_graph.validate()
}
// ANCHOR_END: fuse
