// alternative: the position kept as a u32 and tested once (`position < length`): a tap before the start wraps around to a huge number and fails the same test as one past the end
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

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) global: vec3u) {
    let index = global.x;
    if (index >= dimensions.length) {
        return;
    }
    let radius = dimensions.filter_length / 2u;
    var total = 0.0;
    for (var tap = 0u; tap < dimensions.filter_length; tap = tap + 1u) {
        // Unsigned on purpose: before the start, index + tap - radius wraps around to a
        // number far above any length, so one test catches both edges.
        let position = index + tap - radius;
        if (position < dimensions.length) {
            total = total + weights[tap] * signal[position];
        }
    }
    output[index] = total;
}
