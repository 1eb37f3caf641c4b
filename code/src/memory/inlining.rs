//! One small function in a hot loop: inlined, called, or called through a pointer.
//!
//! *Inlining* replaces a call by a copy of the called function's body. That saves the call
//! itself (a jump, a return, arguments moved into the registers the calling convention
//! prescribes) but, far more importantly, it lets the optimiser see the loop and the
//! function as one piece of code: here it can then process several values at once with
//! SIMD instructions. A call it cannot see through forces it to handle one value at a
//! time.
//!
//! The three `apply_*` functions compute exactly the same values; they differ only in
//! what the compiler may inline.

// ANCHOR: soft_sign
/// The soft sign, `x / (1 + |x|)`: a smooth squashing of any value into (−1, 1), used as
/// an activation function. Small enough that a call costs as much as the work.
#[inline(always)]
pub fn soft_sign(value: f32) -> f32 {
    value / (1.0 + value.abs())
}

/// The same function, but the compiler is told never to inline it: every use is a call.
#[inline(never)]
pub fn soft_sign_never_inlined(value: f32) -> f32 {
    soft_sign(value)
}
// ANCHOR_END: soft_sign

// ANCHOR: apply
/// Applies the soft sign to every value in place, with the function inlined into the
/// loop: the compiler turns the loop into SIMD instructions.
pub fn apply_inlined(values: &mut [f32]) {
    for value in values {
        *value = soft_sign(*value);
    }
}

/// The same loop, with one real call per value.
pub fn apply_not_inlined(values: &mut [f32]) {
    for value in values {
        *value = soft_sign_never_inlined(*value);
    }
}

/// The same loop through a function pointer, as with a callback or a `dyn Fn`. The
/// compiler cannot inline a function it only learns about at run time. (When it can see
/// the pointer's value, it may inline anyway: callers that want to measure this hide the
/// pointer from the optimiser with `std::hint::black_box`.)
pub fn apply_through_pointer(values: &mut [f32], function: fn(f32) -> f32) {
    for value in values {
        *value = function(*value);
    }
}
// ANCHOR_END: apply

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_three_loops_compute_the_same_values() {
        for length in [0, 1, 3, 8, 17, 1000] {
            let input = crate::tensor::Tensor2d::random(1, length, -50.0..=50.0, 5).into_vec();
            let expected: Vec<f32> = input.iter().map(|&value| soft_sign(value)).collect();

            let mut values = input.clone();
            apply_inlined(&mut values);
            assert_eq!(values, expected);

            let mut values = input.clone();
            apply_not_inlined(&mut values);
            assert_eq!(values, expected);

            let mut values = input.clone();
            apply_through_pointer(
                &mut values,
                std::hint::black_box(soft_sign as fn(f32) -> f32),
            );
            assert_eq!(values, expected);
        }
    }

    #[test]
    fn soft_sign_squashes_into_the_open_interval() {
        assert_eq!(soft_sign(0.0), 0.0);
        assert_eq!(soft_sign(1.0), 0.5);
        assert_eq!(soft_sign(-3.0), -0.75);
        for value in [-7.0_f32, 7.0, -1e6, 1e6] {
            assert!(soft_sign(value).abs() < 1.0);
            assert_eq!(soft_sign(value).signum(), value.signum());
        }
        // Far out, the result rounds to ±1 in f32, but never beyond.
        assert_eq!(soft_sign(1e30), 1.0);
        assert_eq!(soft_sign(-1e30), -1.0);
        assert!(soft_sign(f32::NAN).is_nan());
    }
}
