//! No clones in the hot loop.
//!
//! `smooth` blurs a signal: every step replaces each inside element by a weighted average
//! of itself and its two neighbours, `¼ left + ½ centre + ¼ right`, computed from the
//! values of the step before. The first and the last element never change.
//!
//! Every step needs the previous step's values while it writes the new ones, and the
//! starter gets them the easy way: it clones the whole signal at the start of every step.
//! That is one trip to the allocator and one full copy per step, inside the loop that
//! runs most often. The results are right.
//!
//! Your task: keep exactly the same results with at most two allocations in all,
//! however many steps there are: the vector you return, and one more buffer made before
//! the loop. `std::mem::swap` exchanges two vectors without copying their values.

/// `signal` smoothed `steps` times; the first and the last value stay as they are.
pub fn smooth(signal: &[f32], steps: usize) -> Vec<f32> {
    let mut current = signal.to_vec();
    let inside = 1..current.len().saturating_sub(1);
    for _ in 0..steps {
        let previous = current.clone();
        for index in inside.clone() {
            current[index] =
                0.25 * previous[index - 1] + 0.5 * previous[index] + 0.25 * previous[index + 1];
        }
    }
    current
}
