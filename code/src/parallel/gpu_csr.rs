//! The sparse × dense product on the GPU, and a dense product to measure it against.
//!
//! `shaders/parallel/csr_multiply.wgsl` gives each output element its own invocation, which
//! walks one row of the CSR matrix. Invocations of short rows finish early and wait for
//! those of long rows in the same workgroup: uneven rows are the GPU's form of the
//! irregularity the CPU meets as unpredictable loads.
//!
//! Products are prepared (buffers uploaded, bind group made) and then run, so that the
//! density sweep can time the dispatches apart from the uploads.

use thiserror::Error;

use crate::gpu::{GpuContext, GpuError, WorkgroupGrid, compile_wgsl};
use crate::parallel::csr::{CsrError, CsrMatrix};
use crate::parallel::gpu_arrays;
use crate::tensor::Tensor2d;

/// The two kernels.
pub const CSR_MULTIPLY_SHADER: &str = include_str!("../../../shaders/parallel/csr_multiply.wgsl");
const WORKGROUP_SIZE: u32 = 256;

/// A GPU product fails on the operands (their shapes) or on the GPU.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum GpuProductError {
    #[error(transparent)]
    Operands(#[from] CsrError),
    #[error(transparent)]
    Gpu(#[from] GpuError),
}

#[repr(C)]
#[derive(Debug, Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Dimensions {
    rows: u32,
    columns: u32,
    inner: u32,
    padding: u32,
}

/// Both kernels, compiled once.
pub struct GpuSparseProducts {
    sparse: wgpu::ComputePipeline,
    dense: wgpu::ComputePipeline,
}

/// A product whose operands are on the GPU, ready to run any number of times.
pub struct PreparedProduct {
    pipeline: wgpu::ComputePipeline,
    bind_group: wgpu::BindGroup,
    grid: WorkgroupGrid,
    output: wgpu::Buffer,
    rows: usize,
    columns: usize,
    // Kept alive for the bind group.
    _buffers: Vec<wgpu::Buffer>,
}

impl GpuSparseProducts {
    pub fn new(context: &GpuContext) -> Result<GpuSparseProducts, GpuError> {
        let compile = |entry_point| {
            compile_wgsl(
                context,
                "csr_multiply.wgsl",
                CSR_MULTIPLY_SHADER,
                entry_point,
                &[],
            )
        };
        Ok(GpuSparseProducts {
            sparse: compile("sparse_times_dense")?,
            dense: compile("dense_times_dense")?,
        })
    }

    /// `A · B` with `A` sparse, uploaded and ready to run.
    pub fn prepare_sparse(
        &self,
        context: &GpuContext,
        sparse: &CsrMatrix,
        right: &Tensor2d,
    ) -> Result<PreparedProduct, GpuProductError> {
        if right.rows() != sparse.columns() {
            return Err(CsrError::ShapeMismatch {
                operation: "sparse matrix × dense matrix on the GPU",
                left_rows: sparse.rows(),
                left_columns: sparse.columns(),
                right_rows: right.rows(),
                right_columns: right.columns(),
            }
            .into());
        }
        let buffers = vec![
            gpu_arrays::upload(context, "row offsets", sparse.row_offsets()),
            gpu_arrays::upload(context, "column indices", sparse.column_indices()),
            gpu_arrays::upload(context, "values", sparse.values()),
        ];
        let bindings = [(0, &buffers[0]), (1, &buffers[1]), (2, &buffers[2])];
        self.prepare(
            context,
            &self.sparse,
            &bindings,
            sparse.rows(),
            sparse.columns(),
            right,
            buffers.clone(),
        )
    }

    /// `A · B` with `A` dense, every zero multiplied too.
    pub fn prepare_dense(
        &self,
        context: &GpuContext,
        left: &Tensor2d,
        right: &Tensor2d,
    ) -> Result<PreparedProduct, GpuProductError> {
        if right.rows() != left.columns() {
            return Err(CsrError::ShapeMismatch {
                operation: "dense matrix × dense matrix on the GPU",
                left_rows: left.rows(),
                left_columns: left.columns(),
                right_rows: right.rows(),
                right_columns: right.columns(),
            }
            .into());
        }
        let buffers = vec![gpu_arrays::upload(context, "dense left", left.as_slice())];
        let bindings = [(6, &buffers[0])];
        self.prepare(
            context,
            &self.dense,
            &bindings,
            left.rows(),
            left.columns(),
            right,
            buffers.clone(),
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn prepare(
        &self,
        context: &GpuContext,
        pipeline: &wgpu::ComputePipeline,
        left_bindings: &[(u32, &wgpu::Buffer)],
        rows: usize,
        inner: usize,
        right: &Tensor2d,
        mut keep: Vec<wgpu::Buffer>,
    ) -> Result<PreparedProduct, GpuProductError> {
        let columns = right.columns();
        let elements = rows * columns;
        let too_large = |count: usize| CsrError::TooLarge { count };
        let dimensions = Dimensions {
            rows: u32::try_from(rows).map_err(|_| too_large(rows))?,
            columns: u32::try_from(columns).map_err(|_| too_large(columns))?,
            inner: u32::try_from(inner).map_err(|_| too_large(inner))?,
            padding: 0,
        };
        u32::try_from(elements).map_err(|_| too_large(elements))?;
        let grid = WorkgroupGrid::covering(
            (elements as u64).div_ceil(u64::from(WORKGROUP_SIZE)),
            context.limits().max_compute_workgroups_per_dimension,
            "sparse product",
        )?;
        let right_buffer = gpu_arrays::upload(context, "right", right.as_slice());
        let output = gpu_arrays::poisoned(context, "product", elements);
        let uniform = gpu_arrays::uniform(context, "dimensions", &dimensions);
        let mut entries: Vec<(u32, &wgpu::Buffer)> = left_bindings.to_vec();
        entries.extend([(3, &right_buffer), (4, &output), (5, &uniform)]);
        let bind_group = gpu_arrays::bind_at(context, pipeline, &entries);
        keep.extend([right_buffer, uniform]);
        Ok(PreparedProduct {
            pipeline: pipeline.clone(),
            bind_group,
            grid,
            output,
            rows,
            columns,
            _buffers: keep,
        })
    }

    /// `A · B` with `A` sparse: upload, run, read back.
    pub fn multiply(
        &self,
        context: &GpuContext,
        sparse: &CsrMatrix,
        right: &Tensor2d,
    ) -> Result<Tensor2d, GpuProductError> {
        let product = self.prepare_sparse(context, sparse, right)?;
        product.run(context);
        Ok(product.read(context)?)
    }
}

impl PreparedProduct {
    /// Submits the dispatch and waits until the GPU has finished it.
    pub fn run(&self, context: &GpuContext) {
        let mut encoder = context.create_encoder("sparse product");
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor::default());
            pass.set_pipeline(&self.pipeline);
            pass.set_bind_group(0, &self.bind_group, &[]);
            pass.dispatch_workgroups(self.grid.x, self.grid.y, self.grid.z);
        }
        context.submit(encoder);
        // Waiting can only fail if the device is lost, which the read that follows reports.
        let _ = context.device().poll(wgpu::PollType::wait_indefinitely());
    }

    /// The output, read back.
    pub fn read(&self, context: &GpuContext) -> Result<Tensor2d, GpuError> {
        let values = gpu_arrays::read_back(context, &self.output, self.rows * self.columns)?;
        Ok(Tensor2d::from_vec(self.rows, self.columns, values)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parallel::csr::{dense_product, random_sparse_dense};
    use crate::tensor::Tolerance;

    #[test]
    fn the_gpu_products_match_the_dense_cpu_reference() {
        let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
        let products = GpuSparseProducts::new(context).unwrap();
        let cases = [
            (1, 1, 1, 1.0),
            (5, 4, 3, 0.0),
            (17, 33, 1, 0.3),
            (64, 64, 64, 0.05),
            (129, 70, 7, 0.5),
            (300, 200, 31, 0.01),
        ];
        for (seed, &(rows, inner, columns, density)) in cases.iter().enumerate() {
            let mut left = random_sparse_dense(rows, inner, density, seed as u64);
            if rows > 2 {
                left.row_mut(0).fill(0.0);
                left.row_mut(rows - 1).fill(-0.5);
            }
            let right = Tensor2d::random(inner, columns, -1.0..=1.0, 100 + seed as u64);
            let expected = dense_product(&left, &right);
            let sparse = CsrMatrix::from_dense(&left, 0.0).unwrap();
            let from_sparse = products.multiply(context, &sparse, &right).unwrap();
            let dense = products.prepare_dense(context, &left, &right).unwrap();
            dense.run(context);
            let from_dense = dense.read(context).unwrap();
            for (label, actual) in [("sparse", from_sparse), ("dense", from_dense)] {
                let comparison = actual
                    .compare(&expected, Tolerance::new(1e-5, 1e-5))
                    .unwrap();
                assert!(
                    comparison.passed(),
                    "{label} {rows}×{inner} at density {density} times {inner}×{columns}: {comparison}"
                );
            }
        }
    }

    #[test]
    fn operands_that_do_not_fit_are_refused() {
        let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
        let products = GpuSparseProducts::new(context).unwrap();
        let sparse = CsrMatrix::from_dense(&Tensor2d::filled(2, 3, 1.0), 0.0).unwrap();
        assert!(matches!(
            products.multiply(context, &sparse, &Tensor2d::zeros(2, 2)),
            Err(GpuProductError::Operands(CsrError::ShapeMismatch { .. }))
        ));
    }
}
