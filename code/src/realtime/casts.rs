//! Implicit casts: Rust has none. Every conversion between number types is written out,
//! and there are three ways to write one: `From`/`into` where nothing can be lost, `as`
//! where something can (and it silently is), and `TryFrom`/`try_into` where the loss
//! becomes an error to handle.

use thiserror::Error;

/// An offset that does not point into the buffer.
#[derive(Debug, Error, Clone, Copy, PartialEq, Eq)]
pub enum IndexError {
    #[error("offset {offset} is negative; an index must be zero or more")]
    Negative { offset: i64 },
    #[error("offset {offset} is past the end of a buffer of {length} values")]
    PastTheEnd { offset: i64, length: usize },
}

// ANCHOR: checked_index
/// Turns a signed offset (from a file, from arithmetic that may go below zero) into an
/// index of a buffer of `length` values. `usize::try_from` fails for a negative offset,
/// where `offset as usize` would turn -1 into 18 446 744 073 709 551 615.
pub fn index_from_offset(offset: i64, length: usize) -> Result<usize, IndexError> {
    let index = usize::try_from(offset).map_err(|_| IndexError::Negative { offset })?;
    if index < length {
        Ok(index)
    } else {
        Err(IndexError::PastTheEnd { offset, length })
    }
}
// ANCHOR_END: checked_index

// ANCHOR: pixel
/// An intensity in [0, 1] as an 8-bit pixel. `as` from a float to an integer rounds toward
/// zero and saturates: values above 255 become 255, below 0 become 0, and NaN becomes 0.
/// That is the right behaviour for a pixel, so it is used on purpose here, after `round`,
/// and the comment says so.
pub fn pixel_from_intensity(intensity: f32) -> u8 {
    (intensity * 255.0).round() as u8
}
// ANCHOR_END: pixel

#[cfg(test)]
mod tests {
    use super::*;

    // ANCHOR: as_pitfalls
    #[test]
    fn what_as_does_silently() {
        // Integer to integer: the bits are kept or cut off, never checked.
        assert_eq!(-1i32 as u32, 4_294_967_295);
        assert_eq!(300i32 as u8, 44); // 300 - 256
        assert_eq!(40_000u16 as i16, -25_536);
        // Float to integer: toward zero, then saturating; NaN becomes 0.
        assert_eq!(2.9f32 as i32, 2);
        assert_eq!(-2.9f32 as i32, -2);
        assert_eq!(1.0e10f32 as i32, i32::MAX);
        // (Through black_box, because clippy rightly refuses a cast of a literal NaN.)
        assert_eq!(std::hint::black_box(f32::NAN) as i32, 0);
        // Integer to float: rounded to the nearest float.
        assert_eq!(16_777_217i32 as f32, 16_777_216.0);
    }

    #[test]
    fn what_try_from_and_from_do_instead() {
        assert!(u32::try_from(-1i32).is_err());
        assert!(u8::try_from(300i32).is_err());
        assert_eq!(u8::try_from(200i32), Ok(200));
        // From exists only where no value is lost: u8 into u32, i32 into f64, f32 into f64.
        assert_eq!(u32::from(200u8), 200);
        assert_eq!(f64::from(16_777_217i32), 16_777_217.0);
        assert_eq!(f64::from(0.1f32), 0.100_000_001_490_116_12);
    }
    // ANCHOR_END: as_pitfalls

    #[test]
    fn offsets_become_indices_or_clear_errors() {
        assert_eq!(index_from_offset(3, 4), Ok(3));
        assert_eq!(
            index_from_offset(-1, 4),
            Err(IndexError::Negative { offset: -1 })
        );
        assert_eq!(
            index_from_offset(4, 4),
            Err(IndexError::PastTheEnd {
                offset: 4,
                length: 4
            })
        );
        assert_eq!(
            index_from_offset(-1, 4).unwrap_err().to_string(),
            "offset -1 is negative; an index must be zero or more"
        );
    }

    #[test]
    fn pixels_round_and_saturate() {
        assert_eq!(pixel_from_intensity(0.0), 0);
        assert_eq!(pixel_from_intensity(0.5), 128);
        assert_eq!(pixel_from_intensity(1.0), 255);
        assert_eq!(pixel_from_intensity(1.5), 255);
        assert_eq!(pixel_from_intensity(-0.2), 0);
        assert_eq!(pixel_from_intensity(f32::NAN), 0);
    }
}
