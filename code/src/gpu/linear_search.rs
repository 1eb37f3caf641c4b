//! Choosing a linear kernel by measuring it.
//!
//! [`LinearStrategy::for_shape`] predicts the best kernel from the shape and the device's
//! limits. The prediction is a rule of thumb about how many workgroups fill a GPU, and a
//! rule of thumb can be wrong by a quarter on a real device. Measuring is cheaper than it
//! sounds: a layer's shape is known when a graph is prepared, a handful of candidates is
//! enough, and each needs only a few dispatches. So preparation can time every candidate
//! on random operands of the layer's shape and keep the fastest.
//!
//! The answer is cached in the [`GpuContext`] by shape: the 64 layers of the standard
//! workload share one shape and are searched once, and preparing the same graph again
//! searches nothing. Layers too small for the difference to matter (below
//! [`SEARCH_THRESHOLD`] multiply-adds) keep the rule's choice: on them a kernel's time is
//! mostly the cost of launching it, the same for every candidate.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

use crate::gpu::linear_strategy::{LinearStrategy, PREFERRED_CONFIGURATIONS};
use crate::gpu::record::BoundDispatch;
use crate::gpu::timestamps::{TimestampQueries, TimestampSupport};
use crate::gpu::{GpuContext, GpuError, GpuTensor, PipelineCache, Readback, ShaderCompilation};
use crate::tensor::Tensor2d;

/// Layers with fewer multiply-adds than this (128³) keep the rule's choice.
pub const SEARCH_THRESHOLD: u64 = 128 * 128 * 128;

/// Dispatches timed per candidate, after one that warms it up: at least this many...
const MINIMUM_TIMED_DISPATCHES: u32 = 3;
/// ...and more for short kernels, up to this many, so that each candidate is timed over
/// about [`SECONDS_PER_CANDIDATE`]: a single 10 µs dispatch is too short to rank.
const MAXIMUM_TIMED_DISPATCHES: u32 = 32;
const SECONDS_PER_CANDIDATE: f64 = 200e-6;
/// Rounds in which every candidate is timed once; each keeps its fastest round.
const SEARCH_ROUNDS: usize = 3;
/// GPU time spent before the first timing so that the GPU reaches its working clock.
const SECONDS_TO_RAISE_THE_CLOCK: f64 = 20e-3;
/// The most dispatches of that warm-up (for kernels of a few microseconds).
const MAXIMUM_WARM_UP_DISPATCHES: u32 = 2000;

/// The shape of a linear layer: `rows × inner` by `inner × columns`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LinearShape {
    pub rows: usize,
    pub inner: usize,
    pub columns: usize,
}

impl LinearShape {
    pub fn multiply_adds(&self) -> u64 {
        self.rows as u64 * self.inner as u64 * self.columns as u64
    }
}

/// What a search measured: each candidate's seconds per dispatch, and the fastest.
#[derive(Debug, Clone, PartialEq)]
pub struct LinearSearch {
    pub shape: LinearShape,
    pub timings: Vec<(LinearStrategy, f64)>,
    pub chosen: LinearStrategy,
    /// Whether the GPU's clock timed the candidates (else the host's, around a submission).
    pub gpu_clock: bool,
}

// ANCHOR: measured_choices
/// The context's cache of measured choices, and of the candidates' compiled pipelines
/// (a candidate's pipeline does not depend on the shape).
pub struct MeasuredChoices {
    choices: Mutex<HashMap<LinearShape, LinearStrategy>>,
    pipelines: PipelineCache,
}
// ANCHOR_END: measured_choices

impl Default for MeasuredChoices {
    fn default() -> Self {
        MeasuredChoices {
            choices: Mutex::new(HashMap::new()),
            pipelines: PipelineCache::new(ShaderCompilation::Cached),
        }
    }
}

impl MeasuredChoices {
    /// The cached choice for `shape`, if it was searched before.
    pub fn cached(&self, shape: LinearShape) -> Option<LinearStrategy> {
        self.lock().get(&shape).copied()
    }

    /// Stores the choice for `shape`.
    pub fn remember(&self, shape: LinearShape, strategy: LinearStrategy) {
        self.lock().insert(shape, strategy);
    }

    /// How many shapes have a cached choice.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<LinearShape, LinearStrategy>> {
        self.choices
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}

// ANCHOR: measured_strategy
/// The linear kernel for `shape` on this device: from the context's cache, else the
/// rule's choice for a small layer, else the fastest candidate of a search.
pub fn measured_strategy(
    context: &GpuContext,
    shape: LinearShape,
) -> Result<LinearStrategy, GpuError> {
    let choices = context.measured_linear_choices();
    if let Some(strategy) = choices.cached(shape) {
        return Ok(strategy);
    }
    let strategy = if shape.multiply_adds() < SEARCH_THRESHOLD {
        LinearStrategy::for_shape(context, shape.rows, shape.inner, shape.columns)?
    } else {
        search(context, shape)?.chosen
    };
    // Two threads may search the same shape at once; both keep a valid answer.
    choices.remember(shape, strategy);
    Ok(strategy)
}
// ANCHOR_END: measured_strategy

/// The candidates a search times for `shape`: every preferred register-blocked
/// configuration the device can run (where vec4 loads are possible), the tiled kernel
/// with 16 × 16 and 8 × 8 tiles, and the naive kernel.
pub fn search_candidates(context: &GpuContext, shape: LinearShape) -> Vec<LinearStrategy> {
    PREFERRED_CONFIGURATIONS
        .into_iter()
        .map(LinearStrategy::RegisterBlocked)
        .chain([
            LinearStrategy::Tiled { edge: 16 },
            LinearStrategy::Tiled { edge: 8 },
            LinearStrategy::Naive,
        ])
        .filter(|strategy| strategy.check(context, shape.inner, shape.columns).is_ok())
        .collect()
}

// ANCHOR: search
/// Times every candidate on random operands of `shape`: one dispatch to warm it up, about
/// 20 ms of work to raise the GPU's clock, then three rounds in which each candidate runs
/// 3 to 32 dispatches in one compute pass (more for short kernels), timed by the GPU's
/// clock where the device has timestamp queries. Each candidate's fastest round counts.
/// Returns every timing and the fastest candidate.
pub fn search(context: &GpuContext, shape: LinearShape) -> Result<LinearSearch, GpuError> {
    let LinearShape {
        rows,
        inner,
        columns,
    } = shape;
    let upload = |rows, columns, seed| {
        let values = Tensor2d::random(rows, columns, -1.0..=1.0, seed);
        GpuTensor::upload(context, &values, Readback::Never)
    };
    let input = upload(rows, inner, 1)?;
    let weights = upload(inner, columns, 2)?;
    let bias = upload(1, columns, 3)?;
    let output = GpuTensor::uninitialized(context, rows, columns, Readback::Never)?;
    let queries = match TimestampSupport::of(context) {
        TimestampSupport::None => None,
        _ => Some(TimestampQueries::new(context, 2)?),
    };
    let cache = &context.measured_linear_choices().pipelines;
    // Bind every candidate and time one dispatch of each, which also warms it up.
    let mut candidates = Vec::new();
    for strategy in search_candidates(context, shape) {
        let pipeline = strategy.pipeline(context, cache, false)?;
        let dispatch = strategy.bind(context, &pipeline, &input, &weights, &bias, &output)?;
        let warm_up = time_dispatches(context, &dispatch, 1, queries.as_ref())?;
        let count = (SECONDS_PER_CANDIDATE / warm_up.max(1e-9)).ceil().clamp(
            f64::from(MINIMUM_TIMED_DISPATCHES),
            f64::from(MAXIMUM_TIMED_DISPATCHES),
        ) as u32;
        candidates.push((strategy, dispatch, count, warm_up));
    }
    // A GPU that was idle runs at a low clock and takes tens of milliseconds to raise it:
    // timed in that state, the first candidates would look slower than they are. Keep it
    // busy first, then time the candidates in interleaved rounds and keep each one's
    // fastest round, so that a change of clock or a neighbour's work during the search
    // slows every candidate alike instead of one.
    if let Some((_, dispatch, _, warm_up)) = candidates.first() {
        let busy = (SECONDS_TO_RAISE_THE_CLOCK / warm_up.max(1e-9))
            .ceil()
            .clamp(1.0, f64::from(MAXIMUM_WARM_UP_DISPATCHES)) as u32;
        time_dispatches(context, dispatch, busy, queries.as_ref())?;
    }
    let mut fastest = vec![f64::INFINITY; candidates.len()];
    for _ in 0..SEARCH_ROUNDS {
        for ((_, dispatch, count, _), best) in candidates.iter().zip(&mut fastest) {
            let seconds = time_dispatches(context, dispatch, *count, queries.as_ref())?;
            *best = best.min(seconds / f64::from(*count));
        }
    }
    let timings: Vec<(LinearStrategy, f64)> = candidates
        .iter()
        .zip(fastest)
        .map(|((strategy, ..), seconds)| (*strategy, seconds))
        .collect();
    let chosen = timings
        .iter()
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|&(strategy, _)| strategy)
        .ok_or_else(|| GpuError::Readback {
            reason: format!(
                "no linear kernel can run a {rows}×{inner} by {inner}×{columns} layer here"
            ),
        })?;
    Ok(LinearSearch {
        shape,
        timings,
        chosen,
        gpu_clock: queries.is_some(),
    })
}
// ANCHOR_END: search

/// Records `count` dispatches of `dispatch` in one compute pass, submits and waits. With
/// `queries`, the pass's beginning and end are timestamped and the GPU's time is returned;
/// without, the host's time from submission to the end of the wait.
fn time_dispatches(
    context: &GpuContext,
    dispatch: &BoundDispatch,
    count: u32,
    queries: Option<&TimestampQueries>,
) -> Result<f64, GpuError> {
    time_dispatch_sequence(context, &[dispatch], count, queries)
}

/// [`time_dispatches`] for `count` dispatches that take turns from `sequence` (for example
/// layers chained through two buffers), all in one compute pass.
pub fn time_dispatch_sequence(
    context: &GpuContext,
    sequence: &[&BoundDispatch],
    count: u32,
    queries: Option<&TimestampQueries>,
) -> Result<f64, GpuError> {
    let mut encoder = context
        .device()
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("linear search"),
        });
    {
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("linear search"),
            timestamp_writes: queries.map(|queries| wgpu::ComputePassTimestampWrites {
                query_set: queries.query_set(),
                beginning_of_pass_write_index: Some(0),
                end_of_pass_write_index: Some(1),
            }),
        });
        for dispatch in sequence.iter().cycle().take(count as usize) {
            dispatch.record_in(&mut pass);
        }
    }
    let start = Instant::now();
    context.queue().submit([encoder.finish()]);
    let waited = context
        .device()
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|error| GpuError::Readback {
            reason: format!("waiting for the linear search: {error}"),
        });
    let host_seconds = start.elapsed().as_secs_f64();
    waited?;
    match queries {
        Some(queries) => {
            let nanoseconds = queries.read_nanoseconds(context, 2)?;
            Ok(((nanoseconds[1] - nanoseconds[0]) * 1e-9).max(0.0))
        }
        None => Ok(host_seconds),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_search_times_every_candidate_and_chooses_one_of_them() {
        let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
        let shape = LinearShape {
            rows: 64,
            inner: 64,
            columns: 64,
        };
        let found = search(context, shape).unwrap();
        let candidates = search_candidates(context, shape);
        assert_eq!(found.timings.len(), candidates.len());
        assert!(candidates.len() >= 3, "{candidates:?}");
        assert!(candidates.contains(&found.chosen));
        assert!(
            found
                .timings
                .iter()
                .all(|&(_, seconds)| seconds.is_finite() && seconds >= 0.0),
            "{found:?}"
        );
        assert!(found.chosen.check(context, 64, 64).is_ok());
    }

    #[test]
    fn shapes_without_vec4_get_candidates_that_can_run_them() {
        let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
        let shape = LinearShape {
            rows: 140,
            inner: 130,
            columns: 131,
        };
        let candidates = search_candidates(context, shape);
        assert!(!candidates.is_empty());
        assert!(
            candidates
                .iter()
                .all(|strategy| !matches!(strategy, LinearStrategy::RegisterBlocked(_))),
            "{candidates:?}"
        );
        let strategy = measured_strategy(context, shape).unwrap();
        assert!(strategy.check(context, 130, 131).is_ok(), "{strategy}");
    }

    #[test]
    fn the_choice_is_cached_by_shape() {
        let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
        // A shape no other test uses, large enough to be searched.
        let shape = LinearShape {
            rows: 136,
            inner: 132,
            columns: 140,
        };
        assert!(shape.multiply_adds() >= SEARCH_THRESHOLD);
        let choices = context.measured_linear_choices();
        assert_eq!(choices.cached(shape), None);
        let first = measured_strategy(context, shape).unwrap();
        assert_eq!(choices.cached(shape), Some(first));
        // The second call answers from the cache: the same strategy, even though a
        // second measurement might have put another candidate first.
        assert_eq!(measured_strategy(context, shape).unwrap(), first);
        assert!(!choices.is_empty());
    }

    #[test]
    fn small_layers_keep_the_rule() {
        let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
        let shape = LinearShape {
            rows: 4,
            inner: 8,
            columns: 12,
        };
        assert_eq!(
            measured_strategy(context, shape).unwrap(),
            LinearStrategy::for_shape(context, 4, 8, 12).unwrap()
        );
    }
}
