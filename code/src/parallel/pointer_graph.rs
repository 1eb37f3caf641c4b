//! A graph as nodes on the heap that point at their inputs: `Rc<RefCell<…>>`.
//!
//! The way a graph is drawn on a whiteboard, and the way many languages with a garbage
//! collector store one. In Rust every node that two others read has two owners, so it
//! needs a reference count (`Rc`); a node whose cached value is written during a
//! traversal while others hold it needs a runtime borrow check (`RefCell`). The graph
//! works, but pays for it: a heap allocation per node, a pointer to follow per edge, a
//! count and a borrow flag to update, nodes wherever the allocator put them, and no
//! `Send`, so it cannot cross to another thread. [`super::index_graph`] stores the same
//! graph as a vector with indices.

use std::cell::RefCell;
use std::rc::Rc;

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use crate::parallel::index_graph::{DagDescription, mean};

// ANCHOR: pointer_node
/// A shared, mutable node: counted by `Rc`, borrowed through `RefCell`.
pub type NodeRef = Rc<RefCell<PointerNode>>;

pub struct PointerNode {
    pub weight: f32,
    pub inputs: Vec<NodeRef>,
    /// The value, once computed in the traversal numbered `computed_in`.
    value: f32,
    computed_in: u64,
}
// ANCHOR_END: pointer_node

/// Where the nodes of a [`PointerGraph`] are allocated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Allocation {
    /// In the order of the description: neighbours in the graph are mostly neighbours in
    /// memory, as when a graph is built in one go into a fresh heap.
    GraphOrder,
    /// In a shuffled order: what happens when nodes are made over time, between other
    /// allocations, as an editor or a long-running program makes them.
    Shuffled,
}

/// The graph: the last node (the result) and every node, kept so that dropping the graph
/// can take the edges apart without recursing once per node of a long chain.
pub struct PointerGraph {
    result: Option<NodeRef>,
    nodes: Vec<NodeRef>,
    traversals: u64,
}

impl PointerGraph {
    pub fn new(description: &DagDescription, allocation: Allocation, seed: u64) -> PointerGraph {
        let count = description.weights.len();
        let mut order: Vec<usize> = (0..count).collect();
        if allocation == Allocation::Shuffled {
            order.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
        }
        // Allocate in `order`, then connect in graph order.
        let mut slots: Vec<Option<NodeRef>> = vec![None; count];
        for &index in &order {
            slots[index] = Some(Rc::new(RefCell::new(PointerNode {
                weight: description.weights[index],
                inputs: Vec::new(),
                value: 0.0,
                computed_in: 0,
            })));
        }
        let nodes: Vec<NodeRef> = slots.into_iter().flatten().collect();
        for (node, inputs) in nodes.iter().zip(&description.inputs) {
            node.borrow_mut().inputs = inputs
                .iter()
                .map(|&input| Rc::clone(&nodes[input as usize]))
                .collect();
        }
        PointerGraph {
            result: nodes.last().cloned(),
            nodes,
            traversals: 0,
        }
    }

    // ANCHOR: pointer_evaluate
    /// The value of the result node, found by following pointers from it: a depth-first
    /// walk with an explicit stack (a chain of a million nodes would overflow the call
    /// stack if the walk recursed). A node is computed once its inputs are; each node
    /// remembers the traversal it was last computed in, so it is not computed twice.
    pub fn evaluate(&mut self, stack: &mut Vec<(NodeRef, bool)>) -> f32 {
        self.traversals += 1;
        let traversal = self.traversals;
        let Some(result) = &self.result else {
            return 0.0;
        };
        stack.clear();
        stack.push((Rc::clone(result), false));
        while let Some((node, inputs_pushed)) = stack.pop() {
            if node.borrow().computed_in == traversal {
                continue;
            }
            if inputs_pushed {
                let value = {
                    let borrowed = node.borrow();
                    let inputs: f32 = borrowed
                        .inputs
                        .iter()
                        .map(|input| input.borrow().value)
                        .sum();
                    borrowed.weight + mean(inputs, borrowed.inputs.len())
                };
                let mut borrowed = node.borrow_mut();
                borrowed.value = value;
                borrowed.computed_in = traversal;
            } else {
                stack.push((Rc::clone(&node), true));
                for input in &node.borrow().inputs {
                    if input.borrow().computed_in != traversal {
                        stack.push((Rc::clone(input), false));
                    }
                }
            }
        }
        result.borrow().value
    }
    // ANCHOR_END: pointer_evaluate
}

impl Drop for PointerGraph {
    /// Dropping the result would drop its inputs, their inputs, … one nested call per
    /// node: a long chain overflows the stack. Cutting every edge first makes each drop
    /// shallow.
    fn drop(&mut self) {
        for node in &self.nodes {
            node.borrow_mut().inputs.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parallel::index_graph::IndexGraph;

    #[test]
    fn gives_the_value_of_the_index_graph() {
        for (count, seed) in [(1, 1), (2, 2), (50, 3), (5_000, 4)] {
            let description = DagDescription::random(count, seed);
            let expected = IndexGraph::new(&description).evaluate(&mut Vec::new());
            for allocation in [Allocation::GraphOrder, Allocation::Shuffled] {
                let mut graph = PointerGraph::new(&description, allocation, seed);
                let mut stack = Vec::new();
                // Twice: the second traversal must recompute, not reuse stale values.
                for _ in 0..2 {
                    let value = graph.evaluate(&mut stack);
                    assert!(
                        (value - expected).abs() <= 1e-4 * expected.abs().max(1.0),
                        "{count} nodes, {allocation:?}: {value} against {expected}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_long_chain_neither_overflows_when_walked_nor_when_dropped() {
        let description = DagDescription {
            weights: vec![1.0; 1_000_000],
            inputs: (0..1_000_000u32)
                .map(|index| if index == 0 { vec![] } else { vec![index - 1] })
                .collect(),
        };
        let mut graph = PointerGraph::new(&description, Allocation::GraphOrder, 0);
        assert_eq!(graph.evaluate(&mut Vec::new()), 1_000_000.0);
        drop(graph);
    }
}
