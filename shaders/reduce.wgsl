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

    // The lowest finite f32 is the identity for values that are all finite.
    var value = -3.40282347e+38;
    for (var step = 0u; step < VALUES_PER_INVOCATION; step = step + 1u) {
        let index = block_start + step * WORKGROUP_SIZE + local_index;
        if (index < dimensions.element_count) {
            value = max(value, input[index]);
        }
    }
    partial[local_index] = value;
    workgroupBarrier();

    for (var stride = WORKGROUP_SIZE / 2u; stride > 0u; stride = stride / 2u) {
        if (local_index < stride) {
            partial[local_index] = max(partial[local_index], partial[local_index + stride]);
        }
        workgroupBarrier();
    }
    if (local_index == 0u) {
        partial_results[block] = partial[0];
    }
}
// ANCHOR_END: max
