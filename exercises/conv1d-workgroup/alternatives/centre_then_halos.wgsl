// alternative: a workgroup of 128, the centre of the tile loaded one element per invocation, each halo by the first `radius` invocations, and the taps summed in reverse order
//
// 1D convolution with workgroup memory, written differently from the reference
// solution.

struct Dimensions {
    length: u32,
    filter_length: u32,
}

const WORKGROUP_SIZE: u32 = 128u;
const MAX_RADIUS: u32 = 16u;

@group(0) @binding(0) var<storage, read> signal: array<f32>;
@group(0) @binding(1) var<storage, read> weights: array<f32>;
@group(0) @binding(2) var<storage, read_write> output: array<f32>;
@group(0) @binding(3) var<uniform> dimensions: Dimensions;

// tile[radius + i] holds signal[first output + i]; the halos sit on either side.
var<workgroup> tile: array<f32, WORKGROUP_SIZE + 2u * MAX_RADIUS>;

fn signal_at(position: i32) -> f32 {
    let inside = position >= 0 && position < i32(dimensions.length);
    // select() evaluates both sides; what is read for a position outside the signal
    // (any value, in WGSL) is thrown away.
    return select(0.0, signal[u32(position)], inside);
}

@compute @workgroup_size(128)
fn main(@builtin(workgroup_id) workgroup: vec3u,
        @builtin(local_invocation_index) local: u32) {
    let radius = dimensions.filter_length / 2u;
    let start = i32(workgroup.x * WORKGROUP_SIZE);
    let index = start + i32(local);

    tile[radius + local] = signal_at(index);
    if (local < radius) {
        tile[local] = signal_at(start - i32(radius) + i32(local));
        tile[radius + WORKGROUP_SIZE + local] = signal_at(start + i32(WORKGROUP_SIZE) + i32(local));
    }
    workgroupBarrier();

    if (index < i32(dimensions.length)) {
        var total = 0.0;
        var tap = dimensions.filter_length;
        while (tap > 0u) {
            tap = tap - 1u;
            total = total + weights[tap] * tile[local + tap];
        }
        output[u32(index)] = total;
    }
}
