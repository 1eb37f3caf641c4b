//! Handing a tensor from one device to another through host memory, and what it costs.
//!
//! WebGPU gives every device its own memory and no way to copy between two devices, so a
//! multi-device runner moves activations the long way: the first device copies them into
//! a buffer the host can map, the host reads them, and the queue of the second device
//! uploads them. (CUDA programs skip the host: NCCL and `cudaMemcpyPeer` copy over NVLink
//! or PCIe directly.) Both halves cross the bus between host and GPU, so a hand-over of
//! `n` bytes costs at least `2n` divided by that bus's bandwidth, plus two waits.

use std::time::{Duration, Instant};

use crate::bench::sweeps::timing;
use crate::gpu::{GpuContext, GpuError, GpuTensor, Readback};
use crate::tensor::Tensor2d;

// ANCHOR: hand_over
/// Copies `from_tensor` (on `from`, created readable) into `to_tensor` (on `to`, the same
/// shape) through host memory, and waits until the second device holds it.
pub fn hand_over(
    from: &GpuContext,
    from_tensor: &GpuTensor,
    to: &GpuContext,
    to_tensor: &GpuTensor,
) -> Result<(), GpuError> {
    let on_the_host = from_tensor.download(from)?;
    upload_and_wait(to, to_tensor, &on_the_host)
}
// ANCHOR_END: hand_over

/// Writes `tensor` into `target` and waits until the device's queue has done it.
fn upload_and_wait(
    context: &GpuContext,
    target: &GpuTensor,
    tensor: &Tensor2d,
) -> Result<(), GpuError> {
    target.write(context, tensor)?;
    // `write_buffer` only queues the copy; an (empty) submission makes the queue do it,
    // and waiting for that submission waits for the copy.
    context.submit(context.create_encoder("hand-over upload"));
    context
        .device()
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|error| GpuError::Wait {
            what: "an upload",
            reason: error.to_string(),
        })?;
    Ok(())
}

/// The median time of each half of a hand-over, and of the whole.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HandOverTimes {
    pub bytes: u64,
    /// From the first device into host memory (copy to staging, map, copy out).
    pub read_back: Duration,
    /// From host memory onto the second device.
    pub upload: Duration,
    /// Both, measured together.
    pub total: Duration,
}

// ANCHOR: measure
/// Hands a random `rows × columns` tensor from `from` to `to` `repeats` times (after one
/// untimed hand-over), checks that it arrived intact, and returns the medians.
pub fn measure_hand_over(
    from: &GpuContext,
    to: &GpuContext,
    rows: usize,
    columns: usize,
    repeats: usize,
) -> Result<HandOverTimes, GpuError> {
    let tensor = Tensor2d::random(rows, columns, -1.0..=1.0, 2026);
    let source = GpuTensor::upload(from, &tensor, Readback::Needed)?;
    let target = GpuTensor::uninitialized(to, rows, columns, Readback::Needed)?;
    target.fill(to, f32::NAN);
    hand_over(from, &source, to, &target)?;
    if target.download(to)? != tensor {
        return Err(GpuError::Readback {
            reason: "the tensor handed over differs from the one sent".to_string(),
        });
    }
    // Seconds of each repeat: reading back, uploading, both.
    let (mut read_back, mut upload, mut total) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..repeats.max(1) {
        let begun = Instant::now();
        let on_the_host = source.download(from)?;
        let read = begun.elapsed().as_secs_f64();
        upload_and_wait(to, &target, &on_the_host)?;
        let whole = begun.elapsed().as_secs_f64();
        read_back.push(read);
        upload.push(whole - read);
        total.push(whole);
    }
    let median = |mut seconds: Vec<f64>| Duration::from_secs_f64(timing::median(&mut seconds));
    Ok(HandOverTimes {
        bytes: tensor.size_in_bytes(),
        read_back: median(read_back),
        upload: median(upload),
        total: median(total),
    })
}
// ANCHOR_END: measure
