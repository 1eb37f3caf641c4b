// mutant: wrong-result — input rows stepped with `output_columns` instead of `input_columns`
// expect: the window is read at the wrong place
// Max pooling on the GPU: the largest value of every window × window block of `input`.
// The reference solution with the one mistake named in the first line: one invocation per output element, each walking its window.

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
    let top = row * dimensions.window;
    let left = column * dimensions.window;
    // Every window holds at least one element: start from the first.
    var largest = input[top * dimensions.input_columns + left];
    for (var window_row = 0u; window_row < dimensions.window; window_row = window_row + 1u) {
        let start = (top + window_row) * dimensions.output_columns + left;
        for (var window_column = 0u; window_column < dimensions.window; window_column = window_column + 1u) {
            largest = max(largest, input[start + window_column]);
        }
    }
    output[row * dimensions.output_columns + column] = largest;
}
