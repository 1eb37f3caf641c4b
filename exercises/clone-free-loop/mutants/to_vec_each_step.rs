// mutant: needless-clone — replaces the clone with `to_vec`, which is the same copy under another name
// expect: allocations
//! No clones in the hot loop.
//! The reference solution with the one mistake named in the first line.
//!
//! Two buffers take turns: each step reads `current` and writes `next`, then the two
//! vectors swap. `std::mem::swap` exchanges the two vectors' pointers, lengths and
//! capacities, three words each, and copies no value. Both buffers start as copies of
//! the signal, so both hold the two end values that no step writes.

/// `signal` smoothed `steps` times; the first and the last value stay as they are.
pub fn smooth(signal: &[f32], steps: usize) -> Vec<f32> {
    let mut current = signal.to_vec();
    // The one extra buffer, made once, outside the loop.
    let mut next = current.clone();
    let inside = 1..current.len().saturating_sub(1);
    for _ in 0..steps {
        let previous = current.to_vec();
        for index in inside.clone() {
            next[index] =
                0.25 * previous[index - 1] + 0.5 * previous[index] + 0.25 * previous[index + 1];
        }
        std::mem::swap(&mut current, &mut next);
    }
    current
}
