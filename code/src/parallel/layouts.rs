//! Arrays of structs against structs of arrays: the same particles, two layouts, one query.
//!
//! The natural way to store particles is an *array of structs* (AoS): a `Vec<Particle>`,
//! each particle's fields side by side in memory. A query that needs only the positions
//! ("how many particles lie within a radius of this point?") still drags every particle's
//! velocity, mass and charge through the caches, because memory moves in 64-byte lines,
//! and the x coordinates it wants sit 48 bytes apart, so the compiler cannot load eight
//! of them with one vector instruction.
//!
//! A *struct of arrays* (SoA) keeps one array per field: all the x coordinates together,
//! then all the y, and so on. The query now reads 12 bytes per particle instead of 48,
//! every byte it reads is one it uses, and consecutive particles' coordinates are
//! consecutive floats, which is exactly what a vector load wants: the loop vectorises.
//!
//! Both layouts hold the same particles, and both queries must return the same count.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

// ANCHOR: particle
/// One particle, all its fields together: 12 floats, 48 bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Particle {
    pub position: [f32; 3],
    pub velocity: [f32; 3],
    pub acceleration: [f32; 3],
    pub mass: f32,
    pub charge: f32,
    pub radius: f32,
}

/// The same particles as one array per field.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Particles {
    pub x: Vec<f32>,
    pub y: Vec<f32>,
    pub z: Vec<f32>,
    pub velocity_x: Vec<f32>,
    pub velocity_y: Vec<f32>,
    pub velocity_z: Vec<f32>,
    pub acceleration_x: Vec<f32>,
    pub acceleration_y: Vec<f32>,
    pub acceleration_z: Vec<f32>,
    pub mass: Vec<f32>,
    pub charge: Vec<f32>,
    pub radius: Vec<f32>,
}
// ANCHOR_END: particle

/// `count` particles with positions uniform in the cube [-1, 1]³ and random other fields.
pub fn random_particles(count: usize, seed: u64) -> Vec<Particle> {
    let mut generator = ChaCha8Rng::seed_from_u64(seed);
    let mut next = || generator.random_range(-1.0f32..=1.0);
    (0..count)
        .map(|_| Particle {
            position: [next(), next(), next()],
            velocity: [next(), next(), next()],
            acceleration: [next(), next(), next()],
            mass: next().abs(),
            charge: next(),
            radius: next().abs() * 0.01,
        })
        .collect()
}

/// The same particles, rearranged into one array per field.
pub fn to_struct_of_arrays(particles: &[Particle]) -> Particles {
    let mut soa = Particles::default();
    for particle in particles {
        soa.x.push(particle.position[0]);
        soa.y.push(particle.position[1]);
        soa.z.push(particle.position[2]);
        soa.velocity_x.push(particle.velocity[0]);
        soa.velocity_y.push(particle.velocity[1]);
        soa.velocity_z.push(particle.velocity[2]);
        soa.acceleration_x.push(particle.acceleration[0]);
        soa.acceleration_y.push(particle.acceleration[1]);
        soa.acceleration_z.push(particle.acceleration[2]);
        soa.mass.push(particle.mass);
        soa.charge.push(particle.charge);
        soa.radius.push(particle.radius);
    }
    soa
}

// ANCHOR: count_within_aos
/// How many particles lie within `radius` of `centre`, reading an array of structs.
pub fn count_within_array_of_structs(
    particles: &[Particle],
    centre: [f32; 3],
    radius: f32,
) -> usize {
    let limit = radius * radius;
    particles
        .iter()
        .map(|particle| {
            let dx = particle.position[0] - centre[0];
            let dy = particle.position[1] - centre[1];
            let dz = particle.position[2] - centre[2];
            usize::from(dx * dx + dy * dy + dz * dz <= limit)
        })
        .sum()
}
// ANCHOR_END: count_within_aos

// ANCHOR: count_within_soa
/// The same count, reading three arrays of coordinates.
pub fn count_within_struct_of_arrays(
    particles: &Particles,
    centre: [f32; 3],
    radius: f32,
) -> usize {
    let limit = radius * radius;
    // Zipping the three arrays (rather than indexing them) tells the compiler the lengths
    // match, so there are no bounds checks in the loop.
    particles
        .x
        .iter()
        .zip(&particles.y)
        .zip(&particles.z)
        .map(|((&x, &y), &z)| {
            let dx = x - centre[0];
            let dy = y - centre[1];
            let dz = z - centre[2];
            // A 32-bit count per particle vectorises with 32-bit lanes, like the floats.
            u32::from(dx * dx + dy * dy + dz * dz <= limit)
        })
        .map(|inside| inside as usize)
        .sum()
}
// ANCHOR_END: count_within_soa

#[cfg(test)]
mod tests {
    use super::*;

    /// The count written as plainly as possible, in f64, away from the boundary.
    fn reference(particles: &[Particle], centre: [f32; 3], radius: f32) -> usize {
        particles
            .iter()
            .filter(|particle| {
                let squared: f64 = (0..3)
                    .map(|axis| {
                        let delta = f64::from(particle.position[axis]) - f64::from(centre[axis]);
                        delta * delta
                    })
                    .sum();
                squared <= f64::from(radius) * f64::from(radius)
            })
            .count()
    }

    #[test]
    fn both_layouts_count_the_same_particles() {
        for count in [0, 1, 2, 7, 8, 9, 31, 1000, 4099] {
            let particles = random_particles(count, count as u64);
            let soa = to_struct_of_arrays(&particles);
            assert_eq!(soa.x.len(), count);
            for (centre, radius) in [
                ([0.0, 0.0, 0.0], 0.5),
                ([0.5, -0.2, 0.1], 0.8),
                ([2.0, 2.0, 2.0], 0.1),
            ] {
                let aos = count_within_array_of_structs(&particles, centre, radius);
                let by_arrays = count_within_struct_of_arrays(&soa, centre, radius);
                assert_eq!(aos, by_arrays, "{count} {centre:?}");
                // f32 and f64 can disagree only for a particle on the sphere itself.
                let expected = reference(&particles, centre, radius);
                assert!(aos.abs_diff(expected) <= 1, "{aos} vs {expected}");
            }
        }
    }

    #[test]
    fn the_query_finds_about_the_expected_share_of_the_cube() {
        // A ball of radius 0.5 has volume 4/3 · π · 0.5³ ≈ 0.52, the cube [-1, 1]³ has 8:
        // about 6.5 % of the particles lie inside.
        let particles = random_particles(100_000, 3);
        let inside = count_within_array_of_structs(&particles, [0.0; 3], 0.5) as f64 / 1e5;
        let expected = std::f64::consts::PI * 4.0 / 3.0 * 0.125 / 8.0;
        assert!((inside - expected).abs() < 0.005, "{inside} vs {expected}");
    }

    #[test]
    fn a_particle_is_48_bytes() {
        assert_eq!(std::mem::size_of::<Particle>(), 48);
    }
}
