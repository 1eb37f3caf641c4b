// Hand-in: matrix multiplication, output = a · b.
//
// a is rows × inner, b is inner × columns, output is rows × columns, all row-major:
// element (r, c) of output is at output[r * columns + c].
//
// Any correct kernel passes; the checker also reports its speed in GFLOP/s (for your
// curiosity, not for the grade). It fills `output` with NaN and dispatches
// ceil(columns / BLOCK_COLUMNS) × ceil(rows / BLOCK_ROWS) workgroups: x walks the
// columns, y the rows. BLOCK_COLUMNS and BLOCK_ROWS are read from this file; without
// them the checker uses the workgroup size, one output per invocation. Declare them if
// each invocation computes several outputs.

struct Dimensions {
    rows: u32,
    inner: u32,
    columns: u32,
}

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> output: array<f32>;
@group(0) @binding(3) var<uniform> dimensions: Dimensions;

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) global: vec3u) {
    let column = global.x;
    let row = global.y;
    // TODO: output[row][column] = Σ_k a[row][k] · b[k][column], for the invocations that
    // fall inside the output.
}
