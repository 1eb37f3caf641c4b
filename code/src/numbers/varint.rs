//! Variable-length integers (LEB128, the encoding of WebAssembly, DWARF and Protocol
//! Buffers): seven bits of the number per byte, lowest first, and the top bit of each byte
//! set when another byte follows. Numbers below 128 take one byte, below 16 384 two, and a
//! full `u64` ten. Small numbers are common (counts, gaps, lengths), so most take one byte
//! instead of four or eight.
//!
//! Signed numbers go through *zigzag* first (0, -1, 1, -2, 2, … become 0, 1, 2, 3, 4, …),
//! so that small negative numbers stay small instead of becoming huge unsigned ones.

use thiserror::Error;

/// Why bytes could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum VarintError {
    #[error("the bytes end in the middle of a number (byte {position} says more follow)")]
    Truncated { position: usize },
    #[error("the number starting at byte {position} is longer than a 64-bit value")]
    TooLong { position: usize },
}

// ANCHOR: leb128
/// Appends `value` to `bytes` as LEB128.
pub fn write_varint(mut value: u64, bytes: &mut Vec<u8>) {
    while value >= 0x80 {
        bytes.push(value as u8 | 0x80); // the low seven bits, and "more follow"
        value >>= 7;
    }
    bytes.push(value as u8);
}

/// Reads one LEB128 number starting at `*position` and moves `*position` past it.
pub fn read_varint(bytes: &[u8], position: &mut usize) -> Result<u64, VarintError> {
    let start = *position;
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let Some(&byte) = bytes.get(*position) else {
            return Err(VarintError::Truncated {
                position: position.saturating_sub(1),
            });
        };
        *position += 1;
        let bits = u64::from(byte & 0x7f);
        // The tenth byte may carry only the single top bit of a u64.
        if shift == 63 && bits > 1 {
            return Err(VarintError::TooLong { position: start });
        }
        value |= bits << shift;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err(VarintError::TooLong { position: start })
}
// ANCHOR_END: leb128

// ANCHOR: zigzag
/// 0, -1, 1, -2, 2, … → 0, 1, 2, 3, 4, …: the sign moves to the lowest bit.
pub fn zigzag(value: i64) -> u64 {
    ((value << 1) ^ (value >> 63)) as u64
}

pub fn unzigzag(value: u64) -> i64 {
    (value >> 1) as i64 ^ -((value & 1) as i64)
}
// ANCHOR_END: zigzag

/// The number of bytes `value` takes as LEB128.
pub fn varint_length(value: u64) -> usize {
    let bits = 64 - value.leading_zeros().min(63) as usize;
    bits.div_ceil(7)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_encodings() {
        let encode = |value| {
            let mut bytes = Vec::new();
            write_varint(value, &mut bytes);
            bytes
        };
        assert_eq!(encode(0), [0x00]);
        assert_eq!(encode(127), [0x7f]);
        assert_eq!(encode(128), [0x80, 0x01]);
        // The example of the DWARF specification: 624485 = 0xE5 0x8E 0x26.
        assert_eq!(encode(624_485), [0xe5, 0x8e, 0x26]);
        assert_eq!(encode(u64::MAX).len(), 10);
        assert_eq!(zigzag(-1), 1);
        assert_eq!(zigzag(1), 2);
        assert_eq!(zigzag(i64::MIN), u64::MAX);
    }

    #[test]
    fn bad_bytes_are_typed_errors() {
        let mut position = 0;
        assert_eq!(
            read_varint(&[0x80, 0x80], &mut position),
            Err(VarintError::Truncated { position: 1 })
        );
        let mut position = 0;
        assert_eq!(
            read_varint(&[0xff; 11], &mut position),
            Err(VarintError::TooLong { position: 0 })
        );
        let mut position = 0;
        let mut too_big = vec![0xff; 9];
        too_big.push(0x02); // a 65th bit
        assert_eq!(
            read_varint(&too_big, &mut position),
            Err(VarintError::TooLong { position: 0 })
        );
        let mut position = 0;
        assert_eq!(
            read_varint(&[], &mut position),
            Err(VarintError::Truncated { position: 0 })
        );
    }

    proptest! {
        #[test]
        fn any_sequence_round_trips(values in proptest::collection::vec(any::<u64>(), 0..50)) {
            let mut bytes = Vec::new();
            for &value in &values {
                write_varint(value, &mut bytes);
            }
            prop_assert_eq!(bytes.len(), values.iter().map(|&v| varint_length(v)).sum::<usize>());
            let mut position = 0;
            let mut decoded = Vec::new();
            while position < bytes.len() {
                decoded.push(read_varint(&bytes, &mut position).unwrap());
            }
            prop_assert_eq!(decoded, values);
        }

        #[test]
        fn zigzag_round_trips_and_keeps_small_numbers_small(value: i64) {
            prop_assert_eq!(unzigzag(zigzag(value)), value);
            prop_assert!(zigzag(value) <= value.unsigned_abs().saturating_mul(2));
        }
    }
}
