// alternative: each invocation of a 64-wide workgroup counts four consecutive values, and the shader says so with ELEMENTS_PER_WORKGROUP = 256 (the checker then dispatches ceil(n / 256) workgroups)
// Warm-up: a histogram with global atomics.

struct Dimensions {
    element_count: u32,
    bin_count: u32,
}

const WORKGROUP_SIZE: u32 = 64u;
const VALUES_PER_INVOCATION: u32 = 4u;
const ELEMENTS_PER_WORKGROUP: u32 = WORKGROUP_SIZE * VALUES_PER_INVOCATION;

@group(0) @binding(0) var<storage, read> values: array<u32>;
@group(0) @binding(1) var<storage, read_write> bins: array<atomic<u32>>;
@group(0) @binding(2) var<uniform> dimensions: Dimensions;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) global: vec3u) {
    let first = global.x * VALUES_PER_INVOCATION;
    let end = min(first + VALUES_PER_INVOCATION, dimensions.element_count);
    for (var index = first; index < end; index = index + 1u) {
        atomicAdd(&bins[values[index]], 1u);
    }
}
