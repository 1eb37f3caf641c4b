//! The int8 linear layer on the GPU (`shaders/inference/linear_int8.wgsl`): the input is
//! quantised row by row on the host, four int8 values are packed into each `u32`, and each
//! invocation computes one output element with `i32` sums, either with WGSL's
//! `dot4I8Packed` or with the bytes unpacked by hand.

use crate::gpu::dispatch::{WorkgroupGrid, workgroups_for};
use crate::gpu::record::{BoundDispatch, uniform_buffer};
use crate::gpu::{GpuContext, GpuError, compile_wgsl};
use crate::inference::quantization::{
    QuantizationError, QuantizedRows, QuantizedWeights, check_shapes, quantize_rows,
};
use crate::parallel::gpu_arrays::{poisoned, read_back, upload};
use crate::tensor::Tensor2d;
use thiserror::Error;

/// The side of the square workgroup (8 × 8 invocations).
const WORKGROUP_SIDE: u32 = 8;

/// Which entry point computes the dot products.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Int8Kernel {
    /// `dot4I8Packed`: one instruction per four products where the GPU has it.
    PackedDotProduct,
    /// The bytes extracted and multiplied one by one.
    Unpacked,
}

impl Int8Kernel {
    fn entry_point(self) -> &'static str {
        match self {
            Int8Kernel::PackedDotProduct => "linear_int8_dot4",
            Int8Kernel::Unpacked => "linear_int8_unpacked",
        }
    }
}

/// A GPU int8 layer failed: bad input, or the GPU.
#[derive(Debug, Error)]
pub enum GpuInt8Error {
    #[error(transparent)]
    Quantization(#[from] QuantizationError),
    #[error(transparent)]
    Gpu(#[from] GpuError),
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct Dimensions {
    rows: u32,
    outputs: u32,
    words: u32,
    padding: u32,
}

// ANCHOR: pack
/// Packs int8 rows of `columns` values into `u32` words, four per word, the first value in
/// the lowest byte (the order `dot4I8Packed` reads); a row's last word is padded with zeros.
pub fn pack_rows(values: &[i8], columns: usize) -> Vec<u32> {
    let words = columns.div_ceil(4);
    let rows = values.len().checked_div(columns).unwrap_or(0);
    let mut packed = Vec::with_capacity(rows * words);
    for row in values.chunks(columns.max(1)).take(rows) {
        for chunk in row.chunks(4) {
            let mut bytes = [0u8; 4];
            for (byte, &value) in bytes.iter_mut().zip(chunk) {
                *byte = value as u8;
            }
            packed.push(u32::from_le_bytes(bytes));
        }
    }
    packed
}
// ANCHOR_END: pack

/// An int8 layer whose weights live on the GPU, ready to run on many inputs.
pub struct GpuInt8Linear {
    pipeline: wgpu::ComputePipeline,
    weight_words: wgpu::Buffer,
    weight_scales: wgpu::Buffer,
    bias: wgpu::Buffer,
    weights: QuantizedWeights,
    bias_values: Tensor2d,
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
        let source = include_str!("../../../shaders/inference/linear_int8.wgsl");
        let pipeline = compile_wgsl(context, "linear_int8", source, kernel.entry_point(), &[])?;
        let scales: Vec<f32> = (0..weights.outputs())
            .map(|output| weights.scale(output))
            .collect();
        Ok(GpuInt8Linear {
            pipeline,
            weight_words: upload(
                context,
                "int8 weights",
                &pack_rows(weights.values(), weights.inputs()),
            ),
            weight_scales: upload(context, "int8 weight scales", &scales),
            bias: upload(context, "int8 bias", bias.as_slice()),
            weights: weights.clone(),
            bias_values: bias.clone(),
        })
    }

    // ANCHOR: run
    /// `input · weights + bias`: quantises `input` per row, uploads it packed, runs the
    /// kernel on an output poisoned with NaN, and reads the result back.
    pub fn run(&self, context: &GpuContext, input: &Tensor2d) -> Result<Tensor2d, GpuInt8Error> {
        check_shapes(input, &self.weights, &self.bias_values)?;
        let quantized: QuantizedRows = quantize_rows(input)?;
        let rows = input.rows();
        let outputs = self.weights.outputs();
        if rows == 0 || outputs == 0 {
            return Ok(Tensor2d::zeros(rows, outputs));
        }
        let words = input.columns().div_ceil(4);
        let input_words = upload(
            context,
            "int8 input",
            &pack_rows(&quantized.values, input.columns()),
        );
        let input_scales = upload(context, "int8 input scales", &quantized.scales);
        let output = poisoned(context, "int8 output", rows * outputs);
        let dimensions = uniform_buffer(
            context,
            &Dimensions {
                rows: rows as u32,
                outputs: outputs as u32,
                words: words as u32,
                padding: 0,
            },
        );
        let columns = workgroups_for(outputs, WORKGROUP_SIDE);
        let row_groups = workgroups_for(rows, WORKGROUP_SIDE);
        let limit = u64::from(context.limits().max_compute_workgroups_per_dimension);
        if columns > limit || row_groups > limit {
            return Err(GpuError::DispatchTooLarge {
                operation: "linear_int8",
                workgroups: columns * row_groups,
                limit: limit as u32,
            }
            .into());
        }
        let grid = WorkgroupGrid {
            x: columns as u32,
            y: row_groups as u32,
            z: 1,
        };
        let dispatch = BoundDispatch::new(
            context,
            &self.pipeline,
            &[
                &input_words,
                &input_scales,
                &self.weight_words,
                &self.weight_scales,
                &self.bias,
                &output,
                &dimensions,
            ],
            grid,
        );
        let mut encoder = context.create_encoder("linear_int8");
        dispatch.record(&mut encoder);
        context.submit(encoder);
        let values: Vec<f32> = read_back(context, &output, rows * outputs)?;
        Ok(Tensor2d::from_vec(rows, outputs, values).expect("rows × outputs values"))
    }
    // ANCHOR_END: run
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inference::quantization::{Granularity, linear_int8};

    #[test]
    fn packing_puts_the_first_value_in_the_lowest_byte_and_pads_with_zeros() {
        let packed = pack_rows(&[1, -1, 2, -128, 5, 6], 3);
        assert_eq!(packed, vec![0x0002_FF01, 0x0006_0580]);
    }

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
