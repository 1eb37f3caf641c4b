// Warm-up: vector addition, output = a + b, element by element. Reference solution.

struct Dimensions {
    element_count: u32,
}

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> output: array<f32>;
@group(0) @binding(3) var<uniform> dimensions: Dimensions;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) global: vec3u) {
    let index = global.x;
    // The grid is rounded up to whole workgroups, so the invocations past the end of
    // the arrays must do nothing.
    if (index >= dimensions.element_count) {
        return;
    }
    output[index] = a[index] + b[index];
}
