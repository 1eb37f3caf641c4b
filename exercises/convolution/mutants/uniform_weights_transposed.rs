// mutant: wrong-result — the uniform fields of the weights written columns first (`weights.columns(), weights.rows()`), so the kernel reads non-square weights with the wrong shape
// expect: only cases with non-square weights fail
//! 2D convolution at the CPU level and at the graph level.
//! The reference solution with the one mistake named in the first line; the GPU
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
            let mut total = 0.0;
            for weights_row in 0..weights.rows() {
                // One row of the weights meets a contiguous run of one input row.
                let input_row = &input.row(row + weights_row)[column..column + weights.columns()];
                for (value, weight) in input_row.iter().zip(weights.row(weights_row)) {
                    total += value * weight;
                }
            }
            output.set(row, column, total);
        }
    }
    Ok(output)
}

/// The graph level, part 1: the shape of the result, known before anything runs.
pub fn convolution_output_shape(
    input: (usize, usize),
    weights: (usize, usize),
) -> Result<(usize, usize), ShapeError> {
    let fits = weights.0 >= 1 && weights.1 >= 1 && weights.0 <= input.0 && weights.1 <= input.1;
    if !fits {
        return Err(ShapeError::Incompatible {
            operation: "convolution",
            expectation: "the weights must hold at least one element and fit inside the input",
            left_name: "input",
            left: input,
            right_name: "weights",
            right: weights,
        });
    }
    // The positions where the weights fit: the first at 0, the last at input − weights.
    Ok((input.0 - weights.0 + 1, input.1 - weights.1 + 1))
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
        weights.columns() as u32,
        weights.rows() as u32,
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
        x: columns.div_ceil(WORKGROUP_EDGE) as u32,
        y: rows.div_ceil(WORKGROUP_EDGE) as u32,
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
