//! Recording kernels into a command encoder.
//!
//! Recording is separate from submitting: immediate mode records one kernel and submits
//! it at once, a graph runner records a whole network into one encoder and submits it
//! once. Both use these functions, so both run exactly the same dispatches.

use wgpu::util::DeviceExt;

use crate::gpu::dispatch::{WorkgroupGrid, workgroups_for};
use crate::gpu::probe::PassTiming;
use crate::gpu::{GpuContext, GpuError, GpuTensor, Readback};
use crate::tensor::{check_output_shape, linear_output_shape};

/// Invocations per workgroup of the element-wise, softmax and reduction kernels.
const WORKGROUP_SIZE: u32 = 256;
/// The linear kernel computes 16 × 16 tiles of the output per workgroup.
const LINEAR_TILE: u32 = 16;
/// Values one reduction workgroup combines into one partial result (see reduce.wgsl).
const REDUCTION_BLOCK: u32 = 1024;

/// The `Dimensions` uniform of shaders/linear.wgsl (and of the specialised linear
/// template): the same four numbers, in the same order.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct LinearDimensions {
    rows: u32,
    inner: u32,
    columns: u32,
    row_tiles_per_layer: u32,
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct RowDimensions {
    rows: u32,
    columns: u32,
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct ElementCount {
    element_count: u32,
}

// ANCHOR: bound_dispatch
/// A kernel bound to its buffers: the pipeline, the bind group and the grid, everything
/// needed to record the dispatch. Binding once and recording many times is what a
/// prepared graph does; immediate mode binds and records in one go.
pub struct BoundDispatch {
    pipeline: wgpu::ComputePipeline,
    bind_group: wgpu::BindGroup,
    grid: WorkgroupGrid,
}

impl BoundDispatch {
    /// Binds `buffers` to bindings 0, 1, 2, … of the pipeline's group 0.
    pub fn new(
        context: &GpuContext,
        pipeline: &wgpu::ComputePipeline,
        buffers: &[&wgpu::Buffer],
        grid: WorkgroupGrid,
    ) -> BoundDispatch {
        BoundDispatch {
            pipeline: pipeline.clone(),
            bind_group: bind_buffers(context, pipeline, buffers),
            grid,
        }
    }

    /// Records the dispatch into `encoder`, in a compute pass of its own.
    pub fn record(&self, encoder: &mut wgpu::CommandEncoder) {
        record_dispatch(encoder, &self.pipeline, &self.bind_group, self.grid);
    }

    /// Records the dispatch into a compute pass that is already open, after whatever the
    /// pass holds already (see [`record_in_one_pass`] for why that is safe).
    pub fn record_in(&self, pass: &mut wgpu::ComputePass<'_>) {
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &self.bind_group, &[]);
        pass.dispatch_workgroups(self.grid.x, self.grid.y, self.grid.z);
    }

    pub fn grid(&self) -> WorkgroupGrid {
        self.grid
    }
}
// ANCHOR_END: bound_dispatch

// ANCHOR: tile_grid
/// The grid for a kernel that computes `tile × tile` blocks of a `rows × columns` output:
/// `x` walks the column tiles, `y` the row tiles, spilling into `z` when there are more row
/// tiles than one dimension allows (the shader computes `z * grid.y + y`).
pub fn tile_grid(
    context: &GpuContext,
    rows: usize,
    columns: usize,
    tile: u32,
    operation: &'static str,
) -> Result<WorkgroupGrid, GpuError> {
    rectangular_tile_grid(context, rows, columns, tile, tile, operation)
}

/// [`tile_grid`] for tiles of `tile_rows × tile_columns` output elements.
pub fn rectangular_tile_grid(
    context: &GpuContext,
    rows: usize,
    columns: usize,
    tile_rows: u32,
    tile_columns: u32,
    operation: &'static str,
) -> Result<WorkgroupGrid, GpuError> {
    let limit = context.limits().max_compute_workgroups_per_dimension;
    let column_tiles = workgroups_for(columns, tile_columns);
    if column_tiles > u64::from(limit) {
        return Err(GpuError::DispatchTooLarge {
            operation,
            workgroups: column_tiles,
            limit,
        });
    }
    let row_grid = WorkgroupGrid::covering(workgroups_for(rows, tile_rows), limit, operation)?;
    Ok(WorkgroupGrid {
        x: column_tiles as u32,
        y: row_grid.x,
        z: row_grid.y,
    })
}
// ANCHOR_END: tile_grid

// ANCHOR: bind_linear
/// Binds `output = input · weights + bias` (plus ReLU, if the pipeline is `LinearRelu`).
pub fn bind_linear(
    context: &GpuContext,
    pipeline: &wgpu::ComputePipeline,
    input: &GpuTensor,
    weights: &GpuTensor,
    bias: &GpuTensor,
    output: &GpuTensor,
) -> Result<BoundDispatch, GpuError> {
    bind_linear_with_tile(context, pipeline, LINEAR_TILE, input, weights, bias, output)
}

/// Binds a linear kernel whose workgroups compute `tile × tile` blocks of the output and
/// that takes the bindings of shaders/linear.wgsl (the specialised template does too).
pub fn bind_linear_with_tile(
    context: &GpuContext,
    pipeline: &wgpu::ComputePipeline,
    tile: u32,
    input: &GpuTensor,
    weights: &GpuTensor,
    bias: &GpuTensor,
    output: &GpuTensor,
) -> Result<BoundDispatch, GpuError> {
    let tiles = LinearTiles {
        rows: tile,
        columns: tile,
    };
    bind_linear_with_tiles(context, pipeline, tiles, input, weights, bias, output)
}

/// The block of the output one workgroup of a linear kernel computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinearTiles {
    pub rows: u32,
    pub columns: u32,
}

/// Binds a linear kernel whose workgroups compute `tiles.rows × tiles.columns` blocks of
/// the output, with the bindings of shaders/linear.wgsl (the register-blocked template
/// reads the same buffers as vec4s).
pub fn bind_linear_with_tiles(
    context: &GpuContext,
    pipeline: &wgpu::ComputePipeline,
    tiles: LinearTiles,
    input: &GpuTensor,
    weights: &GpuTensor,
    bias: &GpuTensor,
    output: &GpuTensor,
) -> Result<BoundDispatch, GpuError> {
    let output_shape = linear_output_shape(input.shape(), weights.shape(), bias.shape())?;
    check_output_shape("linear", output_shape, output.shape())?;
    let grid = rectangular_tile_grid(
        context,
        output.rows(),
        output.columns(),
        tiles.rows,
        tiles.columns,
        "linear",
    )?;
    let dimensions = uniform_buffer(
        context,
        &LinearDimensions {
            rows: output.rows() as u32,
            inner: input.columns() as u32,
            columns: output.columns() as u32,
            row_tiles_per_layer: grid.y,
        },
    );
    let buffers = [
        input.buffer(),
        weights.buffer(),
        bias.buffer(),
        output.buffer(),
        &dimensions,
    ];
    Ok(BoundDispatch::new(context, pipeline, &buffers, grid))
}
// ANCHOR_END: bind_linear

/// Binds `output = max(input, 0)`.
pub fn bind_relu(
    context: &GpuContext,
    pipeline: &wgpu::ComputePipeline,
    input: &GpuTensor,
    output: &GpuTensor,
) -> Result<BoundDispatch, GpuError> {
    check_output_shape("relu", input.shape(), output.shape())?;
    let grid = element_grid(context, input.len(), "relu")?;
    let count = uniform_buffer(context, &element_count(input.len()));
    let buffers = [input.buffer(), output.buffer(), &count];
    Ok(BoundDispatch::new(context, pipeline, &buffers, grid))
}

/// Binds `output = left + right`, element by element.
pub fn bind_add(
    context: &GpuContext,
    pipeline: &wgpu::ComputePipeline,
    left: &GpuTensor,
    right: &GpuTensor,
    output: &GpuTensor,
) -> Result<BoundDispatch, GpuError> {
    let shape = crate::cpu::add::add_output_shape(left.shape(), right.shape())?;
    check_output_shape("add", shape, output.shape())?;
    let grid = element_grid(context, left.len(), "add")?;
    let count = uniform_buffer(context, &element_count(left.len()));
    let buffers = [left.buffer(), right.buffer(), output.buffer(), &count];
    Ok(BoundDispatch::new(context, pipeline, &buffers, grid))
}

/// Binds `tensor = max(tensor, 0)`, overwriting the input.
pub fn bind_relu_in_place(
    context: &GpuContext,
    pipeline: &wgpu::ComputePipeline,
    tensor: &GpuTensor,
) -> Result<BoundDispatch, GpuError> {
    let grid = element_grid(context, tensor.len(), "relu_in_place")?;
    let count = uniform_buffer(context, &element_count(tensor.len()));
    Ok(BoundDispatch::new(
        context,
        pipeline,
        &[tensor.buffer(), &count],
        grid,
    ))
}

/// Binds a row-wise softmax: one workgroup per row.
pub fn bind_softmax(
    context: &GpuContext,
    pipeline: &wgpu::ComputePipeline,
    input: &GpuTensor,
    output: &GpuTensor,
) -> Result<BoundDispatch, GpuError> {
    check_output_shape("softmax", input.shape(), output.shape())?;
    let limit = context.limits().max_compute_workgroups_per_dimension;
    let grid = WorkgroupGrid::covering(input.rows() as u64, limit, "softmax")?;
    let dimensions = uniform_buffer(
        context,
        &RowDimensions {
            rows: input.rows() as u32,
            columns: input.columns() as u32,
        },
    );
    let buffers = [input.buffer(), output.buffer(), &dimensions];
    Ok(BoundDispatch::new(context, pipeline, &buffers, grid))
}

// ANCHOR: record_linear
/// Records `output = input · weights + bias` (plus ReLU, if the pipeline is `LinearRelu`).
pub fn record_linear(
    context: &GpuContext,
    encoder: &mut wgpu::CommandEncoder,
    pipeline: &wgpu::ComputePipeline,
    input: &GpuTensor,
    weights: &GpuTensor,
    bias: &GpuTensor,
    output: &GpuTensor,
) -> Result<(), GpuError> {
    bind_linear(context, pipeline, input, weights, bias, output)?.record(encoder);
    Ok(())
}
// ANCHOR_END: record_linear

/// Records `output = max(input, 0)`.
pub fn record_relu(
    context: &GpuContext,
    encoder: &mut wgpu::CommandEncoder,
    pipeline: &wgpu::ComputePipeline,
    input: &GpuTensor,
    output: &GpuTensor,
) -> Result<(), GpuError> {
    bind_relu(context, pipeline, input, output)?.record(encoder);
    Ok(())
}

/// Records `tensor = max(tensor, 0)`, overwriting the input.
pub fn record_relu_in_place(
    context: &GpuContext,
    encoder: &mut wgpu::CommandEncoder,
    pipeline: &wgpu::ComputePipeline,
    tensor: &GpuTensor,
) -> Result<(), GpuError> {
    bind_relu_in_place(context, pipeline, tensor)?.record(encoder);
    Ok(())
}

/// Records a row-wise softmax: one workgroup per row.
pub fn record_softmax(
    context: &GpuContext,
    encoder: &mut wgpu::CommandEncoder,
    pipeline: &wgpu::ComputePipeline,
    input: &GpuTensor,
    output: &GpuTensor,
) -> Result<(), GpuError> {
    bind_softmax(context, pipeline, input, output)?.record(encoder);
    Ok(())
}

// ANCHOR: record_reduction
/// Records a whole reduction (a pipeline of `Kernel::Sum`, `Max`, `SubgroupSum` or
/// `SubgroupMax`): passes of 1024 → 1 until
/// one value is left. Returns the 1×1 tensor that will hold it, ready to be read back.
pub fn record_reduction(
    context: &GpuContext,
    encoder: &mut wgpu::CommandEncoder,
    pipeline: &wgpu::ComputePipeline,
    input: &GpuTensor,
    fill_outputs: Option<f32>,
) -> Result<GpuTensor, GpuError> {
    let limit = context.limits().max_compute_workgroups_per_dimension;
    let mut remaining = input.len();
    let mut pass_outputs: Vec<GpuTensor> = Vec::new();
    loop {
        let blocks = workgroups_for(remaining, REDUCTION_BLOCK);
        let is_last_pass = blocks == 1;
        let readback = if is_last_pass {
            Readback::Needed
        } else {
            Readback::Never
        };
        let output = GpuTensor::uninitialized(context, 1, blocks as usize, readback)?;
        if let Some(value) = fill_outputs {
            output.fill(context, value);
        }
        let source = pass_outputs.last().unwrap_or(input);
        let grid = WorkgroupGrid::covering(blocks, limit, "reduction")?;
        let count = uniform_buffer(context, &element_count(remaining));
        let buffers = [source.buffer(), output.buffer(), &count];
        BoundDispatch::new(context, pipeline, &buffers, grid).record(encoder);
        pass_outputs.push(output);
        if is_last_pass {
            break;
        }
        remaining = blocks as usize;
    }
    Ok(pass_outputs.pop().expect("the loop runs at least one pass"))
}
// ANCHOR_END: record_reduction

// ANCHOR: record_in_one_pass
/// Records `dispatches` in order, all in one compute pass.
///
/// Opening a pass costs time on the CPU and, on some drivers, on the GPU too, so a graph
/// records all its kernels into one. That is safe because wgpu treats every *dispatch*
/// of a compute pass as a usage scope of its own (wgpu-core 30, `command/compute.rs`,
/// `State::flush_bindings`: "compute passes have a separate usage scope for each
/// dispatch", and it drains the barriers a dispatch needs right before recording it).
/// When a kernel reads a buffer the previous one wrote, wgpu inserts a barrier between
/// the two, exactly as it would between two passes. (A buffer written by two dispatches
/// in a row gets one too: a storage write is never an "ordered" use that may skip it.)
pub fn record_in_one_pass(encoder: &mut wgpu::CommandEncoder, dispatches: &[BoundDispatch]) {
    // Timestamps only while the time breakdown measures this thread (see gpu::probe).
    let timing = PassTiming::next_pass(dispatches.len());
    let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
        label: None,
        timestamp_writes: timing.as_ref().and_then(PassTiming::pass_writes),
    });
    if let Some(timing) = &timing {
        timing.after_begin(&mut pass);
    }
    for dispatch in dispatches {
        dispatch.record_in(&mut pass);
        if let Some(timing) = &timing {
            timing.after_dispatch(&mut pass);
        }
    }
}
// ANCHOR_END: record_in_one_pass

// ANCHOR: record_dispatch
/// One compute pass with one dispatch. Separate passes order the kernels: a pass starts
/// after the writes of the previous one are visible.
pub(crate) fn record_dispatch(
    encoder: &mut wgpu::CommandEncoder,
    pipeline: &wgpu::ComputePipeline,
    bind_group: &wgpu::BindGroup,
    grid: WorkgroupGrid,
) {
    let timing = PassTiming::next_pass(1);
    let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
        label: None,
        // `None` unless the time breakdown is measuring this thread (see gpu::probe).
        timestamp_writes: timing.as_ref().and_then(PassTiming::pass_writes),
    });
    pass.set_pipeline(pipeline);
    pass.set_bind_group(0, bind_group, &[]);
    pass.dispatch_workgroups(grid.x, grid.y, grid.z);
}
// ANCHOR_END: record_dispatch

/// Binds `buffers` to bindings 0, 1, 2, … of group 0, in order.
pub(crate) fn bind_buffers(
    context: &GpuContext,
    pipeline: &wgpu::ComputePipeline,
    buffers: &[&wgpu::Buffer],
) -> wgpu::BindGroup {
    let entries: Vec<wgpu::BindGroupEntry> = buffers
        .iter()
        .enumerate()
        .map(|(binding, buffer)| wgpu::BindGroupEntry {
            binding: binding as u32,
            resource: buffer.as_entire_binding(),
        })
        .collect();
    context
        .device()
        .create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.get_bind_group_layout(0),
            entries: &entries,
        })
}

pub(crate) fn uniform_buffer<T: bytemuck::Pod>(context: &GpuContext, value: &T) -> wgpu::Buffer {
    context
        .device()
        .create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("dimensions"),
            contents: bytemuck::bytes_of(value),
            usage: wgpu::BufferUsages::UNIFORM,
        })
}

fn element_count(elements: usize) -> ElementCount {
    ElementCount {
        element_count: elements as u32,
    }
}

/// A grid of 256-invocation workgroups covering `elements`, spread over y when needed.
fn element_grid(
    context: &GpuContext,
    elements: usize,
    operation: &'static str,
) -> Result<WorkgroupGrid, GpuError> {
    WorkgroupGrid::covering(
        workgroups_for(elements, WORKGROUP_SIZE),
        context.limits().max_compute_workgroups_per_dimension,
        operation,
    )
}
