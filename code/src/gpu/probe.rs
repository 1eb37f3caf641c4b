//! The probe: where the time of the GPU work of one thread goes, while someone asks.
//!
//! The time breakdown ([`crate::bench::time_breakdown`]) measures runs of the ordinary
//! runners, unchanged. It cannot wrap their code in timers, so the few functions every
//! runner goes through report to a probe instead: [`GpuContext::submit`] (submitting),
//! [`GpuTensor::read_staging`](crate::gpu::GpuTensor::read_staging) (waiting, mapping,
//! copying out) and the recording of compute passes in [`crate::gpu::record`] (GPU
//! timestamps around every dispatch). Everything else a run does on the host (writing
//! the input, binding, recording commands) counts as encoding.
//!
//! The probe lives in a thread-local variable: it sees only the thread that started it,
//! so tests running in parallel threads on the shared context do not disturb it. With
//! no probe started, every hook is one read of that variable.
//!
//! [`GpuContext::submit`]: crate::gpu::GpuContext::submit

use std::cell::RefCell;
use std::time::{Duration, Instant};

use crate::gpu::timestamps::{TimestampQueries, TimestampSupport};

// ANCHOR: host_phase
/// What the host is doing during a GPU run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HostPhase {
    /// Writing the input, binding, recording commands: everything up to `submit`.
    Encoding,
    /// `Queue::submit`: handing the command buffers to the driver.
    Submitting,
    /// Blocked in `Device::poll` until the GPU has finished.
    Waiting,
    /// Completing the map of the staging buffer and getting its mapped range.
    Mapping,
    /// Copying the result out of mapped memory into the host's own.
    CopyingOut,
}
// ANCHOR_END: host_phase

impl HostPhase {
    pub const ALL: [HostPhase; 5] = [
        HostPhase::Encoding,
        HostPhase::Submitting,
        HostPhase::Waiting,
        HostPhase::Mapping,
        HostPhase::CopyingOut,
    ];

    fn index(self) -> usize {
        self as usize
    }

    /// The name in reports and figures.
    pub fn name(self) -> &'static str {
        match self {
            HostPhase::Encoding => "encoding",
            HostPhase::Submitting => "submitting",
            HostPhase::Waiting => "waiting",
            HostPhase::Mapping => "mapping",
            HostPhase::CopyingOut => "copying out",
        }
    }
}

/// What a timestamp written by the probe marks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// The start of a command buffer, before anything in it.
    SubmissionStart,
    /// The end of a command buffer, after everything in it.
    SubmissionEnd,
    /// The beginning of a compute pass.
    PassStart,
    /// The end of a dispatch inside a compute pass.
    DispatchEnd,
    /// The end of a compute pass timed at its boundaries only, which held this many
    /// dispatches (with one, the pass's time is the dispatch's).
    PassEnd { dispatches: usize },
}

/// What the probe saw between [`start`] and [`finish`].
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeRecord {
    /// Host time per phase, indexed like [`HostPhase::ALL`].
    pub host: [Duration; 5],
    /// What each written timestamp marks, by query index.
    pub marks: Vec<Mark>,
    /// Timestamps that did not fit into the query set and were not written.
    pub marks_left_out: usize,
    pub submissions: usize,
    /// Compute passes recorded.
    pub passes: usize,
}

impl ProbeRecord {
    pub fn host_time(&self, phase: HostPhase) -> Duration {
        self.host[phase.index()]
    }
}

struct Active {
    phase: HostPhase,
    since: Instant,
    record: ProbeRecord,
    /// The query set, its capacity, and what the device allows.
    queries: Option<(wgpu::QuerySet, u32, TimestampSupport)>,
}

thread_local! {
    static ACTIVE: RefCell<Option<Active>> = const { RefCell::new(None) };
}

/// Starts probing this thread's GPU work, in the encoding phase, writing timestamps into
/// `queries` (from index 0) where the device allows them.
pub fn start(queries: Option<(&TimestampQueries, TimestampSupport)>) {
    let queries = queries
        .filter(|(_, support)| *support != TimestampSupport::None)
        .map(|(queries, support)| (queries.query_set().clone(), queries.capacity(), support));
    ACTIVE.with(|active| {
        *active.borrow_mut() = Some(Active {
            phase: HostPhase::Encoding,
            since: Instant::now(),
            record: ProbeRecord {
                host: [Duration::ZERO; 5],
                marks: Vec::new(),
                marks_left_out: 0,
                submissions: 0,
                passes: 0,
            },
            queries,
        });
    });
}

/// Stops probing and returns what was seen (`None` if no probe was started).
pub fn finish() -> Option<ProbeRecord> {
    enter(HostPhase::Encoding);
    ACTIVE.with(|active| active.borrow_mut().take().map(|active| active.record))
}

/// Whether a probe is running on this thread.
pub fn is_active() -> bool {
    ACTIVE.with(|active| active.borrow().is_some())
}

/// Ends the current phase and begins `phase`; returns the phase that was running, so
/// that a hook can go back to it.
pub fn enter(phase: HostPhase) -> HostPhase {
    ACTIVE.with(|active| match active.borrow_mut().as_mut() {
        Some(active) => {
            let now = Instant::now();
            let previous = active.phase;
            active.record.host[previous.index()] += now - active.since;
            active.phase = phase;
            active.since = now;
            previous
        }
        None => HostPhase::Encoding,
    })
}

/// Runs `work` in `phase`, then returns to the phase that was running before.
pub fn in_phase<T>(phase: HostPhase, work: impl FnOnce() -> T) -> T {
    let previous = enter(phase);
    let result = work();
    enter(previous);
    result
}

/// Counts one submission.
pub fn count_submission() {
    ACTIVE.with(|active| {
        if let Some(active) = active.borrow_mut().as_mut() {
            active.record.submissions += 1;
        }
    });
}

/// The next query index for `mark`, if the probe runs, the device allows at least
/// `needed` and the set has room.
fn next_query(mark: Mark, needed: TimestampSupport) -> Option<(wgpu::QuerySet, u32)> {
    ACTIVE.with(|active| {
        let mut active = active.borrow_mut();
        let active = active.as_mut()?;
        let (queries, capacity, support) = active.queries.as_ref()?;
        if *support < needed {
            return None;
        }
        let index = active.record.marks.len() as u32;
        if index >= *capacity {
            active.record.marks_left_out += 1;
            return None;
        }
        active.record.marks.push(mark);
        Some((queries.clone(), index))
    })
}

/// Writes a timestamp between the commands of `encoder`, where the device allows it.
pub fn write_in_encoder(encoder: &mut wgpu::CommandEncoder, mark: Mark) {
    if let Some((queries, index)) = next_query(mark, TimestampSupport::BetweenCommands) {
        encoder.write_timestamp(&queries, index);
    }
}

// ANCHOR: pass_timing
/// The timestamps of one compute pass: after every dispatch where the device allows
/// that, else at the pass's beginning and end.
pub struct PassTiming {
    queries: wgpu::QuerySet,
    /// The query index of the pass's beginning.
    start: u32,
    /// The query index of the pass's end, when only pass boundaries can be timed.
    end: Option<u32>,
}

impl PassTiming {
    /// The timing of the next compute pass, which will hold `dispatches` dispatches, if a
    /// probe runs and the device has timestamps. Counts the pass. A pass of one dispatch
    /// is timed at its boundaries, which time the dispatch too.
    pub fn next_pass(dispatches: usize) -> Option<PassTiming> {
        let support = ACTIVE.with(|active| {
            let mut active = active.borrow_mut();
            let active = active.as_mut()?;
            active.record.passes += 1;
            active.queries.as_ref().map(|(_, _, support)| *support)
        })?;
        let (queries, start) = next_query(Mark::PassStart, TimestampSupport::PassBoundaries)?;
        let end = if support == TimestampSupport::EveryDispatch && dispatches > 1 {
            None
        } else {
            let mark = Mark::PassEnd { dispatches };
            Some(next_query(mark, TimestampSupport::PassBoundaries)?.1)
        };
        Some(PassTiming {
            queries,
            start,
            end,
        })
    }

    /// What the pass descriptor's `timestamp_writes` should hold: the pass's beginning
    /// and end, when nothing finer is possible.
    pub fn pass_writes(&self) -> Option<wgpu::ComputePassTimestampWrites<'_>> {
        self.end.map(|end| wgpu::ComputePassTimestampWrites {
            query_set: &self.queries,
            beginning_of_pass_write_index: Some(self.start),
            end_of_pass_write_index: Some(end),
        })
    }

    /// Call right after beginning the pass: the first timestamp inside it.
    pub fn after_begin(&self, pass: &mut wgpu::ComputePass<'_>) {
        if self.end.is_none() {
            pass.write_timestamp(&self.queries, self.start);
        }
    }

    /// Call after recording each dispatch into the pass.
    pub fn after_dispatch(&self, pass: &mut wgpu::ComputePass<'_>) {
        if self.end.is_some() {
            return;
        }
        if let Some((queries, index)) =
            next_query(Mark::DispatchEnd, TimestampSupport::EveryDispatch)
        {
            pass.write_timestamp(&queries, index);
        }
    }
}
// ANCHOR_END: pass_timing

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_add_up_to_the_time_between_start_and_finish() {
        let begun = Instant::now();
        start(None);
        std::thread::sleep(Duration::from_millis(2));
        in_phase(HostPhase::Waiting, || {
            std::thread::sleep(Duration::from_millis(3))
        });
        in_phase(HostPhase::CopyingOut, || {
            std::thread::sleep(Duration::from_millis(1))
        });
        count_submission();
        let record = finish().unwrap();
        let elapsed = begun.elapsed();
        let total: Duration = record.host.iter().sum();
        assert!(total <= elapsed, "{total:?} > {elapsed:?}");
        assert!(record.host_time(HostPhase::Waiting) >= Duration::from_millis(3));
        assert!(record.host_time(HostPhase::CopyingOut) >= Duration::from_millis(1));
        assert!(record.host_time(HostPhase::Encoding) >= Duration::from_millis(2));
        assert_eq!(record.host_time(HostPhase::Mapping), Duration::ZERO);
        assert_eq!(record.submissions, 1);
        assert!(record.marks.is_empty());
        assert!(!is_active());
        assert_eq!(finish(), None);
    }

    #[test]
    fn without_a_probe_the_hooks_do_nothing() {
        assert!(!is_active());
        assert_eq!(enter(HostPhase::Waiting), HostPhase::Encoding);
        assert!(PassTiming::next_pass(3).is_none());
        count_submission();
        assert_eq!(finish(), None);
    }
}
