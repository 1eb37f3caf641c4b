//! Run-length encoding: a run of equal bytes becomes the byte and the length of the run.
//! It shines on data with long runs (a mask that is mostly zero, a row of a sparse matrix,
//! a flat region of an image) and doubles the size of data without them, which is why it
//! is always measured on the data it is meant for.

use crate::numbers::varint::{VarintError, read_varint, write_varint};

// ANCHOR: run_length
/// Encodes `data` as (byte, run length as LEB128) pairs.
pub fn run_length_encode(data: &[u8]) -> Vec<u8> {
    let mut encoded = Vec::new();
    let mut rest = data;
    while let Some(&byte) = rest.first() {
        let run = rest.iter().take_while(|&&other| other == byte).count();
        encoded.push(byte);
        write_varint(run as u64, &mut encoded);
        rest = &rest[run..];
    }
    encoded
}

/// The inverse of [`run_length_encode`].
pub fn run_length_decode(encoded: &[u8]) -> Result<Vec<u8>, VarintError> {
    let mut data = Vec::new();
    let mut position = 0;
    while position < encoded.len() {
        let byte = encoded[position];
        position += 1;
        let run = read_varint(encoded, &mut position)?;
        data.resize(data.len() + run as usize, byte);
    }
    Ok(data)
}
// ANCHOR_END: run_length

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn runs_shrink_and_noise_grows() {
        let mut mask = vec![0u8; 1000];
        mask[500] = 1;
        assert_eq!(
            run_length_encode(&mask),
            [0, 0xf4, 0x03, 1, 1, 0, 0xf3, 0x03]
        );
        let alternating: Vec<u8> = (0..1000).map(|index| (index % 2) as u8).collect();
        assert_eq!(run_length_encode(&alternating).len(), 2000);
        assert_eq!(run_length_encode(&[]), Vec::<u8>::new());
    }

    #[test]
    fn a_missing_run_length_is_an_error() {
        assert_eq!(
            run_length_decode(&[7]),
            Err(VarintError::Truncated { position: 0 })
        );
    }

    proptest! {
        #[test]
        fn any_bytes_round_trip(data in proptest::collection::vec(0u8..4, 0..2000)) {
            prop_assert_eq!(run_length_decode(&run_length_encode(&data)).unwrap(), data);
        }
    }
}
