// mutant: non-uniform-barrier — the output guard wraps the whole tile loop, barriers included
// expect: non-uniform control flow
// Exercise: a tiled linear layer, output = input · weights + bias. A wrong hand-in: the solution with the one mistake named on the first line.
//
// Each 16 × 16 workgroup computes a 16 × 16 block of the output. It walks along `inner`
// one tile at a time: every invocation copies one element of `input` and one of
// `weights` into workgroup memory, the workgroup waits for all 256 copies, and then each
// invocation takes its 16 products from workgroup memory. A value fetched from device
// memory is used 16 times instead of once.

struct Dimensions {
    rows: u32,
    inner: u32,
    columns: u32,
}

const TILE: u32 = 16u;

@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read> weights: array<f32>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> output: array<f32>;
@group(0) @binding(4) var<uniform> dimensions: Dimensions;

// input_tile[r][k]: rows of this workgroup, 16 consecutive k.
// weights_tile[k][c]: the same 16 k, columns of this workgroup.
var<workgroup> input_tile: array<array<f32, TILE>, TILE>;
var<workgroup> weights_tile: array<array<f32, TILE>, TILE>;

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) global: vec3u,
        @builtin(local_invocation_id) local: vec3u) {
    let column = global.x;
    let row = global.y;
    let tiles = (dimensions.inner + TILE - 1u) / TILE;
    var total = 0.0;
    // No early return for invocations outside the output: they still load their share
    // of each tile, and every invocation must reach every barrier.
    if (row < dimensions.rows && column < dimensions.columns) {
    for (var tile = 0u; tile < tiles; tile = tile + 1u) {
        // Past the edge of a matrix, load zeros: they add nothing to the sum.
        let input_column = tile * TILE + local.x;
        var input_value = 0.0;
        if (row < dimensions.rows && input_column < dimensions.inner) {
            input_value = input[row * dimensions.inner + input_column];
        }
        input_tile[local.y][local.x] = input_value;
        let weights_row = tile * TILE + local.y;
        var weights_value = 0.0;
        if (weights_row < dimensions.inner && column < dimensions.columns) {
            weights_value = weights[weights_row * dimensions.columns + column];
        }
        weights_tile[local.y][local.x] = weights_value;
        workgroupBarrier();

        for (var k = 0u; k < TILE; k = k + 1u) {
            total = total + input_tile[local.y][k] * weights_tile[k][local.x];
        }
        // Nobody may load the next tile while someone still reads this one.
        workgroupBarrier();
    }
    }
    if (row < dimensions.rows && column < dimensions.columns) {
        output[row * dimensions.columns + column] = total + bias[column];
    }
}
