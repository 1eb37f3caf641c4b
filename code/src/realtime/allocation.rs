//! Allocation in a hot loop: a scratch buffer made fresh for every frame, against one buffer
//! made once and reused.
//!
//! Both compute the same thing, the largest value of a frame after a three-point moving
//! average, and return bit-identical results; the only difference is where the scratch
//! space for the smoothed frame comes from. Module 1 measured the same choice for a row
//! median (`memory::allocation`); here it is a per-frame cost in a loop that has a deadline.

// ANCHOR: allocating
/// The largest value of `frame` after a three-point moving average, computed in a scratch
/// vector that is allocated for this call and freed at its end: one `malloc` and one `free`
/// per frame. `None` for a frame of fewer than three samples (it has no smoothed value).
pub fn smoothed_peak_allocating(frame: &[f32]) -> Option<f32> {
    let mut smoothed = Vec::with_capacity(frame.len());
    smooth_into(frame, &mut smoothed);
    peak(&smoothed)
}
// ANCHOR_END: allocating

// ANCHOR: reusing
/// The same computation with its scratch vector kept between frames. `clear` sets the
/// length to zero and keeps the capacity, so after the first frame of the largest size no
/// call allocates again.
#[derive(Debug, Default)]
pub struct SmoothedPeak {
    scratch: Vec<f32>,
}

impl SmoothedPeak {
    /// A scratch buffer with room for frames of `frame_length` samples, allocated now,
    /// before the loop starts, instead of during its first frame.
    pub fn with_frame_length(frame_length: usize) -> SmoothedPeak {
        SmoothedPeak {
            scratch: Vec::with_capacity(frame_length),
        }
    }

    /// The largest smoothed value of `frame`, as [`smoothed_peak_allocating`] computes it.
    pub fn peak(&mut self, frame: &[f32]) -> Option<f32> {
        self.scratch.clear();
        smooth_into(frame, &mut self.scratch);
        peak(&self.scratch)
    }

    /// How many samples the scratch buffer holds without allocating.
    pub fn capacity(&self) -> usize {
        self.scratch.capacity()
    }
}
// ANCHOR_END: reusing

/// Appends the three-point moving average of `frame` to `smoothed`: one value for every
/// window of three neighbours, so two fewer values than the frame has.
fn smooth_into(frame: &[f32], smoothed: &mut Vec<f32>) {
    smoothed.extend(
        frame
            .windows(3)
            .map(|window| (window[0] + window[1] + window[2]) / 3.0),
    );
}

/// The largest value, or `None` for no values.
fn peak(values: &[f32]) -> Option<f32> {
    values.iter().copied().reduce(f32::max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn both_versions_agree_bit_for_bit_on_random_frames_of_many_lengths() {
        let mut random = ChaCha8Rng::seed_from_u64(51);
        let mut reusing = SmoothedPeak::default();
        for length in [0, 1, 2, 3, 4, 7, 64, 1000, 4099] {
            let frame: Vec<f32> = (0..length)
                .map(|_| random.random_range(-10.0f32..10.0))
                .collect();
            let expected = smoothed_peak_allocating(&frame);
            assert_eq!(
                reusing.peak(&frame).map(f32::to_bits),
                expected.map(f32::to_bits),
                "frame of {length} samples"
            );
        }
    }

    #[test]
    fn the_peak_is_the_largest_three_point_average() {
        // Averages: (1+2+3)/3 = 2, (2+3+10)/3 = 5, (3+10+-1)/3 = 4.
        assert_eq!(
            smoothed_peak_allocating(&[1.0, 2.0, 3.0, 10.0, -1.0]),
            Some(5.0)
        );
        assert_eq!(smoothed_peak_allocating(&[1.0, 2.0]), None);
    }

    #[test]
    fn the_reused_buffer_is_allocated_once() {
        let mut reusing = SmoothedPeak::with_frame_length(256);
        let frame = vec![1.0f32; 256];
        reusing.peak(&frame);
        let address = reusing.scratch.as_ptr();
        for _ in 0..10 {
            reusing.peak(&frame);
        }
        assert_eq!(
            reusing.scratch.as_ptr(),
            address,
            "the scratch buffer moved"
        );
        assert_eq!(reusing.capacity(), 256);
    }
}
