// Warm-up: 1D convolution with workgroup memory.
//
//   output[i] = Σ_t weights[t] · signal[i + t − radius],   radius = (filter_length − 1) / 2
//
// Neighbouring outputs read almost the same signal elements: with a filter of 33 taps,
// every element is read 33 times. Here the workgroup first copies the part of the signal
// it needs into workgroup memory, once, and then every tap reads from there.
//
// The 64 outputs of a workgroup need the 64 signal elements at the same positions (the
// centre of the tile) plus `radius` elements on each side (the halo), which belong to
// the neighbouring workgroups' outputs. Elements outside the signal are zero.
//
// The checker fills `output` with NaN and dispatches ceil(length / 64) workgroups along
// x. Filters have at most 2 · MAX_RADIUS + 1 = 33 taps.

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
var<workgroup> tile: array<f32, WORKGROUP_SIZE + 2u * MAX_RADIUS>;

fn signal_or_zero(position: i32) -> f32 {
    if (position < 0 || position >= i32(dimensions.length)) {
        return 0.0;
    }
    return signal[u32(position)];
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) global: vec3u,
        @builtin(local_invocation_index) local: u32) {
    let index = global.x;
    let radius = dimensions.filter_length / 2u;

    // The centre of the tile: every invocation loads the element at its own position.
    tile[local + radius] = signal_or_zero(i32(index));
    // TODO: load the halo too, the `radius` elements before the centre and the `radius`
    // elements after it. (Workgroup memory starts out as zeros, which is why this kernel
    // is already right at both ends of the signal, and wrong elsewhere.)
    workgroupBarrier();

    if (index >= dimensions.length) {
        return;
    }
    var total = 0.0;
    for (var tap = 0u; tap < dimensions.filter_length; tap = tap + 1u) {
        total = total + weights[tap] * tile[local + tap];
    }
    output[index] = total;
}
