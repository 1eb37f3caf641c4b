// alternative: one flat loop over every weight (its row and column recovered with / and %), summed with fma(), in a workgroup of 8 × 8 (the graph level's grid is the solution's)
// 2D convolution on the GPU. A correct alternative to the reference solution, as the first line says: one invocation per output element,
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
    let count = dimensions.weights_rows * dimensions.weights_columns;
    for (var weight = 0u; weight < count; weight = weight + 1u) {
        let i = weight / dimensions.weights_columns;
        let j = weight % dimensions.weights_columns;
        total = fma(input[(row + i) * dimensions.input_columns + column + j], weights[weight], total);
    }
    output[row * dimensions.output_columns + column] = total;
}
