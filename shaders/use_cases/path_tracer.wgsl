// A path tracer, one invocation per pixel: the GPU twin of
// code/src/use_cases/path_tracer/cpu.rs, written line for line in the same order so that
// both round alike and trace the same paths from the same random numbers.
//
// The steps of the optimisation are pipeline-overridable constants and entry points, so
// that every variant is this one file:
// - RUSSIAN_ROULETTE: end dim paths at random from the third bounce on (unbiased);
// - BOUNDING_SPHERES: test a group's bounding sphere before its members;
// - trace_64x1 / trace_8x8: the shape of a workgroup, a row of 64 pixels or a tile of 8×8.
// primary_hits traces no paths: it writes what the ray through each pixel's centre hits.

override RUSSIAN_ROULETTE: bool = false;
override BOUNDING_SPHERES: bool = false;

const NEAREST_HIT: f32 = 1e-4;
const SURFACE_OFFSET: f32 = 1e-3;
const MAX_BOUNCES_LIMIT: u32 = 16u;
const DRAWS_PER_SAMPLE: u32 = 2u + 3u * MAX_BOUNCES_LIMIT;
const ROULETTE_FROM_BOUNCE: u32 = 2u;
const ROULETTE_MAX_SURVIVAL: f32 = 0.95;
const TAU: f32 = 6.28318530717958647692;
const DIFFUSE: u32 = 0u;
const MIRROR: u32 = 1u;
const EMISSIVE: u32 = 2u;

// ANCHOR: bindings
struct Parameters {
    camera_origin: vec3f,
    width: u32,
    camera_lower_left: vec3f,
    height: u32,
    camera_horizontal: vec3f,
    samples_per_pixel: u32,
    camera_vertical: vec3f,
    max_bounces: u32,
    sky_horizon: vec3f,
    seed: u32,
    sky_zenith: vec3f,
    sphere_count: u32,
    plane_count: u32,
    group_count: u32,
}

struct Material { colour: vec3f, kind: u32 }
struct Sphere { centre: vec3f, radius: f32, material: u32 }
struct Plane { normal: vec3f, offset: f32, material: u32 }
struct Group { centre: vec3f, radius: f32, first: u32, count: u32 }

@group(0) @binding(0) var<uniform> parameters: Parameters;
@group(0) @binding(1) var<storage, read> materials: array<Material>;
@group(0) @binding(2) var<storage, read> spheres: array<Sphere>;
@group(0) @binding(3) var<storage, read> planes: array<Plane>;
@group(0) @binding(4) var<storage, read> groups: array<Group>;
// Three floats per pixel for an image; four (distance, normal) for primary_hits.
@group(0) @binding(5) var<storage, read_write> output: array<f32>;
// ANCHOR_END: bindings

// The counter-based random streams of shaders/parallel/random_streams.wgsl.
fn pcg_hash(input: u32) -> u32 {
    let state = input * 747796405u + 2891336453u;
    let word = ((state >> ((state >> 28u) + 4u)) ^ state) * 277803737u;
    return (word >> 22u) ^ word;
}

fn random_u32(seed: u32, stream: u32, counter: u32) -> u32 {
    return pcg_hash(pcg_hash(pcg_hash(seed) ^ stream) ^ counter);
}

fn unit_f32(word: u32) -> f32 {
    return f32(word >> 8u) * (1.0 / 16777216.0);
}

// The same order of operations as the CPU's dot and normalize in scene.rs.
fn dot3(a: vec3f, b: vec3f) -> f32 {
    return a.x * b.x + a.y * b.y + a.z * b.z;
}

fn normalize3(a: vec3f) -> vec3f {
    return a * (1.0 / sqrt(dot3(a, a)));
}

struct Hit {
    distance: f32,
    normal: vec3f,
    material: u32,
    found: bool,
}

// ANCHOR: intersect_sphere
// The distance to a sphere along a unit-length ray, or -1 if it is missed or not nearer
// than `nearest`.
fn sphere_distance(origin: vec3f, direction: vec3f, centre: vec3f, radius: f32,
                   nearest: f32) -> f32 {
    let to_origin = origin - centre;
    let half_b = dot3(to_origin, direction);
    let perpendicular = to_origin - direction * half_b;
    let discriminant = radius * radius - dot3(perpendicular, perpendicular);
    if (discriminant < 0.0) {
        return -1.0;
    }
    let root = sqrt(discriminant);
    var distance = -half_b - root;
    if (distance < NEAREST_HIT) {
        distance = -half_b + root;
    }
    if (distance >= NEAREST_HIT && distance < nearest) {
        return distance;
    }
    return -1.0;
}
// ANCHOR_END: intersect_sphere

fn may_hit_bound(origin: vec3f, direction: vec3f, centre: vec3f, radius: f32,
                 nearest: f32) -> bool {
    let to_origin = origin - centre;
    let half_b = dot3(to_origin, direction);
    let perpendicular = to_origin - direction * half_b;
    let discriminant = radius * radius - dot3(perpendicular, perpendicular);
    if (discriminant < 0.0) {
        return false;
    }
    let root = sqrt(discriminant);
    return -half_b + root >= NEAREST_HIT && -half_b - root < nearest;
}

// ANCHOR: intersect
fn intersect(origin: vec3f, direction: vec3f) -> Hit {
    var nearest = 3.4e38;
    var sphere_found = -1;
    if (BOUNDING_SPHERES) {
        for (var group_index = 0u; group_index < parameters.group_count; group_index++) {
            let group = groups[group_index];
            if (may_hit_bound(origin, direction, group.centre, group.radius, nearest)) {
                for (var index = group.first; index < group.first + group.count; index++) {
                    let sphere = spheres[index];
                    let distance = sphere_distance(origin, direction, sphere.centre,
                                                   sphere.radius, nearest);
                    if (distance > 0.0) {
                        nearest = distance;
                        sphere_found = i32(index);
                    }
                }
            }
        }
    } else {
        for (var index = 0u; index < parameters.sphere_count; index++) {
            let sphere = spheres[index];
            let distance = sphere_distance(origin, direction, sphere.centre, sphere.radius,
                                           nearest);
            if (distance > 0.0) {
                nearest = distance;
                sphere_found = i32(index);
            }
        }
    }
    // ANCHOR_END: intersect
    var hit = Hit(0.0, vec3f(0.0), 0u, false);
    if (sphere_found >= 0) {
        let sphere = spheres[u32(sphere_found)];
        let point = origin + direction * nearest;
        hit = Hit(nearest, normalize3(point - sphere.centre), sphere.material,
                  true);
    }
    for (var index = 0u; index < parameters.plane_count; index++) {
        let plane = planes[index];
        let facing = dot3(plane.normal, direction);
        if (abs(facing) < 1e-8) {
            continue;
        }
        let distance = (plane.offset - dot3(plane.normal, origin)) / facing;
        if (distance >= NEAREST_HIT && distance < nearest) {
            nearest = distance;
            hit = Hit(distance, plane.normal, plane.material, true);
        }
    }
    if (dot3(hit.normal, direction) > 0.0) {
        hit.normal = -hit.normal;
    }
    return hit;
}

fn sky(direction: vec3f) -> vec3f {
    let up = max(direction.y, 0.0);
    return parameters.sky_horizon + (parameters.sky_zenith - parameters.sky_horizon) * up;
}

fn diffuse_direction(normal: vec3f, first: f32, second: f32) -> vec3f {
    let angle = TAU * first;
    let radius = sqrt(second);
    let lift = sqrt(max(1.0 - second, 0.0));
    let sign = select(-1.0, 1.0, normal.z >= 0.0);
    let a = -1.0 / (sign + normal.z);
    let b = normal.x * normal.y * a;
    let tangent = vec3f(1.0 + sign * normal.x * normal.x * a, sign * b, -sign * normal.x);
    let bitangent = vec3f(b, sign + normal.y * normal.y * a, -normal.y);
    return normalize3(tangent * (radius * cos(angle)) + bitangent * (radius * sin(angle))
                      + normal * lift);
}

fn camera_ray(u: f32, v: f32) -> vec3f {
    return normalize3(parameters.camera_lower_left + parameters.camera_horizontal * u
                      + parameters.camera_vertical * v - parameters.camera_origin);
}

// ANCHOR: trace_sample
fn trace_sample(x: u32, y: u32, sample: u32) -> vec3f {
    let stream = y * parameters.width + x;
    let first_draw = sample * DRAWS_PER_SAMPLE;
    let seed = parameters.seed;
    let u = (f32(x) + unit_f32(random_u32(seed, stream, first_draw))) / f32(parameters.width);
    let v = 1.0 - (f32(y) + unit_f32(random_u32(seed, stream, first_draw + 1u)))
                  / f32(parameters.height);
    var origin = parameters.camera_origin;
    var direction = camera_ray(u, v);
    var throughput = vec3f(1.0);
    var radiance = vec3f(0.0);
    for (var bounce = 0u; bounce < parameters.max_bounces; bounce++) {
        let hit = intersect(origin, direction);
        if (!hit.found) {
            radiance += throughput * sky(direction);
            break;
        }
        let material = materials[hit.material];
        let point = origin + direction * hit.distance;
        let bounce_draw = first_draw + 2u + 3u * bounce;
        if (material.kind == EMISSIVE) {
            radiance += throughput * material.colour;
            break;
        } else if (material.kind == MIRROR) {
            direction = direction - hit.normal * (2.0 * dot3(direction, hit.normal));
        } else {
            direction = diffuse_direction(hit.normal,
                                          unit_f32(random_u32(seed, stream, bounce_draw)),
                                          unit_f32(random_u32(seed, stream, bounce_draw + 1u)));
        }
        throughput *= material.colour;
        origin = point + hit.normal * SURFACE_OFFSET;
        if (RUSSIAN_ROULETTE && bounce >= ROULETTE_FROM_BOUNCE) {
            let brightest = max(max(throughput.x, throughput.y), throughput.z);
            let survival = min(brightest, ROULETTE_MAX_SURVIVAL);
            if (unit_f32(random_u32(seed, stream, bounce_draw + 2u)) >= survival) {
                break;
            }
            throughput *= 1.0 / survival;
        }
    }
    return radiance;
}
// ANCHOR_END: trace_sample

fn shade_pixel(x: u32, y: u32) {
    if (x >= parameters.width || y >= parameters.height) {
        return;
    }
    var sum = vec3f(0.0);
    for (var sample = 0u; sample < parameters.samples_per_pixel; sample++) {
        sum += trace_sample(x, y, sample);
    }
    let mean = sum * (1.0 / f32(parameters.samples_per_pixel));
    let index = 3u * (y * parameters.width + x);
    output[index] = mean.x;
    output[index + 1u] = mean.y;
    output[index + 2u] = mean.z;
}

// ANCHOR: entry_points
// A row of 64 pixels per workgroup: the grid is ceil(width / 64) × height workgroups.
@compute @workgroup_size(64, 1)
fn trace_64x1(@builtin(global_invocation_id) id: vec3u) {
    shade_pixel(id.x, id.y);
}

// A tile of 8 × 8 pixels per workgroup: neighbours in both directions run together.
@compute @workgroup_size(8, 8)
fn trace_8x8(@builtin(global_invocation_id) id: vec3u) {
    shade_pixel(id.x, id.y);
}
// ANCHOR_END: entry_points

@compute @workgroup_size(8, 8)
fn primary_hits(@builtin(global_invocation_id) id: vec3u) {
    let x = id.x;
    let y = id.y;
    if (x >= parameters.width || y >= parameters.height) {
        return;
    }
    let u = (f32(x) + 0.5) / f32(parameters.width);
    let v = 1.0 - (f32(y) + 0.5) / f32(parameters.height);
    let direction = camera_ray(u, v);
    let hit = intersect(parameters.camera_origin, direction);
    let index = 4u * (y * parameters.width + x);
    if (hit.found) {
        output[index] = hit.distance;
        output[index + 1u] = hit.normal.x;
        output[index + 2u] = hit.normal.y;
        output[index + 3u] = hit.normal.z;
    } else {
        output[index] = -1.0;
        output[index + 1u] = 0.0;
        output[index + 2u] = 0.0;
        output[index + 3u] = 0.0;
    }
}
