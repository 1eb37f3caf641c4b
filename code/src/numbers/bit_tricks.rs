//! Bit tricks: counting bits, finding the highest and lowest set bit, testing for and
//! rounding to powers of two, and packing several small values into one word.
//!
//! Each trick is written out by hand next to the standard library method that does the same
//! job (and compiles to one instruction where the CPU has it: `popcnt`, `lzcnt`, `tzcnt`).
//! The property tests check that the hand-written version agrees with the library on every
//! input they try: a bit trick is only useful if it is exact.

// ANCHOR: population_count
/// The number of set bits, counted in parallel inside the word ("SWAR": SIMD within a
/// register): first the 32 pairs of bits, then 16 nibbles, then 8 bytes, then one multiply
/// adds the eight byte counts into the top byte.
pub fn population_count(mut word: u64) -> u32 {
    word -= (word >> 1) & 0x5555_5555_5555_5555; // 2-bit counts
    word = (word & 0x3333_3333_3333_3333) + ((word >> 2) & 0x3333_3333_3333_3333); // 4-bit
    word = (word + (word >> 4)) & 0x0f0f_0f0f_0f0f_0f0f; // 8-bit counts
    (word.wrapping_mul(0x0101_0101_0101_0101) >> 56) as u32
}
// ANCHOR_END: population_count

// ANCHOR: powers_of_two
/// Whether `value` is a power of two: such a number has exactly one set bit, and
/// subtracting one clears it and sets every bit below, so the two share no bit.
pub fn is_power_of_two(value: u64) -> bool {
    value != 0 && value & (value - 1) == 0
}

/// The position of the highest set bit, `⌊log₂ value⌋`, or `None` for 0.
pub fn floor_log2(value: u64) -> Option<u32> {
    (value != 0).then(|| 63 - value.leading_zeros())
}

/// The smallest power of two at least `value` (1 for 0), or `None` if it does not fit.
/// Rounding a buffer size or a hash-table capacity up this way lets later code replace
/// `index % capacity` with `index & (capacity - 1)`.
pub fn round_up_to_power_of_two(value: u64) -> Option<u64> {
    if value <= 1 {
        return Some(1);
    }
    let shift = 64 - (value - 1).leading_zeros();
    1u64.checked_shl(shift)
}

/// `value` rounded up to a multiple of `alignment`, which must be a power of two: the
/// rounding GPU APIs ask for (a buffer's offset aligned to 256 bytes, a row to 4 bytes).
pub fn align_up(value: u64, alignment: u64) -> Option<u64> {
    if !is_power_of_two(alignment) {
        return None;
    }
    Some(value.checked_add(alignment - 1)? & !(alignment - 1))
}
// ANCHOR_END: powers_of_two

// ANCHOR: set_bits
/// The positions of the set bits, lowest first. `word & word.wrapping_neg()` isolates the
/// lowest set bit (two's complement flips every bit above it); `trailing_zeros` names its
/// position; `word & (word - 1)` clears it. The loop runs once per set bit, not per bit.
pub fn set_bit_positions(mut word: u64) -> Vec<u32> {
    let mut positions = Vec::with_capacity(word.count_ones() as usize);
    while word != 0 {
        positions.push(word.trailing_zeros());
        word &= word - 1;
    }
    positions
}
// ANCHOR_END: set_bits

/// The lowest set bit of `word` on its own (0 for 0).
pub fn lowest_set_bit(word: u64) -> u64 {
    word & word.wrapping_neg()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn small_cases_by_hand() {
        assert_eq!(population_count(0), 0);
        assert_eq!(population_count(u64::MAX), 64);
        assert_eq!(population_count(0b1011_0000), 3);
        assert!(is_power_of_two(1) && is_power_of_two(1 << 63));
        assert!(!is_power_of_two(0) && !is_power_of_two(6));
        assert_eq!(floor_log2(0), None);
        assert_eq!(floor_log2(1), Some(0));
        assert_eq!(floor_log2(1000), Some(9));
        assert_eq!(round_up_to_power_of_two(0), Some(1));
        assert_eq!(round_up_to_power_of_two(1000), Some(1024));
        assert_eq!(round_up_to_power_of_two(1024), Some(1024));
        assert_eq!(round_up_to_power_of_two((1 << 63) + 1), None);
        assert_eq!(align_up(300, 256), Some(512));
        assert_eq!(align_up(256, 256), Some(256));
        assert_eq!(align_up(5, 6), None);
        assert_eq!(align_up(u64::MAX, 2), None);
        assert_eq!(set_bit_positions(0b1010_0001), vec![0, 5, 7]);
        assert_eq!(lowest_set_bit(0b1010_1000), 0b1000);
    }

    proptest! {
        #[test]
        fn population_count_matches_count_ones(word: u64) {
            prop_assert_eq!(population_count(word), word.count_ones());
        }

        #[test]
        fn the_power_of_two_test_matches_the_library(value: u64) {
            prop_assert_eq!(is_power_of_two(value), value.is_power_of_two());
        }

        #[test]
        fn floor_log2_matches_ilog2(value in 1u64..) {
            prop_assert_eq!(floor_log2(value), Some(value.ilog2()));
        }

        #[test]
        fn rounding_up_matches_the_library(value: u64) {
            prop_assert_eq!(round_up_to_power_of_two(value), value.checked_next_power_of_two());
        }

        #[test]
        fn align_up_gives_the_next_multiple(value in 0u64..1 << 60, shift in 0u32..12) {
            let alignment = 1u64 << shift;
            let aligned = align_up(value, alignment).unwrap();
            prop_assert_eq!(aligned % alignment, 0);
            prop_assert!(aligned >= value && aligned - value < alignment);
        }

        #[test]
        fn set_bit_positions_rebuild_the_word(word: u64) {
            let positions = set_bit_positions(word);
            let rebuilt = positions.iter().fold(0u64, |word, position| word | 1 << position);
            prop_assert_eq!(rebuilt, word);
            prop_assert!(positions.windows(2).all(|pair| pair[0] < pair[1]));
            prop_assert_eq!(lowest_set_bit(word), positions.first().map_or(0, |p| 1 << p));
        }
    }
}
