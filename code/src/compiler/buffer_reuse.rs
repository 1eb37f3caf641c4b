//! Buffer reuse by liveness.
//!
//! A tensor is *live* from the node that writes it to the last node that reads it. Two
//! tensors that are never live at the same time can share one buffer. In a chain of
//! layers, only two activations are live at once, so a network of any depth needs two
//! buffers instead of one per layer.

use crate::graph::{BufferPlan, Operator, ValidGraph};

/// A buffer plan with shared buffers, and what sharing saved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BufferReuse {
    pub plan: BufferPlan,
    /// Bytes of the plan with one buffer per tensor ([`BufferPlan::new`]).
    pub bytes_without_reuse: usize,
}

impl BufferReuse {
    pub fn bytes_with_reuse(&self) -> usize {
        self.plan.bytes()
    }

    pub fn bytes_saved(&self) -> usize {
        self.bytes_without_reuse - self.bytes_with_reuse()
    }
}

// ANCHOR: reuse_buffers
/// Assigns buffers so that tensors whose lifetimes do not overlap share one.
///
/// Walk the nodes in execution order. A node's result takes a free buffer of its shape
/// if there is one, or a new buffer. After the node, every input it was the last reader
/// of gives its buffer back. An in-place ReLU keeps its input's buffer. The graph's result
/// is read at the very end, and the input buffer is written once before a graph loop runs
/// the graph many times, so neither is ever given back.
pub fn reuse_buffers(graph: &ValidGraph) -> BufferReuse {
    let nodes = &graph.graph().nodes;
    let order = graph.execution_order();
    let mut last_reader = vec![0; nodes.len()];
    for (position, &id) in order.iter().enumerate() {
        for input in &nodes[id.0].inputs {
            last_reader[input.0] = last_reader[input.0].max(position);
        }
    }
    last_reader[graph.result().0] = usize::MAX;
    last_reader[graph.input().0] = usize::MAX;

    let mut buffer_of = vec![None; nodes.len()];
    let mut buffer_shapes: Vec<(usize, usize)> = Vec::new();
    let mut free: Vec<usize> = Vec::new();
    for (position, &id) in order.iter().enumerate() {
        let node = &nodes[id.0];
        buffer_of[id.0] = match node.operator {
            _ if node.operator.is_constant() => None,
            Operator::Output | Operator::ReluInPlace => buffer_of[node.inputs[0].0],
            _ => {
                let shape = graph.shape(id);
                match free
                    .iter()
                    .position(|&buffer| buffer_shapes[buffer] == shape)
                {
                    Some(index) => Some(free.swap_remove(index)),
                    None => {
                        buffer_shapes.push(shape);
                        Some(buffer_shapes.len() - 1)
                    }
                }
            }
        };
        // An in-place ReLU hands its input's buffer on to its own result.
        let hands_over = node.operator == Operator::ReluInPlace;
        for input in &node.inputs {
            let last_read_here = last_reader[input.0] == position && !hands_over;
            if let Some(buffer) = buffer_of[input.0].filter(|_| last_read_here)
                && !free.contains(&buffer)
            {
                free.push(buffer);
            }
        }
    }
    BufferReuse {
        plan: BufferPlan {
            buffer_of,
            buffer_shapes,
        },
        bytes_without_reuse: BufferPlan::new(graph).bytes(),
    }
}
// ANCHOR_END: reuse_buffers
