// alternative: 8 × 32 workgroups, k-tiles of 8, the weights tile loaded by 64 of the 256 invocations, the k loop run backwards, `loop {}` and `select` instead of `for` and `if`
//
// A tiled linear layer, output = input · weights + bias, written differently from the
// reference solution. A workgroup covers 8 columns and 32 rows of the output (x walks
// the columns, as the checker's grid expects) and walks along `inner` 8 at a time.

struct Dimensions {
    rows: u32,
    inner: u32,
    columns: u32,
}

const COLUMNS: u32 = 8u;
const ROWS: u32 = 32u;
const DEPTH: u32 = 8u;

@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read> weights: array<f32>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> output: array<f32>;
@group(0) @binding(4) var<uniform> dimensions: Dimensions;

// input_tile[r][k] for the 32 rows; weights_tile[k][c] for the 8 columns.
var<workgroup> input_tile: array<array<f32, DEPTH>, ROWS>;
var<workgroup> weights_tile: array<array<f32, COLUMNS>, DEPTH>;

@compute @workgroup_size(8, 32)
fn main(@builtin(workgroup_id) workgroup: vec3u,
        @builtin(local_invocation_id) local: vec3u) {
    let column = workgroup.x * COLUMNS + local.x;
    let row = workgroup.y * ROWS + local.y;
    let tiles = (dimensions.inner + DEPTH - 1u) / DEPTH;
    var total = 0.0;
    var tile = 0u;
    loop {
        if (tile >= tiles) {
            break;
        }
        // Every invocation loads one input element: 8 k values of its row.
        let k_input = tile * DEPTH + local.x;
        let input_inside = row < dimensions.rows && k_input < dimensions.inner;
        let input_index = select(0u, row * dimensions.inner + k_input, input_inside);
        input_tile[local.y][local.x] = select(0.0, input[input_index], input_inside);
        // The first 8 rows of invocations load the 8 × 8 weights tile.
        if (local.y < DEPTH) {
            let k_weights = tile * DEPTH + local.y;
            let weights_inside = k_weights < dimensions.inner && column < dimensions.columns;
            let weights_index = select(0u, k_weights * dimensions.columns + column, weights_inside);
            weights_tile[local.y][local.x] = select(0.0, weights[weights_index], weights_inside);
        }
        workgroupBarrier();
        var k = DEPTH;
        loop {
            if (k == 0u) {
                break;
            }
            k = k - 1u;
            total = total + input_tile[local.y][k] * weights_tile[k][local.x];
        }
        workgroupBarrier();
        tile = tile + 1u;
    }
    if (row < dimensions.rows && column < dimensions.columns) {
        output[row * dimensions.columns + column] = total + bias[column];
    }
}
