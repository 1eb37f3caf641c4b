//! Random numbers that do not depend on who draws them.
//!
//! A sequential generator is a state that each draw advances: the tenth number exists only
//! after the first nine. Shared by several threads, it needs a lock, every draw waits for
//! that lock, and which thread receives which number depends on how the threads happened
//! to be scheduled, so a parallel program that uses it gives a different answer every run.
//!
//! A *counter-based* generator has no state at all. The `counter`-th number of stream
//! `stream` under `seed` is a hash of those three numbers, so any thread (or GPU
//! invocation) can compute any number directly, in any order, and a computation that
//! assigns work to streams rather than to threads gives the same numbers for one thread,
//! sixteen threads or a GPU. `shaders/parallel/random_streams.wgsl` computes the very same
//! hash, and a test checks that both give identical bits.
//!
//! The hash is the "PCG hash" (a permutation of 32-bit words built from one step of a PCG
//! generator, recommended for GPU use by Jarzynski and Olano, 2020), applied three times
//! to mix in the seed, the stream and the counter. It uses only 32-bit arithmetic, because
//! WGSL has no 64-bit integers. It is good enough for Monte Carlo estimates and dropout
//! masks; it is not a cryptographic generator, and a library such as cuRAND or JAX uses
//! the stronger Philox hash for the same purpose.

use std::sync::Mutex;

// ANCHOR: pcg_hash
/// A permutation of the 32-bit words that scrambles its input: one step of a PCG
/// generator followed by PCG's output permutation. Every step (a multiply by an odd
/// number, an add, an xor with a right shift) can be undone, so different inputs always
/// give different outputs.
pub const fn pcg_hash(input: u32) -> u32 {
    let state = input.wrapping_mul(747_796_405).wrapping_add(2_891_336_453);
    let word = ((state >> ((state >> 28) + 4)) ^ state).wrapping_mul(277_803_737);
    (word >> 22) ^ word
}

/// The `counter`-th random word of stream `stream` under `seed`: no state, nothing shared,
/// the same answer wherever and whenever it is computed.
pub const fn random_u32(seed: u32, stream: u32, counter: u32) -> u32 {
    pcg_hash(pcg_hash(pcg_hash(seed) ^ stream) ^ counter)
}
// ANCHOR_END: pcg_hash

/// A random number in [0, 1) with 24 random bits, the most an `f32` holds exactly: the
/// top 24 bits of `word` scaled by 2⁻²⁴. Both steps are exact, so the GPU gets the very
/// same float from the same word.
pub fn unit_f32(word: u32) -> f32 {
    (word >> 8) as f32 * (1.0 / 16_777_216.0)
}

/// One stream seen as an iterator, for code that wants to pull numbers one after another.
#[derive(Debug, Clone)]
pub struct RandomStream {
    seed: u32,
    stream: u32,
    counter: u32,
}

impl RandomStream {
    pub fn new(seed: u32, stream: u32) -> RandomStream {
        RandomStream {
            seed,
            stream,
            counter: 0,
        }
    }
}

impl Iterator for RandomStream {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        let word = random_u32(self.seed, self.stream, self.counter);
        self.counter = self.counter.wrapping_add(1);
        Some(word)
    }
}

// ANCHOR: shared_generator
/// The alternative this file argues against: one sequential generator (SplitMix64) behind
/// a lock, shared by every thread. Each draw locks, advances the state and unlocks; the
/// numbers a thread gets depend on when the other threads drew theirs.
#[derive(Debug)]
pub struct SharedGenerator {
    state: Mutex<u64>,
}

impl SharedGenerator {
    pub fn new(seed: u64) -> SharedGenerator {
        SharedGenerator {
            state: Mutex::new(seed),
        }
    }

    /// The next word of the one shared sequence.
    pub fn next_u32(&self) -> u32 {
        // A poisoned lock only means another thread panicked mid-draw; the state is a
        // plain number and still usable.
        let mut state = self
            .state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut mixed = *state;
        mixed = (mixed ^ (mixed >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        mixed = (mixed ^ (mixed >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((mixed ^ (mixed >> 31)) >> 32) as u32
    }
}
// ANCHOR_END: shared_generator

#[cfg(test)]
mod tests {
    use super::*;
    use rayon::prelude::*;

    #[test]
    fn the_hash_is_a_permutation_on_a_sample_and_mixes_every_input() {
        // No two of the first million inputs collide.
        let mut outputs: Vec<u32> = (0..1_000_000).map(pcg_hash).collect();
        outputs.sort_unstable();
        outputs.dedup();
        assert_eq!(outputs.len(), 1_000_000);
        // Changing any one of seed, stream or counter changes the word.
        let base = random_u32(1, 2, 3);
        assert_ne!(base, random_u32(0, 2, 3));
        assert_ne!(base, random_u32(1, 1, 3));
        assert_ne!(base, random_u32(1, 2, 2));
    }

    #[test]
    fn streams_look_uniform() {
        // 2^16 words into 16 bins by their top 4 bits: each bin should hold about 4096.
        let mut bins = [0_u32; 16];
        for word in RandomStream::new(42, 7).take(1 << 16) {
            bins[(word >> 28) as usize] += 1;
        }
        assert!(
            bins.iter().all(|&count| (3700..4500).contains(&count)),
            "{bins:?}"
        );
        // And the low bit is a fair coin.
        let ones: u32 = RandomStream::new(42, 8)
            .take(1 << 16)
            .map(|word| word & 1)
            .sum();
        assert!((31_800..33_700).contains(&ones), "{ones}");
    }

    #[test]
    fn the_same_numbers_come_out_whatever_the_thread_count() {
        let draw_all = || -> Vec<u32> {
            (0..64_u32)
                .into_par_iter()
                .flat_map_iter(|stream| RandomStream::new(9, stream).take(100))
                .collect()
        };
        let sequential: Vec<u32> = (0..64_u32)
            .flat_map(|stream| RandomStream::new(9, stream).take(100))
            .collect();
        for threads in [1, 2, 3, 8] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            assert_eq!(pool.install(draw_all), sequential, "{threads} threads");
        }
    }

    #[test]
    fn unit_floats_stay_in_the_half_open_interval() {
        assert_eq!(unit_f32(0), 0.0);
        assert!(unit_f32(u32::MAX) < 1.0);
        assert_eq!(unit_f32(u32::MAX), 1.0 - 1.0 / 16_777_216.0);
    }

    #[test]
    fn the_shared_generator_hands_out_distinct_words_to_all_threads() {
        let generator = SharedGenerator::new(5);
        let mut words: Vec<u32> = (0..4)
            .into_par_iter()
            .flat_map_iter(|_| (0..1000).map(|_| generator.next_u32()).collect::<Vec<_>>())
            .collect();
        assert_eq!(words.len(), 4000);
        words.sort_unstable();
        words.dedup();
        // 4000 draws from 2^32 words: a repeat is possible but has probability < 0.2 %.
        assert!(words.len() >= 3999);
    }
}
