//! How the copies are timed: GPU timestamps written before the first copy and after the
//! last where the device allows them between commands of an encoder, the wall clock
//! around submit and wait otherwise.

use crate::gpu::{GpuContext, GpuError};

use super::CopyError;
use super::readback::map_and_read;

/// Which clock a measurement used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimingClock {
    /// Timestamps the GPU wrote before the first copy and after the last one.
    GpuTimestamps,
    /// The CPU's clock from submission to the end of the wait: includes the submission.
    WallClock,
}

impl TimingClock {
    /// The clock this device allows: GPU timestamps when the device was created with the
    /// features that allow them between commands of an encoder.
    pub fn for_device(context: &GpuContext) -> TimingClock {
        let needed =
            wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS;
        if context.device().features().contains(needed) {
            TimingClock::GpuTimestamps
        } else {
            TimingClock::WallClock
        }
    }

    /// How the figure's header names it.
    pub fn describe(self) -> &'static str {
        match self {
            TimingClock::GpuTimestamps => "GPU timestamps around the copies",
            TimingClock::WallClock => "wall clock around submit and wait",
        }
    }
}

/// Two timestamp queries and the buffers their values travel through to the CPU.
pub(super) struct Timestamps {
    pub(super) queries: wgpu::QuerySet,
    resolved: wgpu::Buffer,
    staging: wgpu::Buffer,
    /// Nanoseconds per timestamp tick.
    period: f64,
}

impl Timestamps {
    /// Bytes of the two resolved 64-bit timestamps.
    const BYTES: u64 = 2 * 8;

    pub(super) fn new(context: &GpuContext) -> Timestamps {
        let device = context.device();
        let buffer = |label, usage| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: Timestamps::BYTES,
                usage,
                mapped_at_creation: false,
            })
        };
        Timestamps {
            queries: device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("copy timestamps"),
                ty: wgpu::QueryType::Timestamp,
                count: 2,
            }),
            resolved: buffer(
                "resolved timestamps",
                wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            ),
            staging: buffer(
                "timestamp staging",
                wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            ),
            period: f64::from(context.queue().get_timestamp_period()),
        }
    }

    pub(super) fn record_resolve(&self, encoder: &mut wgpu::CommandEncoder) {
        encoder.resolve_query_set(&self.queries, 0..2, &self.resolved, 0);
        encoder.copy_buffer_to_buffer(&self.resolved, 0, &self.staging, 0, Timestamps::BYTES);
    }

    /// The seconds between the two timestamps (call after the submission finished).
    pub(super) fn read_seconds(&self, context: &GpuContext) -> Result<f64, CopyError> {
        let words = map_and_read(context, &self.staging, 0, Timestamps::BYTES)?;
        let ticks: &[u64] = bytemuck::cast_slice(&words);
        let elapsed = ticks[1].wrapping_sub(ticks[0]);
        Ok(elapsed as f64 * self.period * 1e-9)
    }
}

/// Waits until `submission` has finished on the GPU.
pub(super) fn wait_for(
    context: &GpuContext,
    submission: wgpu::SubmissionIndex,
) -> Result<(), GpuError> {
    context
        .device()
        .poll(wgpu::PollType::Wait {
            submission_index: Some(submission),
            timeout: None,
        })
        .map(|_| ())
        .map_err(|error| GpuError::Readback {
            reason: error.to_string(),
        })
}
