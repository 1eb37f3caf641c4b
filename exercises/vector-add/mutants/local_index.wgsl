// mutant: wrong-result — indexes with local_invocation_id (the place inside the workgroup) instead of global_invocation_id, so every workgroup writes the first 64 elements
// expect: never written
// Warm-up: vector addition, output = a + b, element by element.

struct Dimensions {
    element_count: u32,
}

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> output: array<f32>;
@group(0) @binding(3) var<uniform> dimensions: Dimensions;

@compute @workgroup_size(64)
fn main(@builtin(local_invocation_id) local: vec3u) {
    let index = local.x;
    if (index >= dimensions.element_count) {
        return;
    }
    output[index] = a[index] + b[index];
}
