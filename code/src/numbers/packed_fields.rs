//! Several small values packed into one word: each field gets a width in bits and sits at
//! a shift, so a 32-bit word can carry, for example, a 12-bit x, a 12-bit y, a 5-bit level
//! and 3 flags. One load, one store and one compare then move all of them together.
//!
//! A value wider than its field is an error, not a silent truncation: truncating would
//! corrupt the neighbouring field.

use thiserror::Error;

/// Why values could not be packed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PackError {
    #[error("field {field} is {width} bits wide and cannot hold {value} (at most {maximum})")]
    ValueTooWide {
        field: usize,
        width: u32,
        value: u64,
        maximum: u64,
    },
    #[error("the fields need {total} bits, but a word has only 64")]
    TooManyBits { total: u32 },
    #[error("{values} values were given for {fields} fields")]
    CountMismatch { values: usize, fields: usize },
}

// ANCHOR: pack_fields
/// Packs `values[i]` into `widths[i]` bits, the first field in the lowest bits.
pub fn pack_fields(values: &[u64], widths: &[u32]) -> Result<u64, PackError> {
    if values.len() != widths.len() {
        return Err(PackError::CountMismatch {
            values: values.len(),
            fields: widths.len(),
        });
    }
    let total: u32 = widths.iter().sum();
    if total > 64 {
        return Err(PackError::TooManyBits { total });
    }
    let mut word = 0u64;
    let mut shift = 0;
    for (field, (&value, &width)) in values.iter().zip(widths).enumerate() {
        let maximum = field_mask(width);
        if value > maximum {
            return Err(PackError::ValueTooWide {
                field,
                width,
                value,
                maximum,
            });
        }
        word |= value << shift;
        shift += width;
    }
    Ok(word)
}

/// The fields of a word packed by [`pack_fields`] with the same widths.
pub fn unpack_fields(mut word: u64, widths: &[u32]) -> Vec<u64> {
    widths
        .iter()
        .map(|&width| {
            let value = word & field_mask(width);
            word = word.checked_shr(width).unwrap_or(0);
            value
        })
        .collect()
}

/// `width` ones in the lowest bits (`u64::MAX` for 64).
fn field_mask(width: u32) -> u64 {
    1u64.checked_shl(width).map_or(u64::MAX, |bit| bit - 1)
}
// ANCHOR_END: pack_fields

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_tile_key_round_trips() {
        let widths = [12, 12, 5, 3];
        let word = pack_fields(&[4095, 17, 31, 0b101], &widths).unwrap();
        assert!(word < 1 << 32, "32 bits of fields fit in a u32");
        assert_eq!(unpack_fields(word, &widths), vec![4095, 17, 31, 0b101]);
    }

    #[test]
    fn bad_input_is_a_typed_error() {
        assert_eq!(
            pack_fields(&[4096], &[12]),
            Err(PackError::ValueTooWide {
                field: 0,
                width: 12,
                value: 4096,
                maximum: 4095
            })
        );
        assert_eq!(
            pack_fields(&[0, 0], &[40, 30]),
            Err(PackError::TooManyBits { total: 70 })
        );
        assert_eq!(
            pack_fields(&[0], &[8, 8]),
            Err(PackError::CountMismatch {
                values: 1,
                fields: 2
            })
        );
        let message = pack_fields(&[300], &[8]).unwrap_err().to_string();
        assert_eq!(
            message,
            "field 0 is 8 bits wide and cannot hold 300 (at most 255)"
        );
    }

    proptest! {
        #[test]
        fn any_fitting_values_round_trip(
            fields in proptest::collection::vec((0u32..=16, any::<u64>()), 1..=4)
        ) {
            let widths: Vec<u32> = fields.iter().map(|(width, _)| *width).collect();
            let values: Vec<u64> = fields
                .iter()
                .map(|(width, raw)| raw & field_mask(*width))
                .collect();
            let word = pack_fields(&values, &widths).unwrap();
            prop_assert_eq!(unpack_fields(word, &widths), values);
        }
    }
}
