//! The int8 linear layer on the GPU, one layer at a time: the input is quantised row by row
//! on the host, four int8 values are packed into each `u32`, and the product kernel of
//! [`crate::gpu::linear_int8`] (`shaders/linear_int8.wgsl`) computes one output element per
//! invocation with `i32` sums, either with WGSL's `dot4I8Packed` or with the bytes unpacked
//! by hand. Bad input is an error before anything reaches the GPU. The graph runner runs
//! the same product kernel for a `LinearInt8` node, after quantising on the GPU instead.

pub use crate::gpu::linear_int8::{Int8Kernel, pack_rows};
use crate::gpu::linear_int8::{
    Int8Weights, QuantizedActivations, bind_linear_int8, linear_int8_pipeline,
};
use crate::gpu::{GpuContext, GpuError, GpuTensor, PipelineCache, Readback, ShaderCompilation};
use crate::inference::quantization::{
    QuantizationError, QuantizedWeights, check_shapes, quantize_rows,
};
use crate::tensor::Tensor2d;
use thiserror::Error;

/// A GPU int8 layer failed: bad input, or the GPU.
#[derive(Debug, Error)]
pub enum GpuInt8Error {
    #[error(transparent)]
    Quantization(#[from] QuantizationError),
    #[error(transparent)]
    Gpu(#[from] GpuError),
}

/// An int8 layer whose weights live on the GPU, ready to run on many inputs.
pub struct GpuInt8Linear {
    weights: QuantizedWeights,
    bias: Tensor2d,
    gpu_weights: Int8Weights,
    gpu_bias: GpuTensor,
    linear: wgpu::ComputePipeline,
}

impl GpuInt8Linear {
    /// Uploads `weights` and `bias` once and compiles the chosen kernel.
    pub fn new(
        context: &GpuContext,
        weights: &QuantizedWeights,
        bias: &Tensor2d,
        kernel: Int8Kernel,
    ) -> Result<GpuInt8Linear, GpuInt8Error> {
        // An input of the right width checks the bias's shape for us.
        check_shapes(&Tensor2d::zeros(0, weights.inputs()), weights, bias)?;
        let pipelines = PipelineCache::new(ShaderCompilation::Cached);
        Ok(GpuInt8Linear {
            weights: weights.clone(),
            bias: bias.clone(),
            gpu_weights: Int8Weights::upload(context, weights),
            gpu_bias: GpuTensor::upload(context, bias, Readback::Never)?,
            linear: linear_int8_pipeline(context, &pipelines, kernel, false)?,
        })
    }

    // ANCHOR: run
    /// `input · weights + bias`: quantises `input` per row, uploads it packed, runs the
    /// kernel on an output poisoned with NaN, and reads the result back.
    pub fn run(&self, context: &GpuContext, input: &Tensor2d) -> Result<Tensor2d, GpuInt8Error> {
        check_shapes(input, &self.weights, &self.bias)?;
        let quantized = quantize_rows(input)?;
        let (rows, outputs) = (input.rows(), self.weights.outputs());
        if rows == 0 || outputs == 0 {
            return Ok(Tensor2d::zeros(rows, outputs));
        }
        let activations = QuantizedActivations::upload(context, &quantized)?;
        let output = GpuTensor::uninitialized(context, rows, outputs, Readback::Needed)?;
        output.fill(context, f32::NAN);
        let mut encoder = context.create_encoder("linear_int8");
        bind_linear_int8(
            context,
            &self.linear,
            &activations,
            &self.gpu_weights,
            &self.gpu_bias,
            &output,
        )?
        .record(&mut encoder);
        context.submit(encoder);
        Ok(output.download(context)?)
    }
    // ANCHOR_END: run
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inference::quantization::{Granularity, linear_int8};

    #[test]
    fn both_gpu_kernels_match_the_cpu_int8_layer_on_many_shapes() {
        let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
        for (case, &(rows, inputs, outputs)) in [
            (1, 1, 1),
            (1, 4, 1),
            (3, 5, 7),
            (9, 64, 10),
            (17, 130, 33),
            (64, 256, 64),
        ]
        .iter()
        .enumerate()
        {
            let seed = 100 + case as u64;
            let input = Tensor2d::random(rows, inputs, -2.0..=2.0, seed);
            let weights = Tensor2d::random(inputs, outputs, -0.3..=0.3, seed + 1);
            let bias = Tensor2d::random(1, outputs, -0.1..=0.1, seed + 2);
            for granularity in [Granularity::PerTensor, Granularity::PerOutput] {
                let quantized = QuantizedWeights::quantize(&weights, granularity).unwrap();
                let expected = linear_int8(&input, &quantized, &bias).unwrap();
                for kernel in [Int8Kernel::PackedDotProduct, Int8Kernel::Unpacked] {
                    let layer = GpuInt8Linear::new(context, &quantized, &bias, kernel).unwrap();
                    let result = layer.run(context, &input).unwrap();
                    // The i32 sums are exact on both sides; only the final scaling may
                    // round differently (a fused multiply-add on the GPU).
                    let comparison = result
                        .compare(&expected, crate::Tolerance::new(1e-5, 1e-6))
                        .unwrap();
                    assert!(
                        comparison.passed(),
                        "{rows}×{inputs}×{outputs} {granularity:?} {kernel:?}: {comparison:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn bad_input_is_an_error_before_the_gpu_runs() {
        let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
        let weights =
            QuantizedWeights::quantize(&Tensor2d::zeros(8, 4), Granularity::PerTensor).unwrap();
        assert!(matches!(
            GpuInt8Linear::new(
                context,
                &weights,
                &Tensor2d::zeros(1, 5),
                Int8Kernel::Unpacked
            ),
            Err(GpuInt8Error::Quantization(
                QuantizationError::BadBias { .. }
            ))
        ));
        let layer = GpuInt8Linear::new(
            context,
            &weights,
            &Tensor2d::zeros(1, 4),
            Int8Kernel::PackedDotProduct,
        )
        .unwrap();
        let mut input = Tensor2d::zeros(2, 8);
        input.set(0, 0, f32::NAN);
        assert!(matches!(
            layer.run(context, &input),
            Err(GpuInt8Error::Quantization(
                QuantizationError::NonFinite { .. }
            ))
        ));
        assert!(matches!(
            layer.run(context, &Tensor2d::zeros(2, 7)),
            Err(GpuInt8Error::Quantization(
                QuantizationError::ShapeMismatch { .. }
            ))
        ));
    }
}
