//! The `quantize` pass: every linear layer whose weights are a constant becomes an int8
//! layer (`QuantizedConstant` weights read by a `LinearInt8` node).
//!
//! Why a pass, and not a different network: the graph says *what* is computed, and how the
//! weights are stored is a decision about *how*, like fusion. Quantising ahead of time means
//! a run never touches `f32` weights: it reads a quarter of the bytes, and the products are
//! int8 multiply-adds summed exactly in `i32` (see [`crate::cpu::int8`]). The activations
//! are quantised at run time, row by row, inside the operator. The result differs from the
//! `f32` graph by at most [`crate::inference::quantization::error_bound`] per layer, which
//! the tests check, and the digits network keeps its accuracy within a point.
//!
//! Weights that are not finite cannot be quantised (a NaN has no int8 value, and an infinity
//! would make every other weight of its group zero): the pass refuses them with an error
//! that names the node. A group of weights that are all zero (a pruned output) gets scale 1,
//! never 0, so nothing divides by zero.

use thiserror::Error;

use crate::compiler::weight_rewrite::{Replacement, rewrite_linear_weights};
use crate::cpu::int8::{Granularity, QuantizationError, QuantizedWeights};
use crate::graph::{GraphError, Operator, ValidGraph};

/// Why a graph could not be quantised.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum QuantizePassError {
    #[error("the weights of linear layer {node} cannot be quantised: {source}")]
    Weights {
        node: usize,
        source: QuantizationError,
    },
    #[error(transparent)]
    Graph(#[from] GraphError),
}

// ANCHOR: quantize
/// Rewrites every linear layer with constant weights into an int8 layer, one scale per
/// tensor or per output as `granularity` says. Biases stay `f32`: each is added once per
/// output, so int8 would save almost nothing.
pub fn quantize(
    graph: &ValidGraph,
    granularity: Granularity,
) -> Result<ValidGraph, QuantizePassError> {
    rewrite_linear_weights(graph, |node, weights| {
        let quantized = QuantizedWeights::quantize(weights, granularity).map_err(|source| {
            QuantizePassError::Weights {
                node: node.0,
                source,
            }
        })?;
        Ok(Some(Replacement {
            weights: Operator::QuantizedConstant(quantized),
            layer: |relu| Operator::LinearInt8 { relu },
        }))
    })
}
// ANCHOR_END: quantize

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{ChainBuilder, random_mlp};
    use crate::tensor::Tensor2d;

    #[test]
    fn every_linear_layer_becomes_int8_and_softmax_stays_last() {
        let workload = random_mlp(8, 5, 3).unwrap();
        let fused = crate::compiler::fuse(&workload.graph).unwrap();
        for graph in [&workload.graph, &fused] {
            let quantized = quantize(graph, Granularity::PerOutput).unwrap();
            let operators: Vec<&Operator> = quantized
                .graph()
                .nodes
                .iter()
                .map(|node| &node.operator)
                .collect();
            assert!(!operators.iter().any(|operator| matches!(
                operator,
                Operator::Linear | Operator::LinearRelu | Operator::LinearReluSoftmax
            )));
            let int8_layers = operators
                .iter()
                .filter(|operator| matches!(operator, Operator::LinearInt8 { .. }))
                .count();
            assert_eq!(int8_layers, 5);
            // The old f32 weights are gone: each was read by its layer only.
            assert!(!operators.iter().any(|operator| matches!(
                operator,
                Operator::Constant(tensor) if tensor.rows() > 1
            )));
        }
    }

    #[test]
    fn nan_weights_are_refused_with_the_node_named() {
        let mut weights = Tensor2d::random(4, 3, -1.0..=1.0, 1);
        weights.set(1, 2, f32::NAN);
        let graph = ChainBuilder::input(2, 4)
            .linear(weights, Tensor2d::zeros(1, 3))
            .output()
            .unwrap();
        let error = quantize(&graph, Granularity::PerTensor).unwrap_err();
        assert!(matches!(error, QuantizePassError::Weights { .. }));
        let text = error.to_string();
        assert!(
            text.starts_with("the weights of linear layer ")
                && text.contains("non-finite value (NaN) at row 1, column 2"),
            "{text}"
        );
    }
}
