// linear.wgsl: output = input · weights + bias, optionally followed by ReLU.
//
// input   is rows × inner      (row-major)
// weights is inner × columns   (row-major)
// bias    is 1 × columns       (one value per output column, broadcast over rows)
// output  is rows × columns
//
// One invocation computes one output element. Workgroups are 16 × 16 tiles of the output:
// `x` walks the columns, `y` (and `z`, when there are more row tiles than one dispatch
// dimension allows) walks the rows.

// ANCHOR: dimensions
struct Dimensions {
    rows: u32,
    inner: u32,
    columns: u32,
    // Row tiles per `y` step of the dispatch grid; see `row_tile` below.
    row_tiles_per_layer: u32,
}
// ANCHOR_END: dimensions

// Set when the pipeline is created: the same shader text serves `linear` and the fused
// `linear + ReLU`. The compiler removes the branch that is not taken.
override apply_relu: bool = false;

@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read> weights: array<f32>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> output: array<f32>;
@group(0) @binding(4) var<uniform> dimensions: Dimensions;

// ANCHOR: linear
@compute @workgroup_size(16, 16, 1)
fn main(@builtin(global_invocation_id) global: vec3u,
        @builtin(local_invocation_id) local: vec3u,
        @builtin(workgroup_id) workgroup: vec3u) {
    let column = global.x;
    // Large tensors need more row tiles than one dispatch dimension allows, so the
    // row tiles are spread over `y` and `z`.
    let row_tile = workgroup.z * dimensions.row_tiles_per_layer + workgroup.y;
    let row = row_tile * 16u + local.y;
    // The grid is rounded up to whole workgroups: invocations outside the output do nothing.
    if (row >= dimensions.rows || column >= dimensions.columns) {
        return;
    }

    var sum = bias[column];
    for (var k = 0u; k < dimensions.inner; k = k + 1u) {
        sum = sum + input[row * dimensions.inner + k] * weights[k * dimensions.columns + column];
    }
    if (apply_relu) {
        sum = select(sum, 0.0, sum < 0.0);
    }
    output[row * dimensions.columns + column] = sum;
}
// ANCHOR_END: linear
