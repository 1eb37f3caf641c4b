// reduce_f16.wgsl: the tree sum of reduce.wgsl on half-precision values, in two variants.
//
// Both read f16 values (2 bytes each, half the memory traffic of f32). `sum_in_half`
// also adds in f16, the way a kernel written entirely in half precision does: every
// addition rounds to 11 significant bits and a partial sum above 65 504 becomes infinity.
// `sum_in_single` converts each value to f32 before adding and writes f32 partial results;
// the passes after the first then run the f32 kernel of reduce.wgsl.
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
@group(0) @binding(1) var<storage, read_write> partial_results: array<f16>;
@group(0) @binding(2) var<uniform> dimensions: Dimensions;

var<workgroup> partial: array<f16, WORKGROUP_SIZE>;

// ANCHOR: sum_in_half
@compute @workgroup_size(256, 1, 1)
fn sum_in_half(@builtin(workgroup_id) workgroup: vec3u,
               @builtin(num_workgroups) workgroup_count: vec3u,
               @builtin(local_invocation_index) local_index: u32) {
    let block = workgroup.y * workgroup_count.x + workgroup.x;
    let block_start = block * BLOCK_SIZE;

    var value = 0.0h;
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
// ANCHOR_END: sum_in_half
