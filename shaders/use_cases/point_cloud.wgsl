// Splatting a point cloud with atomic minimum (galaxy::use_cases::point_cloud).
//
// Every kernel of the chapter is an entry point of this file: `clear` empties the key
// buffer, one of the `splat_*` kernels draws every point into it, and `resolve` turns the
// keys into colours. A key packs a point's 24-bit depth above its 8-bit colour, so the
// atomic minimum per pixel keeps the nearest point and its colour in one operation.
//
// The projection repeats galaxy's `Camera::project` operation by operation, so that both
// give the same bits.

struct Frame {
    eye: vec4<f32>,
    right: vec4<f32>,
    up: vec4<f32>,
    forward: vec4<f32>,
    focal_pixels: f32,
    near: f32,
    far: f32,
    depth_scale: f32,
    width: u32,
    height: u32,
    point_count: u32,
    points_per_invocation: u32,
    invocation_count: u32,
    background: u32,
    padding: vec2<u32>,
}

struct Point {
    position: vec3<f32>,
    colour: u32,
}

const EMPTY_PIXEL: u32 = 0xffffffffu;
const LARGEST_DEPTH: u32 = 0xfffffeu;
const GRID_ORIGIN: f32 = -1.0;
const GRID_STEP: f32 = 1.0 / 32768.0;
const WORKGROUP_SIZE: u32 = 256u;

@group(0) @binding(0) var<uniform> frame: Frame;
@group(0) @binding(1) var<storage, read_write> keys: array<atomic<u32>>;
@group(0) @binding(2) var<storage, read> points: array<Point>;
@group(0) @binding(3) var<storage, read> packed_points: array<vec2<u32>>;
@group(0) @binding(4) var<storage, read> palette: array<u32, 256>;
@group(0) @binding(5) var<storage, read_write> image: array<u32>;

// The invocation's number along a 1D problem spread over a 2D grid of workgroups.
fn invocation_index(workgroup: vec3<u32>, local: u32, workgroups: vec3<u32>) -> u32 {
    return (workgroup.y * workgroups.x + workgroup.x) * WORKGROUP_SIZE + local;
}

// ANCHOR: project
// The key of the point at `position` with `colour`, and the pixel it lands on; the key is
// EMPTY_PIXEL when the point is not drawn.
fn project(position: vec3<f32>, colour: u32) -> vec2<u32> {
    let offset = position - frame.eye.xyz;
    // Exact products (galaxy's camera sees to it): whether the compiler fuses a product
    // with the addition after it cannot change the result.
    let x = offset.x * frame.right.x + (offset.y * frame.right.y + offset.z * frame.right.z);
    let y = offset.x * frame.up.x + (offset.y * frame.up.y + offset.z * frame.up.z);
    let depth = offset.x * frame.forward.x
        + (offset.y * frame.forward.y + offset.z * frame.forward.z);
    if !(depth > frame.near && depth < frame.far) {
        return vec2<u32>(EMPTY_PIXEL, 0u);
    }
    let reciprocal = 1.0 / depth;
    let column = floor(x * reciprocal * frame.focal_pixels) + f32(frame.width / 2u);
    let row = floor(y * reciprocal * -frame.focal_pixels) + f32(frame.height / 2u);
    if !(column >= 0.0 && column < f32(frame.width) && row >= 0.0 && row < f32(frame.height)) {
        return vec2<u32>(EMPTY_PIXEL, 0u);
    }
    let quantised = min(u32((depth - frame.near) * frame.depth_scale), LARGEST_DEPTH);
    let pixel = u32(row) * frame.width + u32(column);
    return vec2<u32>(quantised << 8u | colour, pixel);
}
// ANCHOR_END: project

@compute @workgroup_size(256)
fn clear(@builtin(workgroup_id) workgroup: vec3<u32>,
         @builtin(local_invocation_index) local: u32,
         @builtin(num_workgroups) workgroups: vec3<u32>) {
    let pixel = invocation_index(workgroup, local, workgroups);
    if pixel < frame.width * frame.height {
        atomicStore(&keys[pixel], EMPTY_PIXEL);
    }
}

// ANCHOR: splat
// Step 1: one invocation per point, one atomic minimum per point that lands in the image.
@compute @workgroup_size(256)
fn splat(@builtin(workgroup_id) workgroup: vec3<u32>,
         @builtin(local_invocation_index) local: u32,
         @builtin(num_workgroups) workgroups: vec3<u32>) {
    let index = invocation_index(workgroup, local, workgroups);
    if index >= frame.point_count {
        return;
    }
    let point = points[index];
    let hit = project(point.position, point.colour);
    if hit.x != EMPTY_PIXEL {
        atomicMin(&keys[hit.y], hit.x);
    }
}
// ANCHOR_END: splat

// ANCHOR: splat_early_reject
// Step 3: read the pixel first, and skip the atomic when a nearer point is there already.
@compute @workgroup_size(256)
fn splat_early_reject(@builtin(workgroup_id) workgroup: vec3<u32>,
                      @builtin(local_invocation_index) local: u32,
                      @builtin(num_workgroups) workgroups: vec3<u32>) {
    let index = invocation_index(workgroup, local, workgroups);
    if index >= frame.point_count {
        return;
    }
    let point = points[index];
    let hit = project(point.position, point.colour);
    if hit.x != EMPTY_PIXEL && hit.x < atomicLoad(&keys[hit.y]) {
        atomicMin(&keys[hit.y], hit.x);
    }
}
// ANCHOR_END: splat_early_reject

// ANCHOR: splat_batched
// Step 4: each invocation draws `points_per_invocation` points, `invocation_count` apart,
// so that neighbouring invocations still read neighbouring points in each round.
@compute @workgroup_size(256)
fn splat_batched(@builtin(workgroup_id) workgroup: vec3<u32>,
                 @builtin(local_invocation_index) local: u32,
                 @builtin(num_workgroups) workgroups: vec3<u32>) {
    let first = invocation_index(workgroup, local, workgroups);
    for (var round = 0u; round < frame.points_per_invocation; round++) {
        let index = first + round * frame.invocation_count;
        if index >= frame.point_count {
            return;
        }
        let point = points[index];
        let hit = project(point.position, point.colour);
        if hit.x != EMPTY_PIXEL && hit.x < atomicLoad(&keys[hit.y]) {
            atomicMin(&keys[hit.y], hit.x);
        }
    }
}
// ANCHOR_END: splat_batched

// ANCHOR: splat_packed
// Step 5: as step 4, reading 8-byte points: x | y << 16, then z | colour << 16.
@compute @workgroup_size(256)
fn splat_packed(@builtin(workgroup_id) workgroup: vec3<u32>,
                @builtin(local_invocation_index) local: u32,
                @builtin(num_workgroups) workgroups: vec3<u32>) {
    let first = invocation_index(workgroup, local, workgroups);
    for (var round = 0u; round < frame.points_per_invocation; round++) {
        let index = first + round * frame.invocation_count;
        if index >= frame.point_count {
            return;
        }
        let packed = packed_points[index];
        let grid = vec3<u32>(packed.x & 0xffffu, packed.x >> 16u, packed.y & 0xffffu);
        // Exact: at most 16 significant bits, a power-of-two step, a sum on the grid.
        let position = vec3<f32>(grid) * GRID_STEP + GRID_ORIGIN;
        let hit = project(position, packed.y >> 16u);
        if hit.x != EMPTY_PIXEL && hit.x < atomicLoad(&keys[hit.y]) {
            atomicMin(&keys[hit.y], hit.x);
        }
    }
}
// ANCHOR_END: splat_packed

// ANCHOR: resolve
// One invocation per pixel: the colour of the nearest point, darkened with depth.
@compute @workgroup_size(256)
fn resolve(@builtin(workgroup_id) workgroup: vec3<u32>,
           @builtin(local_invocation_index) local: u32,
           @builtin(num_workgroups) workgroups: vec3<u32>) {
    let pixel = invocation_index(workgroup, local, workgroups);
    if pixel >= frame.width * frame.height {
        return;
    }
    let key = atomicLoad(&keys[pixel]);
    if key == EMPTY_PIXEL {
        image[pixel] = frame.background;
        return;
    }
    let colour = palette[key & 0xffu];
    let brightness = 256u - (key >> 25u);
    let red = ((colour & 0xffu) * brightness >> 8u);
    let green = ((colour >> 8u & 0xffu) * brightness >> 8u) << 8u;
    let blue = ((colour >> 16u & 0xffu) * brightness >> 8u) << 16u;
    image[pixel] = red | green | blue | (colour & 0xff000000u);
}
// ANCHOR_END: resolve
