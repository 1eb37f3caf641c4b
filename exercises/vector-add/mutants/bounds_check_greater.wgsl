// mutant: edge — `index > element_count` instead of `>=`: the first invocation past the end still reads and writes one element too far
// expect: the kernel writes out of bounds
// Warm-up: vector addition, output = a + b, element by element.

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
    if (index > dimensions.element_count) {
        return;
    }
    output[index] = a[index] + b[index];
}
