//! What the `quantize` and `sparsify` passes share: find every linear layer whose weights
//! are a constant tensor, and put a layer that stores its weights another way in its place.
//!
//! The rewrite keeps node ids stable (a node's id is its position), so it never removes a
//! node: the new weights replace the old constant where only linear layers read it as
//! weights, and go into a node of their own otherwise. A fused `LinearReluSoftmax` loses
//! its softmax to a `Softmax` node appended after it, because the cheaper layers fuse only
//! the ReLU (see `fusion`).

use crate::graph::{Graph, GraphError, Node, Operator, TensorId, ValidGraph};
use crate::tensor::Tensor2d;

/// A linear layer's weights, stored the new way, and the layer that reads them.
pub struct Replacement {
    /// The constant node that holds the new weights.
    pub weights: Operator,
    /// The linear operator, given whether a ReLU follows it in the same operator.
    pub layer: fn(bool) -> Operator,
}

/// Rewrites every linear layer for which `choose` returns a replacement. `choose` sees the
/// layer's node id and its dense weights.
pub fn rewrite_linear_weights<E: From<GraphError>>(
    graph: &ValidGraph,
    mut choose: impl FnMut(TensorId, &Tensor2d) -> Result<Option<Replacement>, E>,
) -> Result<ValidGraph, E> {
    let consumers = graph.consumers();
    let mut rewritten: Graph = graph.graph().clone();
    let original = &graph.graph().nodes;
    for (index, node) in original.iter().enumerate() {
        let (relu, softmax) = match node.operator {
            Operator::Linear => (false, false),
            Operator::LinearRelu => (true, false),
            Operator::LinearReluSoftmax => (true, true),
            _ => continue,
        };
        let weights_id = node.inputs[1];
        let Operator::Constant(weights) = &original[weights_id.0].operator else {
            continue;
        };
        let Some(replacement) = choose(TensorId(index), weights)? else {
            continue;
        };
        // Replace the constant itself when every reader is a linear layer reading it as
        // weights (and so is rewritten too); otherwise give the new weights a node.
        let only_weights = consumers[weights_id.0].iter().all(|reader| {
            let reader = &original[reader.0];
            matches!(
                reader.operator,
                Operator::Linear | Operator::LinearRelu | Operator::LinearReluSoftmax
            ) && reader.inputs[1] == weights_id
                && reader.inputs[0] != weights_id
                && reader.inputs[2] != weights_id
        });
        let new_weights = if only_weights {
            rewritten.nodes[weights_id.0].operator = replacement.weights;
            weights_id
        } else {
            rewritten.push(replacement.weights, Vec::new())
        };
        let layer = &mut rewritten.nodes[index];
        layer.operator = (replacement.layer)(relu);
        layer.inputs[1] = new_weights;
        if softmax {
            let softmax = rewritten.push(Operator::Softmax, vec![TensorId(index)]);
            for reader in &consumers[index] {
                redirect(&mut rewritten.nodes[reader.0], TensorId(index), softmax);
            }
        }
    }
    Ok(rewritten.validate()?)
}

fn redirect(node: &mut Node, from: TensorId, to: TensorId) {
    for input in &mut node.inputs {
        if *input == from {
            *input = to;
        }
    }
}
