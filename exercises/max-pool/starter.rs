//! Max pooling at the CPU level and at the graph level. The GPU level is the kernel in
//! `starter.wgsl`, next to this file.
//!
//! Max pooling keeps the largest value of every `window × window` block of its input.
//! The blocks do not overlap (the window moves by its own width), and the rows and
//! columns left over at the bottom and right edges, too few for a whole window, are
//! dropped: a 7 × 9 input pooled with a window of 2 gives a 3 × 4 output.

use galaxy::gpu::record::BoundDispatch;
use galaxy::gpu::{GpuContext, GpuError, GpuTensor};
use galaxy::{ShapeError, Tensor2d};

/// The CPU level: max pooling with plain loops, the version every other level is
/// compared with.
///
/// A window of 0, or a window larger than the input in either direction, is a
/// [`ShapeError`], never a panic.
pub fn max_pool(input: &Tensor2d, window: usize) -> Result<Tensor2d, ShapeError> {
    todo!("max pooling on the CPU")
}

/// The graph level, part 1: the shape of the result, worked out when the graph is built,
/// before anything runs. The same windows are errors as in [`max_pool`].
pub fn max_pool_output_shape(
    input: (usize, usize),
    window: usize,
) -> Result<(usize, usize), ShapeError> {
    todo!("the shape of the result")
}

/// The graph level, part 2: binds the kernel to its buffers, once, when the graph is
/// prepared. `pipeline` is your kernel (`work.wgsl`) compiled; its bindings are 0 the
/// input, 1 the output, and 2 a uniform buffer with five `u32`: input rows, input
/// columns, output rows, output columns, window.
///
/// [`BoundDispatch::new`] binds a list of buffers to bindings 0, 1, 2, … and records
/// the grid of workgroups to dispatch, which must cover every output element with your
/// kernel's workgroup size.
pub fn bind_max_pool(
    context: &GpuContext,
    pipeline: &wgpu::ComputePipeline,
    input: &GpuTensor,
    output: &GpuTensor,
    window: usize,
) -> Result<BoundDispatch, GpuError> {
    todo!("binding the kernel to its buffers")
}
