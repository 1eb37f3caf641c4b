//! How the host waits for the GPU: spinning for a short while, then blocking.
//!
//! A readback ends with the host waiting for the GPU to finish the submission. wgpu offers
//! two ways. `PollType::Wait` *blocks*: the driver puts the thread to sleep until the GPU
//! signals, and the operating system wakes it up again, which takes tens of microseconds
//! after the GPU is done. `PollType::Poll` only *checks*: called in a loop, it notices the
//! end within a microsecond or two, but it keeps a core busy for the whole wait.
//!
//! For a run of a fraction of a millisecond the wake-up is a large share of the time, so
//! [`wait_for_callback`] spins first, for at most [`SPIN_LIMIT`], and blocks only when the
//! GPU takes longer. CUDA makes the same choice by default (`cudaDeviceScheduleAuto` spins
//! while there are more cores than active GPU contexts). On a software rasteriser such as
//! lavapipe the "GPU" is the CPU's own threads: spinning there would take a core from the
//! work it waits for, so the wait blocks at once.

use std::sync::mpsc::{Receiver, TryRecvError};
use std::time::{Duration, Instant};

use crate::gpu::{GpuContext, GpuError};

/// The longest a wait spins before it blocks: long enough for the small runs whose
/// wake-up latency matters, short enough that a long run wastes at most this much of a
/// core.
pub const SPIN_LIMIT: Duration = Duration::from_millis(1);

/// How long waits on `context`'s device spin before blocking: [`SPIN_LIMIT`], or zero on a
/// software rasteriser, whose work runs on the CPU cores a spinning thread would take.
pub fn spin_limit(context: &GpuContext) -> Duration {
    match context.device_type() {
        wgpu::DeviceType::Cpu => Duration::ZERO,
        _ => SPIN_LIMIT,
    }
}

// ANCHOR: wait_for_callback
/// Polls `context`'s device until `receiver` holds the value a callback (a buffer's
/// `map_async`, say) sent: checking in a loop for up to [`spin_limit`], then blocking
/// until the submitted work is done. `what` names the wait in an error.
pub fn wait_for_callback<T>(
    context: &GpuContext,
    receiver: &Receiver<T>,
    what: &'static str,
) -> Result<T, GpuError> {
    let failed = |reason: String| GpuError::Wait { what, reason };
    let start = Instant::now();
    let limit = spin_limit(context);
    while start.elapsed() < limit {
        context
            .device()
            .poll(wgpu::PollType::Poll)
            .map_err(|error| failed(error.to_string()))?;
        match receiver.try_recv() {
            Ok(value) => return Ok(value),
            Err(TryRecvError::Empty) => std::hint::spin_loop(),
            Err(TryRecvError::Disconnected) => {
                return Err(failed("the callback was dropped without an answer".into()));
            }
        }
    }
    context
        .device()
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|error| failed(error.to_string()))?;
    receiver
        .recv()
        .map_err(|_| failed("the callback was dropped without an answer".into()))
}
// ANCHOR_END: wait_for_callback

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::{GpuTensor, Readback};
    use crate::tensor::Tensor2d;

    #[test]
    fn a_readback_through_the_wait_gives_the_uploaded_values() {
        let context = GpuContext::new().expect("a GPU adapter (lavapipe in CI)");
        let values = Tensor2d::random(3, 5, -1.0..=1.0, 7);
        let tensor = GpuTensor::upload(&context, &values, Readback::Needed).unwrap();
        let mut encoder = context.create_encoder("copy out");
        tensor.record_copy_to_staging(&mut encoder).unwrap();
        context.submit(encoder);
        let mut read = vec![f32::NAN; 15];
        tensor.read_staging_into(&context, &mut read).unwrap();
        assert_eq!(read, values.as_slice());
    }

    #[test]
    fn a_software_rasteriser_never_spins() {
        let context = GpuContext::new().expect("a GPU adapter (lavapipe in CI)");
        let limit = spin_limit(&context);
        assert_eq!(context.device_type(), context.adapter_info().device_type);
        if context.device_type() == wgpu::DeviceType::Cpu {
            assert_eq!(limit, Duration::ZERO);
        } else {
            assert_eq!(limit, SPIN_LIMIT);
        }
    }

    #[test]
    fn a_callback_dropped_without_an_answer_is_an_error_not_a_hang() {
        let context = GpuContext::new().expect("a GPU adapter (lavapipe in CI)");
        let (sender, receiver) = std::sync::mpsc::channel::<()>();
        drop(sender);
        let error = wait_for_callback(&context, &receiver, "a test").unwrap_err();
        assert!(error.to_string().contains("dropped"), "{error}");
    }
}
