//! The sparse linear layer on the GPU (`shaders/linear_sparse.wgsl`).
//!
//! The CPU layer ([`crate::cpu::linear_sparse`]) walks the weights' CSR rows (one per input)
//! and scatters each non-zero into the outputs it touches. On a GPU, where thousands of
//! invocations run at once, scattering would need atomic additions; instead each invocation
//! *gathers*: it owns one output element and reads the non-zeros of its output's column.
//! So the weights are turned, once, at preparation, from rows to columns (compressed sparse
//! columns), and uploaded as three storage buffers.

use crate::cpu::sparse::CsrMatrix;
use crate::gpu::linear_int8::storage_buffer;
use crate::gpu::record::{BoundDispatch, rectangular_tile_grid, uniform_buffer};
use crate::gpu::{GpuContext, GpuError, GpuTensor, PipelineCache, compile_wgsl};
use crate::tensor::{check_output_shape, linear_output_shape};

/// The side of the square tile of outputs one workgroup computes (8 × 8 invocations).
const TILE: u32 = 8;

const SOURCE: &str = include_str!("../../../shaders/linear_sparse.wgsl");

// ANCHOR: columns_of
/// The non-zeros of an `inputs × outputs` CSR matrix, output by output: `offsets` has
/// `outputs + 1` entries, and output `c`'s non-zeros are `offsets[c]..offsets[c + 1]` of
/// `input_indices` and `values`, in increasing input index (the order the CPU adds them in).
#[derive(Debug, Clone, PartialEq)]
pub struct SparseColumns {
    pub offsets: Vec<u32>,
    pub input_indices: Vec<u32>,
    pub values: Vec<f32>,
}

impl SparseColumns {
    pub fn of(weights: &CsrMatrix) -> SparseColumns {
        // Count each column's entries, turn the counts into offsets, then place every
        // entry, walking the rows in order so that each column's inputs come out sorted.
        let mut offsets = vec![0u32; weights.columns() + 1];
        for &column in weights.column_indices() {
            offsets[column as usize + 1] += 1;
        }
        for column in 0..weights.columns() {
            offsets[column + 1] += offsets[column];
        }
        let mut next = offsets.clone();
        let mut input_indices = vec![0u32; weights.non_zeros()];
        let mut values = vec![0.0f32; weights.non_zeros()];
        for input in 0..weights.rows() {
            let (columns, row_values) = weights.row(input);
            for (&column, &value) in columns.iter().zip(row_values) {
                let slot = next[column as usize] as usize;
                input_indices[slot] = input as u32;
                values[slot] = value;
                next[column as usize] += 1;
            }
        }
        SparseColumns {
            offsets,
            input_indices,
            values,
        }
    }
}
// ANCHOR_END: columns_of

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct SparseDimensions {
    rows: u32,
    inputs: u32,
    outputs: u32,
    row_tiles_per_layer: u32,
}

/// Sparse weights on the GPU, by column, uploaded once.
pub struct SparseWeights {
    inputs: usize,
    outputs: usize,
    non_zeros: usize,
    offsets: wgpu::Buffer,
    input_indices: wgpu::Buffer,
    values: wgpu::Buffer,
}

impl SparseWeights {
    pub fn upload(context: &GpuContext, weights: &CsrMatrix) -> SparseWeights {
        let columns = SparseColumns::of(weights);
        SparseWeights {
            inputs: weights.rows(),
            outputs: weights.columns(),
            non_zeros: weights.non_zeros(),
            offsets: storage_buffer(context, "sparse column offsets", &columns.offsets),
            input_indices: storage_buffer(context, "sparse input indices", &columns.input_indices),
            values: storage_buffer(context, "sparse values", &columns.values),
        }
    }

    pub fn shape(&self) -> (usize, usize) {
        (self.inputs, self.outputs)
    }

    pub fn non_zeros(&self) -> usize {
        self.non_zeros
    }
}

/// The sparse linear pipeline, with a ReLU if `relu`, from `pipelines`.
pub fn linear_sparse_pipeline(
    context: &GpuContext,
    pipelines: &PipelineCache,
    relu: bool,
) -> Result<wgpu::ComputePipeline, GpuError> {
    let key = format!("linear_sparse relu={relu}");
    pipelines.generated_pipeline(&key, || {
        let relu = if relu { 1.0 } else { 0.0 };
        compile_wgsl(
            context,
            "linear_sparse",
            SOURCE,
            "linear_sparse",
            &[("apply_relu", relu)],
        )
    })
}

// ANCHOR: bind_linear_sparse
/// Binds `output = input · weights + bias` (with the pipeline's ReLU, if any).
pub fn bind_linear_sparse(
    context: &GpuContext,
    pipeline: &wgpu::ComputePipeline,
    input: &GpuTensor,
    weights: &SparseWeights,
    bias: &GpuTensor,
    output: &GpuTensor,
) -> Result<BoundDispatch, GpuError> {
    let shape = linear_output_shape(input.shape(), weights.shape(), bias.shape())?;
    check_output_shape("linear_sparse", shape, output.shape())?;
    let grid = rectangular_tile_grid(
        context,
        output.rows(),
        output.columns(),
        TILE,
        TILE,
        "linear_sparse",
    )?;
    let dimensions = uniform_buffer(
        context,
        &SparseDimensions {
            rows: output.rows() as u32,
            inputs: input.columns() as u32,
            outputs: output.columns() as u32,
            row_tiles_per_layer: grid.y,
        },
    );
    let buffers = [
        input.buffer(),
        &weights.offsets,
        &weights.input_indices,
        &weights.values,
        bias.buffer(),
        output.buffer(),
        &dimensions,
    ];
    Ok(BoundDispatch::new(context, pipeline, &buffers, grid))
}
// ANCHOR_END: bind_linear_sparse

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::sparse::random_sparse_dense;

    #[test]
    fn the_columns_hold_every_non_zero_once_in_increasing_input_order() {
        for (case, &(inputs, outputs, density)) in
            [(1, 1, 1.0), (5, 7, 0.5), (33, 10, 0.1), (8, 9, 0.0)]
                .iter()
                .enumerate()
        {
            let dense = random_sparse_dense(inputs, outputs, density, 70 + case as u64);
            let sparse = CsrMatrix::from_dense(&dense, 0.0).unwrap();
            let columns = SparseColumns::of(&sparse);
            assert_eq!(columns.offsets.len(), outputs + 1);
            assert_eq!(columns.offsets[outputs] as usize, sparse.non_zeros());
            let mut rebuilt = crate::tensor::Tensor2d::zeros(inputs, outputs);
            for output in 0..outputs {
                let entries =
                    columns.offsets[output] as usize..columns.offsets[output + 1] as usize;
                let indices = &columns.input_indices[entries.clone()];
                assert!(indices.windows(2).all(|pair| pair[0] < pair[1]));
                for (&input, &value) in indices.iter().zip(&columns.values[entries]) {
                    rebuilt.set(input as usize, output, value);
                }
            }
            assert_eq!(rebuilt, dense, "{inputs}×{outputs} at {density}");
        }
    }
}
