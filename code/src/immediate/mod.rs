//! Immediate mode: one operator at a time on the GPU.
//!
//! Every call uploads its inputs, records one kernel, submits it, waits, and reads the
//! result back. It is the simplest way to use a GPU and the slowest: the transfers and
//! the waiting dominate anything small. The graph chapters measure by how much.

use crate::cpu::relu_in_place;
use crate::gpu::linear_strategy::LinearSelection;
use crate::gpu::record::{
    bind_add, record_reduction, record_relu, record_relu_in_place, record_softmax,
};
use crate::gpu::{
    GpuContext, GpuError, GpuTensor, Kernel, PipelineCache, Readback, Reduction, ReductionStrategy,
    ShaderCompilation,
};
use crate::tensor::{ShapeError, Tensor2d, linear_output_shape};

// ANCHOR: immediate_gpu
/// Runs single operators on the GPU, each call a complete round trip.
pub struct ImmediateGpu<'context> {
    context: &'context GpuContext,
    pipelines: PipelineCache,
    fill_outputs: Option<f32>,
    /// Which linear kernel `linear` and `linear_relu` run.
    linear: LinearSelection,
}
// ANCHOR_END: immediate_gpu

impl<'context> ImmediateGpu<'context> {
    /// `ShaderCompilation::EveryCall` compiles each kernel on every call;
    /// `ShaderCompilation::Cached` compiles it once. Linear layers run the naive kernel
    /// unless [`ImmediateGpu::with_linear`] chooses another.
    pub fn new(context: &'context GpuContext, compilation: ShaderCompilation) -> Self {
        ImmediateGpu {
            context,
            pipelines: PipelineCache::new(compilation),
            fill_outputs: None,
            linear: LinearSelection::default(),
        }
    }

    /// Runs linear layers with `selection`: one strategy for every shape, or the one
    /// [`LinearStrategy::for_shape`](crate::gpu::LinearStrategy::for_shape) picks.
    pub fn with_linear(mut self, selection: LinearSelection) -> Self {
        self.linear = selection;
        self
    }

    /// Fills every output buffer with `value` before the kernel runs. Tests pass NaN:
    /// GPU buffers start zeroed, and a zero an unfinished kernel left behind can look
    /// exactly like a correct ReLU output.
    pub fn with_output_fill(mut self, value: f32) -> Self {
        self.fill_outputs = Some(value);
        self
    }

    pub fn pipelines(&self) -> &PipelineCache {
        &self.pipelines
    }

    // ANCHOR: immediate_linear
    /// `input · weights + bias` on the GPU.
    pub fn linear(
        &self,
        input: &Tensor2d,
        weights: &Tensor2d,
        bias: &Tensor2d,
    ) -> Result<Tensor2d, GpuError> {
        self.linear_with(false, input, weights, bias)
    }

    /// `relu(input · weights + bias)` in one kernel.
    pub fn linear_relu(
        &self,
        input: &Tensor2d,
        weights: &Tensor2d,
        bias: &Tensor2d,
    ) -> Result<Tensor2d, GpuError> {
        self.linear_with(true, input, weights, bias)
    }

    fn linear_with(
        &self,
        apply_relu: bool,
        input: &Tensor2d,
        weights: &Tensor2d,
        bias: &Tensor2d,
    ) -> Result<Tensor2d, GpuError> {
        // Check shapes (and whether the kernel can take them) before touching the GPU.
        let (rows, columns) = linear_output_shape(input.shape(), weights.shape(), bias.shape())?;
        if rows == 0 || columns == 0 || input.columns() == 0 {
            return Ok(linear_without_products(rows, columns, bias, apply_relu));
        }
        let context = self.context;
        let strategy = self
            .linear
            .strategy_for(context, rows, input.columns(), columns)?;
        let pipeline = strategy.pipeline(context, &self.pipelines, apply_relu)?;
        let input = GpuTensor::upload(context, input, Readback::Never)?;
        let weights = GpuTensor::upload(context, weights, Readback::Never)?;
        let bias = GpuTensor::upload(context, bias, Readback::Never)?;
        let output = self.output(rows, columns)?;
        let mut encoder = self.encoder();
        strategy
            .bind(context, &pipeline, &input, &weights, &bias, &output)?
            .record(&mut encoder);
        self.submit_and_download(encoder, &output)
    }
    // ANCHOR_END: immediate_linear

    /// `max(input, 0)` into a new tensor.
    pub fn relu(&self, input: &Tensor2d) -> Result<Tensor2d, GpuError> {
        if input.is_empty() {
            return Ok(input.clone());
        }
        let context = self.context;
        let pipeline = self.pipelines.pipeline(context, Kernel::Relu)?;
        let input_on_gpu = GpuTensor::upload(context, input, Readback::Never)?;
        let output = self.output(input.rows(), input.columns())?;
        let mut encoder = self.encoder();
        record_relu(context, &mut encoder, &pipeline, &input_on_gpu, &output)?;
        self.submit_and_download(encoder, &output)
    }

    /// `left + right`, element by element, into a new tensor.
    pub fn add(&self, left: &Tensor2d, right: &Tensor2d) -> Result<Tensor2d, GpuError> {
        crate::cpu::add::add_output_shape(left.shape(), right.shape())?;
        if left.is_empty() {
            return Ok(left.clone());
        }
        let context = self.context;
        let pipeline = self.pipelines.pipeline(context, Kernel::Add)?;
        let left_on_gpu = GpuTensor::upload(context, left, Readback::Never)?;
        let right_on_gpu = GpuTensor::upload(context, right, Readback::Never)?;
        let output = self.output(left.rows(), left.columns())?;
        let mut encoder = self.encoder();
        bind_add(context, &pipeline, &left_on_gpu, &right_on_gpu, &output)?.record(&mut encoder);
        self.submit_and_download(encoder, &output)
    }

    /// `max(tensor, 0)`, computed in one GPU buffer and written back into `tensor`.
    pub fn relu_in_place(&self, tensor: &mut Tensor2d) -> Result<(), GpuError> {
        if tensor.is_empty() {
            return Ok(());
        }
        let context = self.context;
        let pipeline = self.pipelines.pipeline(context, Kernel::ReluInPlace)?;
        let on_gpu = GpuTensor::upload(context, tensor, Readback::Needed)?;
        let mut encoder = self.encoder();
        record_relu_in_place(context, &mut encoder, &pipeline, &on_gpu)?;
        *tensor = self.submit_and_download(encoder, &on_gpu)?;
        Ok(())
    }

    /// Row-wise softmax, each row's maximum and sum combined through workgroup memory.
    pub fn softmax(&self, input: &Tensor2d) -> Result<Tensor2d, GpuError> {
        self.softmax_with(ReductionStrategy::WorkgroupMemory, input)
    }

    /// Row-wise softmax with a chosen way of combining each row's values: a tree in
    /// workgroup memory, or subgroup operations (a `GpuError::MissingFeature` on a device
    /// without them).
    pub fn softmax_with(
        &self,
        strategy: ReductionStrategy,
        input: &Tensor2d,
    ) -> Result<Tensor2d, GpuError> {
        if input.is_empty() {
            return Ok(input.clone());
        }
        let context = self.context;
        let pipeline = self
            .pipelines
            .pipeline(context, strategy.softmax_kernel())?;
        let input_on_gpu = GpuTensor::upload(context, input, Readback::Never)?;
        let output = self.output(input.rows(), input.columns())?;
        let mut encoder = self.encoder();
        record_softmax(context, &mut encoder, &pipeline, &input_on_gpu, &output)?;
        self.submit_and_download(encoder, &output)
    }

    /// The sum of all elements, with subgroup operations where the device has them.
    pub fn sum(&self, input: &Tensor2d) -> Result<f32, GpuError> {
        self.reduce(Reduction::Sum, self.best_reduction_strategy(), input)
    }

    /// The largest element, with subgroup operations where the device has them.
    pub fn max(&self, input: &Tensor2d) -> Result<f32, GpuError> {
        self.reduce(Reduction::Max, self.best_reduction_strategy(), input)
    }

    /// Subgroups when the device supports them, workgroup memory otherwise.
    pub fn best_reduction_strategy(&self) -> ReductionStrategy {
        self.context.best_reduction_strategy()
    }

    /// A reduction with a chosen strategy, for comparing the two.
    pub fn reduce(
        &self,
        reduction: Reduction,
        strategy: ReductionStrategy,
        input: &Tensor2d,
    ) -> Result<f32, GpuError> {
        let kernel = reduction.kernel(strategy);
        // ANCHOR: empty_reductions
        // The sum of no values is 0, the identity of addition. The maximum of no values
        // has no such answer (−∞ would be a guess that hides the mistake), so it is an
        // error, as it is in NumPy and PyTorch.
        if input.is_empty() {
            return match reduction {
                Reduction::Sum => Ok(0.0),
                Reduction::Max => Err(ShapeError::Empty {
                    operation: kernel.label(),
                    rows: input.rows(),
                    columns: input.columns(),
                }
                .into()),
            };
        }
        // ANCHOR_END: empty_reductions
        let context = self.context;
        let pipeline = self.pipelines.pipeline(context, kernel)?;
        let input_on_gpu = GpuTensor::upload(context, input, Readback::Never)?;
        let mut encoder = self.encoder();
        let result = record_reduction(
            context,
            &mut encoder,
            &pipeline,
            &input_on_gpu,
            self.fill_outputs,
        )?;
        Ok(self.submit_and_download(encoder, &result)?.get(0, 0))
    }

    fn output(&self, rows: usize, columns: usize) -> Result<GpuTensor, GpuError> {
        let output = GpuTensor::uninitialized(self.context, rows, columns, Readback::Needed)?;
        if let Some(value) = self.fill_outputs {
            output.fill(self.context, value);
        }
        Ok(output)
    }

    fn encoder(&self) -> wgpu::CommandEncoder {
        self.context.create_encoder("immediate")
    }

    // ANCHOR: submit_and_download
    /// Submits the recorded kernel together with the copy to the staging buffer, then
    /// waits for both and reads the result.
    fn submit_and_download(
        &self,
        mut encoder: wgpu::CommandEncoder,
        output: &GpuTensor,
    ) -> Result<Tensor2d, GpuError> {
        output.record_copy_to_staging(&mut encoder)?;
        self.context.submit(encoder);
        output.read_staging(self.context)
    }
    // ANCHOR_END: submit_and_download
}

// ANCHOR: linear_without_products
/// A linear layer with nothing to multiply: no output elements, or an inner dimension of
/// 0, where `input · weights` is a `rows × columns` matrix of zeros and the output is the
/// bias repeated on every row. No GPU buffer can be empty, so these shapes are answered
/// on the host, with the same values the CPU operators give.
fn linear_without_products(
    rows: usize,
    columns: usize,
    bias: &Tensor2d,
    apply_relu: bool,
) -> Tensor2d {
    let mut output = Tensor2d::zeros(rows, columns);
    for row in 0..rows {
        output.row_mut(row).copy_from_slice(bias.row(0));
    }
    if apply_relu {
        relu_in_place(&mut output);
    }
    output
}
// ANCHOR_END: linear_without_products
