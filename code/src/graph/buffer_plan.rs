//! Which buffer each tensor of a graph lives in.
//!
//! The simplest plan gives every computed tensor a buffer of its own, except that an
//! in-place ReLU (see [`crate::compiler::rewrite_in_place`]) writes into the buffer of its
//! input. Both runners follow the plan they are given, so the CPU and the GPU make the
//! same decisions; [`crate::compiler::reuse_buffers`] makes a plan that shares buffers
//! between tensors whose lifetimes do not overlap.

use crate::graph::{Operator, ValidGraph};

// ANCHOR: buffer_plan
/// For every node, the buffer its result is written to; and the shape of every buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BufferPlan {
    /// `None` for constants (they live in the graph) and for nothing else: the output
    /// node shares the buffer of the tensor it marks.
    pub buffer_of: Vec<Option<usize>>,
    pub buffer_shapes: Vec<(usize, usize)>,
}

impl BufferPlan {
    pub fn new(graph: &ValidGraph) -> BufferPlan {
        let nodes = &graph.graph().nodes;
        let mut buffer_of = vec![None; nodes.len()];
        let mut buffer_shapes = Vec::new();
        for &id in graph.execution_order() {
            let node = &nodes[id.0];
            buffer_of[id.0] = match node.operator {
                _ if node.operator.is_constant() => None,
                Operator::Output => buffer_of[node.inputs[0].0],
                Operator::ReluInPlace => buffer_of[node.inputs[0].0],
                _ => {
                    buffer_shapes.push(graph.shape(id));
                    Some(buffer_shapes.len() - 1)
                }
            };
        }
        BufferPlan {
            buffer_of,
            buffer_shapes,
        }
    }
    // ANCHOR_END: buffer_plan

    /// The bytes all buffers take together.
    pub fn bytes(&self) -> usize {
        self.buffer_shapes
            .iter()
            .map(|(rows, columns)| rows * columns * std::mem::size_of::<f32>())
            .sum()
    }
}
