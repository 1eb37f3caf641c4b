// relu_in_place.wgsl: tensor = max(tensor, 0), overwriting the input.
//
// Reading and writing the same element from the same invocation is safe: no other
// invocation touches it. That is what makes ReLU a candidate for in-place execution,
// which saves a whole buffer.

struct Dimensions {
    element_count: u32,
}

@group(0) @binding(0) var<storage, read_write> tensor: array<f32>;
@group(0) @binding(1) var<uniform> dimensions: Dimensions;

// ANCHOR: relu_in_place
@compute @workgroup_size(256, 1, 1)
fn main(@builtin(workgroup_id) workgroup: vec3u,
        @builtin(num_workgroups) workgroup_count: vec3u,
        @builtin(local_invocation_index) local_index: u32) {
    let workgroup_index = workgroup.y * workgroup_count.x + workgroup.x;
    let index = workgroup_index * 256u + local_index;
    if (index >= dimensions.element_count) {
        return;
    }
    let value = tensor[index];
    tensor[index] = select(value, 0.0, value < 0.0);
}
// ANCHOR_END: relu_in_place
