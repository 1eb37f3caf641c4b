// alternative: the CPU level with four index loops accumulating in f64 through `get`, the shape with checked_sub, and the grid sized by the input's shape (more workgroups than needed; the kernel's bounds check skips the extra invocations)
//! 2D convolution at the CPU level and at the graph level.
//! A correct alternative to the reference solution, as the first line says; the GPU
//! level is `solution.wgsl`.
//!
//! ```text
//! output[r][c] = Σ_i Σ_j input[r + i][c + j] · weights[i][j]
//! ```
//!
//! at every position where the weights fit entirely inside the input.

use galaxy::gpu::record::BoundDispatch;
use galaxy::gpu::{GpuContext, GpuError, GpuTensor, WorkgroupGrid};
use galaxy::{ShapeError, Tensor2d};
use wgpu::util::DeviceExt;

/// The CPU level: the convolution with plain loops.
pub fn convolve(input: &Tensor2d, weights: &Tensor2d) -> Result<Tensor2d, ShapeError> {
    let (rows, columns) = convolution_output_shape(input.shape(), weights.shape())?;
    let mut output = Tensor2d::zeros(rows, columns);
    for row in 0..rows {
        for column in 0..columns {
            let mut total = 0.0_f64;
            for i in 0..weights.rows() {
                for j in 0..weights.columns() {
                    total += f64::from(input.get(row + i, column + j)) * f64::from(weights.get(i, j));
                }
            }
            output.set(row, column, total as f32);
        }
    }
    Ok(output)
}

/// The graph level, part 1: the shape of the result, known before anything runs.
pub fn convolution_output_shape(
    input: (usize, usize),
    weights: (usize, usize),
) -> Result<(usize, usize), ShapeError> {
    let positions = (
        input.0.checked_sub(weights.0).map(|extra| extra + 1),
        input.1.checked_sub(weights.1).map(|extra| extra + 1),
    );
    let empty = weights.0 == 0 || weights.1 == 0;
    let (Some(rows), Some(columns)) = positions else {
        return Err(ShapeError::Incompatible {
            operation: "convolution",
            expectation: "the weights must hold at least one element and fit inside the input",
            left_name: "input",
            left: input,
            right_name: "weights",
            right: weights,
        });
    };
    if empty {
        return Err(ShapeError::Incompatible {
            operation: "convolution",
            expectation: "the weights must hold at least one element and fit inside the input",
            left_name: "input",
            left: input,
            right_name: "weights",
            right: weights,
        });
    }
    Ok((rows, columns))
}

/// The workgroup size of `solution.wgsl`, 8 × 8: the grid is counted in these.
const WORKGROUP_EDGE: usize = 8;

/// The graph level, part 2: binds the kernel to its buffers, once.
pub fn bind_convolution(
    context: &GpuContext,
    pipeline: &wgpu::ComputePipeline,
    input: &GpuTensor,
    weights: &GpuTensor,
    output: &GpuTensor,
) -> Result<BoundDispatch, GpuError> {
    let (rows, columns) = convolution_output_shape(input.shape(), weights.shape())?;
    galaxy::tensor::check_output_shape("convolution", (rows, columns), output.shape())?;

    let fields = [
        input.rows() as u32,
        input.columns() as u32,
        weights.rows() as u32,
        weights.columns() as u32,
        rows as u32,
        columns as u32,
    ];
    let bytes: Vec<u8> = fields
        .iter()
        .flat_map(|field| field.to_ne_bytes())
        .collect();
    let dimensions = context
        .device()
        .create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("convolution dimensions"),
            contents: &bytes,
            usage: wgpu::BufferUsages::UNIFORM,
        });

    // x walks the output columns, y the output rows, one invocation per element.
    let grid = WorkgroupGrid {
        x: input.columns().div_ceil(WORKGROUP_EDGE) as u32,
        y: input.rows().div_ceil(WORKGROUP_EDGE) as u32,
        z: 1,
    };
    let limit = context.limits().max_compute_workgroups_per_dimension;
    if grid.x > limit || grid.y > limit {
        return Err(GpuError::DispatchTooLarge {
            operation: "convolution",
            workgroups: u64::from(grid.x.max(grid.y)),
            limit,
        });
    }
    let buffers = [
        input.buffer(),
        weights.buffer(),
        output.buffer(),
        &dimensions,
    ];
    Ok(BoundDispatch::new(context, pipeline, &buffers, grid))
}
