//! The linear layer with half-precision (f16) weights and activations on the GPU
//! (`shaders/inference/linear_f16.wgsl`). The host rounds the input and the weights to f16
//! (the `half` crate) and uploads two bytes per value; the GPU sums the products in f32
//! ([`HalfAccumulation::Single`]) or in f16 ([`HalfAccumulation::Half`]) and writes f32.
//!
//! f16 arithmetic in a shader needs the device feature `SHADER_F16` (WGSL `enable f16;`):
//! [`GpuF16Linear::new`] is a [`GpuF16Error::MissingFeature`] naming the adapter on a
//! device without it.
//!
//! [`error_bound`] says how far from the fp32 result each output may lie, from f16's unit
//! roundoff 2⁻¹¹ and the length of the sum; the tests hold every element to it.

use std::time::Instant;

use crate::gpu::dispatch::{WorkgroupGrid, workgroups_for};
use crate::gpu::record::{BoundDispatch, uniform_buffer};
use crate::gpu::{GpuContext, GpuError, TimestampQueries, TimestampSupport, compile_wgsl};
use crate::parallel::gpu_arrays::{poisoned, read_back, upload};
use crate::tensor::{ShapeError, Tensor2d};
use thiserror::Error;

/// f16's unit roundoff: rounding to nearest changes a value by at most this fraction.
pub const HALF_UNIT_ROUNDOFF: f64 = 1.0 / 2048.0;
/// f32's unit roundoff, 2⁻²⁴.
pub const SINGLE_UNIT_ROUNDOFF: f64 = 1.0 / 16_777_216.0;
/// The largest finite f16.
pub const HALF_MAX: f32 = 65504.0;

/// The side of the square workgroup and of the tiles it stages (16 × 16 invocations).
const TILE: u32 = 16;

/// What the GPU adds the f16 products in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HalfAccumulation {
    /// Products converted to f32 (exactly) and summed in f32.
    Single,
    /// Products and sums rounded to f16 at every step.
    Half,
}

impl HalfAccumulation {
    pub const ALL: [HalfAccumulation; 2] = [HalfAccumulation::Single, HalfAccumulation::Half];

    fn entry_point(self) -> &'static str {
        match self {
            HalfAccumulation::Single => "linear_f16_sum_f32",
            HalfAccumulation::Half => "linear_f16_sum_f16",
        }
    }

    /// A short name for tables and figure series.
    pub fn name(self) -> &'static str {
        match self {
            HalfAccumulation::Single => "f16 values, f32 sums",
            HalfAccumulation::Half => "f16 values, f16 sums",
        }
    }
}

/// Why an f16 layer cannot run, said for a person.
#[derive(Debug, Error)]
pub enum GpuF16Error {
    #[error(
        "the f16 linear layer needs the device feature {feature}, which the adapter {adapter} \
         does not offer"
    )]
    MissingFeature {
        feature: &'static str,
        adapter: String,
    },
    #[error(
        "{tensor} holds {value} at row {row}, column {column}: f16 holds only finite values \
         up to ±65504, so it cannot be stored in half precision"
    )]
    NotRepresentable {
        tensor: &'static str,
        row: usize,
        column: usize,
        value: f32,
    },
    #[error(transparent)]
    Shape(#[from] ShapeError),
    #[error(transparent)]
    Gpu(#[from] GpuError),
}

// ANCHOR: round_to_half
/// `values` rounded to the nearest f16, as the f16 bit patterns the shader reads. A value
/// that is not finite or beyond ±65504 is an error: it would arrive as infinity or NaN.
pub fn to_half_bits(tensor: &Tensor2d, name: &'static str) -> Result<Vec<u16>, GpuF16Error> {
    let columns = tensor.columns().max(1);
    tensor
        .as_slice()
        .iter()
        .enumerate()
        .map(|(index, &value)| {
            if value.is_finite() && value.abs() <= HALF_MAX {
                Ok(half::f16::from_f32(value).to_bits())
            } else {
                Err(GpuF16Error::NotRepresentable {
                    tensor: name,
                    row: index / columns,
                    column: index % columns,
                    value,
                })
            }
        })
        .collect()
}
// ANCHOR_END: round_to_half

/// `tensor` with every value rounded to f16 and back: what the GPU sees.
pub fn round_to_half(tensor: &Tensor2d) -> Tensor2d {
    let values = tensor
        .as_slice()
        .iter()
        .map(|&value| half::f16::from_f32(value).to_f32())
        .collect();
    Tensor2d::from_vec(tensor.rows(), tensor.columns(), values).expect("same shape")
}

/// Uploads f16 bit patterns as a storage buffer (padded to whole 32-bit words).
pub fn upload_half(context: &GpuContext, label: &str, bits: &[u16]) -> wgpu::Buffer {
    let mut padded = bits.to_vec();
    padded.resize(bits.len().next_multiple_of(2).max(2), 0);
    upload(context, label, &padded)
}

// ANCHOR: error_bound
/// How far each element of the GPU's f16 layer may lie from the fp32 CPU layer on the same
/// (unrounded) operands: rounding each operand to f16 changes a product by at most
/// (2u + u²)·|x·w| with u = 2⁻¹¹, and a sum of n terms rounded at every step in unit
/// roundoff v is off by at most γₙ·Σ|xₖ·wₖ| with γₙ = n·v / (1 − n·v) (Higham, *Accuracy
/// and Stability of Numerical Algorithms*, §3.1). Both sides sum in some order: the fp32
/// reference's own γₙ in f32 is added too. The products of f16 values are exact in f32, so
/// [`HalfAccumulation::Single`] rounds only in its additions; [`HalfAccumulation::Half`]
/// rounds its products and its additions in f16 (γ₂ₙ), and the bias is added in f32.
/// `None` where the f16 sum is too long for any bound (n·u ≥ 1).
pub fn error_bound(
    input: &Tensor2d,
    weights: &Tensor2d,
    accumulation: HalfAccumulation,
) -> Option<Tensor2d> {
    let inner = input.columns();
    let gamma = |terms: usize, unit: f64| {
        let product = terms as f64 * unit;
        (product < 1.0).then(|| product / (1.0 - product))
    };
    let single = gamma(inner + 1, SINGLE_UNIT_ROUNDOFF)?;
    let summing = match accumulation {
        HalfAccumulation::Single => single,
        HalfAccumulation::Half => gamma(2 * inner, HALF_UNIT_ROUNDOFF)?,
    };
    let rounding = 2.0 * HALF_UNIT_ROUNDOFF + HALF_UNIT_ROUNDOFF * HALF_UNIT_ROUNDOFF;
    // Σ|x̂·ŵ| ≤ (1 + rounding)·Σ|x·w|: the GPU's terms are those of the rounded operands.
    let factor = rounding + summing * (1.0 + rounding) + single + SINGLE_UNIT_ROUNDOFF;
    let mut bounds = Tensor2d::zeros(input.rows(), weights.columns());
    for row in 0..input.rows() {
        for column in 0..weights.columns() {
            let magnitude: f64 = (0..inner)
                .map(|k| {
                    f64::from(input.get(row, k)).abs() * f64::from(weights.get(k, column)).abs()
                })
                .sum();
            bounds.set(row, column, (factor * magnitude) as f32 + f32::MIN_POSITIVE);
        }
    }
    Some(bounds)
}
// ANCHOR_END: error_bound

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct Dimensions {
    rows: u32,
    inner: u32,
    columns: u32,
    padding: u32,
}

/// An f16 layer whose weights live on the GPU, ready to run on many inputs.
pub struct GpuF16Linear {
    pipeline: wgpu::ComputePipeline,
    weights: wgpu::Buffer,
    bias: wgpu::Buffer,
    inputs: usize,
    outputs: usize,
}

/// An input uploaded in f16 and an output buffer for it: one layer call, ready to dispatch
/// again and again (what the benchmarks time).
pub struct PreparedF16Call {
    pub dispatch: BoundDispatch,
    output: wgpu::Buffer,
    rows: usize,
    columns: usize,
}

impl PreparedF16Call {
    /// Records the dispatch, submits it and reads the output back.
    pub fn run(&self, context: &GpuContext) -> Result<Tensor2d, GpuError> {
        let mut encoder = context.create_encoder("linear_f16");
        self.dispatch.record(&mut encoder);
        context.submit(encoder);
        let values: Vec<f32> = read_back(context, &self.output, self.rows * self.columns)?;
        Ok(Tensor2d::from_vec(self.rows, self.columns, values)?)
    }
}

impl GpuF16Linear {
    /// Rounds `weights` (inputs × outputs) to f16, uploads them and `bias` (1 × outputs),
    /// and compiles the kernel for `accumulation`.
    pub fn new(
        context: &GpuContext,
        weights: &Tensor2d,
        bias: &Tensor2d,
        accumulation: HalfAccumulation,
    ) -> Result<GpuF16Linear, GpuF16Error> {
        if !context
            .device()
            .features()
            .contains(wgpu::Features::SHADER_F16)
        {
            return Err(GpuF16Error::MissingFeature {
                feature: "SHADER_F16",
                adapter: context.describe(),
            });
        }
        // An input of the right width checks the bias's shape for us.
        crate::cpu::check_linear_shapes(&Tensor2d::zeros(1, weights.rows()), weights, bias)?;
        let weight_bits = to_half_bits(weights, "the weights")?;
        let source = include_str!("../../../shaders/inference/linear_f16.wgsl");
        let pipeline = compile_wgsl(
            context,
            "linear_f16",
            source,
            accumulation.entry_point(),
            &[],
        )?;
        Ok(GpuF16Linear {
            pipeline,
            weights: upload_half(context, "f16 weights", &weight_bits),
            bias: upload(context, "f16 layer bias", bias.as_slice()),
            inputs: weights.rows(),
            outputs: weights.columns(),
        })
    }

    /// Rounds `input` to f16, uploads it and binds it with an output poisoned with NaN.
    pub fn prepare(
        &self,
        context: &GpuContext,
        input: &Tensor2d,
    ) -> Result<PreparedF16Call, GpuF16Error> {
        if input.columns() != self.inputs {
            return Err(ShapeError::Incompatible {
                operation: "linear_f16",
                expectation: "the input needs one column per row of the weights",
                left_name: "input",
                left: (input.rows(), input.columns()),
                right_name: "weights",
                right: (self.inputs, self.outputs),
            }
            .into());
        }
        let rows = input.rows();
        let input_buffer = upload_half(context, "f16 input", &to_half_bits(input, "the input")?);
        let output = poisoned(context, "f16 layer output", rows * self.outputs);
        let dimensions = uniform_buffer(
            context,
            &Dimensions {
                rows: rows as u32,
                inner: self.inputs as u32,
                columns: self.outputs as u32,
                padding: 0,
            },
        );
        let column_groups = workgroups_for(self.outputs, TILE);
        let row_groups = workgroups_for(rows, TILE);
        let limit = u64::from(context.limits().max_compute_workgroups_per_dimension);
        if column_groups > limit || row_groups > limit {
            return Err(GpuError::DispatchTooLarge {
                operation: "linear_f16",
                workgroups: column_groups.max(row_groups),
                limit: limit as u32,
            }
            .into());
        }
        let grid = WorkgroupGrid {
            x: column_groups.max(1) as u32,
            y: row_groups.max(1) as u32,
            z: 1,
        };
        let dispatch = BoundDispatch::new(
            context,
            &self.pipeline,
            &[
                &input_buffer,
                &self.weights,
                &self.bias,
                &output,
                &dimensions,
            ],
            grid,
        );
        Ok(PreparedF16Call {
            dispatch,
            output,
            rows,
            columns: self.outputs,
        })
    }

    // ANCHOR: run
    /// `input · weights + bias` with f16 operands: uploads the input, runs the kernel on an
    /// output poisoned with NaN, and reads the result back.
    pub fn run(&self, context: &GpuContext, input: &Tensor2d) -> Result<Tensor2d, GpuF16Error> {
        if input.rows() == 0 || self.outputs == 0 {
            return Ok(Tensor2d::zeros(input.rows(), self.outputs));
        }
        Ok(self.prepare(context, input)?.run(context)?)
    }
    // ANCHOR_END: run
}

/// Seconds per dispatch of `dispatch`, recorded `count` times in one compute pass after one
/// warm-up submission: by the GPU's clock where the device has timestamp queries, else by
/// the host's from submission to completion.
pub fn seconds_per_dispatch(
    context: &GpuContext,
    dispatch: &BoundDispatch,
    count: u32,
) -> Result<f64, GpuError> {
    let queries = match TimestampSupport::of(context) {
        TimestampSupport::None => None,
        _ => Some(TimestampQueries::new(context, 2)?),
    };
    let mut seconds = 0.0;
    for timed_count in [1, count.max(1)] {
        let mut encoder =
            context
                .device()
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("timed dispatches"),
                });
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("timed dispatches"),
                timestamp_writes: queries.as_ref().map(|queries| {
                    wgpu::ComputePassTimestampWrites {
                        query_set: queries.query_set(),
                        beginning_of_pass_write_index: Some(0),
                        end_of_pass_write_index: Some(1),
                    }
                }),
            });
            for _ in 0..timed_count {
                dispatch.record_in(&mut pass);
            }
        }
        let start = Instant::now();
        context.queue().submit([encoder.finish()]);
        context
            .device()
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|error| GpuError::Readback {
                reason: format!("waiting for timed dispatches: {error}"),
            })?;
        let host_seconds = start.elapsed().as_secs_f64();
        seconds = match &queries {
            Some(queries) => {
                let nanoseconds = queries.read_nanoseconds(context, 2)?;
                ((nanoseconds[1] - nanoseconds[0]) * 1e-9).max(0.0)
            }
            None => host_seconds,
        } / f64::from(timed_count);
    }
    Ok(seconds)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::linear_naive;

    fn check_within_bound(result: &Tensor2d, expected: &Tensor2d, bound: &Tensor2d, what: &str) {
        assert_eq!(
            (result.rows(), result.columns()),
            (expected.rows(), expected.columns())
        );
        for row in 0..expected.rows() {
            for column in 0..expected.columns() {
                let (actual, wanted) = (result.get(row, column), expected.get(row, column));
                let allowed = bound.get(row, column);
                assert!(
                    actual.is_finite() && (actual - wanted).abs() <= allowed,
                    "{what}: element ({row}, {column}) is {actual}, the fp32 layer gives \
                     {wanted}, allowed error {allowed}"
                );
            }
        }
    }

    #[test]
    fn both_kernels_stay_within_the_f16_error_bound_on_many_shapes() {
        let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
        for (case, &(rows, inputs, outputs)) in [
            (1, 1, 1),
            (1, 3, 2),
            (5, 16, 16),
            (3, 17, 33),
            (16, 64, 10),
            (33, 100, 47),
            (64, 256, 64),
            (20, 1000, 30),
        ]
        .iter()
        .enumerate()
        {
            let seed = 300 + 3 * case as u64;
            let input = Tensor2d::random(rows, inputs, -2.0..=2.0, seed);
            let weights = Tensor2d::random(inputs, outputs, -0.5..=0.5, seed + 1);
            let bias = Tensor2d::random(1, outputs, -0.25..=0.25, seed + 2);
            let expected = linear_naive(&input, &weights, &bias).unwrap();
            for accumulation in HalfAccumulation::ALL {
                let bound = error_bound(&input, &weights, accumulation).unwrap();
                let layer = GpuF16Linear::new(context, &weights, &bias, accumulation).unwrap();
                let result = layer.run(context, &input).unwrap();
                check_within_bound(
                    &result,
                    &expected,
                    &bound,
                    &format!("{rows}×{inputs}×{outputs} {}", accumulation.name()),
                );
            }
        }
    }

    #[test]
    fn both_kernels_are_exact_on_small_integers() {
        // Integers small enough that every product and sum is exact in f32 and in f16:
        // the GPU must return the exact answer, which catches a wrong index or tile.
        let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
        let integers = |rows, columns, seed| {
            let random = Tensor2d::random(rows, columns, -4.0..=4.0, seed);
            let values = random
                .as_slice()
                .iter()
                .map(|value| value.round())
                .collect();
            Tensor2d::from_vec(rows, columns, values).unwrap()
        };
        let (input, weights) = (integers(19, 37, 7), integers(37, 21, 8));
        let bias = integers(1, 21, 9);
        let expected = linear_naive(&input, &weights, &bias).unwrap();
        for accumulation in HalfAccumulation::ALL {
            let layer = GpuF16Linear::new(context, &weights, &bias, accumulation).unwrap();
            assert_eq!(
                layer.run(context, &input).unwrap(),
                expected,
                "{accumulation:?}"
            );
        }
    }

    #[test]
    fn half_sums_lose_more_than_single_sums_on_a_long_sum() {
        // A sum of 4096 positive terms: f16 sums stop growing once each term is below half
        // a step of the total, f32 sums do not.
        let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
        let input = Tensor2d::random(4, 4096, 0.5..=1.0, 41);
        let weights = Tensor2d::random(4096, 4, 0.5..=1.0, 42);
        let bias = Tensor2d::zeros(1, 4);
        let expected = linear_naive(&input, &weights, &bias).unwrap();
        let error = |accumulation| {
            let layer = GpuF16Linear::new(context, &weights, &bias, accumulation).unwrap();
            let result = layer.run(context, &input).unwrap();
            (0..4)
                .map(|column| {
                    ((result.get(0, column) - expected.get(0, column)) / expected.get(0, column))
                        .abs()
                })
                .fold(0.0f32, f32::max)
        };
        let (single, half) = (
            error(HalfAccumulation::Single),
            error(HalfAccumulation::Half),
        );
        assert!(single < 1e-3, "f32 sums: relative error {single}");
        assert!(
            half > 10.0 * single,
            "f16 sums {half} against f32 sums {single}"
        );
    }

    #[test]
    fn values_f16_cannot_hold_and_bad_shapes_are_errors() {
        let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
        let mut weights = Tensor2d::zeros(3, 2);
        weights.set(1, 0, 70_000.0);
        assert!(matches!(
            GpuF16Linear::new(
                context,
                &weights,
                &Tensor2d::zeros(1, 2),
                HalfAccumulation::Single
            ),
            Err(GpuF16Error::NotRepresentable {
                row: 1,
                column: 0,
                ..
            })
        ));
        let layer = GpuF16Linear::new(
            context,
            &Tensor2d::zeros(3, 2),
            &Tensor2d::zeros(1, 2),
            HalfAccumulation::Single,
        )
        .unwrap();
        let mut input = Tensor2d::zeros(2, 3);
        input.set(1, 2, f32::NAN);
        assert!(matches!(
            layer.run(context, &input),
            Err(GpuF16Error::NotRepresentable {
                row: 1,
                column: 2,
                ..
            })
        ));
        assert!(matches!(
            layer.run(context, &Tensor2d::zeros(2, 4)),
            Err(GpuF16Error::Shape(_))
        ));
        assert!(matches!(
            GpuF16Linear::new(
                context,
                &Tensor2d::zeros(3, 2),
                &Tensor2d::zeros(1, 3),
                HalfAccumulation::Half
            ),
            Err(GpuF16Error::Shape(_))
        ));
    }

    #[test]
    fn the_bound_grows_with_the_sum_and_ends_where_f16_cannot_sum() {
        let short = error_bound(
            &Tensor2d::from_vec(1, 2, vec![1.0, 1.0]).unwrap(),
            &Tensor2d::from_vec(2, 1, vec![1.0, 1.0]).unwrap(),
            HalfAccumulation::Half,
        )
        .unwrap();
        // 2u + u² for the operands, γ₄ in f16 for the products and sums, on Σ = 2.
        assert!(short.get(0, 0) > 2.0 * 6.0 / 2048.0 && short.get(0, 0) < 2.0 * 7.0 / 2048.0);
        let long = Tensor2d::zeros(1, 1024);
        assert!(error_bound(&long, &Tensor2d::zeros(1024, 1), HalfAccumulation::Half).is_none());
        assert!(error_bound(&long, &Tensor2d::zeros(1024, 1), HalfAccumulation::Single).is_some());
    }
}
