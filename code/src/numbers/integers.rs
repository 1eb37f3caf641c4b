//! Integer overflow in Rust: what `+` does when the result does not fit, and the four
//! families of methods that say what should happen instead.
//!
//! A `u8` holds 0 to 255. `250u8 + 10` has no `u8` answer. Rust's rule: in a build with
//! overflow checks (the default for `cargo build` and `cargo test`, the *debug* profile)
//! the addition panics; in a build without them (the default for `--release`) it wraps
//! around modulo 2⁸ and gives 4. Code that must behave the same in both builds says what it
//! wants with `wrapping_`, `checked_`, `saturating_` or `overflowing_` methods.

// ANCHOR: overflow_methods
/// The four answers Rust offers for `a + b` when the sum may not fit in a `u8`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AdditionOutcomes {
    /// Modulo 2⁸: the bits that fit, whatever was lost.
    pub wrapping: u8,
    /// `None` when the true sum does not fit.
    pub checked: Option<u8>,
    /// Clamped to the largest (or smallest) value of the type.
    pub saturating: u8,
    /// The wrapped sum, and whether it wrapped.
    pub overflowing: (u8, bool),
}

pub fn add_every_way(a: u8, b: u8) -> AdditionOutcomes {
    AdditionOutcomes {
        wrapping: a.wrapping_add(b),
        checked: a.checked_add(b),
        saturating: a.saturating_add(b),
        overflowing: a.overflowing_add(b),
    }
}
// ANCHOR_END: overflow_methods

/// Whether this build checks arithmetic for overflow: `true` in the debug profile, `false`
/// in release unless `overflow-checks = true` is set in `Cargo.toml`.
pub fn overflow_checks_enabled() -> bool {
    // `a + b` on a value the optimiser cannot see through: it panics only with checks.
    let largest = std::hint::black_box(u8::MAX);
    std::panic::catch_unwind(|| largest + std::hint::black_box(1)).is_err()
}

// ANCHOR: midpoint
/// The midpoint of two indices the way binary searches were written for decades:
/// `(low + high) / 2`. The sum overflows once the two add up to more than the type holds:
/// the binary search of Java's standard library did this with 32-bit signed indices and
/// failed on arrays of more than 2³⁰ elements until 2006.
pub fn midpoint_naive(low: u32, high: u32) -> Option<u32> {
    low.checked_add(high).map(|sum| sum / 2)
}

/// The same midpoint without any intermediate that can overflow: the bits both values share
/// count fully, the bits only one of them has count half.
pub fn midpoint_without_overflow(low: u32, high: u32) -> u32 {
    (low & high) + ((low ^ high) >> 1)
}
// ANCHOR_END: midpoint

// ANCHOR: checked_size
/// The number of bytes of a `rows × columns` matrix of `f32`, or `None` where it does not fit
/// in a `usize`. A size computed from user input is multiplied with `checked_mul`: a wrapped
/// product would allocate a tiny buffer and index far past its end.
pub fn matrix_bytes(rows: usize, columns: usize) -> Option<usize> {
    rows.checked_mul(columns)?.checked_mul(size_of::<f32>())
}
// ANCHOR_END: checked_size

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_four_methods_agree_when_the_sum_fits_and_differ_when_it_does_not() {
        let fits = add_every_way(100, 27);
        assert_eq!(fits.wrapping, 127);
        assert_eq!(fits.checked, Some(127));
        assert_eq!(fits.saturating, 127);
        assert_eq!(fits.overflowing, (127, false));

        let too_big = add_every_way(250, 10);
        assert_eq!(too_big.wrapping, 4);
        assert_eq!(too_big.checked, None);
        assert_eq!(too_big.saturating, 255);
        assert_eq!(too_big.overflowing, (4, true));
    }

    #[test]
    fn tests_run_with_overflow_checks_so_a_plain_addition_that_overflows_panics() {
        // `cargo test` uses the test profile, which inherits the debug profile's checks.
        assert_eq!(overflow_checks_enabled(), cfg!(debug_assertions));
    }

    #[test]
    fn signed_overflow_wraps_to_the_other_end_of_the_range() {
        assert_eq!(i8::MAX.wrapping_add(1), i8::MIN);
        assert_eq!(i8::MIN.checked_neg(), None);
        assert_eq!(i8::MIN.saturating_neg(), i8::MAX);
        // Absolute value of the smallest i8 has no i8 answer either.
        assert_eq!(i8::MIN.overflowing_abs(), (i8::MIN, true));
    }

    #[test]
    fn the_naive_midpoint_fails_on_large_indices() {
        assert_eq!(midpoint_naive(3_000_000_000, 4_000_000_000), None);
        assert_eq!(
            midpoint_without_overflow(3_000_000_000, 4_000_000_000),
            3_500_000_000
        );
    }

    #[test]
    fn matrix_bytes_reports_overflow_instead_of_wrapping() {
        assert_eq!(matrix_bytes(1024, 1024), Some(4 << 20));
        assert_eq!(matrix_bytes(usize::MAX / 2, 3), None);
        assert_eq!(matrix_bytes(usize::MAX / 4 + 1, 1), None);
    }

    proptest! {
        #[test]
        fn the_midpoint_without_overflow_is_exact(low: u32, high: u32) {
            let exact = ((u64::from(low) + u64::from(high)) / 2) as u32;
            prop_assert_eq!(midpoint_without_overflow(low, high), exact);
        }

        #[test]
        fn wrapping_is_addition_modulo_256(a: u8, b: u8) {
            let outcome = add_every_way(a, b);
            let exact = u16::from(a) + u16::from(b);
            prop_assert_eq!(u16::from(outcome.wrapping), exact % 256);
            prop_assert_eq!(outcome.overflowing.1, exact > 255);
            prop_assert_eq!(outcome.checked.is_none(), exact > 255);
            prop_assert_eq!(u16::from(outcome.saturating), exact.min(255));
        }
    }
}
