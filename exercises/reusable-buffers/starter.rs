//! Buffer reuse: tensors whose lifetimes do not overlap can share a buffer.
//!
//! A tensor is *live* from the node that writes it until the last node that reads it.
//! In a chain of layers only two activations are live at any moment, so a network of
//! any depth can run in a handful of buffers instead of one per layer.
//!
//! A [`BufferPlan`] says, for every node, which buffer its result goes to
//! (`buffer_of[node]`, `None` for constants), and the shape of every buffer
//! (`buffer_shapes`). Both runners follow any plan they are given. A plan is safe when:
//!
//! - every computed tensor gets a buffer of exactly its shape;
//! - the output node shares the buffer of the tensor it marks, and an in-place ReLU the
//!   buffer of its input;
//! - no node writes a buffer while another tensor in it is still to be read (an
//!   in-place ReLU may, for the input it overwrites);
//! - the graph's input and result keep their buffers to the end: a graph loop writes the
//!   input once and runs the graph many times, and the result is read after the run.

use galaxy::graph::ValidGraph;
use galaxy::runner::BufferPlan;

/// Plans the buffers of `graph`, sharing one buffer between tensors that are never live
/// at the same time.
pub fn plan_buffers(graph: &ValidGraph) -> BufferPlan {
    // One buffer per computed tensor: safe, but nothing is shared.
    // TODO: walk the nodes in `graph.execution_order()`, take a free buffer of the right
    // shape for each result where there is one, and give a buffer back once the last
    // reader of the tensor in it has run.
    BufferPlan::new(graph)
}
