// The single-pass softmax, the baseline the tree reduction is compared with.
//
// One invocation owns one whole row and walks it three times with a plain loop: for the
// maximum, for the sum of exponentials, and to normalise. Simple, and correct, but a row
// of 4,096 elements is 12,288 steps for one invocation while the others of its
// workgroup work on other rows, and with few rows most of the GPU has nothing to do.
//
// Bindings as in the exercise; the host dispatches ceil(rows / 64) workgroups along x.

struct Dimensions {
    rows: u32,
    columns: u32,
}

@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read_write> output: array<f32>;
@group(0) @binding(2) var<uniform> dimensions: Dimensions;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) global: vec3u) {
    let row = global.x;
    if (row >= dimensions.rows) {
        return;
    }
    let start = row * dimensions.columns;
    var row_maximum = -3.40282347e+38;
    for (var column = 0u; column < dimensions.columns; column = column + 1u) {
        row_maximum = max(row_maximum, input[start + column]);
    }
    var row_sum = 0.0;
    for (var column = 0u; column < dimensions.columns; column = column + 1u) {
        row_sum = row_sum + exp(input[start + column] - row_maximum);
    }
    for (var column = 0u; column < dimensions.columns; column = column + 1u) {
        output[start + column] = exp(input[start + column] - row_maximum) / row_sum;
    }
}
