//! Step 1: the simplest loop that does the whole job, end to end.
//!
//! Read a block from the sensor, condition it, run the graph, pick a class per channel,
//! sleep one period, repeat. It is one function, it takes an afternoon, and it answers the
//! first questions of any real-time project: does the whole chain work, does the output
//! make sense, and roughly how long does a frame take?
//!
//! It also carries the classic mistake on purpose: `sleep(period)` after the work. The
//! loop then runs at `1 / (work + period + oversleep)`, not at the rate asked for, and its
//! frames fall further behind their schedule every time round. The record shows it: the
//! latency of frame `k` (its finish minus `k · period`) grows with `k`.

use std::time::Instant;

use crate::realtime::components::{
    FrameOutput, LoopSettings, PipelineError, StepRun, WorkloadSettings, decide,
};
use crate::realtime::frame_stats::FrameRecord;
use crate::realtime::input_stream::condition;
use crate::runner::ExecutionMode;

// ANCHOR: prototype
/// Step 1: do the work, then `sleep(period)`.
pub fn run_prototype(
    workload: &WorkloadSettings,
    settings: &LoopSettings,
) -> Result<StepRun, PipelineError> {
    let (stream, graph) = workload.build()?;
    let context = match workload.mode.uses_gpu() {
        true => Some(crate::gpu::GpuContext::shared()?),
        false => None,
    };
    let mut execution = ExecutionMode::prepare(workload.mode, &graph, context)?;
    let period = settings.rate.period();
    let mut run = StepRun::default();
    // Room for every frame's record before the loop: no allocation inside it.
    run.records.reserve(settings.frames as usize);
    let origin = Instant::now();
    for index in 0..settings.frames {
        let start = origin.elapsed();
        let input = condition(&stream.block(index), workload.decimation);
        let scores = execution.run(&input, 1)?.remove(0);
        let decision = decide(&scores);
        let finish = origin.elapsed();
        // Frame `index` was due at `index · period`: the schedule the rate promises.
        let release = period * index as u32;
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
        std::thread::sleep(period); // The mistake: the period starts after the work.
    }
    Ok(run)
}
// ANCHOR_END: prototype
