// Warm-up: vector addition, output = a + b, element by element.
//
// The checker binds the four buffers below, fills `output` with NaN, and dispatches
// ceil(n / 64) workgroups along x, where n is `dimensions.element_count` and 64 is the
// workgroup size of this kernel. (Change the size if you like: the checker reads it
// from @workgroup_size.)

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
    // TODO: write a[index] + b[index] into output[index], but only when `index` is
    // inside the arrays: the last workgroup can stick out past the end.
}
