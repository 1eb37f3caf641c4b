// mutant: out-of-bounds — the bounds check uses `arrayLength(&padded_signal)`, the padded length: the invocations past the end of the signal write past the end of the output
// expect: the kernel writes out of bounds
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
    if (index >= arrayLength(&padded_signal)) {
        return;
    }
    var total = 0.0;
    for (var tap = 0u; tap < dimensions.filter_length; tap = tap + 1u) {
        total = total + weights[tap] * padded_signal[index + tap];
    }
    output[index] = total;
}
