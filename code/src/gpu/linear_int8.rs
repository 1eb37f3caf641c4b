//! The int8 linear layer on the GPU, as two kernels.
//!
//! `shaders/quantize_rows.wgsl` quantises the layer's input row by row, on the GPU, exactly
//! as [`crate::cpu::int8::quantize_rows`] does on the CPU (same scale, same rounding, four
//! int8 levels packed into each `u32`), and `shaders/linear_int8.wgsl` sums every row against
//! every output in `i32`, either with WGSL's `dot4I8Packed` or with the bytes unpacked by
//! hand, and scales the sum back once. The weights are quantised and packed once, when the
//! layer is prepared. The graph runner runs a `LinearInt8` node with [`GpuInt8Layer`];
//! module 3's [`crate::inference::gpu_int8`] runs the product kernel for one layer at a time,
//! on activations quantised on the host.

use wgpu::util::DeviceExt;

use crate::cpu::int8::{QuantizedRows, QuantizedWeights};
use crate::gpu::dispatch::WorkgroupGrid;
use crate::gpu::record::{BoundDispatch, rectangular_tile_grid, uniform_buffer};
use crate::gpu::{GpuContext, GpuError, GpuTensor, PipelineCache, Readback, compile_wgsl};
use crate::tensor::{ShapeError, check_output_shape};

/// The side of the square tile of outputs one workgroup computes (8 × 8 invocations).
const TILE: u32 = 8;

const QUANTIZE_SOURCE: &str = include_str!("../../../shaders/quantize_rows.wgsl");
const LINEAR_SOURCE: &str = include_str!("../../../shaders/linear_int8.wgsl");

/// Which entry point of `linear_int8.wgsl` computes the dot products.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Int8Kernel {
    /// `dot4I8Packed`: one instruction per four products where the GPU has it.
    PackedDotProduct,
    /// The bytes extracted and multiplied one by one.
    Unpacked,
}

impl Int8Kernel {
    pub const ALL: [Int8Kernel; 2] = [Int8Kernel::PackedDotProduct, Int8Kernel::Unpacked];

    fn entry_point(self) -> &'static str {
        match self {
            Int8Kernel::PackedDotProduct => "linear_int8_dot4",
            Int8Kernel::Unpacked => "linear_int8_unpacked",
        }
    }

    /// The packed kernel where this device compiles it, the unpacked one otherwise.
    /// `dot4I8Packed` is a WGSL language extension (`packed_4x8_integer_dot_product`): a
    /// browser may lack it, and then the pipeline fails to compile.
    pub fn best_for(context: &GpuContext, pipelines: &PipelineCache) -> Int8Kernel {
        match linear_int8_pipeline(context, pipelines, Int8Kernel::PackedDotProduct, false) {
            Ok(_) => Int8Kernel::PackedDotProduct,
            Err(_) => Int8Kernel::Unpacked,
        }
    }
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

/// A read-only storage buffer holding `values`. WebGPU has no empty bindings, so an empty
/// slice gets one zero element, which no kernel reads.
pub(crate) fn storage_buffer<T: bytemuck::Pod>(
    context: &GpuContext,
    label: &str,
    values: &[T],
) -> wgpu::Buffer {
    let zero = [T::zeroed()];
    let values = if values.is_empty() { &zero[..] } else { values };
    context
        .device()
        .create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(label),
            contents: bytemuck::cast_slice(values),
            usage: wgpu::BufferUsages::STORAGE,
        })
}

/// Quantised weights on the GPU: the levels packed output by output, and one scale per
/// output (a per-tensor scale is repeated, so the kernel need not know the granularity).
pub struct Int8Weights {
    inputs: usize,
    outputs: usize,
    words: wgpu::Buffer,
    scales: wgpu::Buffer,
}

impl Int8Weights {
    pub fn upload(context: &GpuContext, weights: &QuantizedWeights) -> Int8Weights {
        let scales: Vec<f32> = (0..weights.outputs())
            .map(|output| weights.scale(output))
            .collect();
        Int8Weights {
            inputs: weights.inputs(),
            outputs: weights.outputs(),
            words: storage_buffer(
                context,
                "int8 weights",
                &pack_rows(weights.values(), weights.inputs()),
            ),
            scales: storage_buffer(context, "int8 weight scales", &scales),
        }
    }

    pub fn inputs(&self) -> usize {
        self.inputs
    }

    pub fn outputs(&self) -> usize {
        self.outputs
    }
}

/// A layer's input quantised on the GPU: `rows × words` packed levels and one scale per
/// row. The words are `u32` bit patterns; they live in [`GpuTensor`]s (whose buffers the
/// kernels read as `array<u32>`) so that tests can read them back bit for bit.
pub struct QuantizedActivations {
    columns: usize,
    words: GpuTensor,
    scales: GpuTensor,
}

impl QuantizedActivations {
    /// Room for a `rows × columns` input, quantised.
    pub fn new(
        context: &GpuContext,
        rows: usize,
        columns: usize,
        readback: Readback,
    ) -> Result<QuantizedActivations, GpuError> {
        Ok(QuantizedActivations {
            columns,
            words: GpuTensor::uninitialized(context, rows, columns.div_ceil(4).max(1), readback)?,
            scales: GpuTensor::uninitialized(context, rows, 1, readback)?,
        })
    }

    /// Activations quantised on the host ([`crate::cpu::int8::quantize_rows`]), packed and
    /// uploaded: what a single layer run from the CPU starts from.
    pub fn upload(
        context: &GpuContext,
        quantized: &QuantizedRows,
    ) -> Result<QuantizedActivations, GpuError> {
        let activations =
            QuantizedActivations::new(context, quantized.rows, quantized.columns, Readback::Never)?;
        let words = pack_rows(&quantized.values, quantized.columns);
        let queue = context.queue();
        queue.write_buffer(activations.words.buffer(), 0, bytemuck::cast_slice(&words));
        queue.write_buffer(
            activations.scales.buffer(),
            0,
            bytemuck::cast_slice(&quantized.scales),
        );
        Ok(activations)
    }

    pub fn rows(&self) -> usize {
        self.scales.rows()
    }

    pub fn columns(&self) -> usize {
        self.columns
    }

    /// Fills the levels and scales with NaN bit patterns, so that a test can tell a value
    /// the kernel wrote from one it left behind.
    pub fn poison(&self, context: &GpuContext) {
        self.words.fill(context, f32::NAN);
        self.scales.fill(context, f32::NAN);
    }

    /// Reads the levels and scales back (it must have been made with `Readback::Needed`),
    /// unpacked into the CPU's [`QuantizedRows`], to compare with the CPU's bit for bit.
    pub fn download(&self, context: &GpuContext) -> Result<QuantizedRows, GpuError> {
        let words = self.words.download(context)?;
        let scales = self.scales.download(context)?;
        let mut values = Vec::with_capacity(self.rows() * self.columns);
        for row in 0..self.rows() {
            let row_bytes = words
                .row(row)
                .iter()
                .flat_map(|word| word.to_bits().to_le_bytes());
            values.extend(row_bytes.take(self.columns).map(|byte| byte as i8));
        }
        Ok(QuantizedRows {
            rows: self.rows(),
            columns: self.columns,
            values,
            scales: scales.as_slice().to_vec(),
        })
    }
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct QuantizeDimensions {
    rows: u32,
    columns: u32,
    words: u32,
    padding: u32,
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct LinearInt8Dimensions {
    rows: u32,
    outputs: u32,
    words: u32,
    row_tiles_per_layer: u32,
}

/// The row-quantising pipeline, from `pipelines` (compiled once if it caches).
pub fn quantize_rows_pipeline(
    context: &GpuContext,
    pipelines: &PipelineCache,
) -> Result<wgpu::ComputePipeline, GpuError> {
    pipelines.generated_pipeline("quantize_rows", || {
        compile_wgsl(
            context,
            "quantize_rows",
            QUANTIZE_SOURCE,
            "quantize_rows",
            &[],
        )
    })
}

/// The int8 linear pipeline with `kernel`'s dot products and, if `relu`, a ReLU.
pub fn linear_int8_pipeline(
    context: &GpuContext,
    pipelines: &PipelineCache,
    kernel: Int8Kernel,
    relu: bool,
) -> Result<wgpu::ComputePipeline, GpuError> {
    let key = format!("linear_int8 {} relu={relu}", kernel.entry_point());
    pipelines.generated_pipeline(&key, || {
        let relu = if relu { 1.0 } else { 0.0 };
        compile_wgsl(
            context,
            "linear_int8",
            LINEAR_SOURCE,
            kernel.entry_point(),
            &[("apply_relu", relu)],
        )
    })
}

// ANCHOR: bind_quantize_rows
/// Binds the quantisation of `input` into `activations`: one workgroup per row.
pub fn bind_quantize_rows(
    context: &GpuContext,
    pipeline: &wgpu::ComputePipeline,
    input: &GpuTensor,
    activations: &QuantizedActivations,
) -> Result<BoundDispatch, GpuError> {
    check_output_shape(
        "quantize_rows",
        input.shape(),
        (activations.rows(), activations.columns()),
    )?;
    let limit = context.limits().max_compute_workgroups_per_dimension;
    let grid = WorkgroupGrid::covering(input.rows() as u64, limit, "quantize_rows")?;
    let dimensions = uniform_buffer(
        context,
        &QuantizeDimensions {
            rows: input.rows() as u32,
            columns: input.columns() as u32,
            words: activations.words.columns() as u32,
            padding: 0,
        },
    );
    let buffers = [
        input.buffer(),
        activations.words.buffer(),
        activations.scales.buffer(),
        &dimensions,
    ];
    Ok(BoundDispatch::new(context, pipeline, &buffers, grid))
}
// ANCHOR_END: bind_quantize_rows

/// Binds `output = activations · weights + bias` (with the pipeline's ReLU, if any).
pub fn bind_linear_int8(
    context: &GpuContext,
    pipeline: &wgpu::ComputePipeline,
    activations: &QuantizedActivations,
    weights: &Int8Weights,
    bias: &GpuTensor,
    output: &GpuTensor,
) -> Result<BoundDispatch, GpuError> {
    if activations.columns() != weights.inputs() {
        return Err(ShapeError::Incompatible {
            operation: "linear_int8",
            expectation: "the input's columns must equal the weights' inputs",
            left_name: "input",
            left: (activations.rows(), activations.columns()),
            right_name: "weights",
            right: (weights.inputs(), weights.outputs()),
        }
        .into());
    }
    check_output_shape("linear_int8 bias", (1, weights.outputs()), bias.shape())?;
    check_output_shape(
        "linear_int8",
        (activations.rows(), weights.outputs()),
        output.shape(),
    )?;
    let grid = rectangular_tile_grid(
        context,
        output.rows(),
        output.columns(),
        TILE,
        TILE,
        "linear_int8",
    )?;
    let dimensions = uniform_buffer(
        context,
        &LinearInt8Dimensions {
            rows: output.rows() as u32,
            outputs: output.columns() as u32,
            words: activations.words.columns() as u32,
            row_tiles_per_layer: grid.y,
        },
    );
    let buffers = [
        activations.words.buffer(),
        activations.scales.buffer(),
        &weights.words,
        &weights.scales,
        bias.buffer(),
        output.buffer(),
        &dimensions,
    ];
    Ok(BoundDispatch::new(context, pipeline, &buffers, grid))
}

// ANCHOR: gpu_int8_layer
/// One int8 linear layer of a graph, prepared: its weights on the GPU and a scratch buffer
/// for its quantised input. A run is two dispatches, quantise then multiply.
pub struct GpuInt8Layer {
    weights: Int8Weights,
    activations: QuantizedActivations,
    kernel: Int8Kernel,
    relu: bool,
}

impl GpuInt8Layer {
    /// Uploads `weights` for inputs of `rows` rows.
    pub fn prepare(
        context: &GpuContext,
        weights: &QuantizedWeights,
        rows: usize,
        kernel: Int8Kernel,
        relu: bool,
        readback: Readback,
    ) -> Result<GpuInt8Layer, GpuError> {
        Ok(GpuInt8Layer {
            weights: Int8Weights::upload(context, weights),
            activations: QuantizedActivations::new(context, rows, weights.inputs(), readback)?,
            kernel,
            relu,
        })
    }

    /// The two dispatches of `output = relu?(input · weights + bias)`, bound.
    pub fn bind(
        &self,
        context: &GpuContext,
        pipelines: &PipelineCache,
        input: &GpuTensor,
        bias: &GpuTensor,
        output: &GpuTensor,
    ) -> Result<[BoundDispatch; 2], GpuError> {
        let quantize = quantize_rows_pipeline(context, pipelines)?;
        let linear = linear_int8_pipeline(context, pipelines, self.kernel, self.relu)?;
        Ok([
            bind_quantize_rows(context, &quantize, input, &self.activations)?,
            bind_linear_int8(
                context,
                &linear,
                &self.activations,
                &self.weights,
                bias,
                output,
            )?,
        ])
    }

    /// The layer's quantised input, as the last run left it.
    pub fn activations(&self) -> &QuantizedActivations {
        &self.activations
    }

    pub fn kernel(&self) -> Int8Kernel {
        self.kernel
    }
}
// ANCHOR_END: gpu_int8_layer

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packing_puts_the_first_value_in_the_lowest_byte_and_pads_with_zeros() {
        let packed = pack_rows(&[1, -1, 2, -128, 5, 6], 3);
        assert_eq!(packed, vec![0x0002_FF01, 0x0006_0580]);
    }
}
