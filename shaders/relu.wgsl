// relu.wgsl: output = max(input, 0), element by element, into a separate buffer.
//
// Each invocation handles one element. A tensor can have more elements than
// 65,535 workgroups × 256 invocations, so the workgroups are laid out on a 2D grid and
// numbered row by row: workgroup (x, y) is number y × (workgroups in x) + x.

struct Dimensions {
    element_count: u32,
}

@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read_write> output: array<f32>;
@group(0) @binding(2) var<uniform> dimensions: Dimensions;

// ANCHOR: relu
@compute @workgroup_size(256, 1, 1)
fn main(@builtin(workgroup_id) workgroup: vec3u,
        @builtin(num_workgroups) workgroup_count: vec3u,
        @builtin(local_invocation_index) local_index: u32) {
    let workgroup_index = workgroup.y * workgroup_count.x + workgroup.x;
    let index = workgroup_index * 256u + local_index;
    if (index >= dimensions.element_count) {
        return;
    }
    // `select(value, 0.0, value < 0.0)` rather than `max(value, 0.0)`: WGSL lets
    // max(NaN, 0) return 0, while a comparison with NaN is false, so a NaN passes through
    // as on the CPU wherever the GPU honours NaN (lavapipe does). WGSL also lets a GPU
    // assume that no NaN occurs, and an NVIDIA H100 returns 0 here: to catch a NaN, check
    // the input on the host.
    let value = input[index];
    output[index] = select(value, 0.0, value < 0.0);
}
// ANCHOR_END: relu
