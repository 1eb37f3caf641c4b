// mutant: out-of-bounds — only the left edge tested (`position >= 0`): the last outputs read past the end of the signal
// expect: the kernel reads out of bounds
// Warm-up: 1D convolution, the naive way. The reference solution with the one mistake named in the first line.
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
        // Signed, because the first taps of the first outputs point before the start.
        let position = i32(index + tap) - i32(radius);
        if (position >= 0) {
            total = total + weights[tap] * signal[u32(position)];
        }
    }
    output[index] = total;
}
