//! The standard workload: a random multi-layer perceptron.
//!
//! `random_mlp(size, depth, seed)` is what every benchmark and figure of the graph
//! chapters runs: a `size × size` input, `depth` linear layers of `size × size` weights,
//! each followed by a ReLU with probability ½, a ReLU at the end, then a row-wise softmax.
//! [`Workload::layers`] reads the layers back out of the graph, for code that runs the same
//! network some other way (`examples/workload_signal.rs` measures it layer by layer,
//! `examples/export_workload.rs` writes it to a file for the PyTorch comparison).

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::graph::{ChainBuilder, GraphError, Operator, ValidGraph};
use crate::tensor::Tensor2d;

/// A graph together with an input to run it on.
#[derive(Debug, Clone)]
pub struct Workload {
    pub graph: ValidGraph,
    pub input: Tensor2d,
}

// ANCHOR: random_mlp
/// Biases are uniform in ±`BIAS_LIMIT`: small beside activations of mean square ⅓, so that
/// after 128 layers the output still depends on the input more than on the biases.
pub const BIAS_LIMIT: f32 = 0.05;

/// The standard workload. The same arguments give the same graph and input everywhere;
/// a size of 0 is an error.
///
/// The weights are scaled for what follows each layer, so that the mean square of the
/// activations stays where the input put it (⅓, for values uniform in ±1) at any depth.
/// Each output of a linear layer is a sum of `size` products; with independent weights of
/// mean zero and variance σ², its mean square is `size · σ²` times the input's. A ReLU
/// then zeroes the negative half of a symmetric, zero-mean value and so halves its mean
/// square (He et al. 2015, §2.2). The gain `size · σ²` is therefore 2 for a layer that a
/// ReLU follows (the last one always is) and 1 for the others, and the weights are
/// uniform in ±√(3 · gain / size), whose variance is gain / size. That is why the coin
/// for a layer's ReLU is thrown before its weights are drawn.
pub fn random_mlp(size: usize, depth: usize, seed: u64) -> Result<Workload, GraphError> {
    let mut generator = ChaCha8Rng::seed_from_u64(seed);
    let mut next_seed = || generator.random::<u64>();

    let input = Tensor2d::random(size, size, -1.0..=1.0, next_seed());
    let mut chain = ChainBuilder::input(size, size);
    for layer in 0..depth {
        let weight_seed = next_seed();
        let bias_seed = next_seed();
        let relu_follows = next_seed() % 2 == 0;
        let is_last = layer + 1 == depth;
        let gain = if relu_follows || is_last { 2.0 } else { 1.0 };
        let weight_limit = (3.0 * gain / size as f32).sqrt();
        let weights = Tensor2d::random(size, size, -weight_limit..=weight_limit, weight_seed);
        let bias = Tensor2d::random(1, size, -BIAS_LIMIT..=BIAS_LIMIT, bias_seed);
        chain = chain.linear(weights, bias);
        if relu_follows {
            chain = chain.relu();
        }
    }
    // Validation rejects a size of 0 (an empty input).
    let graph = chain.relu().softmax().output()?;
    Ok(Workload { graph, input })
}
// ANCHOR_END: random_mlp

/// One linear layer of a workload, as its graph holds it: `x · weights + bias`, then a
/// ReLU when `relu` is set.
#[derive(Debug, Clone, Copy)]
pub struct Layer<'workload> {
    pub weights: &'workload Tensor2d,
    pub bias: &'workload Tensor2d,
    /// Whether a ReLU reads this layer's result. For the last layer of the standard
    /// workload it always does: the ReLU before the softmax.
    pub relu: bool,
}

impl Workload {
    /// The linear layers in the order the graph runs them. The network is these layers
    /// applied to the input one after the other, then a row-wise softmax.
    pub fn layers(&self) -> Vec<Layer<'_>> {
        let nodes = &self.graph.graph().nodes;
        let consumers = self.graph.consumers();
        let constant = |id: usize| match &nodes[id].operator {
            Operator::Constant(tensor) => tensor,
            other => unreachable!("a validated linear node reads a constant, not {other:?}"),
        };
        self.graph
            .execution_order()
            .iter()
            .filter(|id| nodes[id.0].operator == Operator::Linear)
            .map(|id| {
                let inputs = &nodes[id.0].inputs;
                Layer {
                    weights: constant(inputs[1].0),
                    bias: constant(inputs[2].0),
                    relu: consumers[id.0]
                        .iter()
                        .any(|reader| nodes[reader.0].operator == Operator::Relu),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `size · variance` of the weights, measured: the gain a layer applies to the mean
    /// square of its input.
    fn measured_gain(weights: &Tensor2d) -> f64 {
        let values = weights.as_slice();
        let mean_square = values
            .iter()
            .map(|&w| f64::from(w) * f64::from(w))
            .sum::<f64>()
            / values.len() as f64;
        weights.rows() as f64 * mean_square
    }

    #[test]
    fn layers_before_a_relu_have_gain_two_and_the_others_gain_one() {
        for (size, depth, seed) in [(64, 40, 1), (128, 24, 2026), (17, 30, 3)] {
            let workload = random_mlp(size, depth, seed).unwrap();
            let layers = workload.layers();
            assert_eq!(layers.len(), depth);
            assert!(
                layers[depth - 1].relu,
                "the last layer is followed by the final ReLU"
            );
            let with_relu = layers.iter().filter(|layer| layer.relu).count();
            assert!(with_relu > 1 && with_relu < depth, "{with_relu} of {depth}");
            // The sample variance of size² uniform values is within a few per cent of its
            // expectation; gains 1 and 2 are far apart.
            let tolerance = 6.0 / size as f64;
            for (index, layer) in layers.iter().enumerate() {
                let expected = if layer.relu { 2.0 } else { 1.0 };
                let gain = measured_gain(layer.weights);
                assert!(
                    (gain - expected).abs() < tolerance * expected,
                    "size {size} seed {seed} layer {index}: gain {gain}, expected {expected}"
                );
                let largest_bias = layer
                    .bias
                    .as_slice()
                    .iter()
                    .map(|b| b.abs())
                    .fold(0.0, f32::max);
                assert!(
                    largest_bias <= BIAS_LIMIT,
                    "layer {index}: bias {largest_bias}"
                );
            }
        }
    }

    #[test]
    fn layers_list_the_graph_in_order() {
        let workload = random_mlp(5, 7, 9).unwrap();
        let nodes = &workload.graph.graph().nodes;
        let relus = nodes
            .iter()
            .filter(|node| node.operator == Operator::Relu)
            .count();
        let layers = workload.layers();
        // Every ReLU but a second one after the last layer belongs to one layer.
        let layers_with_relu = layers.iter().filter(|layer| layer.relu).count();
        assert!(
            relus == layers_with_relu || relus == layers_with_relu + 1,
            "{relus}"
        );
        let first_weights = nodes
            .iter()
            .find_map(|node| match &node.operator {
                Operator::Constant(tensor) if tensor.shape() == (5, 5) => Some(tensor),
                _ => None,
            })
            .unwrap();
        assert_eq!(layers[0].weights, first_weights);
        assert!(layers.iter().all(|layer| layer.bias.shape() == (1, 5)));
    }
}
