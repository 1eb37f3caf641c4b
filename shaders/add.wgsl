// add.wgsl: output = left + right, element by element, for two tensors of one shape:
// where two branches of a network meet again.
//
// Laid out like relu.wgsl: one invocation per element, workgroups on a 2D grid numbered
// row by row, so a tensor may have more elements than 65,535 × 256.

struct Dimensions {
    element_count: u32,
}

@group(0) @binding(0) var<storage, read> left: array<f32>;
@group(0) @binding(1) var<storage, read> right: array<f32>;
@group(0) @binding(2) var<storage, read_write> output: array<f32>;
@group(0) @binding(3) var<uniform> dimensions: Dimensions;

// ANCHOR: add
@compute @workgroup_size(256, 1, 1)
fn main(@builtin(workgroup_id) workgroup: vec3u,
        @builtin(num_workgroups) workgroup_count: vec3u,
        @builtin(local_invocation_index) local_index: u32) {
    let workgroup_index = workgroup.y * workgroup_count.x + workgroup.x;
    let index = workgroup_index * 256u + local_index;
    if (index >= dimensions.element_count) {
        return;
    }
    output[index] = left[index] + right[index];
}
// ANCHOR_END: add
