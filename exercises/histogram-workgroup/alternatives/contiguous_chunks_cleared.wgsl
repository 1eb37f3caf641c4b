// alternative: a workgroup of 128 whose invocations each count 8 consecutive values, a sub-histogram cleared explicitly (with a barrier) before counting, and every bin merged, including zeros
//
// A histogram with workgroup sub-histograms, written differently from the reference
// solution. ELEMENTS_PER_WORKGROUP tells the checker how many values one workgroup
// counts.

struct Dimensions {
    element_count: u32,
    bin_count: u32,
}

const WORKGROUP_SIZE: u32 = 128u;
const CHUNK: u32 = 8u;
const ELEMENTS_PER_WORKGROUP: u32 = WORKGROUP_SIZE * CHUNK;
const MAX_BINS: u32 = 256u;

@group(0) @binding(0) var<storage, read> values: array<u32>;
@group(0) @binding(1) var<storage, read_write> bins: array<atomic<u32>>;
@group(0) @binding(2) var<uniform> dimensions: Dimensions;

var<workgroup> counts: array<atomic<u32>, MAX_BINS>;

@compute @workgroup_size(128)
fn main(@builtin(local_invocation_index) local: u32,
        @builtin(workgroup_id) workgroup: vec3u) {
    for (var bin = local; bin < MAX_BINS; bin = bin + WORKGROUP_SIZE) {
        atomicStore(&counts[bin], 0u);
    }
    workgroupBarrier();

    let first = workgroup.x * ELEMENTS_PER_WORKGROUP + local * CHUNK;
    let end = min(first + CHUNK, dimensions.element_count);
    for (var index = first; index < end; index = index + 1u) {
        atomicAdd(&counts[values[index]], 1u);
    }
    workgroupBarrier();

    for (var bin = local; bin < dimensions.bin_count; bin = bin + WORKGROUP_SIZE) {
        atomicAdd(&bins[bin], atomicLoad(&counts[bin]));
    }
}
