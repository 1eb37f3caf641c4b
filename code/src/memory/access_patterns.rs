//! One array, read in four different orders.
//!
//! Every function here adds up the same elements; only the order of the reads changes.
//! The elements are `u32` and the additions wrap around on overflow. Integer addition is
//! associative, so every order gives exactly the same sum, and the compiler may reorder
//! and vectorise the loop as it likes: the speed is set by memory, not by the latency of
//! one addition after another.
//!
//! - [`sum_sequential`]: front to back. Every byte of every cache line is used, and the
//!   hardware prefetcher sees the pattern and fetches ahead.
//! - [`sum_strided`]: every `stride`-th element, in `stride` passes. With a stride of 16
//!   (64 bytes) each read lands on a different cache line.
//! - [`sum_in_order`]: in the order of a random permutation. The reads are independent of
//!   each other, so the core can have many cache misses in flight at once.
//! - [`Cycle::follow`]: a chain where each read says where the next one is. Nothing can
//!   overlap, so each step pays the full latency of wherever the data lives.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::memory::MemoryError;

/// The length of `values` as a `u32` index bound, or an error if it does not fit.
fn u32_length(length: usize) -> Result<u32, MemoryError> {
    u32::try_from(length).map_err(|_| MemoryError::TooLong { length })
}

// ANCHOR: sum_sequential
/// The sum of the values (wrapping on overflow), read front to back.
pub fn sum_sequential(values: &[u32]) -> u32 {
    values
        .iter()
        .fold(0_u32, |sum, &value| sum.wrapping_add(value))
}
// ANCHOR_END: sum_sequential

// ANCHOR: sum_strided
/// The same sum, read with a stride: first elements 0, `stride`, 2·`stride`, …, then
/// 1, 1 + `stride`, … and so on, `stride` passes in all, so every element is read once.
pub fn sum_strided(values: &[u32], stride: usize) -> Result<u32, MemoryError> {
    if stride == 0 {
        return Err(MemoryError::ZeroStride);
    }
    let mut sum = 0_u32;
    for start in 0..stride.min(values.len()) {
        for &value in values[start..].iter().step_by(stride) {
            sum = sum.wrapping_add(value);
        }
    }
    Ok(sum)
}
// ANCHOR_END: sum_strided

/// The numbers `0..length` in a random order, each exactly once.
///
/// The type guarantees that every index is smaller than its length, so a sum over a
/// slice of that length never reads out of bounds and needs no checks of its own.
/// Indices are `u32` rather than `usize`: half the bytes to stream through the cache.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Permutation {
    order: Vec<u32>,
}

impl Permutation {
    /// A uniformly random permutation of `0..length` (Fisher–Yates shuffle), the same for
    /// the same seed on every machine.
    pub fn random(length: usize, seed: u64) -> Result<Self, MemoryError> {
        let bound = u32_length(length)?;
        let mut order: Vec<u32> = (0..bound).collect();
        let mut generator = ChaCha8Rng::seed_from_u64(seed);
        for last in (1..order.len()).rev() {
            let chosen = generator.random_range(0..=last);
            order.swap(last, chosen);
        }
        Ok(Self { order })
    }

    pub fn len(&self) -> usize {
        self.order.len()
    }

    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    pub fn as_slice(&self) -> &[u32] {
        &self.order
    }
}

// ANCHOR: sum_in_order
/// The same sum, reading the values in the order the permutation gives.
pub fn sum_in_order(values: &[u32], order: &Permutation) -> Result<u32, MemoryError> {
    if values.len() != order.len() {
        return Err(MemoryError::LengthMismatch {
            operation: "sum_in_order",
            expected_name: "the permutation",
            expected: order.len(),
            found_name: "the values",
            found: values.len(),
        });
    }
    let mut sum = 0_u32;
    for &index in order.as_slice() {
        // Each read's address comes from the order array, not from the previous read:
        // the core can start the next read before this one has arrived.
        sum = sum.wrapping_add(values[index as usize]);
    }
    Ok(sum)
}
// ANCHOR_END: sum_in_order

/// One random cycle through `0..length`: `next[i]` is the element visited after `i`, and
/// following `next` from any element visits every element once before coming back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cycle {
    next: Vec<u32>,
}

impl Cycle {
    // ANCHOR: sattolo
    /// A uniformly random cycle through all `length` elements (Sattolo's algorithm: a
    /// Fisher–Yates shuffle that never lets an element swap with itself, which leaves
    /// exactly one cycle instead of several).
    pub fn random(length: usize, seed: u64) -> Result<Self, MemoryError> {
        if length == 0 {
            return Err(MemoryError::EmptyCycle);
        }
        let bound = u32_length(length)?;
        let mut next: Vec<u32> = (0..bound).collect();
        let mut generator = ChaCha8Rng::seed_from_u64(seed);
        for last in (1..next.len()).rev() {
            let chosen = generator.random_range(0..last);
            next.swap(last, chosen);
        }
        Ok(Self { next })
    }
    // ANCHOR_END: sattolo

    pub fn len(&self) -> usize {
        self.next.len()
    }

    /// Never true: [`Cycle::random`] refuses to build an empty cycle.
    pub fn is_empty(&self) -> bool {
        self.next.is_empty()
    }

    // ANCHOR: follow
    /// Takes `steps` steps along the cycle from element 0 and returns where it ends up.
    ///
    /// Each load needs the result of the one before it, so no two can overlap: this is
    /// how to measure the latency of memory, rather than its bandwidth.
    pub fn follow(&self, steps: usize) -> usize {
        let mut position = 0_usize;
        for _ in 0..steps {
            position = self.next[position] as usize;
        }
        position
    }
    // ANCHOR_END: follow
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values with large entries, so that the sums really do wrap around.
    fn values(length: usize) -> Vec<u32> {
        (0..length as u32)
            .map(|index| index.wrapping_mul(2_654_435_761))
            .collect()
    }

    #[test]
    fn every_order_gives_the_same_sum() {
        for length in [0, 1, 2, 7, 16, 17, 1000, 4099] {
            let values = values(length);
            let expected = sum_sequential(&values);
            for stride in [1, 2, 3, 16, 17, 64, 5000] {
                assert_eq!(
                    sum_strided(&values, stride),
                    Ok(expected),
                    "stride {stride}"
                );
            }
            let order = Permutation::random(length, 7).unwrap();
            assert_eq!(sum_in_order(&values, &order), Ok(expected), "{length}");
        }
    }

    #[test]
    fn sums_wrap_instead_of_overflowing() {
        assert_eq!(sum_sequential(&[u32::MAX, 2]), 1);
        assert_eq!(sum_strided(&[u32::MAX, 5, 2], 2), Ok(6));
    }

    #[test]
    fn a_zero_stride_is_an_error() {
        assert_eq!(sum_strided(&[1, 2, 3], 0), Err(MemoryError::ZeroStride));
    }

    #[test]
    fn a_permutation_holds_every_index_once_and_depends_on_the_seed() {
        let permutation = Permutation::random(1000, 3).unwrap();
        let mut sorted = permutation.as_slice().to_vec();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..1000).collect::<Vec<u32>>());
        assert_eq!(permutation, Permutation::random(1000, 3).unwrap());
        assert_ne!(permutation, Permutation::random(1000, 4).unwrap());
        // A shuffle that left the identity in place would make "random" sequential.
        assert_ne!(permutation.as_slice(), sorted.as_slice());
    }

    #[test]
    fn a_permutation_of_the_wrong_length_is_an_error() {
        let order = Permutation::random(4, 1).unwrap();
        let error = sum_in_order(&[1, 2, 3], &order).unwrap_err();
        assert!(matches!(
            error,
            MemoryError::LengthMismatch {
                expected: 4,
                found: 3,
                ..
            }
        ));
    }

    #[test]
    fn a_cycle_visits_every_element_once_before_returning() {
        for length in [1, 2, 3, 17, 1000] {
            let cycle = Cycle::random(length, 11).unwrap();
            let mut visited = vec![false; length];
            let mut position = 0;
            for step in 0..length {
                assert_eq!(cycle.follow(step), position, "{step} steps ({length})");
                assert!(!visited[position], "{position} visited twice ({length})");
                visited[position] = true;
                position = cycle.next[position] as usize;
            }
            assert_eq!(position, 0, "back at the start after {length} steps");
            assert!(visited.iter().all(|&seen| seen));
            assert_eq!(cycle.follow(length), 0);
            assert_eq!(cycle.follow(2 * length), 0);
        }
    }

    #[test]
    fn an_empty_cycle_is_an_error() {
        assert_eq!(Cycle::random(0, 1), Err(MemoryError::EmptyCycle));
    }
}
