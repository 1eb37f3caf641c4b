// mutant: wrong-result — writes every step into the scratch buffer but never swaps, so every step starts again from the signal
// expect: elements differ
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
        for index in inside.clone() {
            next[index] =
                0.25 * current[index - 1] + 0.5 * current[index] + 0.25 * current[index + 1];
        }
    }
    next
}
