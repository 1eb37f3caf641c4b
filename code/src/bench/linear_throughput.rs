//! GFLOP/s of one GPU linear kernel on one shape, checked before it is timed.
//!
//! A linear layer `rows × inner` by `inner × columns` does `rows · inner · columns`
//! multiply-adds: `2 · rows · inner · columns` floating-point operations. The measurement
//! uploads random operands once, checks the kernel's result against sums computed in f64
//! on the CPU (a fast wrong kernel must not make a figure), then times dispatches recorded
//! back to back in one compute pass and one submission, so that neither the upload nor the
//! cost of a submission is in the number.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use thiserror::Error;

use crate::bench::gpu_peak::time_dispatches;
use crate::compiler::linear_strategy::LinearStrategy;
use crate::gpu::record::BoundDispatch;
use crate::gpu::{GpuContext, GpuError, GpuTensor, PipelineCache, Readback, ShaderCompilation};
use crate::tensor::Tensor2d;

/// Output elements recomputed on the CPU when the output has more than
/// [`CHECK_EVERY_ELEMENT_UP_TO`]; smaller outputs are checked whole.
pub const SPOT_CHECKS: usize = 256;
pub const CHECK_EVERY_ELEMENT_UP_TO: usize = 4096;

/// What [`linear_throughput`] measured.
#[derive(Debug, Clone, PartialEq)]
pub struct LinearThroughput {
    pub strategy: LinearStrategy,
    pub rows: usize,
    pub inner: usize,
    pub columns: usize,
    pub dispatches: usize,
    pub seconds_per_dispatch: f64,
    pub gigaflops_per_second: f64,
    /// How many output elements were checked against the CPU.
    pub checked_elements: usize,
}

/// Why a throughput measurement failed.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ThroughputError {
    #[error(transparent)]
    Gpu(#[from] GpuError),
    #[error("a throughput measurement needs at least one dispatch")]
    NoDispatches,
    #[error(
        "the {strategy} kernel computed {actual} at (row {row}, column {column}) of a \
         {rows}×{inner}·{inner}×{columns} layer; the CPU computed {expected} (at most \
         {allowed:e} apart allowed)"
    )]
    WrongResult {
        strategy: String,
        rows: usize,
        inner: usize,
        columns: usize,
        row: usize,
        column: usize,
        actual: f32,
        expected: f64,
        allowed: f64,
    },
}

// ANCHOR: linear_benchmark
/// One linear kernel bound to random operands of one shape, ready to check and time.
pub struct LinearBenchmark<'context> {
    context: &'context GpuContext,
    strategy: LinearStrategy,
    input: Tensor2d,
    weights: Tensor2d,
    bias: Tensor2d,
    output: GpuTensor,
    dispatch: BoundDispatch,
    // The operands on the GPU: the bind group refers to them, so they live as long.
    _operands: [GpuTensor; 3],
}

impl<'context> LinearBenchmark<'context> {
    /// Uploads random operands in [-1, 1] (seeded) and binds `strategy`'s kernel to them.
    pub fn prepare(
        context: &'context GpuContext,
        strategy: LinearStrategy,
        (rows, inner, columns): (usize, usize, usize),
        seed: u64,
    ) -> Result<LinearBenchmark<'context>, GpuError> {
        let input = Tensor2d::random(rows, inner, -1.0..=1.0, seed);
        let weights = Tensor2d::random(inner, columns, -1.0..=1.0, seed.wrapping_add(1));
        let bias = Tensor2d::random(1, columns, -1.0..=1.0, seed.wrapping_add(2));
        let upload = |tensor| GpuTensor::upload(context, tensor, Readback::Never);
        let operands = [upload(&input)?, upload(&weights)?, upload(&bias)?];
        let output = GpuTensor::uninitialized(context, rows, columns, Readback::Needed)?;
        let cache = PipelineCache::new(ShaderCompilation::Cached);
        let pipeline = strategy.pipeline(context, &cache, false)?;
        let [input_on_gpu, weights_on_gpu, bias_on_gpu] = &operands;
        let dispatch = strategy.bind(
            context,
            &pipeline,
            input_on_gpu,
            weights_on_gpu,
            bias_on_gpu,
            &output,
        )?;
        Ok(LinearBenchmark {
            context,
            strategy,
            input,
            weights,
            bias,
            output,
            dispatch,
            _operands: operands,
        })
    }

    /// Fills the output with NaN, runs the kernel once and compares output elements with
    /// sums computed in f64 on the CPU: all of them for small outputs, otherwise
    /// [`SPOT_CHECKS`] seeded random ones and the four corners. Returns how many it checked.
    pub fn check(&self) -> Result<usize, ThroughputError> {
        self.output.fill(self.context, f32::NAN);
        time_dispatches(self.context, &self.dispatch, 1)?;
        let actual = self.output.download(self.context)?;
        self.compare(&actual)
    }

    /// Seconds from submitting `dispatches` dispatches (one pass, one submission) to their
    /// completion.
    pub fn time(&self, dispatches: usize) -> Result<f64, ThroughputError> {
        if dispatches == 0 {
            return Err(ThroughputError::NoDispatches);
        }
        Ok(time_dispatches(self.context, &self.dispatch, dispatches)?)
    }

    pub fn strategy(&self) -> LinearStrategy {
        self.strategy
    }

    /// `2 · rows · inner · columns`.
    pub fn flops(&self) -> f64 {
        2.0 * self.input.rows() as f64 * self.input.columns() as f64 * self.weights.columns() as f64
    }
    // ANCHOR_END: linear_benchmark

    // ANCHOR: spot_check
    fn compare(&self, actual: &Tensor2d) -> Result<usize, ThroughputError> {
        let (rows, inner, columns) = (self.input.rows(), self.input.columns(), actual.columns());
        let positions = positions_to_check(rows, columns);
        for &(row, column) in &positions {
            let mut exact = f64::from(self.bias.get(0, column));
            // The sum of the magnitudes bounds the rounding error of any order of addition:
            // at most (inner + 1) · u · Σ|terms| with u = 2⁻²⁴, the unit roundoff of f32.
            let mut magnitude = exact.abs();
            for k in 0..inner {
                let term =
                    f64::from(self.input.get(row, k)) * f64::from(self.weights.get(k, column));
                exact += term;
                magnitude += term.abs();
            }
            let unit_roundoff = f64::from(f32::EPSILON) / 2.0;
            let allowed = (inner as f64 + 1.0) * unit_roundoff * magnitude + 1e-30;
            let value = actual.get(row, column);
            // A NaN (an element never written) compares false: it is never within.
            let within = (f64::from(value) - exact).abs() <= allowed;
            if !within {
                return Err(ThroughputError::WrongResult {
                    strategy: self.strategy.to_string(),
                    rows,
                    inner,
                    columns,
                    row,
                    column,
                    actual: value,
                    expected: exact,
                    allowed,
                });
            }
        }
        Ok(positions.len())
    }
    // ANCHOR_END: spot_check
}

/// Every position of a small output; the four corners and [`SPOT_CHECKS`] seeded random
/// positions of a large one.
fn positions_to_check(rows: usize, columns: usize) -> Vec<(usize, usize)> {
    if rows * columns <= CHECK_EVERY_ELEMENT_UP_TO {
        return (0..rows)
            .flat_map(|row| (0..columns).map(move |column| (row, column)))
            .collect();
    }
    let mut random = ChaCha8Rng::seed_from_u64(0x5eed);
    let mut positions = vec![
        (0, 0),
        (0, columns - 1),
        (rows - 1, 0),
        (rows - 1, columns - 1),
    ];
    positions.extend((0..SPOT_CHECKS).map(|_| {
        (
            random.random_range(0..rows),
            random.random_range(0..columns),
        )
    }));
    positions
}

// ANCHOR: linear_throughput
/// Checks `strategy` on a random `rows × inner` by `inner × columns` layer, then times
/// `dispatches` dispatches after one warm-up dispatch.
pub fn linear_throughput(
    context: &GpuContext,
    strategy: LinearStrategy,
    (rows, inner, columns): (usize, usize, usize),
    dispatches: usize,
) -> Result<LinearThroughput, ThroughputError> {
    if dispatches == 0 {
        return Err(ThroughputError::NoDispatches);
    }
    let benchmark = LinearBenchmark::prepare(context, strategy, (rows, inner, columns), 2026)?;
    let checked_elements = benchmark.check()?;
    benchmark.time(1)?;
    let seconds_per_dispatch = benchmark.time(dispatches)? / dispatches as f64;
    Ok(LinearThroughput {
        strategy,
        rows,
        inner,
        columns,
        dispatches,
        seconds_per_dispatch,
        gigaflops_per_second: benchmark.flops() / seconds_per_dispatch / 1e9,
        checked_elements,
    })
}
// ANCHOR_END: linear_throughput

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compiler::RegisterBlockedConfig;
    use crate::gpu::record::bind_linear;

    fn context() -> &'static GpuContext {
        GpuContext::shared().unwrap_or_else(|error| panic!("GPU tests need an adapter: {error}"))
    }

    #[test]
    fn every_kind_of_kernel_gives_a_finite_positive_rate() {
        let strategies = [
            LinearStrategy::Naive,
            LinearStrategy::Tiled { edge: 16 },
            LinearStrategy::RegisterBlocked(RegisterBlockedConfig::new(32, 32, 16, 4, 4)),
        ];
        for strategy in strategies {
            // 96² outputs: more than 4096, so the spot check samples.
            let result = linear_throughput(context(), strategy, (96, 64, 96), 3).unwrap();
            assert!(
                result.gigaflops_per_second.is_finite() && result.gigaflops_per_second > 0.0,
                "{result:?}"
            );
            assert_eq!(result.checked_elements, SPOT_CHECKS + 4, "{strategy}");
        }
        let small = linear_throughput(context(), LinearStrategy::Naive, (3, 5, 7), 1).unwrap();
        assert_eq!(small.checked_elements, 21);
    }

    #[test]
    fn the_check_catches_a_kernel_bound_to_the_wrong_bias() {
        let context = context();
        let mut benchmark =
            LinearBenchmark::prepare(context, LinearStrategy::Naive, (80, 40, 60), 1).unwrap();
        assert!(benchmark.check().is_ok());
        // The same kernel, but reading another bias than the one the CPU adds.
        let wrong_bias = GpuTensor::upload(
            context,
            &Tensor2d::random(1, 60, -1.0..=1.0, 99),
            Readback::Never,
        )
        .unwrap();
        let pipeline = LinearStrategy::Naive
            .pipeline(
                context,
                &PipelineCache::new(ShaderCompilation::Cached),
                false,
            )
            .unwrap();
        let [input, weights, _] = &benchmark._operands;
        benchmark.dispatch = bind_linear(
            context,
            &pipeline,
            input,
            weights,
            &wrong_bias,
            &benchmark.output,
        )
        .unwrap();
        assert!(matches!(
            benchmark.check(),
            Err(ThroughputError::WrongResult { .. })
        ));
    }

    #[test]
    fn the_check_catches_an_output_never_written() {
        let context = context();
        let mut benchmark =
            LinearBenchmark::prepare(context, LinearStrategy::Naive, (8, 8, 8), 1).unwrap();
        // The kernel writes another tensor: the output keeps its NaN poison.
        let elsewhere = GpuTensor::uninitialized(context, 8, 8, Readback::Never).unwrap();
        let pipeline = LinearStrategy::Naive
            .pipeline(
                context,
                &PipelineCache::new(ShaderCompilation::Cached),
                false,
            )
            .unwrap();
        let [input, weights, bias] = &benchmark._operands;
        benchmark.dispatch =
            bind_linear(context, &pipeline, input, weights, bias, &elsewhere).unwrap();
        match benchmark.check() {
            Err(ThroughputError::WrongResult { actual, .. }) => assert!(actual.is_nan()),
            other => panic!("expected a wrong result, got {other:?}"),
        }
    }

    #[test]
    fn zero_dispatches_is_an_error() {
        assert_eq!(
            linear_throughput(context(), LinearStrategy::Naive, (4, 4, 4), 0).unwrap_err(),
            ThroughputError::NoDispatches
        );
    }
}
