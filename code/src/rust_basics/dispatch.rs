//! Three ways to call "one of several operations" chosen at run time: a generic function
//! (static dispatch, one compiled copy per type), a trait object (dynamic dispatch
//! through a table of function pointers), and an enum with a `match`.
//!
//! All variants apply the same activation to every value of a slice and compute identical
//! results; only how the call is found differs.

// ANCHOR: trait
/// An activation function applied to one value.
pub trait Activation {
    fn apply(&self, value: f32) -> f32;
}

/// `max(0, x)`.
pub struct Relu;

/// `x` for positive values, `slope · x` for negative ones.
pub struct LeakyRelu {
    pub slope: f32,
}

impl Activation for Relu {
    fn apply(&self, value: f32) -> f32 {
        value.max(0.0)
    }
}

impl Activation for LeakyRelu {
    fn apply(&self, value: f32) -> f32 {
        if value > 0.0 {
            value
        } else {
            self.slope * value
        }
    }
}
// ANCHOR_END: trait

// ANCHOR: generic
/// Static dispatch: the compiler makes one copy of this function per activation type it
/// is called with, and inlines `apply` into each copy's loop.
#[inline(never)]
pub fn apply_generic<A: Activation>(activation: &A, values: &mut [f32]) {
    for value in values {
        *value = activation.apply(*value);
    }
}
// ANCHOR_END: generic

// ANCHOR: dynamic
/// Dynamic dispatch, once per value: `&dyn Activation` is a pointer to the data and a
/// pointer to the type's table of methods, and every `apply` is an indirect call that the
/// compiler cannot inline.
#[inline(never)]
pub fn apply_dynamic(activation: &dyn Activation, values: &mut [f32]) {
    for value in values {
        *value = activation.apply(*value);
    }
}
// ANCHOR_END: dynamic

// ANCHOR: dynamic_per_slice
/// A trait whose method takes the whole slice: one indirect call per slice, and inside
/// each implementation an ordinary loop that the compiler can optimise.
pub trait ActivationOnSlices {
    fn apply_all(&self, values: &mut [f32]);
}

impl<A: Activation> ActivationOnSlices for A {
    fn apply_all(&self, values: &mut [f32]) {
        apply_generic(self, values);
    }
}

/// Dynamic dispatch, once per slice.
#[inline(never)]
pub fn apply_dynamic_per_slice(activation: &dyn ActivationOnSlices, values: &mut [f32]) {
    activation.apply_all(values);
}
// ANCHOR_END: dynamic_per_slice

// ANCHOR: enum
/// The closed set of activations as one type: a value says which variant it is with a
/// small tag, and `match` chooses the code.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ActivationKind {
    Relu,
    LeakyRelu { slope: f32 },
}

impl ActivationKind {
    pub fn apply(self, value: f32) -> f32 {
        match self {
            ActivationKind::Relu => value.max(0.0),
            ActivationKind::LeakyRelu { slope } => {
                if value > 0.0 {
                    value
                } else {
                    slope * value
                }
            }
        }
    }
}

/// Enum dispatch: the `match` sits inside the loop as written. The tag cannot change
/// during the loop, so the compiler may move the `match` outside it and compile one loop
/// per variant.
#[inline(never)]
pub fn apply_enum(activation: ActivationKind, values: &mut [f32]) {
    for value in values {
        *value = activation.apply(*value);
    }
}
// ANCHOR_END: enum

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs() -> Vec<f32> {
        (0..103).map(|index| (index as f32 - 51.0) * 0.37).collect()
    }

    #[test]
    fn every_dispatch_gives_the_same_values() {
        let leaky = LeakyRelu { slope: 0.125 };
        let kind = ActivationKind::LeakyRelu { slope: 0.125 };
        let mut generic = inputs();
        apply_generic(&leaky, &mut generic);
        let mut dynamic = inputs();
        apply_dynamic(&leaky, &mut dynamic);
        let mut per_slice = inputs();
        apply_dynamic_per_slice(&leaky, &mut per_slice);
        let mut enumerated = inputs();
        apply_enum(kind, &mut enumerated);
        assert_eq!(generic, dynamic);
        assert_eq!(generic, per_slice);
        assert_eq!(generic, enumerated);
        assert_eq!(generic[0], -51.0 * 0.37 * 0.125);
        assert_eq!(generic[102], 51.0 * 0.37);
    }

    #[test]
    fn the_enum_is_a_tag_beside_the_largest_variant() {
        // A 4-byte f32 for the slope, and the tag padded to the f32's alignment.
        assert_eq!(std::mem::size_of::<ActivationKind>(), 8);
    }

    #[test]
    fn relu_zeroes_the_negative_values_whichever_way_it_is_called() {
        let mut generic = inputs();
        apply_generic(&Relu, &mut generic);
        let mut enumerated = inputs();
        apply_enum(ActivationKind::Relu, &mut enumerated);
        assert_eq!(generic, enumerated);
        assert!(generic[..51].iter().all(|value| *value == 0.0));
        assert!(generic[52..].iter().all(|value| *value > 0.0));
    }
}
