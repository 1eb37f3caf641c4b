// The linear layer with half-precision weights and activations:
// `output = input · weights + bias`, input and weights stored as f16 (two bytes a value),
// the bias and the output as f32.
//
// Two entry points differ only in what they add in. `linear_f16_sum_f32` converts each
// f16 product to f32 and sums in f32: the product of two f16 values has at most 22
// significant bits, so it is exact in f32, and the only rounding left is that of the f32
// additions. `linear_f16_sum_f16` multiplies and adds in f16, as a GPU without fast f32
// would, and rounds every step to 11 significant bits.
//
// Both tile the work like the crate's fp32 tiled kernel: a 16 × 16 workgroup computes a
// 16 × 16 block of the output and walks the inner dimension 16 at a time, each invocation
// copying one input value and one weight into workgroup memory before all 256 read them.

enable f16;

struct Dimensions {
    rows: u32,
    inner: u32,
    columns: u32,
    padding: u32,
}

@group(0) @binding(0) var<storage, read> input: array<f16>;        // rows × inner
@group(0) @binding(1) var<storage, read> weights: array<f16>;      // inner × columns
@group(0) @binding(2) var<storage, read> bias: array<f32>;         // columns
@group(0) @binding(3) var<storage, read_write> output: array<f32>; // rows × columns
@group(0) @binding(4) var<uniform> dimensions: Dimensions;

const TILE: u32 = 16u;

var<workgroup> input_tile: array<array<f16, TILE>, TILE>;
var<workgroup> weight_tile: array<array<f16, TILE>, TILE>;

// ANCHOR: load_tiles
// Copies the 16 × 16 blocks of input and weights that start at `start` along the inner
// dimension into workgroup memory; values outside the tensors are zeros, which add nothing.
// Every invocation of the workgroup calls it, also those outside the output, because the
// barriers around it must be reached by all of them.
fn load_tiles(start: u32, row: u32, column: u32, local: vec3u) {
    let input_index = start + local.x;
    var input_value = f16(0.0);
    if (row < dimensions.rows && input_index < dimensions.inner) {
        input_value = input[row * dimensions.inner + input_index];
    }
    input_tile[local.y][local.x] = input_value;
    let weight_index = start + local.y;
    var weight_value = f16(0.0);
    if (weight_index < dimensions.inner && column < dimensions.columns) {
        weight_value = weights[weight_index * dimensions.columns + column];
    }
    weight_tile[local.y][local.x] = weight_value;
}
// ANCHOR_END: load_tiles

fn store(row: u32, column: u32, sum: f32) {
    if (row < dimensions.rows && column < dimensions.columns) {
        output[row * dimensions.columns + column] = sum + bias[column];
    }
}

// ANCHOR: sum_f32
@compute @workgroup_size(16, 16, 1)
fn linear_f16_sum_f32(@builtin(global_invocation_id) global: vec3u,
                      @builtin(local_invocation_id) local: vec3u) {
    let column = global.x;
    let row = global.y;
    var sum = 0.0f;
    for (var start = 0u; start < dimensions.inner; start += TILE) {
        load_tiles(start, row, column, local);
        workgroupBarrier();
        for (var k = 0u; k < TILE; k++) {
            // f16 × f16 is exact in f32: only the addition rounds.
            sum += f32(input_tile[local.y][k]) * f32(weight_tile[k][local.x]);
        }
        workgroupBarrier();
    }
    store(row, column, sum);
}
// ANCHOR_END: sum_f32

// ANCHOR: sum_f16
@compute @workgroup_size(16, 16, 1)
fn linear_f16_sum_f16(@builtin(global_invocation_id) global: vec3u,
                      @builtin(local_invocation_id) local: vec3u) {
    let column = global.x;
    let row = global.y;
    var sum = f16(0.0);
    for (var start = 0u; start < dimensions.inner; start += TILE) {
        load_tiles(start, row, column, local);
        workgroupBarrier();
        for (var k = 0u; k < TILE; k++) {
            // The product rounds to f16, then the sum does.
            sum += input_tile[local.y][k] * weight_tile[k][local.x];
        }
        workgroupBarrier();
    }
    store(row, column, f32(sum));
}
// ANCHOR_END: sum_f16
