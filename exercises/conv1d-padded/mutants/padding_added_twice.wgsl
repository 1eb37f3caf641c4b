// mutant: out-of-bounds — adds the radius once more (`padded_signal[index + tap + radius]`): every output shifted, and the last ones read past the end of the padded signal
// expect: the kernel reads out of bounds
// Warm-up: 1D convolution over a zero-padded signal. The reference solution with the one mistake named in the first line.
//
// padded_signal[p + radius] = signal[p], with `radius` zeros on both sides, so tap t of
// output i, which reads signal[i + t − radius], finds it at padded_signal[i + t].

struct Dimensions {
    length: u32,
    filter_length: u32,
}

@group(0) @binding(0) var<storage, read> padded_signal: array<f32>;
@group(0) @binding(1) var<storage, read> weights: array<f32>;
@group(0) @binding(2) var<storage, read_write> output: array<f32>;
@group(0) @binding(3) var<uniform> dimensions: Dimensions;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) global: vec3u) {
    let index = global.x;
    if (index >= dimensions.length) {
        return;
    }
    var total = 0.0;
    for (var tap = 0u; tap < dimensions.filter_length; tap = tap + 1u) {
        total = total + weights[tap] * padded_signal[index + tap + dimensions.filter_length / 2u];
    }
    output[index] = total;
}
