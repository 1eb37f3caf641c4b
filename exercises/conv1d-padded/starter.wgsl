// Warm-up: 1D convolution over a zero-padded signal.
//
//   output[i] = Σ_t weights[t] · signal[i + t − radius],   radius = (filter_length − 1) / 2
//
// This time the checker pads the signal on the CPU before uploading it: `padded_signal`
// holds `radius` zeros, then the `length` elements of the signal, then `radius` zeros
// again (length + filter_length − 1 elements in all). Every tap now reads a real element
// of the buffer, so the kernel needs no test per tap.
//
// The checker fills `output` with NaN and dispatches ceil(length / 64) workgroups along x.

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
    // TODO: sum weights[t] times the element of `padded_signal` that tap t reads, for
    // every tap. Where in the padded buffer is signal[index + t − radius]?
    output[index] = 0.0;
}
