// The sparse linear layer `output = input · weights + bias` with the `inputs × outputs`
// weights stored by output (compressed sparse columns): output c's non-zeros are entries
// `column_offsets[c] .. column_offsets[c + 1]`, each an input index and a value.
//
// Each invocation computes one output element, starting from the bias and adding the
// products of its column's non-zeros in the order of their input index: the order the CPU
// layer adds them in. A workgroup computes an 8 × 8 tile; x walks the tiles of outputs,
// y (and z, when there are more row tiles than one axis allows) the tiles of rows.

struct Dimensions {
    rows: u32,
    inputs: u32,
    outputs: u32,
    row_tiles_per_layer: u32,
}

// Set when the pipeline is created: a ReLU in the epilogue.
override apply_relu: bool = false;

const TILE: u32 = 8u;

@group(0) @binding(0) var<storage, read> input: array<f32>;          // rows × inputs
@group(0) @binding(1) var<storage, read> column_offsets: array<u32>; // outputs + 1
@group(0) @binding(2) var<storage, read> input_indices: array<u32>;  // one per non-zero
@group(0) @binding(3) var<storage, read> values: array<f32>;         // one per non-zero
@group(0) @binding(4) var<storage, read> bias: array<f32>;           // one per output
@group(0) @binding(5) var<storage, read_write> output: array<f32>;   // rows × outputs
@group(0) @binding(6) var<uniform> dimensions: Dimensions;

// ANCHOR: linear_sparse
@compute @workgroup_size(8, 8)
fn linear_sparse(@builtin(workgroup_id) workgroup: vec3u,
                 @builtin(local_invocation_id) local: vec3u) {
    let row = (workgroup.z * dimensions.row_tiles_per_layer + workgroup.y) * TILE + local.y;
    let column = workgroup.x * TILE + local.x;
    if row >= dimensions.rows || column >= dimensions.outputs {
        return;
    }
    let input_row = row * dimensions.inputs;
    var sum = bias[column];
    for (var entry = column_offsets[column]; entry < column_offsets[column + 1u]; entry++) {
        sum += values[entry] * input[input_row + input_indices[entry]];
    }
    // `select`, not `max`: a NaN passes through the ReLU, as on the CPU, where the GPU
    // honours NaN (lavapipe); WGSL lets a GPU assume that no NaN occurs.
    output[row * dimensions.outputs + column] = select(sum, 0.0, apply_relu && sum < 0.0);
}
// ANCHOR_END: linear_sparse
