//! The half-precision tree sums of `galaxy::numbers::half_precision_gpu`, checked against
//! a compensated reference of the same (rounded) values.
//!
//! These tests need the device feature SHADER_F16. On an adapter without it they print why
//! they did not run and return; the CPU-side analysis of f16 sums
//! (`numbers::summation`'s unit tests) runs everywhere.

mod common;

use common::context;
use galaxy::Tensor2d;
use galaxy::gpu::GpuError;
use galaxy::numbers::half_precision_gpu::{HalfPrecisionSums, SumPrecision};
use galaxy::numbers::summation::{relative_error, sum_reference};

/// The sums, or `None` (with the reason printed) when the adapter has no f16 arithmetic.
fn sums() -> Option<HalfPrecisionSums<'static>> {
    match HalfPrecisionSums::new(context()) {
        Ok(sums) => Some(sums),
        Err(GpuError::MissingFeature { feature, .. }) => {
            eprintln!(
                "skipped: the adapter {} does not offer {feature}, which the f16 kernels need",
                context().describe()
            );
            None
        }
        Err(error) => panic!("compiling the f16 kernels failed: {error}"),
    }
}

fn rounded_to_half(values: &[f32]) -> Vec<f32> {
    values
        .iter()
        .map(|&value| half::f16::from_f32(value).to_f32())
        .collect()
}

const LENGTHS: [usize; 6] = [1, 7, 1024, 1025, 4099, 50_001];

#[test]
fn every_precision_sums_what_it_stores() {
    let Some(sums) = sums() else { return };
    for count in LENGTHS {
        // Values in [−1, 1]: the sums stay far below f16's largest value, 65 504.
        let values = Tensor2d::random(1, count, -1.0..=1.0, count as u64).into_vec();
        let total_magnitude: f64 = values.iter().map(|&value| f64::from(value.abs())).sum();
        for precision in SumPrecision::ALL {
            let stored = match precision {
                SumPrecision::Single => values.clone(),
                _ => rounded_to_half(&values),
            };
            let reference = sum_reference(&stored);
            let on_gpu = sums.upload(&values, precision);
            let sum = f64::from(sums.sum(&on_gpu).unwrap());
            // The tree is about log₂ n additions deep; each rounds by at most half a unit
            // in the last place of its result: 2⁻²⁴ in f32, 2⁻¹¹ in f16.
            let depth = (count as f64).log2().ceil() + 1.0;
            let unit = if precision == SumPrecision::Half {
                2f64.powi(-11)
            } else {
                2f64.powi(-24)
            };
            let bound = depth * unit * total_magnitude + 1e-6;
            assert!(
                (sum - reference).abs() <= bound,
                "{} of {count} values: {sum} vs {reference} (bound {bound})",
                precision.name()
            );
        }
    }
}

#[test]
fn half_precision_sums_overflow_where_single_ones_do_not() {
    let Some(sums) = sums() else { return };
    // 200 000 values near 0.5 sum to about 100 000, past 65 504.
    let values = Tensor2d::random(1, 200_000, 0.0..=1.0, 5).into_vec();
    let reference = sum_reference(&rounded_to_half(&values));
    let half = sums.sum(&sums.upload(&values, SumPrecision::Half)).unwrap();
    assert!(half.is_infinite(), "{half}");
    let storage = sums
        .sum(&sums.upload(&values, SumPrecision::HalfStorage))
        .unwrap();
    assert!(
        relative_error(f64::from(storage), reference) < 1e-5,
        "{storage} vs {reference}"
    );
}

#[test]
fn the_sum_of_nothing_is_zero_in_every_precision() {
    let Some(sums) = sums() else { return };
    for precision in SumPrecision::ALL {
        assert_eq!(sums.sum(&sums.upload(&[], precision)).unwrap(), 0.0);
    }
}
