//! `cpu-linear`: GFLOP/s of every CPU linear variant on square matrices, by size, with the
//! `matrixmultiply` crate (a tuned, single-threaded SGEMM) as the yardstick.
//!
//! Each point is one allocating call `linear(x, W, b)` with `x` and `W` of size `n×n`:
//! `2·n³` floating-point operations. Every variant's result is spot-checked before it is
//! timed.

use crate::bench::figure::{Figure, Point};
use crate::bench::sweeps::timing::{Budget, Measurement, SeriesLimit, measure};
use crate::bench::sweeps::{Progress, SweepError, SweepSettings, gigaflops_per_second};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::cpu;
use crate::tensor::{ShapeError, Tensor2d, check_output_shape};

/// Random operands of one linear layer, and a cheap check of a result.
pub struct LinearOperands {
    pub input: Tensor2d,
    pub weights: Tensor2d,
    pub bias: Tensor2d,
}

/// How many output elements [`LinearOperands::spot_check`] recomputes.
const SPOT_CHECKS: usize = 256;

impl LinearOperands {
    /// `rows×inner` input, `inner×columns` weights and a `1×columns` bias, uniform in ±1.
    pub fn random(rows: usize, inner: usize, columns: usize) -> LinearOperands {
        let seed = (rows * 1_000_003 + inner * 1009 + columns) as u64;
        LinearOperands {
            input: Tensor2d::random(rows, inner, -1.0..=1.0, seed),
            weights: Tensor2d::random(inner, columns, -1.0..=1.0, seed + 1),
            bias: Tensor2d::random(1, columns, -1.0..=1.0, seed + 2),
        }
    }

    // ANCHOR: spot_check
    /// Recomputes [`SPOT_CHECKS`] randomly chosen output elements in `f64` and compares.
    /// A full CPU reference at 4096³ would take longer than the GPU sweep itself; a wrong
    /// kernel gets most elements wrong, so a few hundred catch it.
    pub fn spot_check(&self, result: &Tensor2d, what: &str) -> Result<(), SweepError> {
        let (rows, columns) = (self.input.rows(), self.weights.columns());
        if result.shape() != (rows, columns) {
            return Err(SweepError::WrongResult {
                what: what.to_string(),
                details: format!("shape {:?}, expected {:?}", result.shape(), (rows, columns)),
            });
        }
        let mut generator = ChaCha8Rng::seed_from_u64(7);
        for _ in 0..SPOT_CHECKS.min(rows * columns) {
            let (row, column) = (
                generator.random_range(0..rows),
                generator.random_range(0..columns),
            );
            let mut expected = f64::from(self.bias.get(0, column));
            let mut magnitude = expected.abs();
            for (inner, &value) in self.input.row(row).iter().enumerate() {
                let product = f64::from(value) * f64::from(self.weights.get(inner, column));
                expected += product;
                magnitude += product.abs();
            }
            let found = f64::from(result.get(row, column));
            // f32 accumulation error grows with the sum of the magnitudes added up.
            let tolerance = 1e-5 * magnitude.max(1.0) * (self.input.columns() as f64).sqrt();
            // Written so that a NaN result fails too.
            let within_tolerance = (found - expected).abs() <= tolerance;
            if !within_tolerance {
                return Err(SweepError::WrongResult {
                    what: what.to_string(),
                    details: format!(
                        "element ({row}, {column}) is {found}, expected {expected} ± {tolerance}"
                    ),
                });
            }
        }
        Ok(())
    }
    // ANCHOR_END: spot_check
}

/// The matrix sizes of the sweep.
pub const SIZES: [usize; 8] = [16, 32, 64, 128, 256, 512, 1024, 2048];

/// The operands of one size, with the weights also transposed once, as the
/// transposed-weights variant expects them.
pub struct CpuOperands {
    pub operands: LinearOperands,
    pub transposed_weights: Tensor2d,
}

impl CpuOperands {
    pub fn random(size: usize) -> CpuOperands {
        let operands = LinearOperands::random(size, size, size);
        let transposed_weights = operands.weights.transposed();
        CpuOperands {
            operands,
            transposed_weights,
        }
    }
}

/// One CPU linear implementation, as the sweep calls it.
pub type CpuLinear = fn(&CpuOperands) -> Result<Tensor2d, ShapeError>;

// ANCHOR: cpu_variants
/// Every variant, named after the function it calls.
pub fn variants() -> Vec<(&'static str, CpuLinear)> {
    vec![
        ("linear_naive", |o| {
            cpu::linear_naive(&o.operands.input, &o.operands.weights, &o.operands.bias)
        }),
        ("linear_local_accumulator", |o| {
            cpu::linear_local_accumulator(&o.operands.input, &o.operands.weights, &o.operands.bias)
        }),
        ("linear_transposed_weights", |o| {
            cpu::linear_transposed_weights(
                &o.operands.input,
                &o.transposed_weights,
                &o.operands.bias,
            )
        }),
        ("linear_loop_order", |o| {
            cpu::linear_loop_order(&o.operands.input, &o.operands.weights, &o.operands.bias)
        }),
        ("linear_blocked", |o| {
            cpu::linear_blocked(&o.operands.input, &o.operands.weights, &o.operands.bias)
        }),
        ("linear_register_blocked", |o| {
            cpu::linear_register_blocked(&o.operands.input, &o.operands.weights, &o.operands.bias)
        }),
        ("linear_parallel", |o| {
            cpu::linear_parallel(&o.operands.input, &o.operands.weights, &o.operands.bias)
        }),
        ("matrixmultiply::sgemm", |o| {
            linear_with_matrixmultiply(&o.operands.input, &o.operands.weights, &o.operands.bias)
        }),
    ]
}
// ANCHOR_END: cpu_variants

// ANCHOR: matrixmultiply
/// `input · weights + bias` through `matrixmultiply::sgemm`, which computes
/// `C = α·A·B + β·C`: the output starts as the bias repeated on every row, and `β = 1`
/// adds the product to it.
pub fn linear_with_matrixmultiply(
    input: &Tensor2d,
    weights: &Tensor2d,
    bias: &Tensor2d,
) -> Result<Tensor2d, ShapeError> {
    let (rows, columns) = cpu::check_linear_shapes(input, weights, bias)?;
    let mut output = Tensor2d::zeros(rows, columns);
    linear_with_matrixmultiply_into(input, weights, bias, &mut output)?;
    Ok(output)
}

/// [`linear_with_matrixmultiply`] into a preallocated `rows × columns` output, so a
/// benchmark loop times the multiplication and not the allocation.
pub fn linear_with_matrixmultiply_into(
    input: &Tensor2d,
    weights: &Tensor2d,
    bias: &Tensor2d,
    output: &mut Tensor2d,
) -> Result<(), ShapeError> {
    let (rows, columns) = cpu::check_linear_shapes(input, weights, bias)?;
    check_output_shape(
        "linear_with_matrixmultiply",
        (rows, columns),
        output.shape(),
    )?;
    let inner = input.columns();
    for row in 0..rows {
        output.row_mut(row).copy_from_slice(bias.as_slice());
    }
    let stride = |columns: usize| columns as isize;
    // SAFETY: the shapes were checked above, so `input` holds rows×inner, `weights`
    // inner×columns and `output` rows×columns floats, all row-major (row stride = the
    // number of columns, column stride 1), and `output` is borrowed mutably, so it
    // aliases neither input.
    unsafe {
        matrixmultiply::sgemm(
            rows,
            inner,
            columns,
            1.0,
            input.as_slice().as_ptr(),
            stride(inner),
            1,
            weights.as_slice().as_ptr(),
            stride(columns),
            1,
            1.0,
            output.as_mut_slice().as_mut_ptr(),
            stride(columns),
            1,
        );
    }
    Ok(())
}
// ANCHOR_END: matrixmultiply

/// Measures one call of a variant on `operands`. The result of the first call, the
/// warm-up, is spot-checked: a fast but wrong variant fails instead of being timed.
pub fn measure_variant(
    name: &str,
    linear: CpuLinear,
    operands: &CpuOperands,
    budget: &Budget,
) -> Result<Measurement, SweepError> {
    let size = operands.operands.input.rows();
    let mut checked = false;
    measure(budget, |runs| {
        for _ in 0..runs {
            let result = linear(std::hint::black_box(operands))?;
            if !checked {
                operands
                    .operands
                    .spot_check(&result, &format!("{name} at {size}³"))?;
                checked = true;
            }
            std::hint::black_box(result);
        }
        Ok::<(), SweepError>(())
    })
}

/// Measures every variant at every size.
pub fn sweep(
    id: String,
    sizes: &[usize],
    settings: &SweepSettings,
    progress: &mut dyn Progress,
) -> Result<Figure, SweepError> {
    let mut figure = settings.figure(
        id,
        "CPU linear variants on square matrices",
        ("matrix size n (n×n times n×n)", true),
        (
            "GFLOP/s (linear_parallel on every core, the others on one)",
            true,
        ),
        None,
    );
    let variants = variants();
    progress.begin(&figure.id, sizes.len() * variants.len());
    let mut limits = vec![SeriesLimit::default(); variants.len()];
    for &size in sizes {
        let operands = CpuOperands::random(size);
        for ((name, linear), limit) in variants.iter().zip(&mut limits) {
            if limit.allows_next(&settings.budget) {
                let measurement = measure_variant(name, *linear, &operands, &settings.budget)?;
                limit.record(&measurement);
                figure.push(
                    name,
                    Point {
                        x: size as f64,
                        y: gigaflops_per_second(size, size, size, measurement.seconds_per_run),
                    },
                );
            }
            progress.advance(&format!("{name}, {size}³"));
        }
    }
    Ok(figure)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::sweeps::Silent;

    #[test]
    fn the_spot_check_accepts_the_cpu_result_and_rejects_a_wrong_one() {
        let operands = LinearOperands::random(33, 17, 65);
        let mut result =
            cpu::linear_loop_order(&operands.input, &operands.weights, &operands.bias).unwrap();
        operands.spot_check(&result, "cpu").unwrap();
        // Break every element by a little more than rounding could.
        for value in result.as_mut_slice() {
            *value += 0.01;
        }
        let error = operands.spot_check(&result, "broken").unwrap_err();
        assert!(error.to_string().contains("broken differs"), "{error}");
        let poisoned = Tensor2d::filled(33, 65, f32::NAN);
        assert!(operands.spot_check(&poisoned, "nan").is_err());
        let transposed_shape = Tensor2d::zeros(65, 33);
        assert!(
            operands
                .spot_check(&transposed_shape, "transposed shape")
                .is_err()
        );
    }

    #[test]
    fn matrixmultiply_agrees_with_the_naive_loop_on_odd_shapes() {
        for (rows, inner, columns) in [(1, 1, 1), (3, 5, 7), (33, 17, 65), (64, 64, 64)] {
            let operands = LinearOperands::random(rows, inner, columns);
            let (input, weights, bias) = (&operands.input, &operands.weights, &operands.bias);
            let expected = cpu::linear_naive(input, weights, bias).unwrap();
            let found = linear_with_matrixmultiply(input, weights, bias).unwrap();
            let comparison = found
                .compare(&expected, crate::Tolerance::new(1e-5, 1e-5))
                .unwrap();
            assert!(
                comparison.passed(),
                "{rows}×{inner}×{columns}: {comparison:?}"
            );
        }
        let operands = LinearOperands::random(2, 3, 4);
        let wrong_bias = Tensor2d::zeros(1, 5);
        assert!(
            linear_with_matrixmultiply(&operands.input, &operands.weights, &wrong_bias).is_err()
        );
    }

    #[test]
    fn a_tiny_cpu_sweep_measures_every_variant() {
        let settings = SweepSettings::single_sample_for_tests();
        let figure = sweep(
            "cpu-linear".to_string(),
            &[1, 5, 16],
            &settings,
            &mut Silent,
        )
        .unwrap();
        assert_eq!(figure.series.len(), variants().len());
        for series in &figure.series {
            assert_eq!(series.points.len(), 3, "{}", series.name);
            assert!(series.points.iter().all(|p| p.y.is_finite() && p.y > 0.0));
        }
        assert!(!figure.hardware.contains("GPU"), "{}", figure.hardware);
    }
}
