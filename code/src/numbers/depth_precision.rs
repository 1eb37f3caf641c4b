//! How finely a depth buffer can tell two distances apart, with the standard mapping of
//! distance to depth and with *reversed Z*, stored as `f32` or as 24-bit fixed point.
//!
//! A perspective projection stores, for a point at distance `z` from the camera, a depth
//! `d` in [0, 1] that varies like `1 / z`: the standard mapping puts the near plane at 0 and
//! the far plane at 1, reversed Z puts the near plane at 1 and the far plane at 0. Most of
//! the range of `1 / z` is spent close to the camera. Fixed point spaces its steps evenly
//! in `d`, so far away one step covers a long stretch of distance. A float spaces its steps
//! evenly in *relative* terms, most finely near 0: the standard mapping wastes that fine
//! spacing on the first stretch after the near plane, while reversed Z puts it at the far
//! distances, where `1 / z` is flattest, and the two effects nearly cancel.
//!
//! The functions here compute, for a distance, the gap to the next distance that stores a
//! different depth: the smallest difference the buffer can see there. The mapping is
//! evaluated in `f64`, so the measurement shows what the stored format can represent, not
//! the extra rounding of a projection computed in `f32`.

/// How distance maps to depth.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DepthMapping {
    /// Near plane at depth 0, far plane at 1.
    Standard { near: f64, far: f64 },
    /// Near plane at depth 1, far plane at 0.
    Reversed { near: f64, far: f64 },
    /// Reversed, with the far plane at infinity: `d = near / z`.
    ReversedInfinite { near: f64 },
}

/// How depth is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DepthStorage {
    Float32,
    /// Unsigned normalised integer of 24 bits: `d` rounded to a multiple of 1 / (2²⁴ - 1).
    Fixed24,
}

// ANCHOR: depth_mapping
impl DepthMapping {
    /// The depth in [0, 1] of a point at distance `z`.
    pub fn depth(self, z: f64) -> f64 {
        match self {
            DepthMapping::Standard { near, far } => far / (far - near) * (1.0 - near / z),
            DepthMapping::Reversed { near, far } => near / (far - near) * (far / z - 1.0),
            DepthMapping::ReversedInfinite { near } => near / z,
        }
    }

    /// The distance of depth `d`: the inverse of [`DepthMapping::depth`].
    pub fn distance(self, d: f64) -> f64 {
        match self {
            DepthMapping::Standard { near, far } => near / (1.0 - d * (far - near) / far),
            DepthMapping::Reversed { near, far } => far / (d * (far - near) / near + 1.0),
            DepthMapping::ReversedInfinite { near } => near / d,
        }
    }
}
// ANCHOR_END: depth_mapping

// ANCHOR: depth_resolution
const FIXED24_STEPS: f64 = ((1u32 << 24) - 1) as f64;

/// The stored depth of `d`, and the stored depth one step further from the camera, both as
/// the `f64` depths they stand for.
fn stored_and_next(d: f64, storage: DepthStorage, increasing: bool) -> (f64, f64) {
    match storage {
        DepthStorage::Float32 => {
            let stored = d as f32; // rounds to the nearest f32
            let bits = stored.to_bits();
            let next = f32::from_bits(if increasing { bits + 1 } else { bits - 1 });
            (f64::from(stored), f64::from(next))
        }
        DepthStorage::Fixed24 => {
            let stored = (d * FIXED24_STEPS).round();
            let next = if increasing {
                stored + 1.0
            } else {
                stored - 1.0
            };
            (stored / FIXED24_STEPS, next / FIXED24_STEPS)
        }
    }
}

/// The smallest difference in distance the buffer can resolve at distance `z`: the length
/// of the stretch of distances that share `z`'s stored depth's neighbour step.
pub fn depth_resolution(mapping: DepthMapping, storage: DepthStorage, z: f64) -> f64 {
    let increasing = matches!(mapping, DepthMapping::Standard { .. });
    let (stored, next) = stored_and_next(mapping.depth(z), storage, increasing);
    (mapping.distance(next) - mapping.distance(stored)).abs()
}

/// How many distinct stored depths lie between distances `from` and `to`.
pub fn distinct_depths(mapping: DepthMapping, storage: DepthStorage, from: f64, to: f64) -> u64 {
    let (a, b) = (mapping.depth(from), mapping.depth(to));
    match storage {
        DepthStorage::Float32 => u64::from((a as f32).to_bits().abs_diff((b as f32).to_bits())),
        DepthStorage::Fixed24 => {
            ((a * FIXED24_STEPS).round() - (b * FIXED24_STEPS).round()).abs() as u64
        }
    }
}
// ANCHOR_END: depth_resolution

#[cfg(test)]
mod tests {
    use super::*;

    const NEAR: f64 = 0.1;
    const FAR: f64 = 10_000.0;

    #[test]
    fn the_mappings_put_the_planes_where_they_say() {
        let standard = DepthMapping::Standard {
            near: NEAR,
            far: FAR,
        };
        let reversed = DepthMapping::Reversed {
            near: NEAR,
            far: FAR,
        };
        assert!(standard.depth(NEAR).abs() < 1e-12 && (standard.depth(FAR) - 1.0).abs() < 1e-12);
        assert!((reversed.depth(NEAR) - 1.0).abs() < 1e-12 && reversed.depth(FAR).abs() < 1e-12);
        for z in [0.2, 3.0, 700.0] {
            for mapping in [
                standard,
                reversed,
                DepthMapping::ReversedInfinite { near: NEAR },
            ] {
                assert!((mapping.distance(mapping.depth(z)) - z).abs() < 1e-9 * z);
            }
        }
    }

    #[test]
    fn reversed_float_depth_resolves_far_distances_that_standard_float_cannot() {
        let standard = DepthMapping::Standard {
            near: NEAR,
            far: FAR,
        };
        let reversed = DepthMapping::Reversed {
            near: NEAR,
            far: FAR,
        };
        let far_standard = depth_resolution(standard, DepthStorage::Float32, 5000.0);
        let far_reversed = depth_resolution(reversed, DepthStorage::Float32, 5000.0);
        assert!(
            far_reversed * 1000.0 < far_standard,
            "{far_reversed} vs {far_standard}"
        );
        // Fixed point has the same steps either way round.
        let fixed_standard = depth_resolution(standard, DepthStorage::Fixed24, 5000.0);
        let fixed_reversed = depth_resolution(reversed, DepthStorage::Fixed24, 5000.0);
        assert!((fixed_standard / fixed_reversed - 1.0).abs() < 0.01);
        // Reversed f32 resolves about a constant fraction of the distance everywhere.
        for z in [1.0, 10.0, 100.0, 1000.0] {
            let relative = depth_resolution(reversed, DepthStorage::Float32, z) / z;
            assert!((1e-8..1e-6).contains(&relative), "{z}: {relative}");
        }
    }

    #[test]
    fn distinct_depths_count_the_steps_between_two_distances() {
        let reversed = DepthMapping::Reversed {
            near: NEAR,
            far: FAR,
        };
        let standard = DepthMapping::Standard {
            near: NEAR,
            far: FAR,
        };
        // Between 1000 and 2000 the reversed float has millions of values, the standard
        // float only thousands.
        assert!(distinct_depths(reversed, DepthStorage::Float32, 1000.0, 2000.0) > 1_000_000);
        assert!(distinct_depths(standard, DepthStorage::Float32, 1000.0, 2000.0) < 10_000);
    }
}
