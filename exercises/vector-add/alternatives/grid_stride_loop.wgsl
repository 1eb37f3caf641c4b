// alternative: a workgroup of 256 and a grid-stride loop (`index += num_workgroups · 256`) instead of one element per invocation and an early return; b + a instead of a + b
// Warm-up: vector addition, output = a + b, element by element.

struct Dimensions {
    element_count: u32,
}

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> output: array<f32>;
@group(0) @binding(3) var<uniform> dimensions: Dimensions;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) global: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    // Correct for any number of workgroups, including the ceil(n / 256) the checker
    // dispatches: each invocation walks the array in steps of the whole grid.
    let stride = groups.x * 256u;
    for (var index = global.x; index < dimensions.element_count; index = index + stride) {
        output[index] = b[index] + a[index];
    }
}
