// mutant: out-of-bounds — no bounds check: the invocations past the last value read past the end of `values` and count whatever they find
// expect: the kernel writes out of bounds
// Warm-up: a histogram with global atomics. The reference solution with the one mistake named in the first line.
//
// atomicAdd reads, adds and writes as one indivisible step, so two invocations that hit
// the same bin at the same moment both count.

struct Dimensions {
    element_count: u32,
    bin_count: u32,
}

@group(0) @binding(0) var<storage, read> values: array<u32>;
@group(0) @binding(1) var<storage, read_write> bins: array<atomic<u32>>;
@group(0) @binding(2) var<uniform> dimensions: Dimensions;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) global: vec3u) {
    let index = global.x;
    atomicAdd(&bins[values[index]], 1u);
}
