//! Sorting keys on the CPU: the standard library's comparison sort, a least-significant-
//! digit radix sort that never compares two keys, and rayon's parallel sort.
//!
//! A comparison sort makes about n·log₂ n comparisons, each a branch the CPU cannot
//! predict on random data. A radix sort of 32-bit keys makes four passes over the data,
//! one per byte: each pass counts how many keys have each byte value, turns the counts into
//! starting positions, and moves every key to its place. Its cost grows as n, not
//! n·log n, and it has no data-dependent branches; what it pays for instead is memory:
//! a second buffer as large as the keys, and writes scattered over 256 places at once.
//!
//! Floats sort with the same code through [`f32_to_ordered_u32`], a bit trick that maps
//! every `f32` to a `u32` whose unsigned order is the float's total order.

use rayon::prelude::*;

/// Bits of the key a radix pass sorts by: 8 bits, so 256 buckets and four passes.
const DIGIT_BITS: u32 = 8;
const BUCKETS: usize = 1 << DIGIT_BITS;

// ANCHOR: radix_sort
/// Sorts `keys` in ascending order with a least-significant-digit radix sort: one stable
/// counting pass per byte, from the lowest byte to the highest. Because each pass is
/// stable, keys that agree in the higher bytes keep the order the earlier passes gave them.
pub fn radix_sort_u32(keys: &mut [u32]) {
    let mut scratch = vec![0_u32; keys.len()];
    // Where the keys are before a pass: `true` when they are in `keys`.
    let mut in_keys = true;
    for pass in 0..(u32::BITS / DIGIT_BITS) {
        let shift = pass * DIGIT_BITS;
        let (source, destination) = if in_keys {
            (&*keys, &mut scratch[..])
        } else {
            (&scratch[..], &mut *keys)
        };
        let digit = |key: u32| ((key >> shift) as usize) & (BUCKETS - 1);
        // 1. How many keys have each digit.
        let mut counts = [0_usize; BUCKETS];
        for &key in source.iter() {
            counts[digit(key)] += 1;
        }
        // A pass where every key has the same digit would copy the keys unchanged.
        if counts.contains(&source.len()) {
            continue;
        }
        // 2. The first position of each digit: the sum of the counts before it.
        let mut next_position = [0_usize; BUCKETS];
        let mut total = 0;
        for (position, count) in next_position.iter_mut().zip(counts) {
            *position = total;
            total += count;
        }
        // 3. Every key to the next free position of its digit, in order: a stable move.
        for &key in source.iter() {
            let bucket = digit(key);
            destination[next_position[bucket]] = key;
            next_position[bucket] += 1;
        }
        in_keys = !in_keys;
    }
    if !in_keys {
        keys.copy_from_slice(&scratch);
    }
}
// ANCHOR_END: radix_sort

// ANCHOR: ordered_bits
/// Maps an `f32` to a `u32` whose unsigned order is the float's total order
/// (`f32::total_cmp`): −NaN < −∞ < … < −0 < +0 < … < +∞ < +NaN.
///
/// A positive float's bits already grow with its value, and they must come after every
/// negative one, so their sign bit is set. A negative float's bits grow as the value
/// falls, so all of them are flipped, which also clears the sign bit.
pub fn f32_to_ordered_u32(value: f32) -> u32 {
    let bits = value.to_bits();
    if bits & 0x8000_0000 != 0 {
        !bits
    } else {
        bits | 0x8000_0000
    }
}

/// The inverse of [`f32_to_ordered_u32`].
pub fn ordered_u32_to_f32(key: u32) -> f32 {
    let bits = if key & 0x8000_0000 != 0 {
        key & 0x7FFF_FFFF
    } else {
        !key
    };
    f32::from_bits(bits)
}
// ANCHOR_END: ordered_bits

/// Sorts floats in their total order with the radix sort, through the ordered keys.
pub fn radix_sort_f32(values: &mut [f32]) {
    let mut keys: Vec<u32> = values
        .iter()
        .map(|&value| f32_to_ordered_u32(value))
        .collect();
    radix_sort_u32(&mut keys);
    for (value, key) in values.iter_mut().zip(keys) {
        *value = ordered_u32_to_f32(key);
    }
}

/// The sorts the benchmarks and the figure compare, by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuSort {
    /// `slice::sort_unstable`: the standard library's pattern-defeating quicksort.
    Standard,
    /// [`radix_sort_u32`].
    Radix,
    /// rayon's `par_sort_unstable`: the quicksort with its halves sorted in parallel.
    RayonParallel,
}

impl CpuSort {
    pub const ALL: [CpuSort; 3] = [CpuSort::Standard, CpuSort::Radix, CpuSort::RayonParallel];

    pub fn label(self) -> &'static str {
        match self {
            CpuSort::Standard => "sort_unstable",
            CpuSort::Radix => "radix sort",
            CpuSort::RayonParallel => "par_sort_unstable",
        }
    }

    pub fn sort(self, keys: &mut [u32]) {
        match self {
            CpuSort::Standard => keys.sort_unstable(),
            CpuSort::Radix => radix_sort_u32(keys),
            CpuSort::RayonParallel => keys.par_sort_unstable(),
        }
    }
}

/// `length` random keys from a seed; with `distinct_values` below the length, many repeat.
pub fn random_keys(length: usize, distinct_values: u32, seed: u64) -> Vec<u32> {
    use rand::{RngExt, SeedableRng};
    let mut generator = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    (0..length)
        .map(|_| {
            if distinct_values == u32::MAX {
                generator.random::<u32>()
            } else {
                generator.random_range(0..distinct_values.max(1))
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_sort_agrees_with_the_standard_library() {
        for length in [0, 1, 2, 3, 17, 255, 256, 257, 1000, 65_537] {
            for distinct in [1, 3, 300, 70_000, u32::MAX] {
                let keys = random_keys(length, distinct, length as u64 * 31 + u64::from(distinct));
                let mut expected = keys.clone();
                expected.sort_unstable();
                for sort in CpuSort::ALL {
                    let mut sorted = keys.clone();
                    sort.sort(&mut sorted);
                    assert_eq!(sorted, expected, "{} of {length} keys", sort.label());
                }
            }
        }
        // Keys that differ only in the top byte, and extremes.
        let mut keys = vec![u32::MAX, 0, 0x0100_0000, 0xFF00_0000, 1, u32::MAX, 0];
        radix_sort_u32(&mut keys);
        assert_eq!(
            keys,
            [0, 0, 1, 0x0100_0000, 0xFF00_0000, u32::MAX, u32::MAX]
        );
    }

    #[test]
    fn ordered_keys_follow_the_total_order_of_floats() {
        let values = [
            f32::NAN,
            -f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            -0.0,
            0.0,
            1.5,
            -1.5,
            f32::MIN_POSITIVE,
            -f32::MIN_POSITIVE,
            1.0e-45,
            -1.0e-45,
            f32::MAX,
            f32::MIN,
        ];
        for &a in &values {
            assert_eq!(
                ordered_u32_to_f32(f32_to_ordered_u32(a)).to_bits(),
                a.to_bits()
            );
            for &b in &values {
                assert_eq!(
                    f32_to_ordered_u32(a).cmp(&f32_to_ordered_u32(b)),
                    a.total_cmp(&b),
                    "{a} against {b}"
                );
            }
        }
        let mut sorted = values.to_vec();
        radix_sort_f32(&mut sorted);
        let mut expected = values.to_vec();
        expected.sort_unstable_by(f32::total_cmp);
        let bits = |values: &[f32]| {
            values
                .iter()
                .map(|value| value.to_bits())
                .collect::<Vec<_>>()
        };
        assert_eq!(bits(&sorted), bits(&expected));
    }
}
