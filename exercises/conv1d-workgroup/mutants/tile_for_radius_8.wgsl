// mutant: wrong-result — the tile sized for a radius of 8 instead of MAX_RADIUS (16)
// expect: elements differ
// Warm-up: 1D convolution with workgroup memory. A wrong hand-in: the solution with the one mistake named on the first line.
//
// The workgroup loads the WORKGROUP_SIZE + 2 · radius signal elements its outputs need
// into `tile` once, cooperatively, then every tap reads workgroup memory instead of
// device memory.

struct Dimensions {
    length: u32,
    filter_length: u32,
}

const WORKGROUP_SIZE: u32 = 64u;
const MAX_RADIUS: u32 = 16u;

@group(0) @binding(0) var<storage, read> signal: array<f32>;
@group(0) @binding(1) var<storage, read> weights: array<f32>;
@group(0) @binding(2) var<storage, read_write> output: array<f32>;
@group(0) @binding(3) var<uniform> dimensions: Dimensions;

// tile[s] holds signal[first + s], where first = (this workgroup's first output) − radius.
var<workgroup> tile: array<f32, WORKGROUP_SIZE + 2u * 8u>;

fn signal_or_zero(position: i32) -> f32 {
    if (position < 0 || position >= i32(dimensions.length)) {
        return 0.0;
    }
    return signal[u32(position)];
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) global: vec3u,
        @builtin(local_invocation_index) local: u32,
        @builtin(workgroup_id) workgroup: vec3u) {
    let index = global.x;
    let radius = dimensions.filter_length / 2u;
    let first = i32(workgroup.x * WORKGROUP_SIZE) - i32(radius);

    // Centre and halo together: the invocations walk the tile with a stride of the
    // workgroup size, so neighbouring invocations load neighbouring elements.
    for (var slot = local; slot < WORKGROUP_SIZE + 2u * radius; slot = slot + WORKGROUP_SIZE) {
        tile[slot] = signal_or_zero(first + i32(slot));
    }
    // Every invocation reaches this barrier: the return for the invocations past the
    // end of the signal comes after it.
    workgroupBarrier();

    if (index >= dimensions.length) {
        return;
    }
    // Output `index` is slot local + radius of the tile; its tap t is slot local + t.
    var total = 0.0;
    for (var tap = 0u; tap < dimensions.filter_length; tap = tap + 1u) {
        total = total + weights[tap] * tile[local + tap];
    }
    output[index] = total;
}
