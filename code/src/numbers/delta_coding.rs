//! Delta coding: a sorted list of positions stored as the gaps between neighbours, each gap
//! as a variable-length integer. Positions in a large matrix need 32 bits each; the gap to
//! the next one is usually small, and a small number takes one LEB128 byte.

use thiserror::Error;

use crate::numbers::varint::{VarintError, read_varint, write_varint};

/// Why positions could not be delta-coded or decoded.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DeltaError {
    #[error("positions must increase: position {index} is {value}, after {previous}")]
    NotIncreasing {
        index: usize,
        previous: u32,
        value: u32,
    },
    #[error(transparent)]
    Varint(#[from] VarintError),
    #[error("the decoded position passes the largest 32-bit value")]
    OutOfRange,
}

// ANCHOR: delta_encode
/// Encodes strictly increasing `positions` as LEB128 gaps (the first relative to -1, so
/// every gap is at least 1 and is stored minus one: a gap of 1 costs the byte 0).
pub fn delta_encode(positions: &[u32]) -> Result<Vec<u8>, DeltaError> {
    let mut bytes = Vec::with_capacity(positions.len());
    let mut previous: Option<u32> = None;
    for (index, &value) in positions.iter().enumerate() {
        let gap = match previous {
            None => value,
            Some(previous) if value > previous => value - previous - 1,
            Some(previous) => {
                return Err(DeltaError::NotIncreasing {
                    index,
                    previous,
                    value,
                });
            }
        };
        write_varint(u64::from(gap), &mut bytes);
        previous = Some(value);
    }
    Ok(bytes)
}

/// The inverse of [`delta_encode`].
pub fn delta_decode(bytes: &[u8]) -> Result<Vec<u32>, DeltaError> {
    let mut positions = Vec::with_capacity(bytes.len());
    let mut position = 0;
    let mut next: u64 = 0; // the smallest value the next position may take
    while position < bytes.len() {
        let value = next + read_varint(bytes, &mut position)?;
        let value = u32::try_from(value).map_err(|_| DeltaError::OutOfRange)?;
        positions.push(value);
        next = u64::from(value) + 1;
    }
    Ok(positions)
}
// ANCHOR_END: delta_encode

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn close_positions_take_one_byte_each() {
        let positions = [3, 4, 10, 200, 201];
        let bytes = delta_encode(&positions).unwrap();
        assert_eq!(bytes, [3, 0, 5, 0xbd, 0x01, 0]);
        assert_eq!(delta_decode(&bytes).unwrap(), positions);
    }

    #[test]
    fn unsorted_or_repeated_positions_are_rejected() {
        assert_eq!(
            delta_encode(&[5, 5]),
            Err(DeltaError::NotIncreasing {
                index: 1,
                previous: 5,
                value: 5
            })
        );
        assert!(delta_encode(&[9, 2]).is_err());
        // A gap that would pass u32::MAX.
        let mut bytes = Vec::new();
        write_varint(u64::from(u32::MAX), &mut bytes);
        write_varint(0, &mut bytes);
        assert_eq!(delta_decode(&bytes), Err(DeltaError::OutOfRange));
    }

    proptest! {
        #[test]
        fn any_increasing_positions_round_trip(
            set in proptest::collection::btree_set(any::<u32>(), 0..300)
        ) {
            let positions: Vec<u32> = set.into_iter().collect();
            let bytes = delta_encode(&positions).unwrap();
            prop_assert_eq!(delta_decode(&bytes).unwrap(), positions);
        }
    }
}
