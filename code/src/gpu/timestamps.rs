//! GPU timestamps: the GPU writes its own clock into a query set, and the values are read
//! back afterwards.
//!
//! The host's clock sees when work is submitted and when the wait for it ends, not what
//! the GPU did in between. A *timestamp query* asks the GPU to write its clock, in ticks,
//! into a slot of a *query set* when it reaches that point of the command stream. After
//! the work has finished, `resolve_query_set` copies the slots into a buffer, which is
//! read back like any result; the queue's timestamp period turns ticks into nanoseconds.
//!
//! Where a timestamp may be written depends on what the adapter offers:
//!
//! | wgpu feature | timestamps may be written |
//! |---|---|
//! | `TIMESTAMP_QUERY` | at the beginning and end of a pass (`timestamp_writes`) |
//! | `TIMESTAMP_QUERY_INSIDE_ENCODERS` | also between commands of an encoder (around copies) |
//! | `TIMESTAMP_QUERY_INSIDE_PASSES` | also between dispatches inside a compute pass |
//!
//! [`TimestampSupport`] names the finest of these a device was created with.

use crate::gpu::{GpuContext, GpuError};

// ANCHOR: timestamp_support
/// The finest places this device can write timestamps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TimestampSupport {
    /// No timestamp queries at all: only the host's clock.
    None,
    /// At the beginning and the end of each compute pass.
    PassBoundaries,
    /// Also between the commands of an encoder, so around copies.
    BetweenCommands,
    /// Also between the dispatches of a compute pass: a time for every kernel.
    EveryDispatch,
}
// ANCHOR_END: timestamp_support

impl TimestampSupport {
    /// What the device was created with (see [`crate::gpu::OPTIONAL_FEATURES`]).
    pub fn of(context: &GpuContext) -> TimestampSupport {
        TimestampSupport::from_features(context.device().features())
    }

    pub fn from_features(features: wgpu::Features) -> TimestampSupport {
        let has = |feature| features.contains(feature);
        if !has(wgpu::Features::TIMESTAMP_QUERY) {
            TimestampSupport::None
        } else if !has(wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS) {
            TimestampSupport::PassBoundaries
        } else if !has(wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES) {
            TimestampSupport::BetweenCommands
        } else {
            TimestampSupport::EveryDispatch
        }
    }

    /// The wgpu features that are missing for a timestamp after every dispatch.
    pub fn missing_features(self) -> Vec<&'static str> {
        let all = [
            (TimestampSupport::PassBoundaries, "TIMESTAMP_QUERY"),
            (
                TimestampSupport::BetweenCommands,
                "TIMESTAMP_QUERY_INSIDE_ENCODERS",
            ),
            (
                TimestampSupport::EveryDispatch,
                "TIMESTAMP_QUERY_INSIDE_PASSES",
            ),
        ];
        all.into_iter()
            .filter(|&(needed, _)| self < needed)
            .map(|(_, name)| name)
            .collect()
    }

    /// One sentence for a report: what the GPU's clock can and cannot time here.
    pub fn describe(self) -> String {
        let missing = self.missing_features().join(", ");
        match self {
            TimestampSupport::EveryDispatch => "the GPU timed every dispatch and every \
                 submission (TIMESTAMP_QUERY, TIMESTAMP_QUERY_INSIDE_ENCODERS and \
                 TIMESTAMP_QUERY_INSIDE_PASSES)"
                .to_string(),
            TimestampSupport::BetweenCommands => format!(
                "the GPU timed each compute pass and each submission, not each dispatch \
                 inside a pass (missing: {missing})"
            ),
            TimestampSupport::PassBoundaries => format!(
                "the GPU timed each compute pass only: neither the copies nor the \
                 dispatches inside a pass (missing: {missing})"
            ),
            TimestampSupport::None => format!(
                "the GPU timed nothing: the adapter offers no timestamp queries (missing: \
                 {missing}); only the host's clock was read"
            ),
        }
    }
}

// ANCHOR: timestamp_queries
/// A query set of timestamps and the two buffers their values travel through: one the
/// GPU resolves the queries into, one the host maps.
pub struct TimestampQueries {
    queries: wgpu::QuerySet,
    capacity: u32,
    resolved: wgpu::Buffer,
    readback: wgpu::Buffer,
    /// Nanoseconds per tick of the GPU's clock.
    period: f64,
}
// ANCHOR_END: timestamp_queries

impl TimestampQueries {
    /// Bytes of one resolved timestamp.
    const BYTES_EACH: u64 = 8;

    /// Room for `capacity` timestamps (at most wgpu's 4096 per query set). A device
    /// without `TIMESTAMP_QUERY` gets a `GpuError::MissingFeature`.
    pub fn new(context: &GpuContext, capacity: u32) -> Result<TimestampQueries, GpuError> {
        if TimestampSupport::of(context) == TimestampSupport::None {
            return Err(GpuError::MissingFeature {
                kernel: "timestamp queries",
                feature: "TIMESTAMP_QUERY".to_string(),
            });
        }
        let capacity = capacity.clamp(2, wgpu::QUERY_SET_MAX_QUERIES);
        let device = context.device();
        let bytes = u64::from(capacity) * TimestampQueries::BYTES_EACH;
        let buffer = |label, usage| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: bytes,
                usage,
                mapped_at_creation: false,
            })
        };
        Ok(TimestampQueries {
            queries: device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("timestamps"),
                ty: wgpu::QueryType::Timestamp,
                count: capacity,
            }),
            capacity,
            resolved: buffer(
                "resolved timestamps",
                wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            ),
            readback: buffer(
                "timestamp readback",
                wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            ),
            period: f64::from(context.queue().get_timestamp_period()),
        })
    }

    pub fn query_set(&self) -> &wgpu::QuerySet {
        &self.queries
    }

    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    // ANCHOR: read_timestamps
    /// Resolves the first `count` timestamps and reads them back, in nanoseconds of the
    /// GPU's clock. Call after every submission that wrote them has been submitted; this
    /// submits the resolve and waits for it (and so for them).
    pub fn read_nanoseconds(&self, context: &GpuContext, count: u32) -> Result<Vec<f64>, GpuError> {
        let count = count.min(self.capacity);
        if count == 0 {
            return Ok(Vec::new());
        }
        let bytes = u64::from(count) * TimestampQueries::BYTES_EACH;
        let mut encoder =
            context
                .device()
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("resolve timestamps"),
                });
        encoder.resolve_query_set(&self.queries, 0..count, &self.resolved, 0);
        encoder.copy_buffer_to_buffer(&self.resolved, 0, &self.readback, 0, bytes);
        context.queue().submit([encoder.finish()]);
        let failed = |error: &dyn std::fmt::Display| GpuError::Readback {
            reason: format!("reading timestamps back: {error}"),
        };
        let slice = self.readback.slice(..bytes);
        let (sender, receiver) = std::sync::mpsc::channel();
        slice.map_async(wgpu::MapMode::Read, move |result| {
            let _ = sender.send(result);
        });
        context
            .device()
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|error| failed(&error))?;
        receiver
            .recv()
            .map_err(|error| failed(&error))?
            .map_err(|error| failed(&error))?;
        let ticks: Vec<u64> = {
            let mapped = slice.get_mapped_range().map_err(|error| failed(&error))?;
            bytemuck::cast_slice(&mapped).to_vec()
        };
        self.readback.unmap();
        Ok(ticks
            .into_iter()
            .map(|tick| tick as f64 * self.period)
            .collect())
    }
    // ANCHOR_END: read_timestamps
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn support_follows_the_features_and_names_what_is_missing() {
        let none = TimestampSupport::from_features(wgpu::Features::empty());
        assert_eq!(none, TimestampSupport::None);
        assert_eq!(none.missing_features().len(), 3);
        assert!(none.describe().contains("TIMESTAMP_QUERY_INSIDE_PASSES"));
        let passes = TimestampSupport::from_features(wgpu::Features::TIMESTAMP_QUERY);
        assert_eq!(passes, TimestampSupport::PassBoundaries);
        assert_eq!(
            passes.missing_features(),
            [
                "TIMESTAMP_QUERY_INSIDE_ENCODERS",
                "TIMESTAMP_QUERY_INSIDE_PASSES"
            ]
        );
        let all = wgpu::Features::TIMESTAMP_QUERY
            | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS
            | wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES;
        let every = TimestampSupport::from_features(all);
        assert_eq!(every, TimestampSupport::EveryDispatch);
        assert!(every.missing_features().is_empty());
        // Inside passes without inside encoders is not a combination wgpu allows to use
        // for both: it counts as pass boundaries.
        let odd = wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES;
        assert_eq!(
            TimestampSupport::from_features(odd),
            TimestampSupport::PassBoundaries
        );
    }

    #[test]
    fn timestamps_around_a_copy_increase() {
        let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
        if TimestampSupport::of(context) < TimestampSupport::BetweenCommands {
            // The device cannot write timestamps between commands: creating the set must
            // still work where TIMESTAMP_QUERY exists, and fail with a typed error where not.
            let created = TimestampQueries::new(context, 4);
            assert_eq!(
                created.is_ok(),
                TimestampSupport::of(context) != TimestampSupport::None
            );
            return;
        }
        let queries = TimestampQueries::new(context, 4).unwrap();
        let bytes = 1 << 20;
        let buffer = |usage| {
            context.device().create_buffer(&wgpu::BufferDescriptor {
                label: None,
                size: bytes,
                usage,
                mapped_at_creation: false,
            })
        };
        let source = buffer(wgpu::BufferUsages::COPY_SRC);
        let target = buffer(wgpu::BufferUsages::COPY_DST);
        let mut encoder = context
            .device()
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        encoder.write_timestamp(queries.query_set(), 0);
        encoder.copy_buffer_to_buffer(&source, 0, &target, 0, bytes);
        encoder.write_timestamp(queries.query_set(), 1);
        context.queue().submit([encoder.finish()]);
        let times = queries.read_nanoseconds(context, 2).unwrap();
        assert_eq!(times.len(), 2);
        assert!(times[1] >= times[0], "{times:?}");
        assert!(times[0] > 0.0, "{times:?}");
    }
}
