// mutant: missing-atomic — bins declared as a plain `array<u32>` and counted with `bins[v] = bins[v] + 1u`: two invocations that read the same count both write count + 1
// expect: `bins` holds plain u32
// Warm-up: a histogram with global atomics. The reference solution with the one mistake named in the first line.
//
// atomicAdd reads, adds and writes as one indivisible step, so two invocations that hit
// the same bin at the same moment both count.

struct Dimensions {
    element_count: u32,
    bin_count: u32,
}

@group(0) @binding(0) var<storage, read> values: array<u32>;
@group(0) @binding(1) var<storage, read_write> bins: array<u32>;
@group(0) @binding(2) var<uniform> dimensions: Dimensions;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) global: vec3u) {
    let index = global.x;
    if (index >= dimensions.element_count) {
        return;
    }
    let bin = values[index];
    bins[bin] = bins[bin] + 1u;
}
