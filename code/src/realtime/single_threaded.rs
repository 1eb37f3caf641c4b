//! Step 3: a correct loop on one thread, and the reference every faster version must match.
//!
//! The components of step 2, called in order on one thread, released by the fixed-rate
//! loop: frame `k` starts at `k · period` (or as soon after as the previous frame allows),
//! a miss is handled by the loop's stated policy, and every frame's four times are
//! recorded. Nothing here is clever, which is the point: this version's outputs are the
//! ones the regression tests (`tests/realtime_loop.rs`) hold every optimisation to,
//! frame by frame.

use crate::realtime::components::{
    FrameOutput, LoopSettings, Model, PipelineError, StepRun, WorkloadSettings, decide,
};
use crate::realtime::fixed_rate::FixedRateLoop;
use crate::realtime::frame_stats::FrameRecord;
use crate::realtime::input_stream::condition;

// ANCHOR: single_threaded
/// Step 3: every component on the loop's thread, released by deadline.
pub fn run_single_threaded(
    workload: &WorkloadSettings,
    settings: &LoopSettings,
) -> Result<StepRun, PipelineError> {
    let (stream, graph) = workload.build()?;
    let mut model = Model::prepare(&graph, workload.mode)?;
    // Warm up before the clock starts: a runner's first run pays for setting itself up
    // (worker threads started, fresh memory touched), which is no frame's work.
    model.infer(&condition(&stream.block(0), workload.decimation))?;
    let mut run = StepRun::default();
    // Room for every frame's record before the loop: no allocation inside it.
    run.records.reserve(settings.frames as usize);
    let fixed_rate = FixedRateLoop {
        rate: settings.rate,
        frames: settings.frames,
        miss_policy: settings.miss_policy,
        waiting: settings.waiting,
    };
    let outcome = fixed_rate.run(|tick| {
        let input = condition(&stream.block(tick.index), workload.decimation);
        let scores = model.infer(&input)?;
        let decision = decide(&scores);
        run.records.push(FrameRecord {
            index: tick.index,
            release: tick.release,
            start: tick.start,
            finish: tick.origin.elapsed(),
            deadline: settings.deadline(tick.release),
        });
        if settings.keep_outputs {
            run.outputs.push(FrameOutput {
                index: tick.index,
                scores,
                decision,
            });
        }
        Ok::<(), PipelineError>(())
    })?;
    run.skipped = outcome.skipped.len() as u64;
    Ok(run)
}
// ANCHOR_END: single_threaded
