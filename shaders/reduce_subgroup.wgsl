// reduce_subgroup.wgsl: the reductions of reduce.wgsl, with subgroup operations.
//
// A subgroup (a warp on NVIDIA, a wavefront on AMD) is the set of invocations over which
// subgroup operations are defined; the hardware usually runs it on the lanes of one SIMD
// unit, but nothing may assume lockstep execution outside those operations. `subgroupAdd`
// combines a value across a subgroup through the hardware's lane-to-lane paths, without
// workgroup memory and without barriers. The tree
// reduction of reduce.wgsl needs log2(256) = 8 barrier-separated steps; here two subgroup
// steps and one barrier do the same work.
//
// Used only when the device has the SUBGROUP feature; otherwise the crate falls back to
// reduce.wgsl. The subgroup size varies between devices (8 on lavapipe, 32 on NVIDIA),
// so nothing below assumes one.

struct Dimensions {
    element_count: u32,
}

const WORKGROUP_SIZE: u32 = 256u;
const VALUES_PER_INVOCATION: u32 = 4u;
const BLOCK_SIZE: u32 = WORKGROUP_SIZE * VALUES_PER_INVOCATION;

@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read_write> partial_results: array<f32>;
@group(0) @binding(2) var<uniform> dimensions: Dimensions;

// One total per subgroup; a workgroup has at most 256 subgroups (of size 1).
var<workgroup> subgroup_totals: array<f32, WORKGROUP_SIZE>;

// ANCHOR: subgroup_sum
@compute @workgroup_size(256, 1, 1)
fn sum(@builtin(workgroup_id) workgroup: vec3u,
       @builtin(num_workgroups) workgroup_count: vec3u,
       @builtin(local_invocation_index) local_index: u32,
       @builtin(subgroup_id) subgroup: u32,
       @builtin(num_subgroups) subgroup_count: u32,
       @builtin(subgroup_invocation_id) lane: u32,
       @builtin(subgroup_size) subgroup_size: u32) {
    let block = workgroup.y * workgroup_count.x + workgroup.x;
    let block_start = block * BLOCK_SIZE;

    var value = 0.0;
    for (var step = 0u; step < VALUES_PER_INVOCATION; step = step + 1u) {
        let index = block_start + step * WORKGROUP_SIZE + local_index;
        if (index < dimensions.element_count) {
            value = value + input[index];
        }
    }

    // Step 1: every subgroup adds up its own values; its first lane keeps the total.
    let subgroup_total = subgroupAdd(value);
    if (lane == 0u) {
        subgroup_totals[subgroup] = subgroup_total;
    }
    workgroupBarrier();

    // Step 2: every subgroup adds up the subgroup totals (each lane takes every
    // subgroup_size-th one, in case there are more totals than lanes). All subgroups do
    // this, so the subgroup operation stays in uniform control flow.
    var share = 0.0;
    for (var index = lane; index < subgroup_count; index = index + subgroup_size) {
        share = share + subgroup_totals[index];
    }
    let total = subgroupAdd(share);
    if (local_index == 0u) {
        partial_results[block] = total;
    }
}
// ANCHOR_END: subgroup_sum

@compute @workgroup_size(256, 1, 1)
fn max_value(@builtin(workgroup_id) workgroup: vec3u,
             @builtin(num_workgroups) workgroup_count: vec3u,
             @builtin(local_invocation_index) local_index: u32,
             @builtin(subgroup_id) subgroup: u32,
             @builtin(num_subgroups) subgroup_count: u32,
             @builtin(subgroup_invocation_id) lane: u32,
             @builtin(subgroup_size) subgroup_size: u32) {
    let block = workgroup.y * workgroup_count.x + workgroup.x;
    let block_start = block * BLOCK_SIZE;

    // The lowest finite f32 is the identity for values that are all finite.
    var value = -3.40282347e+38;
    for (var step = 0u; step < VALUES_PER_INVOCATION; step = step + 1u) {
        let index = block_start + step * WORKGROUP_SIZE + local_index;
        if (index < dimensions.element_count) {
            value = max(value, input[index]);
        }
    }

    let subgroup_maximum = subgroupMax(value);
    if (lane == 0u) {
        subgroup_totals[subgroup] = subgroup_maximum;
    }
    workgroupBarrier();

    var share = -3.40282347e+38;
    for (var index = lane; index < subgroup_count; index = index + subgroup_size) {
        share = max(share, subgroup_totals[index]);
    }
    let maximum = subgroupMax(share);
    if (local_index == 0u) {
        partial_results[block] = maximum;
    }
}
