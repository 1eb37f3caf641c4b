//! Step 2: name the components, give each one an interface, and time each one.
//!
//! The prototype is one loop body. Read it again and four jobs appear, each with its own
//! input, output and cost:
//!
//! | component | in | out | job |
//! |---|---|---|---|
//! | sensor ([`SensorStream`]) | frame number | raw block | deliver the readings |
//! | conditioning ([`condition`]) | raw block | model input | average, normalise |
//! | model ([`Model`]) | model input | class scores | run the compiled graph |
//! | decision ([`decide`]) | class scores | one class per channel | act on the result |
//!
//! and around them two more: the clock that releases frames
//! ([`crate::realtime::fixed_rate`]) and the recorder that judges them
//! ([`crate::realtime::frame_stats`]). Once each has an interface it can be tested alone,
//! swapped (the model runs in any [`ExecutionMode`], on the CPU or the GPU), moved to
//! another thread, and, first of all, timed alone: [`run_components`] runs the
//! prototype's loop unchanged but records what each component costs per frame, which
//! is what says where the frame budget goes.

use std::time::{Duration, Instant};

use thiserror::Error;

use crate::gpu::{GpuContext, GpuError};
use crate::graph::{GraphError, ValidGraph, random_mlp};
use crate::realtime::fixed_rate::{FixedRate, MissPolicy, Waiting};
use crate::realtime::frame_stats::{FrameRecord, FrameStatsError};
use crate::realtime::input_stream::{SensorStream, StreamError, condition};
use crate::runner::{Execution, ExecutionMode, RunError};
use crate::tensor::Tensor2d;

/// Why a real-time loop could not be set up or stopped early.
#[derive(Debug, Error)]
pub enum PipelineError {
    #[error(transparent)]
    Stream(#[from] StreamError),
    #[error(transparent)]
    Graph(#[from] GraphError),
    #[error(transparent)]
    Run(#[from] RunError),
    #[error(transparent)]
    Gpu(#[from] GpuError),
    #[error(transparent)]
    Stats(#[from] FrameStatsError),
    #[error("the worker thread stopped before the loop did: {reason}")]
    WorkerStopped { reason: String },
}

// ANCHOR: workload
/// What every step of the loop computes: the standard workload's graph (`size × size`
/// input, `depth` layers) on a sensor of `size` channels that delivers `size ·
/// decimation` samples per channel and frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkloadSettings {
    pub size: usize,
    pub depth: usize,
    pub decimation: usize,
    pub seed: u64,
    pub mode: ExecutionMode,
}

impl WorkloadSettings {
    /// The sensor stream and the graph of this workload.
    pub fn build(&self) -> Result<(SensorStream, ValidGraph), PipelineError> {
        let stream = SensorStream::new(self.size, self.size * self.decimation.max(1), self.seed)?;
        let graph = random_mlp(self.size, self.depth, self.seed)?.graph;
        Ok((stream, graph))
    }
}
// ANCHOR_END: workload

// ANCHOR: model
/// The model component: a graph prepared once for an execution mode, run once per frame.
pub struct Model {
    execution: Execution<'static>,
}

impl Model {
    /// Prepares `graph` for `mode`; GPU modes use the process-wide GPU context.
    pub fn prepare(graph: &ValidGraph, mode: ExecutionMode) -> Result<Model, PipelineError> {
        let context = if mode.uses_gpu() {
            Some(GpuContext::shared()?)
        } else {
            None
        };
        Ok(Model {
            execution: mode.prepare(graph, context)?,
        })
    }

    /// The class scores for one conditioned block (a softmax per channel).
    pub fn infer(&mut self, input: &Tensor2d) -> Result<Tensor2d, PipelineError> {
        let mut results = self.execution.run(input, 1)?;
        results.pop().ok_or_else(|| PipelineError::WorkerStopped {
            reason: "the runner returned no result".to_string(),
        })
    }
}
// ANCHOR_END: model

/// The decision component: for each channel (row), the class with the highest score (the
/// first one on a tie).
pub fn decide(scores: &Tensor2d) -> Vec<u32> {
    (0..scores.rows())
        .map(|row| {
            let values = scores.row(row);
            let mut best = 0;
            for (class, &value) in values.iter().enumerate() {
                if value > values[best] {
                    best = class;
                }
            }
            best as u32
        })
        .collect()
}

/// What one frame produced.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameOutput {
    pub index: u64,
    pub scores: Tensor2d,
    pub decision: Vec<u32>,
}

// ANCHOR: loop_settings
/// How a step runs its loop. Only steps 3 and 4 follow the miss policy and the waiting
/// strategy; steps 1 and 2 sleep one period after each frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoopSettings {
    pub rate: FixedRate,
    pub frames: u64,
    pub miss_policy: MissPolicy,
    pub waiting: Waiting,
    /// A frame's deadline, in periods after its release.
    pub latency_budget: u32,
    /// Keep every frame's output (for the regression tests; a long run at a large size
    /// would fill the memory).
    pub keep_outputs: bool,
}

impl LoopSettings {
    /// The deadline of a frame released at `release`.
    pub fn deadline(&self, release: Duration) -> Duration {
        release + self.rate.period() * self.latency_budget
    }
}
// ANCHOR_END: loop_settings

/// The time one frame spent in each component.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ComponentTimes {
    pub sensor: Duration,
    pub conditioning: Duration,
    pub model: Duration,
    pub decision: Duration,
}

/// What a run of one step produced: a record per finished frame, in frame order, the
/// number of frames skipped, and the outputs if they were kept.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StepRun {
    pub records: Vec<FrameRecord>,
    pub skipped: u64,
    pub outputs: Vec<FrameOutput>,
    /// Filled by step 2 only.
    pub component_times: Vec<ComponentTimes>,
}

// ANCHOR: run_components
/// Step 2: the prototype's loop, `sleep(period)` after every frame, with the four
/// components called through their interfaces and each one timed.
pub fn run_components(
    workload: &WorkloadSettings,
    settings: &LoopSettings,
) -> Result<StepRun, PipelineError> {
    let (stream, graph) = workload.build()?;
    let mut model = Model::prepare(&graph, workload.mode)?;
    let period = settings.rate.period();
    let mut run = StepRun::default();
    // Room for every frame's record before the loop: no allocation inside it.
    run.records.reserve(settings.frames as usize);
    run.component_times.reserve(settings.frames as usize);
    let origin = Instant::now();
    for index in 0..settings.frames {
        let release = period * index as u32;
        let start = origin.elapsed();
        let raw = stream.block(index);
        let sensed = origin.elapsed();
        let input = condition(&raw, workload.decimation);
        let conditioned = origin.elapsed();
        let scores = model.infer(&input)?;
        let inferred = origin.elapsed();
        let decision = decide(&scores);
        let finish = origin.elapsed();
        run.component_times.push(ComponentTimes {
            sensor: sensed - start,
            conditioning: conditioned - sensed,
            model: inferred - conditioned,
            decision: finish - inferred,
        });
        run.records.push(FrameRecord {
            index,
            release,
            start,
            finish,
            deadline: settings.deadline(release),
        });
        if settings.keep_outputs {
            run.outputs.push(FrameOutput {
                index,
                scores,
                decision,
            });
        }
        std::thread::sleep(period);
    }
    Ok(run)
}
// ANCHOR_END: run_components

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_decision_is_the_first_highest_score_of_each_row() {
        let scores =
            Tensor2d::from_vec(3, 3, vec![0.1, 0.7, 0.2, 0.5, 0.2, 0.5, 0.0, 0.0, 0.9]).unwrap();
        assert_eq!(decide(&scores), vec![1, 0, 2]);
    }

    #[test]
    fn the_deadline_is_the_latency_budget_after_the_release() {
        let settings = LoopSettings {
            rate: FixedRate::hertz(100.0).unwrap(),
            frames: 1,
            miss_policy: MissPolicy::Skip,
            waiting: Waiting::Sleep,
            latency_budget: 2,
            keep_outputs: false,
        };
        assert_eq!(
            settings.deadline(Duration::from_millis(30)),
            Duration::from_millis(50)
        );
    }

    #[test]
    fn a_workload_of_size_zero_is_an_error_not_a_panic() {
        let workload = WorkloadSettings {
            size: 0,
            depth: 2,
            decimation: 2,
            seed: 1,
            mode: ExecutionMode::CpuGraph,
        };
        assert!(matches!(workload.build(), Err(PipelineError::Stream(_))));
    }
}
