//! Packing two values into one word so that one atomic operation updates both together.
//!
//! An atomic maximum (`fetch_max`) on a single integer is one instruction on a CPU and one
//! `atomicMax` on a GPU. Many threads looking for the *largest score and where it was*
//! need two values to change together, which no single atomic offers for two words. Put
//! the score in the high bits and the index in the low bits of one `u64`, and comparing the
//! packed words compares the scores first: the atomic maximum of the packed words is the
//! packed word of the maximum. The same idea with a minimum gives a closest-hit buffer
//! (depth in the high bits, the id of what was hit in the low bits), the core of point
//! cloud renderers that draw with compute shaders.
//!
//! The trick needs the order of the packed integers to match the order of the values.
//! For an `f32` it does not hold as it stands, because negative floats compare backwards as
//! integers; [`ordered_bits`] fixes that.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

// ANCHOR: ordered_bits
/// An `f32`'s bits rearranged so that unsigned integer order is the float's total order
/// (`f32::total_cmp`): positive floats get their sign bit set, so they sort above every
/// negative one; negative floats get every bit flipped, so larger magnitudes sort lower.
pub fn ordered_bits(value: f32) -> u32 {
    let bits = value.to_bits();
    if bits >> 31 == 0 {
        bits | 1 << 31
    } else {
        !bits
    }
}

/// The inverse of [`ordered_bits`].
pub fn from_ordered_bits(ordered: u32) -> f32 {
    if ordered >> 31 == 1 {
        f32::from_bits(ordered & !(1 << 31))
    } else {
        f32::from_bits(!ordered)
    }
}
// ANCHOR_END: ordered_bits

// ANCHOR: score_and_index
/// A score in the high 32 bits and an index in the low 32: the maximum of two packed words
/// is the one with the higher score, and between equal scores the one with the higher index.
pub fn pack_score_and_index(score: f32, index: u32) -> u64 {
    u64::from(ordered_bits(score)) << 32 | u64::from(index)
}

pub fn unpack_score_and_index(packed: u64) -> (f32, u32) {
    (from_ordered_bits((packed >> 32) as u32), packed as u32)
}

/// The index of the largest score, found by `threads` threads that each take a slice and
/// publish every candidate with one `fetch_max` on a shared word. `None` for no scores.
/// Ties go to the highest index; NaN counts as larger than every number (`total_cmp`).
pub fn parallel_argmax(scores: &[f32], threads: usize) -> Option<(f32, u32)> {
    if scores.is_empty() {
        return None;
    }
    let best = AtomicU64::new(0); // below every packed word but the score -NaN at index 0
    let chunk = scores.len().div_ceil(threads.max(1));
    std::thread::scope(|scope| {
        for (chunk_index, slice) in scores.chunks(chunk).enumerate() {
            let best = &best;
            scope.spawn(move || {
                for (offset, &score) in slice.iter().enumerate() {
                    let index = (chunk_index * chunk + offset) as u32;
                    // Relaxed is enough: only the final value is read, after every thread
                    // has been joined, and the join orders it after every update.
                    best.fetch_max(pack_score_and_index(score, index), Ordering::Relaxed);
                }
            });
        }
    });
    Some(unpack_score_and_index(best.into_inner()))
}
// ANCHOR_END: score_and_index

// ANCHOR: depth_and_id
/// A closest-hit word of 32 bits: a depth in [0, 1] quantised to the high 16 bits, the id
/// of the object in the low 16. `fetch_min` keeps the nearest object and its id together.
/// A GPU point renderer does the same with a 64-bit word (a full 32-bit depth and a 32-bit
/// colour or index) per pixel.
pub fn pack_depth_and_id(depth: f32, id: u16) -> u32 {
    let quantised = (depth.clamp(0.0, 1.0) * f32::from(u16::MAX)).round() as u32;
    quantised << 16 | u32::from(id)
}

pub fn unpack_depth_and_id(packed: u32) -> (f32, u16) {
    (
        (packed >> 16) as f32 / f32::from(u16::MAX),
        (packed & 0xffff) as u16,
    )
}

/// Many threads write `(depth, id)` hits into `pixels` closest-first, lock-free. Each hit is
/// `(pixel, depth, id)`; the result holds, per pixel, the packed nearest hit (`u32::MAX`
/// where nothing was hit).
pub fn closest_hits(pixel_count: usize, hits: &[(usize, f32, u16)], threads: usize) -> Vec<u32> {
    let pixels: Vec<AtomicU32> = (0..pixel_count).map(|_| AtomicU32::new(u32::MAX)).collect();
    let chunk = hits.len().div_ceil(threads.max(1)).max(1);
    std::thread::scope(|scope| {
        for slice in hits.chunks(chunk) {
            let pixels = &pixels;
            scope.spawn(move || {
                for &(pixel, depth, id) in slice {
                    pixels[pixel].fetch_min(pack_depth_and_id(depth, id), Ordering::Relaxed);
                }
            });
        }
    });
    pixels.into_iter().map(AtomicU32::into_inner).collect()
}
// ANCHOR_END: depth_and_id

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn the_float_order_survives_the_packing() {
        let values = [
            f32::NEG_INFINITY,
            -2.5,
            -0.0,
            0.0,
            1e-30,
            3.0,
            f32::INFINITY,
        ];
        for pair in values.windows(2) {
            assert!(ordered_bits(pair[0]) < ordered_bits(pair[1]), "{pair:?}");
        }
    }

    #[test]
    fn four_threads_find_the_same_argmax_as_a_sequential_loop() {
        let mut random = ChaCha8Rng::seed_from_u64(19);
        for length in [1, 2, 7, 1000, 100_003] {
            // Few distinct values, so that ties are common and the tie rule is tested.
            let scores: Vec<f32> = (0..length)
                .map(|_| f32::from(random.random_range(-50i16..50)) * 0.25)
                .collect();
            let expected = scores
                .iter()
                .enumerate()
                .max_by(|a, b| a.1.total_cmp(b.1).then(a.0.cmp(&b.0)))
                .map(|(index, &score)| (score, index as u32));
            for threads in [1, 2, 4, 8] {
                assert_eq!(parallel_argmax(&scores, threads), expected, "n {length}");
            }
        }
        assert_eq!(parallel_argmax(&[], 4), None);
    }

    #[test]
    fn closest_hits_keep_the_nearest_id_per_pixel_under_contention() {
        let mut random = ChaCha8Rng::seed_from_u64(7);
        let pixel_count = 64;
        // 200 000 hits on 64 pixels: every pixel is fought over by every thread.
        let hits: Vec<(usize, f32, u16)> = (0..200_000)
            .map(|_| {
                (
                    random.random_range(0..pixel_count),
                    random.random_range(0.0f32..1.0),
                    random.random_range(0..u16::MAX),
                )
            })
            .collect();
        let mut expected = vec![u32::MAX; pixel_count];
        for &(pixel, depth, id) in &hits {
            expected[pixel] = expected[pixel].min(pack_depth_and_id(depth, id));
        }
        assert_eq!(closest_hits(pixel_count, &hits, 4), expected);
        let (depth, _) = unpack_depth_and_id(expected[0]);
        assert!(depth < 0.01, "the nearest of ~3000 hits is close: {depth}");
    }

    proptest! {
        #[test]
        fn ordered_bits_sort_like_total_cmp(a: f32, b: f32) {
            prop_assert_eq!(ordered_bits(a).cmp(&ordered_bits(b)), a.total_cmp(&b));
            prop_assert_eq!(from_ordered_bits(ordered_bits(a)).to_bits(), a.to_bits());
        }

        #[test]
        fn packed_words_compare_like_score_then_index(a: f32, i: u32, b: f32, j: u32) {
            let expected = a.total_cmp(&b).then(i.cmp(&j));
            prop_assert_eq!(pack_score_and_index(a, i).cmp(&pack_score_and_index(b, j)), expected);
            let (score, index) = unpack_score_and_index(pack_score_and_index(a, i));
            prop_assert_eq!((score.to_bits(), index), (a.to_bits(), i));
        }

        #[test]
        fn depth_and_id_round_trip_within_half_a_step(depth in 0.0f32..=1.0, id: u16) {
            let (back, back_id) = unpack_depth_and_id(pack_depth_and_id(depth, id));
            prop_assert_eq!(back_id, id);
            prop_assert!((back - depth).abs() <= 0.5 / 65535.0 + 1e-7);
        }
    }
}
