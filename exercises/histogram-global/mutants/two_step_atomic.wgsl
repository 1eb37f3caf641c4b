// mutant: missing-atomic — an atomicLoad, then an atomicStore of the count plus one: each step is atomic, the pair is not, so concurrent increments of one bin are lost
// expect: is not atomic as a whole
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
    if (index >= dimensions.element_count) {
        return;
    }
    let bin = values[index];
    let count = atomicLoad(&bins[bin]);
    atomicStore(&bins[bin], count + 1u);
}
