// reduce_f16_to_f32.wgsl: the first pass of a tree sum that reads f16 values and adds in
// f32: each value is converted as it is loaded, so only the storage is half precision.
// It writes one f32 partial result per block of 1024 values; the later passes run the f32
// kernel of reduce.wgsl.
//
// Needs the SHADER_F16 device feature.

enable f16;

struct Dimensions {
    element_count: u32,
}

const WORKGROUP_SIZE: u32 = 256u;
const VALUES_PER_INVOCATION: u32 = 4u;
const BLOCK_SIZE: u32 = WORKGROUP_SIZE * VALUES_PER_INVOCATION;

@group(0) @binding(0) var<storage, read> input: array<f16>;
@group(0) @binding(1) var<storage, read_write> partial_results: array<f32>;
@group(0) @binding(2) var<uniform> dimensions: Dimensions;

var<workgroup> partial: array<f32, WORKGROUP_SIZE>;

// ANCHOR: sum_in_single
@compute @workgroup_size(256, 1, 1)
fn sum_in_single(@builtin(workgroup_id) workgroup: vec3u,
                 @builtin(num_workgroups) workgroup_count: vec3u,
                 @builtin(local_invocation_index) local_index: u32) {
    let block = workgroup.y * workgroup_count.x + workgroup.x;
    let block_start = block * BLOCK_SIZE;

    var value = 0.0;
    for (var step = 0u; step < VALUES_PER_INVOCATION; step = step + 1u) {
        let index = block_start + step * WORKGROUP_SIZE + local_index;
        if (index < dimensions.element_count) {
            value = value + f32(input[index]);
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
// ANCHOR_END: sum_in_single
