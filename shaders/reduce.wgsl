// reduce.wgsl: sum or maximum of a whole tensor, by tree reduction.
//
// One pass turns n values into ceil(n / 1024) partial results: each workgroup of 256
// invocations owns a block of 1024 consecutive values, each invocation first combines the
// 4 values it owns (strided by 256, so neighbouring invocations read neighbouring
// addresses), then the workgroup combines its 256 values in workgroup memory. The host
// repeats passes until one value is left.

struct Dimensions {
    element_count: u32,
}

const WORKGROUP_SIZE: u32 = 256u;
const VALUES_PER_INVOCATION: u32 = 4u;
const BLOCK_SIZE: u32 = WORKGROUP_SIZE * VALUES_PER_INVOCATION;

@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read_write> partial_results: array<f32>;
@group(0) @binding(2) var<uniform> dimensions: Dimensions;

var<workgroup> partial: array<f32, WORKGROUP_SIZE>;

// ANCHOR: nan_helpers
// NaN and infinity, written as bit patterns. WGSL lets a compiler assume that no float is
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
// ANCHOR_END: nan_helpers

fn block_index(workgroup: vec3u, workgroup_count: vec3u) -> u32 {
    return workgroup.y * workgroup_count.x + workgroup.x;
}

// ANCHOR: sum
@compute @workgroup_size(256, 1, 1)
fn sum(@builtin(workgroup_id) workgroup: vec3u,
       @builtin(num_workgroups) workgroup_count: vec3u,
       @builtin(local_invocation_index) local_index: u32) {
    let block = block_index(workgroup, workgroup_count);
    let block_start = block * BLOCK_SIZE;

    var value = 0.0;
    for (var step = 0u; step < VALUES_PER_INVOCATION; step = step + 1u) {
        let index = block_start + step * WORKGROUP_SIZE + local_index;
        if (index < dimensions.element_count) {
            value = value + input[index];
        }
    }
    partial[local_index] = value;
    workgroupBarrier();

    for (var stride = WORKGROUP_SIZE / 2u; stride > 0u; stride = stride / 2u) {
        if (local_index < stride) {
            partial[local_index] = partial[local_index] + partial[local_index + stride];
        }
        workgroupBarrier();
    }
    if (local_index == 0u) {
        partial_results[block] = partial[0];
    }
}
// ANCHOR_END: sum

// ANCHOR: max
@compute @workgroup_size(256, 1, 1)
fn max_value(@builtin(workgroup_id) workgroup: vec3u,
             @builtin(num_workgroups) workgroup_count: vec3u,
             @builtin(local_invocation_index) local_index: u32) {
    let block = block_index(workgroup, workgroup_count);
    let block_start = block * BLOCK_SIZE;

    // Invocations past the end keep −∞, which changes no maximum.
    var value = negative_infinity();
    for (var step = 0u; step < VALUES_PER_INVOCATION; step = step + 1u) {
        let index = block_start + step * WORKGROUP_SIZE + local_index;
        if (index < dimensions.element_count) {
            value = max_propagating_nan(value, input[index]);
        }
    }
    partial[local_index] = value;
    workgroupBarrier();

    for (var stride = WORKGROUP_SIZE / 2u; stride > 0u; stride = stride / 2u) {
        if (local_index < stride) {
            partial[local_index] = max_propagating_nan(partial[local_index],
                                                       partial[local_index + stride]);
        }
        workgroupBarrier();
    }
    if (local_index == 0u) {
        partial_results[block] = partial[0];
    }
}
// ANCHOR_END: max
