// alternative: the search starts from the lowest f32 instead of the first element, and the window is walked with one flat loop over window² offsets using select()
// Max pooling on the GPU: the largest value of every window × window block of `input`.
// A correct alternative to the reference solution, as the first line says: one invocation per output element, each walking its window.

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
    // The lowest finite f32: any value of the window replaces it.
    var largest = -3.40282347e38;
    let size = dimensions.window * dimensions.window;
    for (var offset = 0u; offset < size; offset = offset + 1u) {
        let value = input[(top + offset / dimensions.window) * dimensions.input_columns + left + offset % dimensions.window];
        largest = select(largest, value, value > largest);
    }
    output[row * dimensions.output_columns + column] = largest;
}
