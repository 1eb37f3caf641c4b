// Warm-up: a histogram with workgroup sub-histograms.
//
// Every value is a bin number below `dimensions.bin_count` (at most MAX_BINS = 256);
// bins[b] must end up holding how many values equal b. The checker zeroes `bins` before
// the run.
//
// This starter is the global-atomics kernel of the previous warm-up: correct, but every
// value is an atomic operation on device memory, and when many values fall into the
// same bin those atomics queue up behind each other. Make each workgroup count its values
// into a histogram of its own in workgroup memory first, and add that sub-histogram to
// `bins` once at the end.
//
// The checker dispatches ceil(element_count / ELEMENTS_PER_WORKGROUP) workgroups along x
// (at least one). ELEMENTS_PER_WORKGROUP is read from this file: raise it to let each
// invocation count several values, so that the final merge is paid for fewer times.

struct Dimensions {
    element_count: u32,
    bin_count: u32,
}

const WORKGROUP_SIZE: u32 = 256u;
const ELEMENTS_PER_WORKGROUP: u32 = WORKGROUP_SIZE;
const MAX_BINS: u32 = 256u;

@group(0) @binding(0) var<storage, read> values: array<u32>;
@group(0) @binding(1) var<storage, read_write> bins: array<atomic<u32>>;
@group(0) @binding(2) var<uniform> dimensions: Dimensions;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) global: vec3u) {
    let index = global.x;
    if (index >= dimensions.element_count) {
        return;
    }
    atomicAdd(&bins[values[index]], 1u);
}
