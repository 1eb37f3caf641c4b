//! System calls in a hot loop: asking the operating system something every frame, against
//! asking it once (or once every many frames).
//!
//! A system call leaves the program, enters the kernel, and comes back: a few hundred
//! nanoseconds to microseconds even when the kernel has nothing to do. Three pairs, each
//! returning identical results: polling for a stop file (`std::fs::metadata`), writing each
//! frame's result with its own `write`, and reading the clock (`Instant::now`), which on
//! Linux is *not* a system call at all: the kernel maps the clock into the process (the
//! vDSO) and the read stays in user space.

use std::fs::File;
use std::io::{self, Write};
use std::path::Path;
use std::time::{Duration, Instant};

/// What a frame loop that may be told to stop did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrameSummary {
    /// Frames processed before the loop stopped or the input ended.
    pub frames_processed: usize,
    /// The sum of every processed sample.
    pub total: f32,
}

// ANCHOR: polling_every_frame
/// Processes `frames` (consecutive frames of `frame_length` samples) until a file at
/// `stop_file` exists, asking the file system before every frame: one `statx` system call
/// per frame.
pub fn process_until_stop_file_checking_every_frame(
    frames: &[f32],
    frame_length: usize,
    stop_file: &Path,
) -> FrameSummary {
    let mut summary = FrameSummary {
        frames_processed: 0,
        total: 0.0,
    };
    for frame in frames.chunks_exact(frame_length.max(1)) {
        if std::fs::metadata(stop_file).is_ok() {
            break;
        }
        summary.total += frame.iter().sum::<f32>();
        summary.frames_processed += 1;
    }
    summary
}
// ANCHOR_END: polling_every_frame

// ANCHOR: polling_every_few_frames
/// The same loop asking only before every `frames_between_checks`-th frame. The answer is
/// the same while the file does not change; when it appears, the loop notices up to
/// `frames_between_checks - 1` frames later. That delay is the price, and a real-time
/// program chooses it: at 1000 frames a second, checking every 100 frames reacts within
/// 0.1 s.
pub fn process_until_stop_file_checking_every(
    frames: &[f32],
    frame_length: usize,
    stop_file: &Path,
    frames_between_checks: usize,
) -> FrameSummary {
    let mut summary = FrameSummary {
        frames_processed: 0,
        total: 0.0,
    };
    for (index, frame) in frames.chunks_exact(frame_length.max(1)).enumerate() {
        if index % frames_between_checks.max(1) == 0 && std::fs::metadata(stop_file).is_ok() {
            break;
        }
        summary.total += frame.iter().sum::<f32>();
        summary.frames_processed += 1;
    }
    summary
}
// ANCHOR_END: polling_every_few_frames

// ANCHOR: write_every_frame
/// Writes the sum of each frame to `file` as four little-endian bytes, with one `write`
/// system call per frame: a `File` has no buffer of its own.
pub fn write_sums_every_frame(
    file: &mut File,
    frames: &[f32],
    frame_length: usize,
) -> io::Result<()> {
    for frame in frames.chunks_exact(frame_length.max(1)) {
        let sum: f32 = frame.iter().sum();
        file.write_all(&sum.to_le_bytes())?;
    }
    Ok(())
}
// ANCHOR_END: write_every_frame

// ANCHOR: write_once
/// The same bytes, gathered in memory and written with one system call at the end (a
/// real-time program would write once per batch, or hand the bytes to another thread).
pub fn write_sums_once(file: &mut File, frames: &[f32], frame_length: usize) -> io::Result<()> {
    let frame_length = frame_length.max(1);
    let mut bytes = Vec::with_capacity(frames.len() / frame_length * size_of::<f32>());
    for frame in frames.chunks_exact(frame_length) {
        let sum: f32 = frame.iter().sum();
        bytes.extend_from_slice(&sum.to_le_bytes());
    }
    file.write_all(&bytes)
}
// ANCHOR_END: write_once

// ANCHOR: clock_every_frame
/// The sum of every frame, and the longest time one frame took: `Instant::now` before and
/// after each frame. On Linux the clock is read in user space through the vDSO, with no
/// system call, so timing every frame costs tens of nanoseconds, not microseconds.
pub fn sums_timing_every_frame(frames: &[f32], frame_length: usize) -> (f32, Duration) {
    let mut total = 0.0;
    let mut longest = Duration::ZERO;
    for frame in frames.chunks_exact(frame_length.max(1)) {
        let start = Instant::now();
        total += frame.iter().sum::<f32>();
        longest = longest.max(start.elapsed());
    }
    (total, longest)
}
// ANCHOR_END: clock_every_frame

/// The sum of every frame without any clock: the baseline for [`sums_timing_every_frame`].
pub fn sums_untimed(frames: &[f32], frame_length: usize) -> f32 {
    let mut total = 0.0;
    for frame in frames.chunks_exact(frame_length.max(1)) {
        total += frame.iter().sum::<f32>();
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// A path in the temporary directory that no other test uses.
    fn scratch_path(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!("galaxy-system-calls-{}-{name}", std::process::id()))
    }

    fn frames(count: usize, frame_length: usize) -> Vec<f32> {
        (0..count * frame_length)
            .map(|index| (index % 7) as f32 - 3.0)
            .collect()
    }

    #[test]
    fn without_a_stop_file_both_loops_process_every_frame_alike() {
        let missing = scratch_path("never-created");
        let frames = frames(100, 16);
        let every = process_until_stop_file_checking_every_frame(&frames, 16, &missing);
        assert_eq!(every.frames_processed, 100);
        for between in [1, 7, 64, 1000] {
            let fewer = process_until_stop_file_checking_every(&frames, 16, &missing, between);
            assert_eq!(fewer, every, "checking every {between} frames");
        }
    }

    #[test]
    fn with_a_stop_file_both_loops_stop_at_the_first_check() {
        let stop = scratch_path("stop");
        File::create(&stop).unwrap();
        let frames = frames(10, 4);
        let every = process_until_stop_file_checking_every_frame(&frames, 4, &stop);
        let fewer = process_until_stop_file_checking_every(&frames, 4, &stop, 5);
        std::fs::remove_file(&stop).unwrap();
        assert_eq!(every.frames_processed, 0);
        assert_eq!(fewer, every);
    }

    #[test]
    fn one_write_per_frame_and_one_write_in_all_give_the_same_file() {
        let frames = frames(33, 5);
        let mut contents = Vec::new();
        for (name, batched) in [("every-frame", false), ("once", true)] {
            let path = scratch_path(name);
            let mut file = File::create(&path).unwrap();
            if batched {
                write_sums_once(&mut file, &frames, 5).unwrap();
            } else {
                write_sums_every_frame(&mut file, &frames, 5).unwrap();
            }
            drop(file);
            contents.push(std::fs::read(&path).unwrap());
            std::fs::remove_file(&path).unwrap();
        }
        assert_eq!(contents[0].len(), 33 * 4);
        assert_eq!(contents[0], contents[1]);
        let first = f32::from_le_bytes(contents[0][..4].try_into().unwrap());
        assert_eq!(first, frames[..5].iter().sum::<f32>());
    }

    #[test]
    fn timing_every_frame_does_not_change_the_sum() {
        let frames = frames(50, 64);
        let (timed, longest) = sums_timing_every_frame(&frames, 64);
        assert_eq!(timed.to_bits(), sums_untimed(&frames, 64).to_bits());
        assert!(
            longest < Duration::from_secs(1),
            "a 64-sample frame took {longest:?}"
        );
    }
}
