// alternative: the loop runs only over the taps that fall inside the signal (first and last tap computed up front), so its body has no test; a workgroup of 128
// Warm-up: 1D convolution, the naive way. A correct alternative to the reference solution, as the first line says.
//
//   output[i] = Σ_t weights[t] · signal[i + t − radius],   radius = (filter_length − 1) / 2
//
// Taps outside the signal count as zero, so they are skipped.

struct Dimensions {
    length: u32,
    filter_length: u32,
}

@group(0) @binding(0) var<storage, read> signal: array<f32>;
@group(0) @binding(1) var<storage, read> weights: array<f32>;
@group(0) @binding(2) var<storage, read_write> output: array<f32>;
@group(0) @binding(3) var<uniform> dimensions: Dimensions;

@compute @workgroup_size(128)
fn main(@builtin(global_invocation_id) global: vec3u) {
    let index = global.x;
    if (index >= dimensions.length) {
        return;
    }
    let radius = dimensions.filter_length / 2u;
    // Tap t reads signal[index + t - radius]: it is inside the signal from
    // t = radius - index (when index < radius) up to t < length + radius - index.
    let first = select(0u, radius - index, index < radius);
    let end = min(dimensions.filter_length, dimensions.length + radius - index);
    var total = 0.0;
    for (var tap = first; tap < end; tap = tap + 1u) {
        total = total + weights[tap] * signal[index + tap - radius];
    }
    output[index] = total;
}
