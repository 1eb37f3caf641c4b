// mutant: wrong-result — a indexed with a row stride of `columns` instead of `inner` (right only for square matrices)
// expect: the kernel reads out of bounds
// Hand-in: matrix multiplication, output = a · b. The reference solution with the one mistake named in the first line: 16 × 16 tiles in
// workgroup memory.
//
// Each workgroup computes a 16 × 16 block of the output. It walks along the inner
// dimension in steps of 16: every invocation loads one element of a and one of b into
// workgroup memory, the workgroup waits, and every invocation then takes 16 products
// from workgroup memory. Each element of a and b is read from device memory once per
// tile instead of once per output.

struct Dimensions {
    rows: u32,
    inner: u32,
    columns: u32,
}

const TILE: u32 = 16u;

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> output: array<f32>;
@group(0) @binding(3) var<uniform> dimensions: Dimensions;

var<workgroup> a_tile: array<array<f32, TILE>, TILE>;
var<workgroup> b_tile: array<array<f32, TILE>, TILE>;

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) global: vec3u,
        @builtin(local_invocation_id) local: vec3u) {
    let column = global.x;
    let row = global.y;
    let tiles = (dimensions.inner + TILE - 1u) / TILE;
    var total = 0.0;
    for (var tile = 0u; tile < tiles; tile = tile + 1u) {
        // Outside the matrices, load zeros: they add nothing to the sum.
        let a_column = tile * TILE + local.x;
        var a_value = 0.0;
        if (row < dimensions.rows && a_column < dimensions.inner) {
            a_value = a[row * dimensions.columns + a_column];
        }
        a_tile[local.y][local.x] = a_value;
        let b_row = tile * TILE + local.y;
        var b_value = 0.0;
        if (b_row < dimensions.inner && column < dimensions.columns) {
            b_value = b[b_row * dimensions.columns + column];
        }
        b_tile[local.y][local.x] = b_value;
        workgroupBarrier();

        for (var k = 0u; k < TILE; k = k + 1u) {
            total = total + a_tile[local.y][k] * b_tile[k][local.x];
        }
        // The next tile must not overwrite values someone is still reading.
        workgroupBarrier();
    }
    if (row < dimensions.rows && column < dimensions.columns) {
        output[row * dimensions.columns + column] = total;
    }
}
