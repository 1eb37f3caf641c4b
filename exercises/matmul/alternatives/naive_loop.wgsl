// alternative: the plain kernel, no workgroup memory: one invocation per output element, an 8 × 8 workgroup, each walking its row of a and column of b
// Hand-in: matrix multiplication, output = a · b.

struct Dimensions {
    rows: u32,
    inner: u32,
    columns: u32,
}

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> output: array<f32>;
@group(0) @binding(3) var<uniform> dimensions: Dimensions;

@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) global: vec3u) {
    let column = global.x;
    let row = global.y;
    if (row >= dimensions.rows || column >= dimensions.columns) {
        return;
    }
    var total = 0.0;
    for (var k = 0u; k < dimensions.inner; k = k + 1u) {
        total = total + a[row * dimensions.inner + k] * b[k * dimensions.columns + column];
    }
    output[row * dimensions.columns + column] = total;
}
