// alternative: counts down each tensor's remaining readers (instead of recording the position of its last read) and keeps one free list per shape in a BTreeMap (instead of searching one list for a matching shape)
//! Buffer reuse: tensors whose lifetimes do not overlap share a buffer.

use std::collections::BTreeMap;

use galaxy::graph::{Operator, ValidGraph};
use galaxy::runner::BufferPlan;

/// Plans the buffers of `graph`, sharing one buffer between tensors that are never live
/// at the same time.
pub fn plan_buffers(graph: &ValidGraph) -> BufferPlan {
    let nodes = &graph.graph().nodes;
    // How many reads each tensor still has to come. The input and the result get one
    // extra read that never comes: they must survive the whole run.
    let mut readers_left: Vec<usize> = vec![0; nodes.len()];
    for node in nodes {
        for input in &node.inputs {
            readers_left[input.0] += 1;
        }
    }
    readers_left[graph.input().0] += 1;
    readers_left[graph.result().0] += 1;

    let mut buffer_of: Vec<Option<usize>> = vec![None; nodes.len()];
    let mut buffer_shapes: Vec<(usize, usize)> = Vec::new();
    let mut free: BTreeMap<(usize, usize), Vec<usize>> = BTreeMap::new();
    for &id in graph.execution_order() {
        let node = &nodes[id.0];
        buffer_of[id.0] = match node.operator {
            Operator::Constant(_) => None,
            Operator::Output | Operator::ReluInPlace => buffer_of[node.inputs[0].0],
            _ => {
                let shape = graph.shape(id);
                let reused = free.get_mut(&shape).and_then(Vec::pop);
                Some(reused.unwrap_or_else(|| {
                    buffer_shapes.push(shape);
                    buffer_shapes.len() - 1
                }))
            }
        };
        // An in-place ReLU's result lives on in its input's buffer: that buffer is not
        // freed with the input.
        let hands_over = node.operator == Operator::ReluInPlace;
        for input in &node.inputs {
            readers_left[input.0] -= 1;
            let finished = readers_left[input.0] == 0;
            if finished && !hands_over {
                free_buffer(&mut free, &buffer_shapes, buffer_of[input.0]);
            }
        }
        let computed = !matches!(node.operator, Operator::Constant(_) | Operator::Output);
        if computed && readers_left[id.0] == 0 {
            free_buffer(&mut free, &buffer_shapes, buffer_of[id.0]);
        }
    }
    BufferPlan {
        buffer_of,
        buffer_shapes,
    }
}

/// Puts `buffer` (if any) on the free list of its shape, once.
fn free_buffer(
    free: &mut BTreeMap<(usize, usize), Vec<usize>>,
    buffer_shapes: &[(usize, usize)],
    buffer: Option<usize>,
) {
    if let Some(buffer) = buffer {
        let list = free.entry(buffer_shapes[buffer]).or_default();
        if !list.contains(&buffer) {
            list.push(buffer);
        }
    }
}
