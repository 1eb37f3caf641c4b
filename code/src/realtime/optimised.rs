//! Step 4: the same components as a two-stage pipeline on two threads.
//!
//! Step 2's timing says where a frame's time goes: reading and conditioning the sensor,
//! then the model. On one thread a frame costs their *sum*; once the sum passes the
//! period, the loop falls behind whatever the schedule. Here the loop's thread (the hot
//! thread) only reads and conditions, and hands the model's input to a worker thread
//! through a channel; the worker runs the model (on the CPU or, in a GPU mode, by
//! submitting to the GPU and waiting there, so the hot thread never waits for the GPU)
//! and the decision. Now a frame costs the *larger* of the two stages, because
//! conditioning frame `k + 1` overlaps the model of frame `k`.
//!
//! The price is latency: a result is ready one stage later than on one thread, so the
//! deadline must allow it (two periods here instead of one). The channel holds one input,
//! so at most two frames are in flight, one being computed and one waiting: double
//! buffering of the model's input. When both places are taken, the hot thread either
//! drops the new frame ([`WhenBusy::Drop`], the real-time choice: the loop's timing never
//! depends on the worker) or waits for a free place ([`WhenBusy::Wait`], for the
//! regression tests, which need every frame).
//!
//! The outputs are the ones of the single-threaded loop, frame by frame: the same
//! components compute them, only on other threads at other times.

use std::sync::mpsc::{self, Receiver, Sender, SyncSender, TrySendError};
use std::time::{Duration, Instant};

use crate::graph::ValidGraph;
use crate::realtime::components::{
    FrameOutput, LoopSettings, Model, PipelineError, StepRun, WorkloadSettings, decide,
};
use crate::realtime::fixed_rate::FixedRateLoop;
use crate::realtime::frame_stats::FrameRecord;
use crate::realtime::input_stream::condition;
use crate::runner::ExecutionMode;
use crate::tensor::Tensor2d;

/// What the hot thread does when the worker has no room for a new frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WhenBusy {
    /// Drop the frame and count it as skipped: the hot thread never blocks.
    Drop,
    /// Block until the worker takes the waiting frame: every frame is computed.
    Wait,
}

/// A frame on its way to the worker.
struct Job {
    index: u64,
    release: Duration,
    start: Duration,
    deadline: Duration,
    origin: Instant,
    input: Tensor2d,
}

/// A frame the worker has finished.
struct Finished {
    record: FrameRecord,
    output: Option<FrameOutput>,
}

// ANCHOR: optimised
/// Step 4: conditioning on the loop's thread, the model and the decision on a worker.
pub fn run_optimised(
    workload: &WorkloadSettings,
    settings: &LoopSettings,
    when_busy: WhenBusy,
) -> Result<StepRun, PipelineError> {
    let (stream, graph) = workload.build()?;
    // One waiting input: with the one being computed, two frames in flight.
    let (to_worker, jobs) = mpsc::sync_channel::<Job>(1);
    let (results, from_worker) = mpsc::channel::<Result<Finished, PipelineError>>();
    let (ready, model_ready) = mpsc::sync_channel::<Result<(), PipelineError>>(1);
    let fixed_rate = FixedRateLoop {
        rate: settings.rate,
        frames: settings.frames,
        miss_policy: settings.miss_policy,
        waiting: settings.waiting,
    };
    std::thread::scope(|scope| {
        let graph = &graph;
        let warm_up_input = condition(&stream.block(0), workload.decimation);
        scope.spawn(move || {
            worker(
                graph,
                workload.mode,
                warm_up_input,
                settings.keep_outputs,
                ready,
                jobs,
                results,
            )
        });
        // The model is prepared and warmed up on the worker, which will run it; the loop
        // starts once it is ready.
        model_ready.recv().map_err(|_| stopped())??;
        let mut dropped = 0;
        let outcome = fixed_rate.run(|tick| {
            let job = Job {
                index: tick.index,
                release: tick.release,
                start: tick.start,
                deadline: settings.deadline(tick.release),
                origin: tick.origin,
                input: condition(&stream.block(tick.index), workload.decimation),
            };
            match when_busy {
                WhenBusy::Wait => to_worker.send(job).map_err(|_| stopped()),
                WhenBusy::Drop => match to_worker.try_send(job) {
                    Ok(()) => Ok(()),
                    Err(TrySendError::Full(_)) => {
                        dropped += 1;
                        Ok(())
                    }
                    Err(TrySendError::Disconnected(_)) => Err(stopped()),
                },
            }
        });
        // Closing the channel tells the worker to finish what it holds and stop.
        drop(to_worker);
        let mut run = StepRun::default();
        for finished in from_worker {
            let finished = finished?;
            run.records.push(finished.record);
            run.outputs.extend(finished.output);
        }
        run.skipped = outcome?.skipped.len() as u64 + dropped;
        Ok(run)
    })
}
// ANCHOR_END: optimised

// ANCHOR: worker
/// The worker thread: prepares the model and runs it once, then runs every frame it receives until the
/// channel closes. Errors go back to the hot thread, which stops the loop.
fn worker(
    graph: &ValidGraph,
    mode: ExecutionMode,
    warm_up_input: Tensor2d,
    keep_outputs: bool,
    ready: SyncSender<Result<(), PipelineError>>,
    jobs: Receiver<Job>,
    results: Sender<Result<Finished, PipelineError>>,
) {
    // Prepared and warmed up (one run before the clock starts) before the loop may begin.
    let warmed_up = Model::prepare(graph, mode).and_then(|mut model| {
        model.infer(&warm_up_input)?;
        Ok(model)
    });
    let mut model = match warmed_up {
        Ok(model) => {
            let _ = ready.send(Ok(()));
            model
        }
        Err(error) => {
            let _ = ready.send(Err(error));
            return;
        }
    };
    for job in jobs {
        let finished = model.infer(&job.input).map(|scores| {
            let decision = decide(&scores);
            Finished {
                record: FrameRecord {
                    index: job.index,
                    release: job.release,
                    start: job.start,
                    finish: job.origin.elapsed(),
                    deadline: job.deadline,
                },
                output: keep_outputs.then_some(FrameOutput {
                    index: job.index,
                    scores,
                    decision,
                }),
            }
        });
        let failed = finished.is_err();
        if results.send(finished).is_err() || failed {
            return;
        }
    }
}
// ANCHOR_END: worker

fn stopped() -> PipelineError {
    PipelineError::WorkerStopped {
        reason: "its channel closed".to_string(),
    }
}
