// mutant: no-sharing — keeps the free buffers on a stack and looks only at the top one: when its shape does not fit, a new buffer is made although a buffer of the right shape lies further down
// expect: tensors that are never live at the same time can share
//! Buffer reuse: tensors whose lifetimes do not overlap share a buffer. Reference
//! solution.
//!
//! Walk the nodes in execution order with a list of free buffers. A result takes a free
//! buffer of its shape if there is one, or a new buffer. After a node has run, every
//! input it was the last reader of gives its buffer back, and so does a result that
//! nothing reads at all.

use galaxy::graph::{Operator, ValidGraph};
use galaxy::runner::BufferPlan;

/// Plans the buffers of `graph`, sharing one buffer between tensors that are never live
/// at the same time.
pub fn plan_buffers(graph: &ValidGraph) -> BufferPlan {
    let nodes = &graph.graph().nodes;
    let order = graph.execution_order();

    // 1. Where in the order each tensor is read for the last time (`None`: never read).
    let mut last_read: Vec<Option<usize>> = vec![None; nodes.len()];
    for (position, id) in order.iter().enumerate() {
        for input in &nodes[id.0].inputs {
            last_read[input.0] = Some(position);
        }
    }
    // The input is written once before a graph loop, and the result is read after the
    // run: both stay live past the last node.
    let past_the_end = Some(order.len());
    last_read[graph.input().0] = past_the_end;
    last_read[graph.result().0] = past_the_end;

    // 2. Hand out buffers in execution order.
    let mut buffer_of: Vec<Option<usize>> = vec![None; nodes.len()];
    let mut buffer_shapes: Vec<(usize, usize)> = Vec::new();
    let mut free: Vec<usize> = Vec::new();
    for (position, &id) in order.iter().enumerate() {
        let node = &nodes[id.0];
        buffer_of[id.0] = match node.operator {
            Operator::Constant(_) => None,
            // The marker shares its tensor's buffer; an in-place ReLU writes over its input.
            Operator::Output | Operator::ReluInPlace => buffer_of[node.inputs[0].0],
            _ => {
                // The result is placed before this node's inputs are given back, so a
                // node never writes the buffer it is reading.
                let shape = graph.shape(id);
                match free.last().filter(|&&buffer| buffer_shapes[buffer] == shape) {
                    Some(_) => free.pop(),
                    None => {
                        buffer_shapes.push(shape);
                        Some(buffer_shapes.len() - 1)
                    }
                }
            }
        };

        let mut give_back = |buffer: Option<usize>| match buffer {
            Some(buffer) if !free.contains(&buffer) => free.push(buffer),
            _ => {}
        };
        // An in-place ReLU hands its input's buffer on to its own result: not free.
        if node.operator != Operator::ReluInPlace {
            for input in &node.inputs {
                if last_read[input.0] == Some(position) {
                    give_back(buffer_of[input.0]);
                }
            }
        }
        // A result nobody reads (a dead branch) is finished as soon as it is written.
        let computed = !matches!(node.operator, Operator::Constant(_) | Operator::Output);
        if computed && last_read[id.0].is_none() {
            give_back(buffer_of[id.0]);
        }
    }
    BufferPlan {
        buffer_of,
        buffer_shapes,
    }
}
