// mutant: missing-atomic — `atomicStore` instead of `atomicAdd` into the global `bins`
// expect: not atomic
// Warm-up: a histogram with workgroup sub-histograms. A wrong hand-in: the solution with the one mistake named on the first line.
//
// Each workgroup counts ELEMENTS_PER_WORKGROUP values into its own histogram in
// workgroup memory, where atomics are cheap and only the workgroup's invocations compete,
// then adds each non-zero bin of it to `bins` with one global atomic.

struct Dimensions {
    element_count: u32,
    bin_count: u32,
}

const WORKGROUP_SIZE: u32 = 256u;
const VALUES_PER_INVOCATION: u32 = 16u;
const ELEMENTS_PER_WORKGROUP: u32 = WORKGROUP_SIZE * VALUES_PER_INVOCATION;
const MAX_BINS: u32 = 256u;

@group(0) @binding(0) var<storage, read> values: array<u32>;
@group(0) @binding(1) var<storage, read_write> bins: array<atomic<u32>>;
@group(0) @binding(2) var<uniform> dimensions: Dimensions;

var<workgroup> local_bins: array<atomic<u32>, MAX_BINS>;

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) local: u32,
        @builtin(workgroup_id) workgroup: vec3u) {
    // Workgroup memory starts out as zeros in WGSL; no clearing needed.

    // 1. Count this workgroup's values. The stride of WORKGROUP_SIZE makes neighbouring
    //    invocations read neighbouring values.
    let first = workgroup.x * ELEMENTS_PER_WORKGROUP;
    for (var step = 0u; step < VALUES_PER_INVOCATION; step = step + 1u) {
        let index = first + step * WORKGROUP_SIZE + local;
        if (index < dimensions.element_count) {
            atomicAdd(&local_bins[values[index]], 1u);
        }
    }
    // 2. Wait until every invocation has counted.
    workgroupBarrier();

    // 3. Merge: each invocation adds some bins of the sub-histogram to the global one.
    for (var bin = local; bin < dimensions.bin_count; bin = bin + WORKGROUP_SIZE) {
        let count = atomicLoad(&local_bins[bin]);
        if (count > 0u) {
            atomicStore(&bins[bin], count);
        }
    }
}
