// mutant: wrong-result — a copy-paste slip: `a[index] + a[index]`, b is never read
// expect: the kernel never reads b
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
    if (index >= dimensions.element_count) {
        return;
    }
    output[index] = a[index] + a[index];
}
