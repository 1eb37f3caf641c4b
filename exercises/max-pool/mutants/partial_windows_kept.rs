// mutant: edge — the output shape rounds up (`rows.div_ceil(window)`), keeping the partial windows at the edges that the exercise drops
// expect: too few for a whole window, are dropped
//! Max pooling at the CPU level and at the graph level.
//! The reference solution with the one mistake named in the first line; the GPU
//! level is `solution.wgsl`.
//!
//! Max pooling keeps the largest value of every `window × window` block of its input.
//! The blocks do not overlap, and rows and columns left over at the edges, too few for a
//! whole window, are dropped.

use galaxy::gpu::record::BoundDispatch;
use galaxy::gpu::{GpuContext, GpuError, GpuTensor, WorkgroupGrid};
use galaxy::{ShapeError, Tensor2d};
use wgpu::util::DeviceExt;

/// The CPU level: max pooling with plain loops.
pub fn max_pool(input: &Tensor2d, window: usize) -> Result<Tensor2d, ShapeError> {
    let (rows, columns) = max_pool_output_shape(input.shape(), window)?;
    let mut output = Tensor2d::zeros(rows, columns);
    for row in 0..rows {
        for column in 0..columns {
            // Every window holds at least one element, so the first one can start the
            // search: no need for a stand-in for minus infinity.
            let mut largest = input.get(row * window, column * window);
            for window_row in 0..window {
                for window_column in 0..window {
                    let value =
                        input.get(row * window + window_row, column * window + window_column);
                    largest = largest.max(value);
                }
            }
            output.set(row, column, largest);
        }
    }
    Ok(output)
}

/// The graph level, part 1: the shape of the result, known before anything runs.
pub fn max_pool_output_shape(
    input: (usize, usize),
    window: usize,
) -> Result<(usize, usize), ShapeError> {
    let (rows, columns) = input;
    if window == 0 || window > rows || window > columns {
        return Err(ShapeError::Incompatible {
            operation: "max_pool",
            expectation: "the window must be at least 1 × 1 and fit inside the input",
            left_name: "input",
            left: input,
            right_name: "window",
            right: (window, window),
        });
    }
    // Integer division drops the partial windows at the edges.
    Ok((rows.div_ceil(window), columns.div_ceil(window)))
}

/// The workgroup size of `solution.wgsl`, 8 × 8: the grid is counted in these.
const WORKGROUP_EDGE: usize = 8;

/// The graph level, part 2: binds the kernel to its buffers, once.
pub fn bind_max_pool(
    context: &GpuContext,
    pipeline: &wgpu::ComputePipeline,
    input: &GpuTensor,
    output: &GpuTensor,
    window: usize,
) -> Result<BoundDispatch, GpuError> {
    // The graph checked the shapes when it was built, but a function that binds buffers
    // should not trust its caller with them.
    let (rows, columns) = max_pool_output_shape(input.shape(), window)?;
    galaxy::tensor::check_output_shape("max_pool", (rows, columns), output.shape())?;

    let fields = [
        input.rows() as u32,
        input.columns() as u32,
        rows as u32,
        columns as u32,
        window as u32,
    ];
    let bytes: Vec<u8> = fields
        .iter()
        .flat_map(|field| field.to_ne_bytes())
        .collect();
    let dimensions = context
        .device()
        .create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("max_pool dimensions"),
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
            operation: "max_pool",
            workgroups: u64::from(grid.x.max(grid.y)),
            limit,
        });
    }
    let buffers = [input.buffer(), output.buffer(), &dimensions];
    Ok(BoundDispatch::new(context, pipeline, &buffers, grid))
}
