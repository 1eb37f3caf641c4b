// The int8 linear layer: `output = (Σ qx · qw) · sx · sw + bias`, with four int8 values
// packed in each u32 and the products summed exactly in i32. The input arrives already
// quantised, row by row, by quantize_rows.wgsl.
//
// Two entry points compute the same thing. `linear_int8_dot4` uses WGSL's
// `dot4I8Packed`, which multiplies the four signed bytes of two words and adds the four
// products in one instruction where the GPU has one (SPIR-V's OpSDot; naga writes a
// shift-and-multiply fallback where the device lacks it). `linear_int8_unpacked` spells that
// fallback out by hand, to compare.
//
// Each invocation computes one output element; a workgroup computes an 8 × 8 tile. The
// x axis of the grid walks the tiles of outputs, y (and z, when there are more row tiles
// than one axis allows) the tiles of rows.

struct Dimensions {
    rows: u32,
    outputs: u32,
    // Words per row of the input and per output of the weights: inputs / 4, rounded up
    // (the last word is padded with zero bytes, which add nothing to the sums).
    words: u32,
    // Row tiles along y: the row tile is z × this + y.
    row_tiles_per_layer: u32,
}

// Set when the pipeline is created: a ReLU in the epilogue.
override apply_relu: bool = false;

const TILE: u32 = 8u;

@group(0) @binding(0) var<storage, read> input_words: array<u32>;    // rows × words
@group(0) @binding(1) var<storage, read> input_scales: array<f32>;   // one per row
@group(0) @binding(2) var<storage, read> weight_words: array<u32>;   // outputs × words
@group(0) @binding(3) var<storage, read> weight_scales: array<f32>;  // one per output
@group(0) @binding(4) var<storage, read> bias: array<f32>;           // one per output
@group(0) @binding(5) var<storage, read_write> output: array<f32>;   // rows × outputs
@group(0) @binding(6) var<uniform> dimensions: Dimensions;

// The (row, output) of this invocation's element.
fn position(workgroup: vec3u, local: vec3u) -> vec2u {
    let row_tile = workgroup.z * dimensions.row_tiles_per_layer + workgroup.y;
    return vec2u(row_tile * TILE + local.y, workgroup.x * TILE + local.x);
}

// ANCHOR: scale_back
fn store(row: u32, column: u32, sum: i32) {
    let value = f32(sum) * input_scales[row] * weight_scales[column] + bias[column];
    // `select` rather than `max(value, 0.0)`: a comparison with NaN is false, so a NaN
    // passes through the ReLU where the GPU honours NaN (lavapipe); WGSL lets a GPU assume
    // no NaN occurs, which is why the runner checks its input on the host.
    output[row * dimensions.outputs + column] = select(value, 0.0, apply_relu && value < 0.0);
}
// ANCHOR_END: scale_back

// ANCHOR: dot4
@compute @workgroup_size(8, 8)
fn linear_int8_dot4(@builtin(workgroup_id) workgroup: vec3u,
                    @builtin(local_invocation_id) local: vec3u) {
    let element = position(workgroup, local);
    let row = element.x;
    let column = element.y;
    if row >= dimensions.rows || column >= dimensions.outputs {
        return;
    }
    var sum = 0i;
    for (var word = 0u; word < dimensions.words; word++) {
        sum += dot4I8Packed(
            input_words[row * dimensions.words + word],
            weight_words[column * dimensions.words + word],
        );
    }
    store(row, column, sum);
}
// ANCHOR_END: dot4

// ANCHOR: unpacked
// The signed byte `byte` (0 = lowest) of `word`: `extractBits` on an i32 sign-extends.
fn signed_byte(word: u32, byte: u32) -> i32 {
    return extractBits(bitcast<i32>(word), byte * 8u, 8u);
}

@compute @workgroup_size(8, 8)
fn linear_int8_unpacked(@builtin(workgroup_id) workgroup: vec3u,
                        @builtin(local_invocation_id) local: vec3u) {
    let element = position(workgroup, local);
    let row = element.x;
    let column = element.y;
    if row >= dimensions.rows || column >= dimensions.outputs {
        return;
    }
    var sum = 0i;
    for (var word = 0u; word < dimensions.words; word++) {
        let a = input_words[row * dimensions.words + word];
        let b = weight_words[column * dimensions.words + word];
        for (var byte = 0u; byte < 4u; byte++) {
            sum += signed_byte(a, byte) * signed_byte(b, byte);
        }
    }
    store(row, column, sum);
}
// ANCHOR_END: unpacked
