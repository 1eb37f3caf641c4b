// Warm-up: 1D convolution, the naive way.
//
//   output[i] = Σ_t weights[t] · signal[i + t − radius],   radius = (filter_length − 1) / 2
//
// A tap that falls outside the signal (i + t − radius < 0, or ≥ length) counts as zero:
// skip it. `filter_length` is odd, so the filter is centred on the output element.
//
// The checker fills `output` with NaN and dispatches ceil(length / 64) workgroups
// along x (64: the workgroup size below, read from @workgroup_size).

struct Dimensions {
    length: u32,
    filter_length: u32,
}

@group(0) @binding(0) var<storage, read> signal: array<f32>;
@group(0) @binding(1) var<storage, read> weights: array<f32>;
@group(0) @binding(2) var<storage, read_write> output: array<f32>;
@group(0) @binding(3) var<uniform> dimensions: Dimensions;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) global: vec3u) {
    let index = global.x;
    if (index >= dimensions.length) {
        return;
    }
    let radius = dimensions.filter_length / 2u;
    // Only the centre tap so far.
    let total = weights[radius] * signal[index];
    // TODO: add every other tap t of the filter. Tap t reads signal[index + t − radius];
    // skip the taps that fall outside the signal (careful: u32 cannot go below zero).
    output[index] = total;
}
