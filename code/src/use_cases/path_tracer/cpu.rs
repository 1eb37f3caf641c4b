//! The CPU reference: one path after another, written to be read, and the yardstick every
//! GPU kernel is checked against.
//!
//! Every random number comes from the counter-based streams of module 2
//! ([`crate::parallel::random_streams`]): pixel `p` draws from stream `p`, and sample `s`
//! at bounce `b` uses counters fixed by `(s, b)`. The GPU computes the same hash of the
//! same three numbers, so both trace the same paths and their images can be compared pixel
//! by pixel, not only on average.

use rayon::prelude::*;

use super::scene::{
    Camera, MaterialKind, Scene, Vec3, add, dot, multiply, normalize, scale, subtract,
};
use super::{RenderSettings, Termination, Traversal};
use crate::parallel::random_streams::{random_u32, unit_f32};

/// How far a hit must be along the ray to count: a ray leaving a surface must not hit that
/// surface again at distance zero because of rounding.
pub const NEAREST_HIT: f32 = 1e-4;
/// How far a new ray starts off the surface it leaves, along the surface's normal.
pub const SURFACE_OFFSET: f32 = 1e-3;
/// The most bounces a path may take; fixes how many random words one sample uses.
pub const MAX_BOUNCES_LIMIT: u32 = 16;
/// Random words per sample: two for the position inside the pixel, three per bounce
/// (two for a diffuse direction, one for Russian roulette).
pub const DRAWS_PER_SAMPLE: u32 = 2 + 3 * MAX_BOUNCES_LIMIT;
/// The bounce from which Russian roulette may end a path.
pub const ROULETTE_FROM_BOUNCE: u32 = 2;
/// Russian roulette's highest survival probability, so that even a white path may end.
pub const ROULETTE_MAX_SURVIVAL: f32 = 0.95;

/// The nearest surface a ray hits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    pub distance: f32,
    /// Unit length, turned to face the ray.
    pub normal: Vec3,
    pub material: u32,
    /// Spheres are `0 .. spheres`, planes follow.
    pub primitive: u32,
}

/// The work a render did, counted: what a profile of the kernel would attribute its time to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WorkCounts {
    /// Camera paths traced (pixels × samples).
    pub paths: u64,
    /// Rays cast: one per bounce of every path.
    pub rays: u64,
    /// Ray–sphere tests against the scene's spheres.
    pub sphere_tests: u64,
    /// Ray–sphere tests against the groups' bounding spheres.
    pub bound_tests: u64,
}

impl WorkCounts {
    fn add(&mut self, other: &WorkCounts) {
        self.paths += other.paths;
        self.rays += other.rays;
        self.sphere_tests += other.sphere_tests;
        self.bound_tests += other.bound_tests;
    }
}

// ANCHOR: intersect_sphere
/// The distance along a unit-length ray to a sphere, if it is nearer than `nearest`.
fn sphere_distance(
    origin: Vec3,
    direction: Vec3,
    centre: Vec3,
    radius: f32,
    nearest: f32,
) -> Option<f32> {
    let to_origin = subtract(origin, centre);
    let half_b = dot(to_origin, direction);
    // b² - c written as r² - |perpendicular|²: the textbook form subtracts two large,
    // nearly equal numbers for a small sphere far away and loses most of its digits
    // (Haines et al., "Precision improvements for ray/sphere intersection", 2019).
    let perpendicular = subtract(to_origin, scale(direction, half_b));
    let discriminant = radius * radius - dot(perpendicular, perpendicular);
    if discriminant < 0.0 {
        return None;
    }
    let root = discriminant.sqrt();
    // The nearer crossing, or the farther one if the ray starts inside the sphere.
    let mut distance = -half_b - root;
    if distance < NEAREST_HIT {
        distance = -half_b + root;
    }
    (NEAREST_HIT..nearest)
        .contains(&distance)
        .then_some(distance)
}
// ANCHOR_END: intersect_sphere

/// Whether the ray can hit anything inside a bounding sphere nearer than `nearest`.
fn may_hit_bound(origin: Vec3, direction: Vec3, centre: Vec3, radius: f32, nearest: f32) -> bool {
    let to_origin = subtract(origin, centre);
    let half_b = dot(to_origin, direction);
    let perpendicular = subtract(to_origin, scale(direction, half_b));
    let discriminant = radius * radius - dot(perpendicular, perpendicular);
    if discriminant < 0.0 {
        return false;
    }
    let root = discriminant.sqrt();
    -half_b + root >= NEAREST_HIT && -half_b - root < nearest
}

/// The nearest hit of a ray in the scene, testing the spheres as `traversal` says.
pub fn intersect(
    scene: &Scene,
    origin: Vec3,
    direction: Vec3,
    traversal: Traversal,
    counts: &mut WorkCounts,
) -> Option<Hit> {
    counts.rays += 1;
    let mut nearest = f32::INFINITY;
    let mut found: Option<(u32, f32)> = None;
    let mut test_sphere = |index: usize, nearest: &mut f32, counts: &mut WorkCounts| {
        let sphere = &scene.spheres[index];
        counts.sphere_tests += 1;
        if let Some(distance) =
            sphere_distance(origin, direction, sphere.centre, sphere.radius, *nearest)
        {
            *nearest = distance;
            found = Some((index as u32, distance));
        }
    };
    match traversal {
        Traversal::EverySphere => {
            for index in 0..scene.spheres.len() {
                test_sphere(index, &mut nearest, counts);
            }
        }
        Traversal::BoundingSpheres => {
            for group in &scene.groups {
                counts.bound_tests += 1;
                if may_hit_bound(origin, direction, group.centre, group.radius, nearest) {
                    for index in group.first..group.first + group.count {
                        test_sphere(index as usize, &mut nearest, counts);
                    }
                }
            }
        }
    }
    let mut hit = found.map(|(index, distance)| {
        let sphere = &scene.spheres[index as usize];
        let point = add(origin, scale(direction, distance));
        Hit {
            distance,
            // Normalised rather than divided by the radius: the hit point is off the
            // surface by rounding, and a normal a little longer than 1 would make every
            // mirror bounce lengthen the ray's direction a little more.
            normal: normalize(subtract(point, sphere.centre)),
            material: sphere.material,
            primitive: index,
        }
    });
    for (index, plane) in scene.planes.iter().enumerate() {
        let facing = dot(plane.normal, direction);
        if facing.abs() < 1e-8 {
            continue;
        }
        let distance = (plane.offset - dot(plane.normal, origin)) / facing;
        if distance >= NEAREST_HIT && distance < nearest {
            nearest = distance;
            hit = Some(Hit {
                distance,
                normal: plane.normal,
                material: plane.material,
                primitive: (scene.spheres.len() + index) as u32,
            });
        }
    }
    hit.map(|hit| Hit {
        normal: if dot(hit.normal, direction) > 0.0 {
            scale(hit.normal, -1.0)
        } else {
            hit.normal
        },
        ..hit
    })
}

/// The radiance of the sky seen along `direction`.
pub fn sky(scene: &Scene, direction: Vec3) -> Vec3 {
    let up = direction[1].max(0.0);
    add(
        scene.sky_horizon,
        scale(subtract(scene.sky_zenith, scene.sky_horizon), up),
    )
}

// ANCHOR: diffuse_direction
/// A random direction around `normal`, cosine-weighted: directions near the normal, where
/// a diffuse surface sends most of its light, are drawn more often (Malley's method: a
/// uniform point on the unit disc lifted onto the hemisphere). The basis around the normal
/// is the branch-free one of Duff et al. (2017).
pub fn diffuse_direction(normal: Vec3, first: f32, second: f32) -> Vec3 {
    let angle = std::f32::consts::TAU * first;
    let radius = second.sqrt();
    let lift = (1.0 - second).max(0.0).sqrt();
    let sign = if normal[2] >= 0.0 { 1.0 } else { -1.0 };
    let a = -1.0 / (sign + normal[2]);
    let b = normal[0] * normal[1] * a;
    let tangent = [
        1.0 + sign * normal[0] * normal[0] * a,
        sign * b,
        -sign * normal[0],
    ];
    let bitangent = [b, sign + normal[1] * normal[1] * a, -normal[1]];
    normalize(add(
        add(
            scale(tangent, radius * angle.cos()),
            scale(bitangent, radius * angle.sin()),
        ),
        scale(normal, lift),
    ))
}
// ANCHOR_END: diffuse_direction

/// The camera ray through the point `(u, v)` of the image, both in [0, 1], v upwards.
pub fn camera_ray(camera: &Camera, u: f32, v: f32) -> Vec3 {
    normalize(subtract(
        add(
            add(camera.lower_left, scale(camera.horizontal, u)),
            scale(camera.vertical, v),
        ),
        camera.origin,
    ))
}

// ANCHOR: trace_sample
/// One sample of pixel `(x, y)`: a path from the camera, bounce after bounce, adding the
/// light it reaches weighted by how much of it the surfaces on the way reflect.
pub fn trace_sample(
    scene: &Scene,
    camera: &Camera,
    settings: &RenderSettings,
    pixel: (u32, u32),
    sample: u32,
    counts: &mut WorkCounts,
) -> Vec3 {
    let (x, y) = pixel;
    let stream = y * settings.width + x;
    let first_draw = sample * DRAWS_PER_SAMPLE;
    let draw = |counter: u32| unit_f32(random_u32(settings.seed, stream, first_draw + counter));
    let u = (x as f32 + draw(0)) / settings.width as f32;
    let v = 1.0 - (y as f32 + draw(1)) / settings.height as f32;
    let mut origin = camera.origin;
    let mut direction = camera_ray(camera, u, v);
    let mut throughput: Vec3 = [1.0, 1.0, 1.0];
    let mut radiance: Vec3 = [0.0, 0.0, 0.0];
    counts.paths += 1;
    for bounce in 0..settings.max_bounces {
        let Some(hit) = intersect(scene, origin, direction, settings.traversal, counts) else {
            radiance = add(radiance, multiply(throughput, sky(scene, direction)));
            break;
        };
        let material = scene.materials[hit.material as usize];
        let point = add(origin, scale(direction, hit.distance));
        let bounce_draw = 2 + 3 * bounce;
        direction = match material.kind {
            kind if kind == MaterialKind::Emissive as u32 => {
                radiance = add(radiance, multiply(throughput, material.colour));
                break;
            }
            kind if kind == MaterialKind::Mirror as u32 => subtract(
                direction,
                scale(hit.normal, 2.0 * dot(direction, hit.normal)),
            ),
            _ => diffuse_direction(hit.normal, draw(bounce_draw), draw(bounce_draw + 1)),
        };
        throughput = multiply(throughput, material.colour);
        origin = add(point, scale(hit.normal, SURFACE_OFFSET));
        if settings.termination == Termination::RussianRoulette && bounce >= ROULETTE_FROM_BOUNCE {
            // Go on with probability `survival`, and weight the survivors by its inverse:
            // the expected value stays what it was, only dim paths end early.
            let brightest = throughput[0].max(throughput[1]).max(throughput[2]);
            let survival = brightest.min(ROULETTE_MAX_SURVIVAL);
            if draw(bounce_draw + 2) >= survival {
                break;
            }
            throughput = scale(throughput, 1.0 / survival);
        }
    }
    radiance
}
// ANCHOR_END: trace_sample

/// The image, `width × height` pixels of three floats (red, green, blue), each the mean
/// of `samples_per_pixel` samples; and the work it took. Rows run in parallel.
pub fn render(scene: &Scene, settings: &RenderSettings) -> (Vec<f32>, WorkCounts) {
    let camera = Scene::camera(settings.width, settings.height);
    let row_length = 3 * settings.width as usize;
    let mut image = vec![0.0_f32; row_length * settings.height as usize];
    let counts = image
        .par_chunks_mut(row_length.max(1))
        .enumerate()
        .map(|(y, row)| {
            let mut counts = WorkCounts::default();
            for x in 0..settings.width {
                let mut sum = [0.0_f32; 3];
                for sample in 0..settings.samples_per_pixel {
                    let value =
                        trace_sample(scene, &camera, settings, (x, y as u32), sample, &mut counts);
                    sum = add(sum, value);
                }
                let mean = scale(sum, 1.0 / settings.samples_per_pixel as f32);
                row[3 * x as usize..][..3].copy_from_slice(&mean);
            }
            counts
        })
        .reduce(WorkCounts::default, |mut total, counts| {
            total.add(&counts);
            total
        });
    (image, counts)
}

/// For every pixel, what the ray through its centre hits first: distance, then the normal,
/// or `[-1, 0, 0, 0]` for the sky. No random numbers: the GPU must agree exactly.
pub fn primary_hits(scene: &Scene, settings: &RenderSettings) -> Vec<f32> {
    let camera = Scene::camera(settings.width, settings.height);
    let mut counts = WorkCounts::default();
    let mut values = Vec::with_capacity(4 * (settings.width * settings.height) as usize);
    for y in 0..settings.height {
        for x in 0..settings.width {
            let u = (x as f32 + 0.5) / settings.width as f32;
            let v = 1.0 - (y as f32 + 0.5) / settings.height as f32;
            let direction = camera_ray(&camera, u, v);
            match intersect(
                scene,
                camera.origin,
                direction,
                settings.traversal,
                &mut counts,
            ) {
                Some(hit) => {
                    values.extend([hit.distance, hit.normal[0], hit.normal[1], hit.normal[2]])
                }
                None => values.extend([-1.0, 0.0, 0.0, 0.0]),
            }
        }
    }
    values
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(termination: Termination, traversal: Traversal) -> RenderSettings {
        RenderSettings {
            width: 32,
            height: 24,
            samples_per_pixel: 4,
            max_bounces: 8,
            seed: 3,
            termination,
            traversal,
        }
    }

    #[test]
    fn bounding_spheres_change_the_work_not_the_image() {
        // Large enough for long mirror paths between small balls: a normal a little off
        // unit length used to lengthen the direction bounce after bounce until the bound
        // test, which assumes a unit direction, culled a ball it should have kept.
        let scene = Scene::demonstration(4);
        for termination in [Termination::FixedBounces, Termination::RussianRoulette] {
            let every = RenderSettings {
                width: 160,
                height: 120,
                samples_per_pixel: 2,
                seed: 2026,
                ..settings(termination, Traversal::EverySphere)
            };
            let bounded = RenderSettings {
                traversal: Traversal::BoundingSpheres,
                ..every
            };
            let (every_image, every_counts) = render(&scene, &every);
            let (bounded_image, bounded_counts) = render(&scene, &bounded);
            assert!(every_image == bounded_image, "{termination:?}");
            assert_eq!(every_counts.rays, bounded_counts.rays);
            assert!(bounded_counts.sphere_tests * 3 < every_counts.sphere_tests);
        }
    }

    #[test]
    fn diffuse_directions_are_unit_length_and_leave_the_surface() {
        for (index, normal) in [
            [0.0, 1.0, 0.0],
            [0.0, 0.0, -1.0],
            normalize([1.0, -2.0, 0.5]),
        ]
        .into_iter()
        .enumerate()
        {
            for draw in 0..200 {
                let first = unit_f32(random_u32(1, index as u32, 2 * draw));
                let second = unit_f32(random_u32(1, index as u32, 2 * draw + 1));
                let direction = diffuse_direction(normal, first, second);
                assert!((dot(direction, direction) - 1.0).abs() < 1e-5);
                assert!(
                    dot(direction, normal) >= -1e-6,
                    "{direction:?} below {normal:?}"
                );
            }
        }
    }

    #[test]
    fn a_ray_straight_down_hits_the_floor_and_straight_up_sees_the_sky() {
        let scene = Scene::demonstration(1);
        let mut counts = WorkCounts::default();
        let hit = intersect(
            &scene,
            [5.0, 2.0, 5.0],
            [0.0, -1.0, 0.0],
            Traversal::EverySphere,
            &mut counts,
        )
        .unwrap();
        assert!((hit.distance - 2.0).abs() < 1e-6);
        assert_eq!(hit.normal, [0.0, 1.0, 0.0]);
        assert_eq!(hit.primitive as usize, scene.spheres.len());
        assert!(
            intersect(
                &scene,
                [5.0, 2.0, 5.0],
                [0.0, 1.0, 0.0],
                Traversal::EverySphere,
                &mut counts
            )
            .is_none()
        );
        let zenith = sky(&scene, [0.0, 1.0, 0.0]);
        for (got, want) in zenith.iter().zip(scene.sky_zenith) {
            assert!((got - want).abs() < 1e-6, "{zenith:?}");
        }
    }

    #[test]
    fn russian_roulette_ends_paths_early_without_changing_the_mean() {
        // Paired samples: the same pixel and sample traced with and without roulette. The
        // mean of their difference must be within four standard errors of zero; and the
        // same check must reject an estimator biased by 2 %, so that it can fail.
        let scene = Scene::demonstration(3);
        let plain = settings(Termination::FixedBounces, Traversal::BoundingSpheres);
        let roulette = RenderSettings {
            termination: Termination::RussianRoulette,
            ..plain
        };
        let camera = Scene::camera(plain.width, plain.height);
        let mut plain_counts = WorkCounts::default();
        let mut roulette_counts = WorkCounts::default();
        let mut differences = Vec::new();
        let mut biased = Vec::new();
        for y in 0..plain.height {
            for x in 0..plain.width {
                for sample in 0..64 {
                    let a =
                        trace_sample(&scene, &camera, &plain, (x, y), sample, &mut plain_counts);
                    let b = trace_sample(
                        &scene,
                        &camera,
                        &roulette,
                        (x, y),
                        sample,
                        &mut roulette_counts,
                    );
                    differences.push(f64::from(b.iter().sum::<f32>() - a.iter().sum::<f32>()));
                    biased.push(f64::from(
                        0.98 * b.iter().sum::<f32>() - a.iter().sum::<f32>(),
                    ));
                }
            }
        }
        let z_score = |values: &[f64]| {
            let count = values.len() as f64;
            let mean = values.iter().sum::<f64>() / count;
            let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (count - 1.0);
            mean / (variance / count).sqrt()
        };
        assert!(
            z_score(&differences).abs() < 4.0,
            "z = {}",
            z_score(&differences)
        );
        assert!(z_score(&biased).abs() > 4.0, "z = {}", z_score(&biased));
        assert!(roulette_counts.rays < plain_counts.rays);
    }
}
