//! The point cloud: positions on a 16-bit grid, a colour per point, and the generators of
//! the test and benchmark clouds.
//!
//! Laser scanners and the LAS files they write store coordinates as integers with one
//! scale and one offset for the whole file. The cloud here does the same: every coordinate
//! is a `u16` step on a grid over the cube from −1 to 1, so a position is
//! `−1 + step · 2⁻¹⁵`. That value is exact in an `f32` (16 significant bits), which is why
//! the 16-byte `f32` layout and the 8-byte packed layout describe exactly the same points
//! and the renderers can be compared bit for bit.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::PointCloudError;

// ANCHOR: grid
/// Where grid coordinate 0 lies, on every axis.
pub const GRID_ORIGIN: f32 = -1.0;
/// The distance between neighbouring grid coordinates: 2 / 65 536, a power of two, so
/// `GRID_ORIGIN + q · GRID_STEP` is exact in an `f32`.
pub const GRID_STEP: f32 = 1.0 / 32_768.0;

/// A point cloud: for every point three grid coordinates and an index into a palette of
/// 256 colours.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PointCloud {
    pub grid_positions: Vec<[u16; 3]>,
    pub colours: Vec<u8>,
}
// ANCHOR_END: grid

/// The point as the first kernels read it: three `f32` and the colour, 16 bytes
/// (WGSL's `struct Point { position: vec3<f32>, colour: u32 }`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct FloatPoint {
    pub position: [f32; 3],
    pub colour: u32,
}

impl PointCloud {
    /// Snaps `positions` to the grid (the nearest grid point) and keeps `colours`.
    /// Positions must be finite and inside the cube from −1 to 1.
    pub fn from_positions(
        positions: &[[f32; 3]],
        colours: &[u8],
    ) -> Result<PointCloud, PointCloudError> {
        if positions.len() != colours.len() {
            return Err(PointCloudError::ColourCount {
                points: positions.len(),
                colours: colours.len(),
            });
        }
        let largest = f32::from(u16::MAX);
        let mut grid_positions = Vec::with_capacity(positions.len());
        for (index, position) in positions.iter().enumerate() {
            if position.iter().any(|value| !value.is_finite()) {
                return Err(PointCloudError::NotFinite {
                    index,
                    position: *position,
                });
            }
            let steps = position.map(|value| ((value - GRID_ORIGIN) / GRID_STEP).round());
            if steps.iter().any(|&step| !(0.0..=largest).contains(&step)) {
                return Err(PointCloudError::OutsideTheCube {
                    index,
                    position: *position,
                });
            }
            grid_positions.push(steps.map(|step| step as u16));
        }
        Ok(PointCloud {
            grid_positions,
            colours: colours.to_vec(),
        })
    }

    pub fn len(&self) -> usize {
        self.grid_positions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.grid_positions.is_empty()
    }

    /// The position of point `index` in `f32`, exactly.
    pub fn position(&self, index: usize) -> [f32; 3] {
        self.grid_positions[index].map(grid_to_float)
    }

    /// The 16-byte layout: `f32` positions and the colour.
    pub fn float_points(&self) -> Vec<FloatPoint> {
        (0..self.len())
            .map(|index| FloatPoint {
                position: self.position(index),
                colour: u32::from(self.colours[index]),
            })
            .collect()
    }

    // ANCHOR: packed_points
    /// The 8-byte layout: `x | y << 16` in the first word, `z | colour << 16` in the
    /// second. Half the bytes of [`PointCloud::float_points`], the same points.
    pub fn packed_points(&self) -> Vec<[u32; 2]> {
        self.grid_positions
            .iter()
            .zip(&self.colours)
            .map(|(&[x, y, z], &colour)| {
                [
                    u32::from(x) | u32::from(y) << 16,
                    u32::from(z) | u32::from(colour) << 16,
                ]
            })
            .collect()
    }
    // ANCHOR_END: packed_points

    // ANCHOR: morton_order
    /// The same points sorted along a 3D Morton curve: points close in space end up close
    /// in the arrays, so neighbouring invocations of a kernel write neighbouring pixels.
    pub fn in_morton_order(&self) -> PointCloud {
        let mut order: Vec<(u64, usize)> = self
            .grid_positions
            .iter()
            .enumerate()
            .map(|(index, &position)| (morton_code_3d(position), index))
            .collect();
        order.sort_unstable();
        PointCloud {
            grid_positions: order
                .iter()
                .map(|&(_, index)| self.grid_positions[index])
                .collect(),
            colours: order
                .iter()
                .map(|&(_, index)| self.colours[index])
                .collect(),
        }
    }
    // ANCHOR_END: morton_order
}

/// A grid coordinate as an `f32`: exact, since the product has at most 16 significant bits
/// and the sum lands on a multiple of [`GRID_STEP`] between −1 and 1.
pub fn grid_to_float(step: u16) -> f32 {
    f32::from(step).mul_add(GRID_STEP, GRID_ORIGIN)
}

// ANCHOR: morton_3d
/// Moves bit `i` of `value` to bit `3i`: four shift-or-mask steps, each moving
/// half of the remaining groups of bits at once (module 3's 2D version leaves one gap
/// between bits, this one two).
pub fn spread_bits_3d(value: u16) -> u64 {
    let mut bits = u64::from(value);
    bits = (bits | bits << 16) & 0x001f_0000_ff00_00ff;
    bits = (bits | bits << 8) & 0x100f_00f0_0f00_f00f;
    bits = (bits | bits << 4) & 0x10c3_0c30_c30c_30c3;
    bits = (bits | bits << 2) & 0x1249_2492_4924_9249;
    bits
}

/// The Morton code of a grid position: the bits of x, y and z interleaved.
pub fn morton_code_3d([x, y, z]: [u16; 3]) -> u64 {
    spread_bits_3d(x) | spread_bits_3d(y) << 1 | spread_bits_3d(z) << 2
}
// ANCHOR_END: morton_3d

/// The shapes the generator can draw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// A tube wound around a (2, 3) torus knot: thin, curved, it overlaps itself.
    TorusKnot,
    /// A rolling terrain seen as a height field: one big surface, little overlap.
    Terrain,
    /// A lumpy sphere with the noise of a scanner: points scattered around the surface.
    NoisyScan,
}

// ANCHOR: generate
/// `count` points on `shape`, in random order (as points arrive from several merged scans),
/// coloured by height; the same `seed` gives the same cloud.
pub fn generate(shape: Shape, count: usize, seed: u64) -> PointCloud {
    let mut random = ChaCha8Rng::seed_from_u64(seed);
    let mut positions = Vec::with_capacity(count);
    for _ in 0..count {
        let position = match shape {
            Shape::TorusKnot => torus_knot_point(&mut random),
            Shape::Terrain => terrain_point(&mut random),
            Shape::NoisyScan => noisy_scan_point(&mut random),
        };
        positions.push(position.map(|value| value.clamp(-0.999, 0.999)));
    }
    let colours: Vec<u8> = positions
        .iter()
        .map(|position| ((position[1] + 1.0) * 127.5) as u8)
        .collect();
    PointCloud::from_positions(&positions, &colours).expect("generated points lie in the cube")
}
// ANCHOR_END: generate

fn torus_knot_point(random: &mut ChaCha8Rng) -> [f32; 3] {
    use std::f32::consts::TAU;
    let (p, q) = (2.0f32, 3.0f32);
    let curve = |t: f32| {
        let radius = 0.45 + 0.2 * (q * t).cos();
        [
            radius * (p * t).cos(),
            0.2 * (q * t).sin(),
            radius * (p * t).sin(),
        ]
    };
    let t = random.random_range(0.0..TAU);
    let centre = curve(t);
    // A frame around the curve: its direction, and two vectors across it.
    let ahead = curve(t + 1e-3);
    let tangent = normalise(sub(ahead, centre));
    let across = normalise(cross(tangent, [0.0, 1.0, 0.0]));
    let other = cross(tangent, across);
    let angle = random.random_range(0.0..TAU);
    let tube = 0.08;
    std::array::from_fn(|axis| {
        centre[axis] + tube * (angle.cos() * across[axis] + angle.sin() * other[axis])
    })
}

fn terrain_point(random: &mut ChaCha8Rng) -> [f32; 3] {
    let x = random.random_range(-0.95f32..0.95);
    let z = random.random_range(-0.95f32..0.95);
    let height = 0.25 * (3.0 * x).sin() * (2.0 * z).cos()
        + 0.1 * (9.0 * x + 4.0 * z).sin()
        + 0.04 * (23.0 * z - 7.0 * x).cos();
    [x, height - 0.2, z]
}

fn noisy_scan_point(random: &mut ChaCha8Rng) -> [f32; 3] {
    // A uniform direction, a radius with lumps, and a little scanner noise along it.
    let z: f32 = random.random_range(-1.0..1.0);
    let angle: f32 = random.random_range(0.0..std::f32::consts::TAU);
    let ring = (1.0 - z * z).sqrt();
    let direction = [ring * angle.cos(), z, ring * angle.sin()];
    let lumps = 0.08 * (5.0 * direction[0]).sin() * (4.0 * direction[1]).cos();
    let noise = random.random_range(-0.01f32..0.01);
    direction.map(|value| value * (0.6 + lumps + noise))
}

fn sub(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn cross(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

fn normalise(a: [f32; 3]) -> [f32; 3] {
    let length = (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt();
    a.map(|value| value / length)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spread_one_bit_at_a_time(value: u16) -> u64 {
        (0..16).fold(0, |spread, bit| {
            spread | (u64::from(value >> bit & 1) << (3 * bit))
        })
    }

    #[test]
    fn spreading_bits_matches_moving_them_one_at_a_time() {
        let mut random = ChaCha8Rng::seed_from_u64(5);
        for value in [0, 1, 2, 0x5555, 0xaaaa, u16::MAX]
            .into_iter()
            .chain((0..1000).map(|_| random.random::<u16>()))
        {
            assert_eq!(
                spread_bits_3d(value),
                spread_one_bit_at_a_time(value),
                "{value:#06x}"
            );
        }
    }

    #[test]
    fn grid_positions_are_exact_in_f32_and_survive_a_round_trip() {
        for step in [0u16, 1, 2, 12_345, 32_768, u16::MAX] {
            let value = grid_to_float(step);
            assert_eq!(f64::from(value), -1.0 + f64::from(step) / 32_768.0);
            let cloud = PointCloud::from_positions(&[[value; 3]], &[7]).unwrap();
            assert_eq!(cloud.grid_positions, [[step; 3]]);
        }
    }

    #[test]
    fn the_two_layouts_hold_the_same_points() {
        let cloud = generate(Shape::TorusKnot, 500, 1);
        for (index, (float, packed)) in cloud
            .float_points()
            .iter()
            .zip(cloud.packed_points())
            .enumerate()
        {
            let unpacked = [packed[0] & 0xffff, packed[0] >> 16, packed[1] & 0xffff]
                .map(|step| grid_to_float(step as u16));
            assert_eq!(float.position, unpacked, "point {index}");
            assert_eq!(float.colour, packed[1] >> 16, "point {index}");
        }
    }

    #[test]
    fn morton_order_keeps_every_point_and_sorts_the_codes() {
        let cloud = generate(Shape::NoisyScan, 2000, 3);
        let sorted = cloud.in_morton_order();
        let codes: Vec<u64> = sorted
            .grid_positions
            .iter()
            .map(|&position| morton_code_3d(position))
            .collect();
        assert!(codes.windows(2).all(|pair| pair[0] <= pair[1]));
        let mut before: Vec<_> = cloud.grid_positions.iter().zip(&cloud.colours).collect();
        let mut after: Vec<_> = sorted.grid_positions.iter().zip(&sorted.colours).collect();
        before.sort();
        after.sort();
        assert_eq!(before, after);
    }

    #[test]
    fn bad_points_are_refused_with_their_index() {
        let nan = PointCloud::from_positions(&[[0.0; 3], [0.0, f32::NAN, 0.0]], &[0, 0]);
        assert!(matches!(
            nan,
            Err(PointCloudError::NotFinite { index: 1, .. })
        ));
        let outside = PointCloud::from_positions(&[[0.0, 1.5, 0.0]], &[0]);
        assert!(matches!(
            outside,
            Err(PointCloudError::OutsideTheCube { index: 0, .. })
        ));
        let colours = PointCloud::from_positions(&[[0.0; 3]], &[]);
        assert!(matches!(colours, Err(PointCloudError::ColourCount { .. })));
        assert!(nan.unwrap_err().to_string().contains("point 1"));
    }

    #[test]
    fn generated_clouds_depend_on_the_seed_only() {
        for shape in [Shape::TorusKnot, Shape::Terrain, Shape::NoisyScan] {
            assert_eq!(generate(shape, 300, 9), generate(shape, 300, 9));
            assert_ne!(generate(shape, 300, 9), generate(shape, 300, 10));
        }
    }
}
