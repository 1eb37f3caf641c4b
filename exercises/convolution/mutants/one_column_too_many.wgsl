// mutant: out-of-bounds — `j <= weights_columns`: one weight too many per row, the next row's first (or one past the end of the weights)
// expect: the kernel reads out of bounds
// 2D convolution on the GPU. The reference solution with the one mistake named in the first line: one invocation per output element,
// each walking the weights.
//
//   output[r][c] = Σ_i Σ_j input[r + i][c + j] · weights[i][j]

struct Dimensions {
    input_rows: u32,
    input_columns: u32,
    weights_rows: u32,
    weights_columns: u32,
    output_rows: u32,
    output_columns: u32,
}

@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read> weights: array<f32>;
@group(0) @binding(2) var<storage, read_write> output: array<f32>;
@group(0) @binding(3) var<uniform> dimensions: Dimensions;

@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) global: vec3u) {
    let column = global.x;
    let row = global.y;
    if (row >= dimensions.output_rows || column >= dimensions.output_columns) {
        return;
    }
    var total = 0.0;
    for (var i = 0u; i < dimensions.weights_rows; i = i + 1u) {
        let input_start = (row + i) * dimensions.input_columns + column;
        let weights_start = i * dimensions.weights_columns;
        for (var j = 0u; j <= dimensions.weights_columns; j = j + 1u) {
            total = total + input[input_start + j] * weights[weights_start + j];
        }
    }
    output[row * dimensions.output_columns + column] = total;
}
