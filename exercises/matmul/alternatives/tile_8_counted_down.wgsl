// alternative: 8 × 8 tiles in flat workgroup arrays, the tile loop written as `loop { … }` counting down from the last tile, and the edges handled with select() instead of if
// Hand-in: matrix multiplication, output = a · b.

struct Dimensions {
    rows: u32,
    inner: u32,
    columns: u32,
}

const TILE: u32 = 8u;

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> output: array<f32>;
@group(0) @binding(3) var<uniform> dimensions: Dimensions;

var<workgroup> a_tile: array<f32, 64>;
var<workgroup> b_tile: array<f32, 64>;

@compute @workgroup_size(TILE, TILE)
fn main(@builtin(global_invocation_id) global: vec3u,
        @builtin(local_invocation_id) local: vec3u) {
    let column = global.x;
    let row = global.y;
    var tile = (dimensions.inner + TILE - 1u) / TILE;
    var total = 0.0;
    loop {
        if (tile == 0u) {
            break;
        }
        tile = tile - 1u;
        let a_column = tile * TILE + local.x;
        let b_row = tile * TILE + local.y;
        let a_inside = row < dimensions.rows && a_column < dimensions.inner;
        let b_inside = b_row < dimensions.inner && column < dimensions.columns;
        // Outside the matrices the index falls back to 0, so the read itself stays in
        // bounds, and select() puts a zero in the tile instead of the value read.
        a_tile[local.y * TILE + local.x] = select(0.0, a[select(0u, row * dimensions.inner + a_column, a_inside)], a_inside);
        b_tile[local.y * TILE + local.x] = select(0.0, b[select(0u, b_row * dimensions.columns + column, b_inside)], b_inside);
        workgroupBarrier();
        for (var k = 0u; k < TILE; k = k + 1u) {
            total = total + a_tile[local.y * TILE + k] * b_tile[k * TILE + local.x];
        }
        workgroupBarrier();
    }
    if (row < dimensions.rows && column < dimensions.columns) {
        output[row * dimensions.columns + column] = total;
    }
}
