// 2D convolution on the GPU:
//
//   output[r][c] = Σ_i Σ_j input[r + i][c + j] · weights[i][j]
//
// at every position where the weights fit inside the input. All tensors are row-major.
//
// The checker fills `output` with NaN and dispatches
// ceil(output_columns / 8) × ceil(output_rows / 8) workgroups: x walks the output
// columns, y the output rows, one invocation per output element (8 × 8 is the workgroup
// size below, read from @workgroup_size).

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
    // Only the first weight so far: right for 1 × 1 weights.
    let total = input[row * dimensions.input_columns + column] * weights[0];
    // TODO: sum over every weight (i, j): input[row + i][column + j] · weights[i][j].
    output[row * dimensions.output_columns + column] = total;
}
