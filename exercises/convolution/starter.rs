//! 2D convolution at the CPU level and at the graph level. The GPU level is the kernel
//! in `starter.wgsl`, next to this file.
//!
//! The convolution slides a small `weights` tensor over the input and, at every position
//! where it fits entirely, sums the products of the overlapping elements:
//!
//! ```text
//! output[r][c] = Σ_i Σ_j input[r + i][c + j] · weights[i][j]
//! ```
//!
//! (Deep-learning libraries call this convolution; mathematicians would call it a
//! cross-correlation, since the weights are not flipped.) Only positions where the
//! weights fit count, so a 5 × 7 input and 3 × 3 weights give a 3 × 5 output.

use galaxy::gpu::record::BoundDispatch;
use galaxy::gpu::{GpuContext, GpuError, GpuTensor};
use galaxy::{ShapeError, Tensor2d};

/// The CPU level: the convolution with plain loops, the version every other level is
/// compared with.
///
/// Weights with no elements, or larger than the input in either direction, are a
/// [`ShapeError`], never a panic.
pub fn convolve(input: &Tensor2d, weights: &Tensor2d) -> Result<Tensor2d, ShapeError> {
    todo!("convolution on the CPU")
}

/// The graph level, part 1: the shape of the result, worked out when the graph is built,
/// before anything runs. The same shapes are errors as in [`convolve`].
pub fn convolution_output_shape(
    input: (usize, usize),
    weights: (usize, usize),
) -> Result<(usize, usize), ShapeError> {
    todo!("the shape of the result")
}

/// The graph level, part 2: binds the kernel to its buffers, once, when the graph is
/// prepared. `pipeline` is your kernel (`work.wgsl`) compiled; its bindings are 0 the
/// input, 1 the weights, 2 the output, and 3 a uniform buffer with six `u32`: input
/// rows, input columns, weights rows, weights columns, output rows, output columns.
///
/// [`BoundDispatch::new`] binds a list of buffers to bindings 0, 1, 2, … and records
/// the grid of workgroups to dispatch, which must cover every output element with your
/// kernel's workgroup size.
pub fn bind_convolution(
    context: &GpuContext,
    pipeline: &wgpu::ComputePipeline,
    input: &GpuTensor,
    weights: &GpuTensor,
    output: &GpuTensor,
) -> Result<BoundDispatch, GpuError> {
    todo!("binding the kernel to its buffers")
}
