// Exercise: a tiled linear layer, output = input · weights + bias.
//
// input is rows × inner, weights inner × columns, bias 1 × columns (added to every row),
// output rows × columns; all row-major.
//
// The checker fills `output` with NaN and dispatches ceil(columns / 16) × ceil(rows / 16)
// workgroups: x walks the columns, y the rows (16 × 16 is the workgroup size below; the
// checker reads it from @workgroup_size).
//
// This kernel is correct, but every invocation reads a whole row of `input` and a whole
// column of `weights` from device memory: each input element is fetched once for every
// output column. TODO: tile it. Let each workgroup walk along `inner` in steps of 16,
// copying a 16 × 16 tile of `input` and one of `weights` into workgroup memory (one
// element per invocation), then computing 16 products per invocation from there.

struct Dimensions {
    rows: u32,
    inner: u32,
    columns: u32,
}

@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read> weights: array<f32>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> output: array<f32>;
@group(0) @binding(4) var<uniform> dimensions: Dimensions;

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) global: vec3u) {
    let column = global.x;
    let row = global.y;
    if (row >= dimensions.rows || column >= dimensions.columns) {
        return;
    }
    var total = bias[column];
    for (var k = 0u; k < dimensions.inner; k = k + 1u) {
        total = total + input[row * dimensions.inner + k] * weights[k * dimensions.columns + column];
    }
    output[row * dimensions.columns + column] = total;
}
