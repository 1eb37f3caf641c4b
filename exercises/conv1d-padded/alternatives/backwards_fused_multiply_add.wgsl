// alternative: taps summed from the last to the first with `fma`, in a workgroup of 256 whose index is built from workgroup_id and local_invocation_index
// Warm-up: 1D convolution over a zero-padded signal. A correct alternative to the reference solution, as the first line says.
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

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) workgroup: vec3u,
        @builtin(local_invocation_index) local: u32) {
    let index = workgroup.x * 256u + local;
    if (index >= dimensions.length) {
        return;
    }
    var total = 0.0;
    // From the last tap down to the first; the loop stops after tap 0.
    var tap = dimensions.filter_length;
    while (tap > 0u) {
        tap = tap - 1u;
        total = fma(weights[tap], padded_signal[index + tap], total);
    }
    output[index] = total;
}
