//! Which buffer each tensor of a graph lives in.
//!
//! The simplest plan gives every computed tensor a buffer of its own. One rewrite is
//! always worth it: a ReLU whose input is read by nothing else can overwrite that input,
//! because the ReLU is its last reader. Both runners use this plan, so the CPU and the GPU
//! make the same decision.

use crate::graph::{Operator, TensorId, ValidGraph};

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
        let consumers = graph.consumers();
        let mut buffer_of = vec![None; nodes.len()];
        let mut buffer_shapes = Vec::new();
        for &id in graph.execution_order() {
            let node = &nodes[id.0];
            buffer_of[id.0] = match node.operator {
                Operator::Constant(_) => None,
                Operator::Output => buffer_of[node.inputs[0].0],
                Operator::Relu if may_overwrite(graph, &consumers, node.inputs[0]) => {
                    buffer_of[node.inputs[0].0]
                }
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

    /// Whether the node at `id` overwrites its first input's buffer.
    pub fn runs_in_place(&self, graph: &ValidGraph, id: TensorId) -> bool {
        let node = graph.graph().node(id);
        node.operator != Operator::Output
            && node.inputs.first().is_some_and(|input| {
                self.buffer_of[input.0].is_some() && self.buffer_of[input.0] == self.buffer_of[id.0]
            })
    }

    /// The bytes all buffers take together.
    pub fn bytes(&self) -> usize {
        self.buffer_shapes
            .iter()
            .map(|(rows, columns)| rows * columns * std::mem::size_of::<f32>())
            .sum()
    }
}

/// A tensor may be overwritten by its reader when that reader is the only one and the
/// tensor was computed by the graph (the caller's input and the weights must survive).
fn may_overwrite(graph: &ValidGraph, consumers: &[Vec<TensorId>], tensor: TensorId) -> bool {
    let computed = !matches!(
        graph.graph().node(tensor).operator,
        Operator::Input { .. } | Operator::Constant(_)
    );
    computed && consumers[tensor.0].len() == 1
}
