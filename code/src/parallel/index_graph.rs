//! A graph as a `Vec` of nodes that name their inputs by index: the layout of the crate's
//! computational graph ([`crate::graph::Graph`]).
//!
//! The same small graph as [`super::pointer_graph`] (every node's value is its own weight
//! plus the mean of its inputs' values), so that the two can be compared side by side. Here
//! a node is a position in one vector and an edge is a `u32`; nothing is shared, nothing
//! is counted, and the borrow checker has nothing to object to: the whole graph is one
//! owned value. Because the description lists every node after its inputs, evaluation is
//! one forward loop over the vector.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

// ANCHOR: dag_description
/// A graph written down as plain data: node `i` has a weight and reads nodes with smaller
/// indices. Both representations are built from it.
#[derive(Debug, Clone, PartialEq)]
pub struct DagDescription {
    pub weights: Vec<f32>,
    pub inputs: Vec<Vec<u32>>,
}

impl DagDescription {
    /// `node_count` nodes; node `i > 0` reads node `i − 1` and, with probability ½, one
    /// more earlier node chosen at random, so every node leads to the last one.
    pub fn random(node_count: usize, seed: u64) -> DagDescription {
        let mut generator = ChaCha8Rng::seed_from_u64(seed);
        let mut weights = Vec::with_capacity(node_count);
        let mut inputs = Vec::with_capacity(node_count);
        for index in 0..node_count {
            // Small weights of both signs keep the sums far from overflowing.
            weights.push(generator.random_range(-1.0f32..1.0) / node_count.max(1) as f32);
            let mut reads = Vec::new();
            if index > 0 {
                reads.push(index as u32 - 1);
                if index > 1 && generator.random::<bool>() {
                    reads.push(generator.random_range(0..index as u32 - 1));
                }
            }
            inputs.push(reads);
        }
        DagDescription { weights, inputs }
    }
}
// ANCHOR_END: dag_description

// ANCHOR: index_graph
/// One node: its weight and the indices of the nodes it reads.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexNode {
    pub weight: f32,
    pub inputs: Vec<u32>,
}

/// The graph: nodes in one vector, every node after the nodes it reads.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexGraph {
    pub nodes: Vec<IndexNode>,
}

impl IndexGraph {
    pub fn new(description: &DagDescription) -> IndexGraph {
        let nodes = description
            .weights
            .iter()
            .zip(&description.inputs)
            .map(|(&weight, inputs)| IndexNode {
                weight,
                inputs: inputs.clone(),
            })
            .collect();
        IndexGraph { nodes }
    }

    /// The value of the last node. One pass: the inputs of node `i` are all before `i`,
    /// so their values are already in `values`, which is reused from call to call.
    pub fn evaluate(&self, values: &mut Vec<f32>) -> f32 {
        values.clear();
        for node in &self.nodes {
            let inputs: f32 = node
                .inputs
                .iter()
                .map(|&input| values[input as usize])
                .sum();
            values.push(node.weight + mean(inputs, node.inputs.len()));
        }
        values.last().copied().unwrap_or(0.0)
    }
}
// ANCHOR_END: index_graph

/// The mean of `count` inputs that add up to `sum` (0 for none). A node takes the mean
/// rather than the sum so that values stay bounded however many paths lead to a node.
pub fn mean(sum: f32, count: usize) -> f32 {
    if count == 0 { 0.0 } else { sum / count as f32 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diamond_averages_its_two_paths() {
        // 0 → 1, 0 → 2, (1, 2) → 3
        let description = DagDescription {
            weights: vec![1.0, 10.0, 100.0, 1000.0],
            inputs: vec![vec![], vec![0], vec![0], vec![1, 2]],
        };
        let graph = IndexGraph::new(&description);
        // node 1 = 11, node 2 = 101, node 3 = 1000 + (11 + 101) / 2
        assert_eq!(graph.evaluate(&mut Vec::new()), 1056.0);
    }

    #[test]
    fn random_descriptions_only_read_earlier_nodes() {
        let description = DagDescription::random(500, 3);
        for (index, inputs) in description.inputs.iter().enumerate() {
            assert!(inputs.iter().all(|&input| (input as usize) < index));
            assert_eq!(inputs.is_empty(), index == 0);
        }
        assert_ne!(description, DagDescription::random(500, 4));
    }
}
