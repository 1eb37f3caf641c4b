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

// NaN and infinity, written as bit patterns, as in reduce.wgsl. WGSL lets a compiler assume that no float is
// ever NaN or infinite, so it may fold `value != value` to false or assume `max` never sees
// a NaN; a test on the bits is an integer test, which no such assumption touches.
// A NaN has every exponent bit set and a fraction that is not zero.
fn is_nan(value: f32) -> bool {
    return (bitcast<u32>(value) & 0x7fffffffu) > 0x7f800000u;
}

fn not_a_number() -> f32 {
    return bitcast<f32>(0x7fc00000u);
}

// −∞, the identity of the maximum: max(−∞, x) = x for every x, −∞ included.
fn negative_infinity() -> f32 {
    return bitcast<f32>(0xff800000u);
}

// The larger value, or NaN if either is NaN (as numpy.maximum and torch.maximum).
fn max_propagating_nan(left: f32, right: f32) -> f32 {
    if (is_nan(left)) {
        return left;
    }
    if (is_nan(right)) {
        return right;
    }
    return max(left, right);
}

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

    // Invocations past the end keep −∞, which changes no maximum.
    var value = negative_infinity();
    for (var step = 0u; step < VALUES_PER_INVOCATION; step = step + 1u) {
        let index = block_start + step * WORKGROUP_SIZE + local_index;
        if (index < dimensions.element_count) {
            value = max_propagating_nan(value, input[index]);
        }
    }

    // subgroupMax makes no promise about NaN, so whether any lane holds one is asked
    // separately, and a NaN replaces the maximum if so.
    let subgroup_maximum = select(subgroupMax(value), not_a_number(),
                                  subgroupAny(is_nan(value)));
    if (lane == 0u) {
        subgroup_totals[subgroup] = subgroup_maximum;
    }
    workgroupBarrier();

    var share = negative_infinity();
    for (var index = lane; index < subgroup_count; index = index + subgroup_size) {
        share = max_propagating_nan(share, subgroup_totals[index]);
    }
    let maximum = select(subgroupMax(share), not_a_number(), subgroupAny(is_nan(share)));
    if (local_index == 0u) {
        partial_results[block] = maximum;
    }
}
