//! Packing unit normals and colours into fewer bytes.
//!
//! A surface normal is a unit vector: three `f32`, twelve bytes, although only two numbers
//! are free (the length is always one). The *octahedral* encoding projects the sphere onto
//! the octahedron |x| + |y| + |z| = 1 and unfolds that onto the square [-1, 1]²: the upper
//! half maps to the inner diamond, the lower half folds out into the four corners. Two
//! numbers in [-1, 1] then store as two 16-bit or two 8-bit signed normalised integers
//! (*snorm*): four or two bytes instead of twelve, with an angular error this file measures.
//!
//! Colours in [0, 1] pack the same way, as unsigned normalised integers (*unorm*): four
//! channels of 8 bits in one `u32`, or red, green and blue in 5, 6 and 5 bits of a `u16`.

/// A 3D vector.
pub type Vector3 = [f32; 3];

// ANCHOR: octahedral
/// The octahedral coordinates in [-1, 1]² of the unit vector `normal`.
pub fn octahedral_encode(normal: Vector3) -> [f32; 2] {
    let [x, y, z] = normal;
    let length = x.abs() + y.abs() + z.abs();
    let (u, v) = (x / length, y / length);
    if z >= 0.0 {
        [u, v]
    } else {
        // Lower half: reflect across the diamond's edges into the corners.
        [(1.0 - v.abs()) * sign(u), (1.0 - u.abs()) * sign(v)]
    }
}

/// The unit vector of octahedral coordinates `[u, v]`.
pub fn octahedral_decode([u, v]: [f32; 2]) -> Vector3 {
    let z = 1.0 - u.abs() - v.abs();
    let (x, y) = if z >= 0.0 {
        (u, v)
    } else {
        ((1.0 - v.abs()) * sign(u), (1.0 - u.abs()) * sign(v))
    };
    normalise([x, y, z])
}

/// +1 or -1 (never 0, so that the fold of a point on an axis stays on the square's edge).
fn sign(value: f32) -> f32 {
    if value >= 0.0 { 1.0 } else { -1.0 }
}
// ANCHOR_END: octahedral

// ANCHOR: snorm
/// A value in [-1, 1] as a signed normalised integer of `bits` bits (at most 16):
/// -1 ↦ -(2ᵇ⁻¹ - 1), 1 ↦ 2ᵇ⁻¹ - 1, rounded to the nearest step.
pub fn to_snorm(value: f32, bits: u32) -> i32 {
    let largest = ((1 << (bits - 1)) - 1) as f32;
    (value.clamp(-1.0, 1.0) * largest).round() as i32
}

pub fn from_snorm(stored: i32, bits: u32) -> f32 {
    let largest = ((1 << (bits - 1)) - 1) as f32;
    (stored as f32 / largest).clamp(-1.0, 1.0)
}

/// A normal in `2 · bits` bits (the two snorm values side by side in one `u32`).
pub fn pack_normal(normal: Vector3, bits: u32) -> u32 {
    let [u, v] = octahedral_encode(normal);
    let mask = (1u32 << bits) - 1;
    (to_snorm(u, bits) as u32 & mask) | (to_snorm(v, bits) as u32 & mask) << bits
}

pub fn unpack_normal(packed: u32, bits: u32) -> Vector3 {
    let mask = (1u32 << bits) - 1;
    // Sign-extend each field: shift it to the top of an i32, then back down.
    let field = |shift: u32| (((packed >> shift) & mask) << (32 - bits)) as i32 >> (32 - bits);
    octahedral_decode([from_snorm(field(0), bits), from_snorm(field(bits), bits)])
}
// ANCHOR_END: snorm

/// The angle between two unit vectors, in degrees, computed as `atan2(|a × b|, a · b)` in
/// `f64`: the `acos` of the dot product loses small angles to rounding.
pub fn angle_degrees(a: Vector3, b: Vector3) -> f64 {
    let [a, b] = [a, b].map(|v| v.map(f64::from));
    let cross = [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ];
    let sine = cross.iter().map(|c| c * c).sum::<f64>().sqrt();
    let cosine: f64 = (0..3).map(|i| a[i] * b[i]).sum();
    sine.atan2(cosine).to_degrees()
}

pub fn normalise([x, y, z]: Vector3) -> Vector3 {
    let length = (x * x + y * y + z * z).sqrt();
    [x / length, y / length, z / length]
}

/// `count` unit vectors spread uniformly over the sphere (a normalised Gaussian triple,
/// drawn by the Box–Muller transform from a seeded generator).
pub fn random_normals(count: usize, seed: u64) -> Vec<Vector3> {
    use rand::{RngExt, SeedableRng};
    let mut random = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut gaussian = || {
        let u: f64 = random.random_range(f64::MIN_POSITIVE..1.0);
        let v: f64 = random.random();
        ((-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()) as f32
    };
    (0..count)
        .map(|_| normalise([gaussian(), gaussian(), gaussian()]))
        .collect()
}

/// The largest and the mean angular error, in degrees, of packing `normals` into
/// `2 · bits` bits and unpacking them.
pub fn normal_packing_error(normals: &[Vector3], bits: u32) -> (f64, f64) {
    let errors: Vec<f64> = normals
        .iter()
        .map(|&normal| angle_degrees(normal, unpack_normal(pack_normal(normal, bits), bits)))
        .collect();
    let largest = errors.iter().copied().fold(0.0, f64::max);
    (
        largest,
        errors.iter().sum::<f64>() / errors.len().max(1) as f64,
    )
}

// ANCHOR: colours
/// Red, green, blue and alpha in [0, 1] as four 8-bit unorm channels of one `u32`.
pub fn pack_rgba8([red, green, blue, alpha]: [f32; 4]) -> u32 {
    let channel = |value: f32| (value.clamp(0.0, 1.0) * 255.0).round() as u32;
    channel(red) | channel(green) << 8 | channel(blue) << 16 | channel(alpha) << 24
}

pub fn unpack_rgba8(packed: u32) -> [f32; 4] {
    [0, 8, 16, 24].map(|shift| ((packed >> shift) & 0xff) as f32 / 255.0)
}

/// Red, green and blue in 5, 6 and 5 bits of a `u16`: green gets the extra bit because the
/// eye is most sensitive to it.
pub fn pack_rgb565([red, green, blue]: [f32; 3]) -> u16 {
    let channel =
        |value: f32, bits: u32| (value.clamp(0.0, 1.0) * ((1 << bits) - 1) as f32).round() as u16;
    channel(red, 5) << 11 | channel(green, 6) << 5 | channel(blue, 5)
}

pub fn unpack_rgb565(packed: u16) -> [f32; 3] {
    [
        f32::from(packed >> 11) / 31.0,
        f32::from((packed >> 5) & 0x3f) / 63.0,
        f32::from(packed & 0x1f) / 31.0,
    ]
}
// ANCHOR_END: colours

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_axes_and_the_poles_survive_exactly() {
        for normal in [
            [0.0, 0.0, 1.0],
            [0.0, 0.0, -1.0],
            [1.0, 0.0, 0.0],
            [-1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [0.0, -1.0, 0.0],
        ] {
            assert_eq!(octahedral_decode(octahedral_encode(normal)), normal);
            assert!(angle_degrees(normal, unpack_normal(pack_normal(normal, 8), 8)) < 1e-3);
        }
    }

    #[test]
    fn the_error_shrinks_about_256_fold_from_8_to_16_bits_per_coordinate() {
        let normals = random_normals(100_000, 1);
        let (largest_16, mean_16) = normal_packing_error(&normals, 16);
        let (largest_8, mean_8) = normal_packing_error(&normals, 8);
        assert!(largest_16 < 0.01, "16 bits: {largest_16}°");
        assert!(largest_8 < 2.0 && largest_8 > 0.1, "8 bits: {largest_8}°");
        let ratio = mean_8 / mean_16;
        assert!((100.0..700.0).contains(&ratio), "mean error ratio {ratio}");
    }

    #[test]
    fn colours_round_trip_within_half_a_step() {
        let colour = [0.2, 0.5, 0.999, 1.0];
        let back = unpack_rgba8(pack_rgba8(colour));
        for (a, b) in colour.iter().zip(back) {
            assert!((a - b).abs() <= 0.5 / 255.0 + 1e-6);
        }
        assert_eq!(pack_rgb565([1.0, 1.0, 1.0]), u16::MAX);
        assert_eq!(unpack_rgb565(pack_rgb565([0.0, 1.0, 0.0])), [0.0, 1.0, 0.0]);
    }

    proptest! {
        #[test]
        fn decode_inverts_encode(x in -1.0f32..1.0, y in -1.0f32..1.0, z in -1.0f32..1.0) {
            prop_assume!(x * x + y * y + z * z > 1e-4);
            let normal = normalise([x, y, z]);
            let back = octahedral_decode(octahedral_encode(normal));
            prop_assert!(angle_degrees(normal, back) < 0.01);
            let [u, v] = octahedral_encode(normal);
            prop_assert!(u.abs() <= 1.0 && v.abs() <= 1.0);
        }

        #[test]
        fn snorm_is_exact_on_its_own_steps(stored in -32767i32..=32767) {
            prop_assert_eq!(to_snorm(from_snorm(stored, 16), 16), stored);
        }

        #[test]
        fn rgb565_is_within_half_a_step(r in 0.0f32..=1.0, g in 0.0f32..=1.0, b in 0.0f32..=1.0) {
            let back = unpack_rgb565(pack_rgb565([r, g, b]));
            prop_assert!((back[0] - r).abs() <= 0.5 / 31.0 + 1e-6);
            prop_assert!((back[1] - g).abs() <= 0.5 / 63.0 + 1e-6);
            prop_assert!((back[2] - b).abs() <= 0.5 / 31.0 + 1e-6);
        }
    }
}
