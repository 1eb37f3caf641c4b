// mutant: wrong-result — the workgroup grown to 128 invocations, but the index still computed as `workgroup_id.x * 64 + local`, so workgroups overlap and the second half of the array is never written
// expect: never written
// Warm-up: vector addition, output = a + b, element by element.

struct Dimensions {
    element_count: u32,
}

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> output: array<f32>;
@group(0) @binding(3) var<uniform> dimensions: Dimensions;

@compute @workgroup_size(128)
fn main(@builtin(workgroup_id) workgroup: vec3u,
        @builtin(local_invocation_index) local: u32) {
    let index = workgroup.x * 64u + local;
    if (index >= dimensions.element_count) {
        return;
    }
    output[index] = a[index] + b[index];
}
