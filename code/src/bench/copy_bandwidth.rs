//! Device-to-device copy bandwidth: how many bytes per second the GPU moves from one of
//! its buffers to another, by buffer size.
//!
//! This is the `B` of a roofline: the rate at which a kernel that only streams memory can
//! run. It is measured here rather than taken from a data sheet, through the same API the
//! kernels use, in two ways:
//!
//! - [`CopyMethod::CopyBufferToBuffer`]: `CommandEncoder::copy_buffer_to_buffer`, the copy
//!   the API offers (the driver's own copy engine or kernel);
//! - [`CopyMethod::ComputeShader`]: `shaders/copy.wgsl`, one `vec4` per invocation, which
//!   is what our own kernels can reach.
//!
//! **Method.** Both buffers live in device memory. One measurement records `copies` copies
//! of the whole source into the whole destination back to back into one command buffer
//! and submits it once, so the fixed cost of a submission is paid once for many copies.
//! wgpu puts a barrier between consecutive copies (each writes the buffer the previous one
//! wrote), so every copy finishes before the next begins: at small sizes the number
//! includes that per-copy cost, at large sizes it vanishes. The time comes from GPU
//! timestamps written before the first copy and after the last where the device supports
//! `TIMESTAMP_QUERY_INSIDE_ENCODERS`, and from the wall clock around submit and wait
//! otherwise ([`TimingClock`]). **Bytes are counted as read plus written**: a copy of `n`
//! bytes moves `2n`, the convention of STREAM's copy kernel and of NVIDIA's bandwidth
//! tests. Every method is checked first: one copy, read back, compared word by word.
//!
//! The sweep over sizes ([`crate::bench::sweeps::copy_bandwidth`]) shows where the
//! buffers stop fitting the GPU's L2 cache: below that size repeated copies are served
//! from the cache, above it from device memory.

mod clock;
mod readback;

use std::time::Instant;

use thiserror::Error;

use crate::gpu::dispatch::WorkgroupGrid;
use crate::gpu::record::{BoundDispatch, uniform_buffer};
use crate::gpu::{GpuContext, GpuError, compile_wgsl};

pub use clock::TimingClock;
use clock::{Timestamps, wait_for};
use readback::read_words;

/// The shader, baked into the binary like the crate's kernels.
pub const COPY_SHADER: &str = include_str!("../../../shaders/copy.wgsl");

/// Bytes one invocation of copy.wgsl moves: one `vec4<u32>`.
const BYTES_PER_INVOCATION: u64 = 16;
/// Invocations per workgroup of copy.wgsl.
const WORKGROUP_SIZE: u32 = 256;
/// The check fills and reads buffers in pieces this large, so that a 1 GiB buffer does
/// not need another gigabyte of host memory at once.
const CHECK_CHUNK_BYTES: u64 = 64 << 20;

/// The buffer sizes of the sweep: 1 MiB to 1 GiB by factors of two.
pub const SIZES: [u64; 11] = [
    1 << 20,
    1 << 21,
    1 << 22,
    1 << 23,
    1 << 24,
    1 << 25,
    1 << 26,
    1 << 27,
    1 << 28,
    1 << 29,
    1 << 30,
];

/// How the bytes are copied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CopyMethod {
    /// `CommandEncoder::copy_buffer_to_buffer`.
    CopyBufferToBuffer,
    /// A compute pass running shaders/copy.wgsl.
    ComputeShader,
}

impl CopyMethod {
    pub const ALL: [CopyMethod; 2] = [CopyMethod::CopyBufferToBuffer, CopyMethod::ComputeShader];

    /// The name of the method's series in the figure.
    pub fn name(self) -> &'static str {
        match self {
            CopyMethod::CopyBufferToBuffer => "copy_buffer_to_buffer",
            CopyMethod::ComputeShader => "compute-shader copy (copy.wgsl)",
        }
    }

    /// The largest buffer the method can copy on this device: a buffer, and for the
    /// shader also a storage binding, has a size limit.
    pub fn largest_buffer(self, context: &GpuContext) -> u64 {
        let limits = context.limits();
        match self {
            CopyMethod::CopyBufferToBuffer => limits.max_buffer_size,
            CopyMethod::ComputeShader => limits
                .max_buffer_size
                .min(limits.max_storage_buffer_binding_size),
        }
    }
}

/// Why the copy bandwidth could not be measured.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum CopyError {
    #[error(transparent)]
    Gpu(#[from] GpuError),
    #[error(
        "a copy of {bytes} bytes is not possible with {method}: the sizes must be a positive \
         multiple of 16 bytes and at most {largest} bytes on this device"
    )]
    Size {
        method: &'static str,
        bytes: u64,
        largest: u64,
    },
    #[error(
        "{method} copied word {word} of {bytes} bytes as {found:#010x}, not {expected:#010x}: \
         the copy did not do the work it is timed for"
    )]
    WrongCopy {
        method: &'static str,
        bytes: u64,
        word: u64,
        found: u32,
        expected: u32,
    },
    #[error("there is nothing to time: ask for at least one copy")]
    NoCopies,
}

/// Two device buffers, and everything needed to copy one into the other many times and
/// time it.
pub struct CopyBenchmark<'context> {
    context: &'context GpuContext,
    method: CopyMethod,
    bytes: u64,
    source: wgpu::Buffer,
    destination: wgpu::Buffer,
    /// The compute shader's dispatch, bound to the two buffers.
    dispatch: Option<BoundDispatch>,
    clock: TimingClock,
    timestamps: Option<Timestamps>,
}

impl<'context> CopyBenchmark<'context> {
    /// Allocates source and destination of `bytes` each, fills the source with a pattern
    /// (word `i` holds `i`) and prepares the method.
    pub fn prepare(
        context: &'context GpuContext,
        method: CopyMethod,
        bytes: u64,
    ) -> Result<CopyBenchmark<'context>, CopyError> {
        let largest = method.largest_buffer(context);
        if bytes == 0 || !bytes.is_multiple_of(BYTES_PER_INVOCATION) || bytes > largest {
            return Err(CopyError::Size {
                method: method.name(),
                bytes,
                largest,
            });
        }
        let buffer = |label| {
            context.device().create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: bytes,
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_SRC
                    | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        };
        let (source, destination) = (buffer("copy source"), buffer("copy destination"));
        for (offset, length) in chunks(bytes) {
            let first_word = offset / 4;
            let words: Vec<u32> = (0..length / 4)
                .map(|word| pattern(first_word + word))
                .collect();
            context
                .queue()
                .write_buffer(&source, offset, bytemuck::cast_slice(&words));
        }
        let dispatch = match method {
            CopyMethod::CopyBufferToBuffer => None,
            CopyMethod::ComputeShader => {
                Some(bind_copy_shader(context, &source, &destination, bytes)?)
            }
        };
        let clock = TimingClock::for_device(context);
        let timestamps = (clock == TimingClock::GpuTimestamps).then(|| Timestamps::new(context));
        Ok(CopyBenchmark {
            context,
            method,
            bytes,
            source,
            destination,
            dispatch,
            clock,
            timestamps,
        })
    }

    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    pub fn clock(&self) -> TimingClock {
        self.clock
    }

    /// Poisons the destination, copies once and compares every word with the source's
    /// pattern.
    pub fn check(&self) -> Result<(), CopyError> {
        let context = self.context;
        // All ones: the pattern holds it only at word 1 614 843 274 (6.4 GB in), beyond
        // any buffer measured here.
        let poison = vec![u32::MAX; (CHECK_CHUNK_BYTES.min(self.bytes) / 4) as usize];
        for (offset, length) in chunks(self.bytes) {
            let words = &poison[..(length / 4) as usize];
            context
                .queue()
                .write_buffer(&self.destination, offset, bytemuck::cast_slice(words));
        }
        let mut encoder = self.encoder();
        self.record_copies(&mut encoder, 1);
        context.queue().submit([encoder.finish()]);
        for (offset, length) in chunks(self.bytes) {
            let words = read_words(context, &self.destination, offset, length)?;
            let first_word = offset / 4;
            if let Some((index, &found)) = words
                .iter()
                .enumerate()
                .find(|&(index, &word)| word != pattern(first_word + index as u64))
            {
                let word = first_word + index as u64;
                return Err(CopyError::WrongCopy {
                    method: self.method.name(),
                    bytes: self.bytes,
                    word,
                    found,
                    expected: pattern(word),
                });
            }
        }
        Ok(())
    }

    // ANCHOR: time_copies
    /// Records `copies` copies into one command buffer, submits it, waits, and returns the
    /// seconds they took by [`CopyBenchmark::clock`].
    pub fn time(&self, copies: usize) -> Result<f64, CopyError> {
        if copies == 0 {
            return Err(CopyError::NoCopies);
        }
        let mut encoder = self.encoder();
        if let Some(timestamps) = &self.timestamps {
            encoder.write_timestamp(&timestamps.queries, 0);
        }
        self.record_copies(&mut encoder, copies);
        if let Some(timestamps) = &self.timestamps {
            encoder.write_timestamp(&timestamps.queries, 1);
            timestamps.record_resolve(&mut encoder);
        }
        let start = Instant::now();
        let submission = self.context.queue().submit([encoder.finish()]);
        wait_for(self.context, submission)?;
        let wall_seconds = start.elapsed().as_secs_f64();
        match &self.timestamps {
            Some(timestamps) => timestamps.read_seconds(self.context),
            None => Ok(wall_seconds),
        }
    }
    // ANCHOR_END: time_copies

    fn record_copies(&self, encoder: &mut wgpu::CommandEncoder, copies: usize) {
        match &self.dispatch {
            None => {
                for _ in 0..copies {
                    encoder.copy_buffer_to_buffer(
                        &self.source,
                        0,
                        &self.destination,
                        0,
                        self.bytes,
                    );
                }
            }
            Some(dispatch) => {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("copy.wgsl"),
                    timestamp_writes: None,
                });
                for _ in 0..copies {
                    dispatch.record_in(&mut pass);
                }
            }
        }
    }

    fn encoder(&self) -> wgpu::CommandEncoder {
        self.context
            .device()
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("copy bandwidth"),
            })
    }
}

/// Bytes a copy of `bytes` moves through memory: read once and written once.
pub fn bytes_moved(bytes: u64) -> u64 {
    2 * bytes
}

/// The bandwidth of one copy of `bytes` that took `seconds`, in GB/s (10⁹ bytes per
/// second), counting read and written bytes.
pub fn gigabytes_per_second(bytes: u64, seconds: f64) -> f64 {
    bytes_moved(bytes) as f64 / seconds / 1e9
}

/// Word `index` of the source: its own index, mixed so that a copy shifted by a few words
/// or a few kilobytes cannot match by chance.
fn pattern(index: u64) -> u32 {
    (index as u32).wrapping_mul(2_654_435_761) ^ 0x5bd1_e995
}

/// `(offset, length)` pieces of at most [`CHECK_CHUNK_BYTES`] covering `bytes`.
fn chunks(bytes: u64) -> impl Iterator<Item = (u64, u64)> {
    (0..bytes)
        .step_by(CHECK_CHUNK_BYTES as usize)
        .map(move |offset| (offset, CHECK_CHUNK_BYTES.min(bytes - offset)))
}

/// Binds copy.wgsl to the two buffers with a grid that covers every `vec4`.
fn bind_copy_shader(
    context: &GpuContext,
    source: &wgpu::Buffer,
    destination: &wgpu::Buffer,
    bytes: u64,
) -> Result<BoundDispatch, GpuError> {
    let pipeline = compile_wgsl(context, "copy", COPY_SHADER, "main", &[])?;
    let vec4_count = bytes / BYTES_PER_INVOCATION;
    let limit = context.limits().max_compute_workgroups_per_dimension;
    let workgroups = vec4_count.div_ceil(u64::from(WORKGROUP_SIZE));
    let grid = WorkgroupGrid::covering(workgroups, limit, "copy.wgsl")?;
    let settings = uniform_buffer(
        context,
        &CopySettings {
            vec4_count: vec4_count as u32,
            invocations_per_row: grid.x * WORKGROUP_SIZE,
        },
    );
    Ok(BoundDispatch::new(
        context,
        &pipeline,
        &[source, destination, &settings],
        grid,
    ))
}

/// The `Settings` uniform of copy.wgsl.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct CopySettings {
    vec4_count: u32,
    invocations_per_row: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn context() -> &'static GpuContext {
        GpuContext::shared().unwrap_or_else(|error| panic!("GPU tests need an adapter: {error}"))
    }

    #[test]
    fn both_methods_copy_every_word_and_give_a_finite_bandwidth() {
        for method in CopyMethod::ALL {
            // Not a power of two, and more than one workgroup's worth.
            let benchmark = CopyBenchmark::prepare(context(), method, 48 * 1024).unwrap();
            benchmark.check().unwrap();
            let seconds = benchmark.time(3).unwrap();
            let bandwidth = gigabytes_per_second(benchmark.bytes(), seconds / 3.0);
            assert!(
                bandwidth.is_finite() && bandwidth > 0.0,
                "{method:?}: {bandwidth} GB/s"
            );
        }
    }

    #[test]
    fn a_copy_that_went_wrong_is_caught() {
        let benchmark =
            CopyBenchmark::prepare(context(), CopyMethod::CopyBufferToBuffer, 4096).unwrap();
        benchmark.check().unwrap();
        // Overwrite one word of the source after the pattern went in: the copy now
        // carries a wrong word, and the check must name it.
        context()
            .queue()
            .write_buffer(&benchmark.source, 40, bytemuck::cast_slice(&[7u32]));
        let error = benchmark.check().unwrap_err();
        assert!(
            matches!(
                error,
                CopyError::WrongCopy {
                    word: 10,
                    found: 7,
                    ..
                }
            ),
            "{error}"
        );
    }

    #[test]
    fn impossible_sizes_and_no_copies_are_typed_errors() {
        let context = context();
        for bytes in [0, 20, u64::MAX - 15] {
            let error = CopyBenchmark::prepare(context, CopyMethod::ComputeShader, bytes).err();
            assert!(
                matches!(error, Some(CopyError::Size { .. })),
                "{bytes}: {error:?}"
            );
        }
        let benchmark = CopyBenchmark::prepare(context, CopyMethod::ComputeShader, 1024).unwrap();
        assert_eq!(benchmark.time(0), Err(CopyError::NoCopies));
    }

    #[test]
    fn read_and_written_bytes_are_counted() {
        assert_eq!(bytes_moved(1 << 20), 2 << 20);
        // 1 GB read and 1 GB written in one second: 2 GB/s.
        assert_eq!(gigabytes_per_second(1_000_000_000, 1.0), 2.0);
        let pieces: Vec<(u64, u64)> = chunks(CHECK_CHUNK_BYTES + 16).collect();
        assert_eq!(pieces, [(0, CHECK_CHUNK_BYTES), (CHECK_CHUNK_BYTES, 16)]);
    }
}
