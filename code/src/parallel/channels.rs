//! A three-stage pipeline joined by channels: a producer makes numbers, a worker transforms
//! them, a consumer adds them up. Each stage is a thread; nothing is shared but the
//! channels between them.
//!
//! The same pipeline runs on four channels: the standard library's `mpsc::channel`
//! (unbounded) and `mpsc::sync_channel` (bounded), and crossbeam's `unbounded` and
//! `bounded`. Items travel in batches (`Vec<u64>`), and the batch size is the knob that
//! matters most: every message costs a fixed amount of work, whatever it carries.

use std::sync::mpsc;

/// A message: a batch of items.
pub type Batch = Vec<u64>;

/// Which channel joins the stages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChannelKind {
    /// `std::sync::mpsc::channel`: the queue grows without limit.
    StandardUnbounded,
    /// `std::sync::mpsc::sync_channel(capacity)`: a sender waits while `capacity` messages
    /// are queued.
    StandardBounded { capacity: usize },
    /// `crossbeam::channel::unbounded`.
    CrossbeamUnbounded,
    /// `crossbeam::channel::bounded(capacity)`.
    CrossbeamBounded { capacity: usize },
}

impl ChannelKind {
    pub fn name(self) -> String {
        match self {
            ChannelKind::StandardUnbounded => "std mpsc unbounded".to_string(),
            ChannelKind::StandardBounded { capacity } => format!("std mpsc bounded {capacity}"),
            ChannelKind::CrossbeamUnbounded => "crossbeam unbounded".to_string(),
            ChannelKind::CrossbeamBounded { capacity } => format!("crossbeam bounded {capacity}"),
        }
    }
}

/// Why a pipeline could not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PipelineError {
    #[error("a batch of zero items carries nothing: the batch size must be at least 1")]
    EmptyBatch,
    #[error("the {stage} stopped before the end of the stream")]
    StageStopped { stage: &'static str },
}

// ANCHOR: channel_ends
/// The two ends of a channel, whichever library made it. A send fails only when the
/// receiving end is gone; a receive returns `None` once every sender is gone and the queue
/// is empty: that is how the end of the stream travels down the pipeline.
pub trait SendEnd: Send {
    fn send_batch(&self, batch: Batch) -> bool;
}
pub trait ReceiveEnd: Send {
    fn receive_batch(&self) -> Option<Batch>;
}
// ANCHOR_END: channel_ends

impl SendEnd for mpsc::Sender<Batch> {
    fn send_batch(&self, batch: Batch) -> bool {
        self.send(batch).is_ok()
    }
}
impl SendEnd for mpsc::SyncSender<Batch> {
    fn send_batch(&self, batch: Batch) -> bool {
        self.send(batch).is_ok()
    }
}
impl ReceiveEnd for mpsc::Receiver<Batch> {
    fn receive_batch(&self) -> Option<Batch> {
        self.recv().ok()
    }
}
impl SendEnd for crossbeam::channel::Sender<Batch> {
    fn send_batch(&self, batch: Batch) -> bool {
        self.send(batch).is_ok()
    }
}
impl ReceiveEnd for crossbeam::channel::Receiver<Batch> {
    fn receive_batch(&self) -> Option<Batch> {
        self.recv().ok()
    }
}

/// The worker's transformation: a cheap mix of the bits, so that the pipeline has work to
/// do and a wrong or missing item changes the total.
pub fn transform(item: u64) -> u64 {
    (item ^ (item >> 17)).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// The total the pipeline must reach, computed on one thread.
pub fn pipeline_sequential(items: u64) -> u64 {
    (0..items).map(transform).fold(0, u64::wrapping_add)
}

/// Runs the pipeline over the items `0..items`, sent `batch` at a time, on the channel
/// `kind`; returns the consumer's total.
pub fn run_pipeline(items: u64, batch: usize, kind: ChannelKind) -> Result<u64, PipelineError> {
    if batch == 0 {
        return Err(PipelineError::EmptyBatch);
    }
    match kind {
        ChannelKind::StandardUnbounded => {
            let (first, second) = (mpsc::channel(), mpsc::channel());
            pipeline(items, batch, first, second)
        }
        ChannelKind::StandardBounded { capacity } => {
            let (first, second) = (mpsc::sync_channel(capacity), mpsc::sync_channel(capacity));
            pipeline(items, batch, first, second)
        }
        ChannelKind::CrossbeamUnbounded => {
            let (first, second) = (
                crossbeam::channel::unbounded(),
                crossbeam::channel::unbounded(),
            );
            pipeline(items, batch, first, second)
        }
        ChannelKind::CrossbeamBounded { capacity } => {
            let (first, second) = (
                crossbeam::channel::bounded(capacity),
                crossbeam::channel::bounded(capacity),
            );
            pipeline(items, batch, first, second)
        }
    }
}

// ANCHOR: pipeline
/// producer → (first channel) → worker → (second channel) → consumer, one thread each.
fn pipeline(
    items: u64,
    batch: usize,
    (to_worker, from_producer): (impl SendEnd, impl ReceiveEnd),
    (to_consumer, from_worker): (impl SendEnd, impl ReceiveEnd),
) -> Result<u64, PipelineError> {
    std::thread::scope(|scope| {
        let producer = scope.spawn(move || {
            let mut next = 0u64;
            while next < items {
                let end = items.min(next + batch as u64);
                if !to_worker.send_batch((next..end).collect()) {
                    return false; // the worker is gone
                }
                next = end;
            }
            true // dropping `to_worker` here tells the worker the stream has ended
        });
        let worker = scope.spawn(move || {
            while let Some(mut items) = from_producer.receive_batch() {
                items.iter_mut().for_each(|item| *item = transform(*item));
                if !to_consumer.send_batch(items) {
                    return false;
                }
            }
            true
        });
        // The consumer is this thread: it adds up until the worker hangs up.
        let mut total = 0u64;
        while let Some(items) = from_worker.receive_batch() {
            total = items
                .iter()
                .fold(total, |sum, item| sum.wrapping_add(*item));
        }
        let finished = |handle: std::thread::ScopedJoinHandle<'_, bool>| {
            handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        };
        if !finished(producer) {
            return Err(PipelineError::StageStopped { stage: "worker" });
        }
        if !finished(worker) {
            return Err(PipelineError::StageStopped { stage: "consumer" });
        }
        Ok(total)
    })
}
// ANCHOR_END: pipeline

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};

    const KINDS: [ChannelKind; 6] = [
        ChannelKind::StandardUnbounded,
        ChannelKind::StandardBounded { capacity: 0 },
        ChannelKind::StandardBounded { capacity: 4 },
        ChannelKind::CrossbeamUnbounded,
        ChannelKind::CrossbeamBounded { capacity: 0 },
        ChannelKind::CrossbeamBounded { capacity: 4 },
    ];

    #[test]
    fn every_channel_delivers_every_item_once() {
        let mut generator = rand_chacha::ChaCha8Rng::seed_from_u64(17);
        for case in 0..6 {
            // Random stream lengths and batch sizes, including a last batch that is short.
            let items = if case == 0 {
                0
            } else {
                generator.random_range(1..5000u64)
            };
            let batch = generator.random_range(1..300usize);
            let expected = pipeline_sequential(items);
            for kind in KINDS {
                assert_eq!(
                    run_pipeline(items, batch, kind),
                    Ok(expected),
                    "{} items in batches of {batch} through {}",
                    items,
                    kind.name()
                );
            }
        }
    }

    #[test]
    fn a_lost_or_repeated_item_changes_the_total() {
        let total = pipeline_sequential(1000);
        assert_ne!(total, pipeline_sequential(999));
        assert_ne!(total, pipeline_sequential(1000).wrapping_add(transform(5)));
    }

    #[test]
    fn a_batch_of_zero_items_is_an_error() {
        for kind in KINDS {
            assert_eq!(run_pipeline(10, 0, kind), Err(PipelineError::EmptyBatch));
        }
    }
}
