//! A wide workload: several independent branches that meet again.
//!
//! `random_branches(shape, seed)` builds an input, `branches` parallel chains of linear
//! layers (each followed by a ReLU with probability ½, as in the standard workload), sums
//! the branches pairwise with `Add` (a balanced tree: `(b0 + b1) + (b2 + b3)`), then a
//! ReLU and a row-wise softmax. Nothing in one branch reads anything of another, so the
//! branches may run at the same time: this is the graph the parallel graph runner
//! ([`crate::parallel::graph_runner`]) is measured on. With one branch it is a chain, the
//! standard workload's shape.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::graph::random_mlp::BIAS_LIMIT;
use crate::graph::{GraphBuilder, GraphError, TensorId, Workload};
use crate::tensor::Tensor2d;

/// The shape of a branching workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BranchShape {
    /// Rows of the input (the batch) and of every activation.
    pub rows: usize,
    /// Columns of the input and of every weight matrix (`columns × columns`).
    pub columns: usize,
    /// How many independent branches leave the input. At least one.
    pub branches: usize,
    /// Linear layers in each branch. At least one.
    pub depth: usize,
}

// ANCHOR: random_branches
/// A graph of `shape.branches` independent chains of `shape.depth` linear layers that
/// leave one input and are summed pairwise at the end. The same arguments give the same
/// graph and input everywhere. Weights are scaled as in
/// [`crate::graph::random_mlp`], so activations keep their size along each branch.
///
/// A size, depth or branch count of 0 is an error: the graph would be empty or would
/// not depend on its weights.
pub fn random_branches(shape: BranchShape, seed: u64) -> Result<Workload, GraphError> {
    if shape.branches == 0 || shape.depth == 0 {
        return Err(GraphError::Empty);
    }
    let mut generator = ChaCha8Rng::seed_from_u64(seed);
    let mut next_seed = || generator.random::<u64>();
    let size = shape.columns;
    let input = Tensor2d::random(shape.rows, size, -1.0..=1.0, next_seed());

    let mut builder = GraphBuilder::new();
    let graph_input = builder.input(shape.rows, size);
    let mut branch_ends: Vec<TensorId> = Vec::with_capacity(shape.branches);
    for _ in 0..shape.branches {
        let mut last = graph_input;
        for _ in 0..shape.depth {
            let weight_seed = next_seed();
            let bias_seed = next_seed();
            let relu_follows = next_seed() % 2 == 0;
            let gain = if relu_follows { 2.0 } else { 1.0 };
            let weight_limit = (3.0 * gain / size as f32).sqrt();
            let weights = Tensor2d::random(size, size, -weight_limit..=weight_limit, weight_seed);
            let bias = Tensor2d::random(1, size, -BIAS_LIMIT..=BIAS_LIMIT, bias_seed);
            last = builder.linear(last, weights, bias);
            if relu_follows {
                last = builder.relu(last);
            }
        }
        branch_ends.push(last);
    }
    let sum = add_pairwise(&mut builder, branch_ends);
    let activated = builder.relu(sum);
    let probabilities = builder.softmax(activated);
    builder.output(probabilities);
    // Validation rejects a size of 0 (an empty input).
    let graph = builder.build()?;
    Ok(Workload { graph, input })
}

/// Sums the tensors as a balanced tree of `Add` nodes: neighbours first, then the sums of
/// neighbours, so the additions of one level are independent of each other too.
fn add_pairwise(builder: &mut GraphBuilder, mut terms: Vec<TensorId>) -> TensorId {
    while terms.len() > 1 {
        terms = terms
            .chunks(2)
            .map(|pair| match *pair {
                [left, right] => builder.add(left, right),
                [alone] => alone,
                _ => unreachable!("chunks(2) gives one or two terms"),
            })
            .collect();
    }
    terms[0]
}
// ANCHOR_END: random_branches

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::Operator;

    fn count(workload: &Workload, wanted: &Operator) -> usize {
        let nodes = &workload.graph.graph().nodes;
        nodes.iter().filter(|node| &node.operator == wanted).count()
    }

    #[test]
    fn has_the_branches_and_joins_it_was_asked_for() {
        for branches in [1, 2, 3, 5, 8] {
            let shape = BranchShape {
                rows: 3,
                columns: 4,
                branches,
                depth: 2,
            };
            let workload = random_branches(shape, 7).unwrap();
            assert_eq!(count(&workload, &Operator::Linear), branches * 2);
            // k terms need k − 1 additions, whatever the tree looks like.
            assert_eq!(count(&workload, &Operator::Add), branches - 1);
            assert_eq!(workload.graph.shape(workload.graph.result()), (3, 4));
        }
    }

    #[test]
    fn the_input_feeds_every_branch() {
        let shape = BranchShape {
            rows: 2,
            columns: 3,
            branches: 4,
            depth: 3,
        };
        let workload = random_branches(shape, 1).unwrap();
        let readers = &workload.graph.consumers()[workload.graph.input().0];
        assert_eq!(readers.len(), 4);
    }

    #[test]
    fn the_same_seed_gives_the_same_workload() {
        let shape = BranchShape {
            rows: 2,
            columns: 3,
            branches: 3,
            depth: 2,
        };
        let first = random_branches(shape, 5).unwrap();
        let second = random_branches(shape, 5).unwrap();
        let other = random_branches(shape, 6).unwrap();
        assert_eq!(first.graph, second.graph);
        assert_eq!(first.input, second.input);
        assert_ne!(first.graph, other.graph);
    }

    #[test]
    fn zero_sizes_are_errors() {
        let shape = BranchShape {
            rows: 2,
            columns: 2,
            branches: 2,
            depth: 2,
        };
        for bad in [
            BranchShape {
                branches: 0,
                ..shape
            },
            BranchShape { depth: 0, ..shape },
            BranchShape { rows: 0, ..shape },
            BranchShape {
                columns: 0,
                ..shape
            },
        ] {
            assert!(random_branches(bad, 1).is_err(), "{bad:?}");
        }
    }
}
