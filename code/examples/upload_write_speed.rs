//! How fast the host writes an input into a mapped upload buffer, by the way it writes.
//!
//! ```sh
//! cargo run --release -p galaxy --example upload_write_speed
//! ```
//!
//! A `MAP_WRITE` buffer is where a runner writes each run's input before the GPU copies
//! it into a storage buffer. On a discrete GPU, wgpu asks for memory that is host-visible
//! *and* device-local when the device has it: the GPU's own memory, seen by the CPU
//! through the PCI Express bus, where every store crosses the bus. How fast the host can
//! write there depends on how it writes, so this times each way on buffers of 64 KiB to
//! 4 MiB: the median of 21 writes per way and size, each into a freshly re-mapped buffer
//! that the GPU then copied from, as a runner does. It prints `way,bytes,median µs,GB/s`.

use std::time::Instant;

use galaxy::Tensor2d;
use galaxy::gpu::{GpuContext, GpuTensor, Readback};

const REPEATS: usize = 21;

fn main() {
    let context = GpuContext::shared().unwrap_or_else(|error| {
        eprintln!("upload_write_speed: {error}");
        std::process::exit(1);
    });
    println!("# {}", context.describe());
    check_every_way();
    println!("way,bytes,median microseconds,GB/s");
    for kibibytes in [64, 256, 1024, 4096] {
        let floats = kibibytes * 1024 / 4;
        let source = Tensor2d::random(floats / 256, 256, -1.0..=1.0, 1);
        let target = GpuTensor::uninitialized(context, floats / 256, 256, Readback::Never)
            .unwrap_or_else(|error| panic!("{error}"));
        for (name, write) in ways() {
            let microseconds = time_writes(context, &source, &target, write);
            let bytes = floats * 4;
            println!(
                "{name},{bytes},{microseconds:.2},{:.2}",
                bytes as f64 / microseconds / 1e3
            );
        }
    }
}

type Write = fn(&mut [f32], &[f32]);

fn ways() -> Vec<(&'static str, Write)> {
    let mut ways: Vec<(&'static str, Write)> = vec![("copy_from_slice", copy_plain)];
    #[cfg(target_arch = "x86_64")]
    {
        if is_x86_feature_detected!("avx") {
            ways.push(("avx streaming stores", copy_streaming_avx_checked));
        }
        if is_x86_feature_detected!("avx512f") {
            ways.push(("avx-512 streaming stores", copy_streaming_avx512_checked));
            ways.push(("avx-512 ordinary stores", copy_avx512_checked));
            ways.push((
                "avx-512 streaming stores, two threads",
                copy_streaming_two_threads,
            ));
        }
    }
    ways
}

/// Each way copies every float, whatever the destination's alignment and the length
/// (checked in ordinary memory before anything is timed).
fn check_every_way() {
    let source: Vec<f32> = (0..300).map(|value| value as f32).collect();
    for (name, write) in ways() {
        for offset in 0..17 {
            for length in [0, 1, 15, 16, 17, 63, 64, 65, 283] {
                let mut destination = vec![f32::NAN; offset + length];
                write(&mut destination[offset..], &source[..length]);
                assert_eq!(
                    &destination[offset..],
                    &source[..length],
                    "{name}: {length} floats at offset {offset}"
                );
            }
        }
    }
}

fn copy_plain(destination: &mut [f32], source: &[f32]) {
    destination.copy_from_slice(source);
}

/// Copies `source` into `destination`: float by float up to the destination's first
/// `ALIGN`-byte boundary, then `LANES` floats at a time with `store_vector`, then the rest
/// float by float. The ways below differ only in `store_vector`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn copy_in_vectors<const LANES: usize, const ALIGN: usize>(
    destination: &mut [f32],
    source: &[f32],
    store_vector: impl Fn(&mut [f32], &[f32]),
) {
    let head = destination
        .as_ptr()
        .align_offset(ALIGN)
        .min(destination.len());
    destination[..head].copy_from_slice(&source[..head]);
    let (destination, source) = (&mut destination[head..], &source[head..]);
    let mut destination_vectors = destination.chunks_exact_mut(LANES);
    let mut source_vectors = source.chunks_exact(LANES);
    for (to, from) in (&mut destination_vectors).zip(&mut source_vectors) {
        store_vector(to, from);
    }
    destination_vectors
        .into_remainder()
        .copy_from_slice(source_vectors.remainder());
}

#[cfg(target_arch = "x86_64")]
fn copy_streaming_avx_checked(destination: &mut [f32], source: &[f32]) {
    // SAFETY: only listed in `ways` after AVX was detected.
    unsafe { copy_streaming_avx(destination, source) }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
fn copy_streaming_avx(destination: &mut [f32], source: &[f32]) {
    use std::arch::x86_64::{_mm_sfence, _mm256_loadu_ps, _mm256_stream_ps};
    copy_in_vectors::<8, 32>(destination, source, |to, from| {
        // SAFETY: both chunks hold 8 floats, and `to` is 32-byte aligned (the chunks start
        // at the first 32-byte boundary and are 32 bytes long).
        unsafe { _mm256_stream_ps(to.as_mut_ptr(), _mm256_loadu_ps(from.as_ptr())) }
    });
    _mm_sfence();
}

#[cfg(target_arch = "x86_64")]
fn copy_streaming_avx512_checked(destination: &mut [f32], source: &[f32]) {
    // SAFETY: only listed in `ways` after AVX-512 was detected.
    unsafe { copy_streaming_avx512(destination, source) }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn copy_streaming_avx512(destination: &mut [f32], source: &[f32]) {
    use std::arch::x86_64::{_mm_sfence, _mm512_loadu_ps, _mm512_stream_ps};
    copy_in_vectors::<16, 64>(destination, source, |to, from| {
        // SAFETY: as above, with 16 floats and 64-byte alignment.
        unsafe { _mm512_stream_ps(to.as_mut_ptr(), _mm512_loadu_ps(from.as_ptr())) }
    });
    _mm_sfence();
}

#[cfg(target_arch = "x86_64")]
fn copy_avx512_checked(destination: &mut [f32], source: &[f32]) {
    // SAFETY: only listed in `ways` after AVX-512 was detected.
    unsafe { copy_avx512(destination, source) }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn copy_avx512(destination: &mut [f32], source: &[f32]) {
    use std::arch::x86_64::{_mm512_loadu_ps, _mm512_storeu_ps};
    // Ordinary stores need no alignment beyond a float's.
    copy_in_vectors::<16, 4>(destination, source, |to, from| {
        // SAFETY: both chunks hold 16 floats.
        unsafe { _mm512_storeu_ps(to.as_mut_ptr(), _mm512_loadu_ps(from.as_ptr())) }
    });
}

#[cfg(target_arch = "x86_64")]
fn copy_streaming_two_threads(destination: &mut [f32], source: &[f32]) {
    let half = (destination.len() / 2)
        .next_multiple_of(16)
        .min(destination.len());
    let (first, second) = destination.split_at_mut(half);
    rayon::join(
        || copy_streaming_avx512_checked(first, &source[..half]),
        || copy_streaming_avx512_checked(second, &source[half..]),
    );
}

/// Median microseconds of `write` into the mapped buffer, each write followed by the
/// GPU's copy out of the buffer and a fresh mapping, as in a run.
fn time_writes(context: &GpuContext, source: &Tensor2d, target: &GpuTensor, write: Write) -> f64 {
    let device = context.device();
    let buffer = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("upload speed"),
        size: target.size_in_bytes(),
        usage: wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: true,
    });
    let mut times = Vec::with_capacity(REPEATS);
    for repeat in 0..=REPEATS {
        let start = Instant::now();
        {
            let mut mapped = buffer
                .get_mapped_range_mut(..)
                .unwrap_or_else(|error| panic!("the mapped upload buffer: {error}"));
            let mut view = mapped.slice(..);
            let bytes = view.len();
            let pointer = view.as_raw_element_ptr().as_ptr().cast::<f32>();
            // SAFETY: the mapped range is `bytes` long, writable, aligned for f32 (mapped
            // ranges start at multiples of 8 bytes), and nothing else refers to it while
            // `view` lives. It is only written, never read.
            let destination = unsafe { std::slice::from_raw_parts_mut(pointer, bytes / 4) };
            write(destination, source.as_slice());
        }
        let elapsed = start.elapsed().as_secs_f64() * 1e6;
        if repeat > 0 {
            times.push(elapsed);
        }
        buffer.unmap();
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
        encoder.copy_buffer_to_buffer(&buffer, 0, target.buffer(), 0, buffer.size());
        context.queue().submit([encoder.finish()]);
        buffer.map_async(wgpu::MapMode::Write, .., |result| {
            result.unwrap_or_else(|error| panic!("mapping the upload buffer: {error}"))
        });
        device
            .poll(wgpu::PollType::wait_indefinitely())
            .unwrap_or_else(|error| panic!("{error}"));
    }
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}
