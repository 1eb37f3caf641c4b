//! The bit layout of floating-point numbers: a sign bit, a biased exponent and a
//! fraction, for the 32-bit `f32` and the two 16-bit formats `f16` and `bf16`.
//!
//! A format is fully described by two numbers, how many bits the exponent has and how many
//! the fraction has. Everything else (the bias, the largest value, where subnormals start)
//! follows from them, and [`FloatFormat::decode`] turns any bit pattern into its value with
//! nothing but that description. The tests check the decoder against the hardware's own
//! conversions for every `f16` and `bf16` pattern and for random `f32` patterns.

// ANCHOR: float_format
/// A binary floating-point format: 1 sign bit, then `exponent_bits`, then `fraction_bits`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FloatFormat {
    pub name: &'static str,
    pub exponent_bits: u32,
    pub fraction_bits: u32,
}

/// IEEE 754 single precision, Rust's `f32`: 8 exponent bits, 23 fraction bits.
pub const F32: FloatFormat = FloatFormat {
    name: "f32",
    exponent_bits: 8,
    fraction_bits: 23,
};

/// IEEE 754 half precision (`f16`): 5 exponent bits, 10 fraction bits.
pub const F16: FloatFormat = FloatFormat {
    name: "f16",
    exponent_bits: 5,
    fraction_bits: 10,
};

/// Brain float (`bf16`): the top 16 bits of an `f32`, so 8 exponent bits and 7 fraction
/// bits: the range of `f32` with far fewer significant digits.
pub const BF16: FloatFormat = FloatFormat {
    name: "bf16",
    exponent_bits: 8,
    fraction_bits: 7,
};
// ANCHOR_END: float_format

/// The three fields of one bit pattern, as unsigned integers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FloatFields {
    pub sign: u32,
    /// The stored (biased) exponent.
    pub exponent: u32,
    pub fraction: u32,
}

/// What kind of value a bit pattern holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FloatClass {
    Zero,
    Subnormal,
    Normal,
    Infinite,
    NotANumber,
}

impl FloatFormat {
    /// Total width in bits.
    pub fn bits(&self) -> u32 {
        1 + self.exponent_bits + self.fraction_bits
    }

    /// The stored exponent of 1.0: half the exponent range, so that exponents below it are
    /// negative.
    pub fn bias(&self) -> i32 {
        (1 << (self.exponent_bits - 1)) - 1
    }

    /// The largest stored exponent, reserved for infinities and NaN.
    fn all_ones_exponent(&self) -> u32 {
        (1 << self.exponent_bits) - 1
    }

    /// Splits a bit pattern (in the low `bits()` bits of `pattern`) into its fields.
    pub fn fields(&self, pattern: u32) -> FloatFields {
        FloatFields {
            sign: (pattern >> (self.exponent_bits + self.fraction_bits)) & 1,
            exponent: (pattern >> self.fraction_bits) & self.all_ones_exponent(),
            fraction: pattern & ((1 << self.fraction_bits) - 1),
        }
    }

    pub fn classify(&self, pattern: u32) -> FloatClass {
        let fields = self.fields(pattern);
        match (fields.exponent, fields.fraction) {
            (0, 0) => FloatClass::Zero,
            (0, _) => FloatClass::Subnormal,
            (exponent, 0) if exponent == self.all_ones_exponent() => FloatClass::Infinite,
            (exponent, _) if exponent == self.all_ones_exponent() => FloatClass::NotANumber,
            _ => FloatClass::Normal,
        }
    }

    // ANCHOR: decode
    /// The value a bit pattern stands for, computed from the fields alone.
    ///
    /// A normal number is `(−1)^sign × 1.fraction × 2^(exponent − bias)`: the leading 1
    /// is implied, not stored. When the stored exponent is 0 the leading digit is 0 instead
    /// and the exponent stays at its smallest value, `1 − bias`: these *subnormal* numbers
    /// fill the gap between the smallest normal number and zero evenly.
    pub fn decode(&self, pattern: u32) -> f64 {
        let fields = self.fields(pattern);
        let sign = if fields.sign == 1 { -1.0 } else { 1.0 };
        let fraction = f64::from(fields.fraction) / f64::from(1u32 << self.fraction_bits);
        match self.classify(pattern) {
            FloatClass::Zero => sign * 0.0,
            FloatClass::Subnormal => sign * fraction * 2f64.powi(1 - self.bias()),
            FloatClass::Normal => {
                sign * (1.0 + fraction) * 2f64.powi(fields.exponent as i32 - self.bias())
            }
            FloatClass::Infinite => sign * f64::INFINITY,
            FloatClass::NotANumber => f64::NAN,
        }
    }
    // ANCHOR_END: decode

    /// The largest finite value: all-but-top exponent, all-ones fraction.
    pub fn largest_finite(&self) -> f64 {
        let exponent = (self.all_ones_exponent() - 1) << self.fraction_bits;
        self.decode(exponent | ((1 << self.fraction_bits) - 1))
    }

    /// The smallest positive normal value, `2^(1 − bias)`.
    pub fn smallest_normal(&self) -> f64 {
        self.decode(1 << self.fraction_bits)
    }

    /// The smallest positive subnormal value, `2^(1 − bias − fraction_bits)`.
    pub fn smallest_subnormal(&self) -> f64 {
        self.decode(1)
    }

    /// The gap between 1 and the next larger value, `2^−fraction_bits` ("machine epsilon").
    pub fn epsilon(&self) -> f64 {
        2f64.powi(-(self.fraction_bits as i32))
    }

    /// The bit pattern written out with spaces between sign, exponent and fraction,
    /// e.g. `0 01111111 00000000000000000000000` for 1.0 in `f32`.
    pub fn show_bits(&self, pattern: u32) -> String {
        let fields = self.fields(pattern);
        format!(
            "{} {:0exponent_width$b} {:0fraction_width$b}",
            fields.sign,
            fields.exponent,
            fields.fraction,
            exponent_width = self.exponent_bits as usize,
            fraction_width = self.fraction_bits as usize,
        )
    }
}

// ANCHOR: bit_patterns
/// The bit pattern of `value` in `format`, rounding to the nearest representable value
/// (ties to even) as the hardware conversions do. Values too large for a 16-bit format
/// become infinity. `None` for a format other than the three this module defines.
pub fn bit_pattern(format: FloatFormat, value: f32) -> Option<u32> {
    match format {
        F32 => Some(value.to_bits()),
        F16 => Some(u32::from(half::f16::from_f32(value).to_bits())),
        BF16 => Some(u32::from(half::bf16::from_f32(value).to_bits())),
        _ => None,
    }
}
// ANCHOR_END: bit_patterns

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Same value, with NaN equal to NaN and +0 distinguished from −0.
    fn same(left: f64, right: f64) -> bool {
        (left.is_nan() && right.is_nan()) || left.to_bits() == right.to_bits()
    }

    #[test]
    fn decoding_every_f16_pattern_matches_the_conversion() {
        for pattern in 0..=u16::MAX {
            let converted = half::f16::from_bits(pattern).to_f64();
            let decoded = F16.decode(u32::from(pattern));
            assert!(
                same(decoded, converted),
                "{pattern:#06x}: {decoded} vs {converted}"
            );
        }
    }

    #[test]
    fn decoding_every_bf16_pattern_matches_the_conversion() {
        for pattern in 0..=u16::MAX {
            let converted = half::bf16::from_bits(pattern).to_f64();
            let decoded = BF16.decode(u32::from(pattern));
            assert!(
                same(decoded, converted),
                "{pattern:#06x}: {decoded} vs {converted}"
            );
        }
    }

    proptest! {
        #[test]
        fn decoding_f32_patterns_matches_the_hardware(pattern: u32) {
            let decoded = F32.decode(pattern);
            let hardware = f64::from(f32::from_bits(pattern));
            prop_assert!(same(decoded, hardware), "{pattern:#010x}: {decoded} vs {hardware}");
        }
    }

    #[test]
    fn one_is_the_bias_with_an_empty_fraction() {
        assert_eq!(
            F32.show_bits(1.0f32.to_bits()),
            "0 01111111 00000000000000000000000"
        );
        assert_eq!(
            F16.show_bits(bit_pattern(F16, 1.0).unwrap()),
            "0 01111 0000000000"
        );
        assert_eq!(
            BF16.show_bits(bit_pattern(BF16, -2.0).unwrap()),
            "1 10000000 0000000"
        );
    }

    #[test]
    fn limits_match_the_standard_constants() {
        assert_eq!(F32.largest_finite(), f64::from(f32::MAX));
        assert_eq!(F32.smallest_normal(), f64::from(f32::MIN_POSITIVE));
        assert_eq!(F32.epsilon(), f64::from(f32::EPSILON));
        assert_eq!(F16.largest_finite(), 65504.0);
        assert_eq!(F16.smallest_subnormal(), 2f64.powi(-24));
        assert_eq!(F16.epsilon(), f64::from(half::f16::EPSILON.to_f32()));
        assert_eq!(BF16.largest_finite(), half::bf16::MAX.to_f64());
    }

    #[test]
    fn special_values_are_classified() {
        assert_eq!(F32.classify(f32::INFINITY.to_bits()), FloatClass::Infinite);
        assert_eq!(F32.classify(f32::NAN.to_bits()), FloatClass::NotANumber);
        assert_eq!(F32.classify(1e-40f32.to_bits()), FloatClass::Subnormal);
        assert_eq!(F32.classify((-0.0f32).to_bits()), FloatClass::Zero);
        // 70 000 is beyond f16's largest finite value, 65 504.
        assert_eq!(
            F16.classify(bit_pattern(F16, 70_000.0).unwrap()),
            FloatClass::Infinite
        );
        // bf16 keeps f32's range: 70 000 is an ordinary number there.
        assert_eq!(
            BF16.classify(bit_pattern(BF16, 70_000.0).unwrap()),
            FloatClass::Normal
        );
    }
}
