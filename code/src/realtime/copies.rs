//! Copies nobody needed: what a `memcpy` costs, and a frame loop that copies the current
//! frame into the "previous frame" buffer every frame, against one that swaps the two
//! buffers.
//!
//! Module 0 measured a needless `clone` per row (`rust_basics::clones`); this file adds the
//! copy that real-time loops make most often, keeping the last frame for comparison, and
//! the bandwidth that bounds every copy.

// ANCHOR: copy_frame
/// Copies `source` into `destination` (equally long): `copy_from_slice` is a call to
/// `memcpy`, which moves up to 64 bytes per instruction, as fast as the memory the two
/// buffers live in allows.
pub fn copy_frame(source: &[f32], destination: &mut [f32]) {
    destination.copy_from_slice(source);
}
// ANCHOR_END: copy_frame

/// Fills `frame` with the samples a camera or microphone would deliver as frame number
/// `frame_index`: a cheap deterministic pattern (a few vector instructions per 16 samples,
/// about as fast as a real capture that copies from the device's buffer) that differs from
/// frame to frame.
pub fn capture(frame_index: usize, frame: &mut [f32]) {
    for (position, sample) in frame.iter_mut().enumerate() {
        *sample = ((frame_index * 3 + position) & 15) as f32;
    }
}

/// How much changed between two frames: the sum of absolute differences, in 16 running
/// sums so that it is vectorised and the copy is not hidden behind a slow sum.
fn motion(previous: &[f32], current: &[f32]) -> f32 {
    let mut sums = [0.0f32; 16];
    let previous_chunks = previous.chunks_exact(16);
    let current_chunks = current.chunks_exact(16);
    let tail: f32 = previous_chunks
        .remainder()
        .iter()
        .zip(current_chunks.remainder())
        .map(|(before, now)| (now - before).abs())
        .sum();
    for (before, now) in previous_chunks.zip(current_chunks) {
        for lane in 0..16 {
            sums[lane] += (now[lane] - before[lane]).abs();
        }
    }
    sums.iter().sum::<f32>() + tail
}

// ANCHOR: copying
/// The motion between consecutive frames of a stream of `frame_count` frames, keeping the
/// previous frame by copying the current one into it after every comparison.
pub fn motion_copying(frame_count: usize, frame_length: usize) -> Vec<f32> {
    let mut previous = vec![0.0f32; frame_length];
    let mut current = vec![0.0f32; frame_length];
    let mut motions = Vec::with_capacity(frame_count);
    for frame_index in 0..frame_count {
        capture(frame_index, &mut current);
        motions.push(motion(&previous, &current));
        previous.copy_from_slice(&current);
    }
    motions
}
// ANCHOR_END: copying

// ANCHOR: swapping
/// The same, swapping the two buffers instead: `std::mem::swap` exchanges the two `Vec`s'
/// pointers, lengths and capacities (48 bytes), whatever the frame's size. The next capture
/// overwrites the old previous frame, which nobody needs any more.
pub fn motion_swapping(frame_count: usize, frame_length: usize) -> Vec<f32> {
    let mut previous = vec![0.0f32; frame_length];
    let mut current = vec![0.0f32; frame_length];
    let mut motions = Vec::with_capacity(frame_count);
    for frame_index in 0..frame_count {
        capture(frame_index, &mut current);
        motions.push(motion(&previous, &current));
        std::mem::swap(&mut previous, &mut current);
    }
    motions
}
// ANCHOR_END: swapping

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copying_and_swapping_measure_the_same_motion() {
        for (frames, length) in [(1, 1), (5, 3), (40, 100), (3, 4096)] {
            let copying = motion_copying(frames, length);
            let swapping = motion_swapping(frames, length);
            assert_eq!(copying.len(), frames);
            let copying: Vec<u32> = copying.iter().map(|value| value.to_bits()).collect();
            let swapping: Vec<u32> = swapping.iter().map(|value| value.to_bits()).collect();
            assert_eq!(copying, swapping, "{frames} frames of {length}");
        }
    }

    #[test]
    fn motion_is_measured_against_the_frame_before() {
        // Frame 0 against zeros: the sum of the pattern 0..16; frame 1 against frame 0: the
        // pattern moved by 3 places.
        let motions = motion_swapping(2, 16);
        assert_eq!(motions[0], (0..16).sum::<usize>() as f32);
        let mut first = vec![0.0; 16];
        let mut second = vec![0.0; 16];
        capture(0, &mut first);
        capture(1, &mut second);
        let expected: f32 = first.iter().zip(&second).map(|(a, b)| (a - b).abs()).sum();
        assert_eq!(motions[1], expected);
        assert!(motions[1] > 0.0);
    }

    #[test]
    fn copy_frame_copies_every_sample() {
        let source: Vec<f32> = (0..1000).map(|value| value as f32).collect();
        let mut destination = vec![f32::NAN; 1000];
        copy_frame(&source, &mut destination);
        assert_eq!(source, destination);
    }
}
