//! Hard-coded types: `f32` written into every signature, against a type alias that names
//! the choice once and a generic function that works for every sample type.

// ANCHOR: alias
/// The type of one audio sample in this program. Every function below says `Sample`, so
/// changing to `f64` is one line, and a reader sees which `f32`s are samples.
pub type Sample = f32;

/// The peak amplitude of a block of samples (0 for none).
pub fn peak_amplitude(samples: &[Sample]) -> Sample {
    samples
        .iter()
        .map(|sample| sample.abs())
        .fold(0.0, Sample::max)
}
// ANCHOR_END: alias

// ANCHOR: generic
/// The mean of any numbers that convert to `f64` without loss: `u8` pixels, `i16` audio,
/// `f32` samples, `u32` counts all work with this one function; `None` for no values.
/// (`i64` and `u64` do not implement `Into<f64>`: not every 64-bit integer fits in an
/// `f64` exactly, and Rust converts implicitly only where nothing is lost.)
pub fn mean<T: Copy + Into<f64>>(values: &[T]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let sum: f64 = values.iter().map(|&value| value.into()).sum();
    Some(sum / values.len() as f64)
}
// ANCHOR_END: generic

// ANCHOR: hard_coded_on_purpose
/// Where hard-coding is right: the bytes handed to a GPU buffer must be exactly the format
/// the shader declares (`array<f32>` in WGSL), so this function takes `&[f32]`, not a
/// `Sample` that someone might change to `f64` without changing the shader.
pub fn bytes_for_gpu(values: &[f32]) -> Vec<u8> {
    values
        .iter()
        .flat_map(|value| value.to_le_bytes())
        .collect()
}
// ANCHOR_END: hard_coded_on_purpose

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_mean_serves_pixels_audio_and_floats() {
        assert_eq!(mean(&[0u8, 255, 255, 0]), Some(127.5));
        assert_eq!(mean(&[-32768i16, 32767]), Some(-0.5));
        assert_eq!(mean(&[0.25f32, 0.75]), Some(0.5));
        assert_eq!(mean::<u32>(&[]), None);
    }

    #[test]
    fn the_peak_ignores_the_sign() {
        assert_eq!(peak_amplitude(&[0.5, -0.75, 0.25]), 0.75);
        assert_eq!(peak_amplitude(&[]), 0.0);
    }

    #[test]
    fn gpu_bytes_are_four_little_endian_bytes_per_value() {
        let bytes = bytes_for_gpu(&[1.0, -2.0]);
        assert_eq!(bytes.len(), 8);
        assert_eq!(bytes[..4], 1.0f32.to_le_bytes());
        assert_eq!(f32::from_le_bytes(bytes[4..].try_into().unwrap()), -2.0);
    }
}
