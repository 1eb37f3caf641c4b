// Max pooling on the GPU: the largest value of every window × window block of `input`.
//
// The checker fills `output` with NaN and dispatches
// ceil(output_columns / 8) × ceil(output_rows / 8) workgroups: x walks the output
// columns, y the output rows, one invocation per output element (8 × 8 is the workgroup
// size below, read from @workgroup_size). Both tensors are row-major.

struct Dimensions {
    input_rows: u32,
    input_columns: u32,
    output_rows: u32,
    output_columns: u32,
    window: u32,
}

@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read_write> output: array<f32>;
@group(0) @binding(2) var<uniform> dimensions: Dimensions;

@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) global: vec3u) {
    let column = global.x;
    let row = global.y;
    if (row >= dimensions.output_rows || column >= dimensions.output_columns) {
        return;
    }
    // The top-left element of this output's window: right for a window of 1 only.
    let top = row * dimensions.window;
    let left = column * dimensions.window;
    let largest = input[top * dimensions.input_columns + left];
    // TODO: the largest of all window × window elements of the window.
    output[row * dimensions.output_columns + column] = largest;
}
