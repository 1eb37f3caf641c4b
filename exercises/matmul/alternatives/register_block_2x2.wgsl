// alternative: register blocking without workgroup memory: each invocation of a 16 × 8 workgroup computes a 2 × 2 block of outputs (BLOCK_COLUMNS 32 and BLOCK_ROWS 16 tell the checker), using every value it reads from a and b twice
// Hand-in: matrix multiplication, output = a · b.

struct Dimensions {
    rows: u32,
    inner: u32,
    columns: u32,
}

const WORKGROUP_COLUMNS: u32 = 16u;
const WORKGROUP_ROWS: u32 = 8u;
const BLOCK_COLUMNS: u32 = 32u;
const BLOCK_ROWS: u32 = 16u;

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> output: array<f32>;
@group(0) @binding(3) var<uniform> dimensions: Dimensions;

@compute @workgroup_size(WORKGROUP_COLUMNS, WORKGROUP_ROWS)
fn main(@builtin(global_invocation_id) global: vec3u) {
    // This invocation's outputs: rows 2y and 2y + 1, columns 2x and 2x + 1.
    let row = 2u * global.y;
    let column = 2u * global.x;
    // A row or column past the edge is read as the last one, so every read stays inside
    // the matrices; its results are never written.
    let row_0 = min(row, dimensions.rows - 1u);
    let row_1 = min(row + 1u, dimensions.rows - 1u);
    let column_0 = min(column, dimensions.columns - 1u);
    let column_1 = min(column + 1u, dimensions.columns - 1u);
    var sums = mat2x2<f32>(0.0, 0.0, 0.0, 0.0);
    for (var k = 0u; k < dimensions.inner; k = k + 1u) {
        let a_values = vec2<f32>(a[row_0 * dimensions.inner + k], a[row_1 * dimensions.inner + k]);
        let b_values = vec2<f32>(b[k * dimensions.columns + column_0], b[k * dimensions.columns + column_1]);
        // Column j of `sums` holds the two rows' sums for output column j.
        sums = sums + mat2x2<f32>(a_values * b_values.x, a_values * b_values.y);
    }
    for (var i = 0u; i < 2u; i = i + 1u) {
        for (var j = 0u; j < 2u; j = j + 1u) {
            if (row + i < dimensions.rows && column + j < dimensions.columns) {
                output[(row + i) * dimensions.columns + column + j] = sums[j][i];
            }
        }
    }
}
