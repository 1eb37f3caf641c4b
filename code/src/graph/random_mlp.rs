//! The standard workload: a random multi-layer perceptron.
//!
//! `random_mlp(size, depth, seed)` is what every benchmark and figure of the graph
//! chapters runs: a `size × size` input, `depth` linear layers of `size × size` weights,
//! each followed by a ReLU with probability ½, a ReLU at the end, then a row-wise softmax.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::graph::{ChainBuilder, GraphError, ValidGraph};
use crate::tensor::Tensor2d;

/// A graph together with an input to run it on.
#[derive(Debug, Clone)]
pub struct Workload {
    pub graph: ValidGraph,
    pub input: Tensor2d,
}

// ANCHOR: random_mlp
/// The standard workload. The same arguments give the same graph and input everywhere;
/// a size of 0 is an error.
///
/// Weights are uniform in ±√(3/size), so each has variance 1/size and a linear layer
/// keeps the mean square of its input: deep chains neither explode nor vanish. Biases are
/// uniform in ±1/√size. Outputs stay finite at any depth (a test checks depth 128).
pub fn random_mlp(size: usize, depth: usize, seed: u64) -> Result<Workload, GraphError> {
    let mut generator = ChaCha8Rng::seed_from_u64(seed);
    let weight_limit = (3.0 / size as f32).sqrt();
    let bias_limit = 1.0 / (size as f32).sqrt();
    let mut next_seed = || generator.random::<u64>();

    let input = Tensor2d::random(size, size, -1.0..=1.0, next_seed());
    let mut chain = ChainBuilder::input(size, size);
    for _ in 0..depth {
        let weights = Tensor2d::random(size, size, -weight_limit..=weight_limit, next_seed());
        let bias = Tensor2d::random(1, size, -bias_limit..=bias_limit, next_seed());
        chain = chain.linear(weights, bias);
        if next_seed() % 2 == 0 {
            chain = chain.relu();
        }
    }
    // Validation rejects a size of 0 (an empty input).
    let graph = chain.relu().softmax().output()?;
    Ok(Workload { graph, input })
}
// ANCHOR_END: random_mlp
