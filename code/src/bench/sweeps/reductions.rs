//! `reductions-…`: summing a tensor on the GPU, workgroup-memory tree against subgroup
//! operations, by the number of elements.
//!
//! Each point is one immediate-mode sum: upload, the reduction passes, readback of one
//! number. The two strategies differ only in how a workgroup combines its values; at
//! large sizes the upload dominates both, which is itself worth seeing.

use crate::bench::figure::Figure;
use crate::bench::sweeps::timing::{SeriesLimit, measure};
use crate::bench::sweeps::{
    Progress, SweepError, SweepSettings, measure_point, milliseconds, push_repeats,
};
use crate::gpu::{GpuContext, Reduction, ReductionStrategy, ShaderCompilation};
use crate::immediate::ImmediateGpu;
use crate::tensor::Tensor2d;

/// The element counts of the sweep: 2¹⁰ to 2²⁴ (64 MiB of `f32`), by factors of four.
pub const ELEMENTS: [usize; 8] = [
    1 << 10,
    1 << 12,
    1 << 14,
    1 << 16,
    1 << 18,
    1 << 20,
    1 << 22,
    1 << 24,
];

/// The width of the tensors summed: rows of 1024 elements, as a flattened image would be.
const ROW_LENGTH: usize = 1024;

/// The strategies the device can run: subgroups only where the adapter supports them.
pub fn strategies(context: &GpuContext) -> Vec<ReductionStrategy> {
    let mut strategies = vec![ReductionStrategy::WorkgroupMemory];
    if context.supports_subgroups() {
        strategies.push(ReductionStrategy::Subgroups);
    }
    strategies
}

/// Measures a sum with every strategy the device supports at every element count.
pub fn sweep(
    id: String,
    element_counts: &[usize],
    settings: &SweepSettings,
    context: &GpuContext,
    progress: &mut dyn Progress,
) -> Result<Figure, SweepError> {
    let mut figure = settings.figure(
        id,
        "Summing on the GPU: workgroup-memory tree and subgroup operations",
        ("elements summed", true),
        ("time per sum (ms), upload and readback included", true),
        Some(context),
    );
    let strategies = strategies(context);
    progress.begin(&figure.id, element_counts.len() * strategies.len());
    let gpu = ImmediateGpu::new(context, ShaderCompilation::Cached);
    let mut limits = vec![SeriesLimit::default(); strategies.len()];
    for &elements in element_counts {
        let (rows, columns) = if elements >= ROW_LENGTH {
            (elements / ROW_LENGTH, ROW_LENGTH)
        } else {
            (1, elements)
        };
        let input = Tensor2d::random(rows, columns, -1.0..=1.0, elements as u64);
        let expected: f64 = input.as_slice().iter().map(|&value| f64::from(value)).sum();
        let magnitude: f64 = input
            .as_slice()
            .iter()
            .map(|&value| f64::from(value).abs())
            .sum();
        let wanted: Vec<bool> = limits
            .iter()
            .map(|limit| limit.allows_next(&settings.budget))
            .collect();
        let measured = measure_point(settings, &mut limits, &wanted, |index, budget| {
            let strategy = strategies[index];
            let what = format!("sum with {strategy:?} over {elements} elements");
            let gpu_error = |source| SweepError::Gpu {
                what: what.clone(),
                source: Box::new(source),
            };
            let found = f64::from(
                gpu.reduce(Reduction::Sum, strategy, &input)
                    .map_err(gpu_error)?,
            );
            // f32 partial sums: the error bound grows with the magnitudes added.
            let tolerance = 1e-5 * magnitude.max(1.0);
            // Written so that a NaN result fails too.
            let within_tolerance = (found - expected).abs() <= tolerance;
            if !within_tolerance {
                return Err(SweepError::WrongResult {
                    what,
                    details: format!("{found}, expected {expected} ± {tolerance}"),
                });
            }
            measure(budget, |runs| {
                for _ in 0..runs {
                    std::hint::black_box(
                        gpu.reduce(Reduction::Sum, strategy, &input)
                            .map_err(gpu_error)?,
                    );
                }
                Ok::<(), SweepError>(())
            })
        })?;
        for (strategy, measurements) in strategies.iter().zip(measured) {
            let times = measurements
                .iter()
                .map(|m| milliseconds(m.seconds_per_run))
                .collect();
            push_repeats(
                &mut figure,
                &format!("{strategy:?}"),
                elements as f64,
                times,
            );
            progress.advance(&format!("{strategy:?}, {elements} elements"));
        }
        progress.partial(&figure);
    }
    Ok(figure)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::sweeps::Silent;

    #[test]
    fn a_tiny_reduction_sweep_measures_every_supported_strategy() {
        let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
        let settings = SweepSettings::single_sample_for_tests();
        // 1000 is not a multiple of anything a workgroup likes; 3072 is three rows.
        let figure = sweep(
            "reductions-test".to_string(),
            &[1, 1000, 3072],
            &settings,
            context,
            &mut Silent,
        )
        .unwrap();
        assert_eq!(figure.series.len(), strategies(context).len());
        for series in &figure.series {
            assert_eq!(series.points.len(), 3, "{}", series.name);
            assert!(series.points.iter().all(|p| p.y.is_finite() && p.y > 0.0));
        }
    }
}
