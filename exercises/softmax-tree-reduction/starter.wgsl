// Exercise: the tree reductions inside a row-wise softmax.
//
//   output[row][j] = exp(input[row][j] − m) / Σ_k exp(input[row][k] − m),   m = max_k input[row][k]
//
// One workgroup owns one row: the checker dispatches one workgroup per row (the row is
// workgroup_id.x) and fills `output` with NaN. The 256 invocations walk the row with a
// stride of 256, each keeping its own maximum (then its own sum) of the elements it
// visits, and put it in `partial`. What is missing is combining those 256 partial values
// into one: the two functions at the TODO.

struct Dimensions {
    rows: u32,
    columns: u32,
}

const WORKGROUP_SIZE: u32 = 256u;

@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read_write> output: array<f32>;
@group(0) @binding(2) var<uniform> dimensions: Dimensions;

var<workgroup> partial: array<f32, WORKGROUP_SIZE>;

// TODO: on entry partial[i] holds invocation i's value; on return partial[0] must hold
// the maximum (the sum) of all WORKGROUP_SIZE of them. Do it as a tree: halve the
// number of active invocations at every step, with a barrier after each step. Every
// invocation must reach every barrier, so the barrier cannot sit inside an `if` that
// only some invocations enter.
fn reduce_maximum(local_index: u32) {
}

fn reduce_sum(local_index: u32) {
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) workgroup: vec3u,
        @builtin(local_invocation_index) local_index: u32) {
    // The same for every invocation of the workgroup, so this return keeps the barriers
    // below in uniform control flow.
    let row = workgroup.x;
    if (row >= dimensions.rows) {
        return;
    }
    let start = row * dimensions.columns;

    // 1. The row maximum. The lowest finite f32 stands in for −∞ for invocations that
    //    own no element of a short row.
    var local_maximum = -3.40282347e+38;
    for (var column = local_index; column < dimensions.columns; column = column + WORKGROUP_SIZE) {
        local_maximum = max(local_maximum, input[start + column]);
    }
    partial[local_index] = local_maximum;
    workgroupBarrier();
    reduce_maximum(local_index);
    let row_maximum = partial[0];
    // Everyone must have read partial[0] before it is overwritten below.
    workgroupBarrier();

    // 2. The sum of exponentials, shifted by the maximum so that no exp() overflows.
    var local_sum = 0.0;
    for (var column = local_index; column < dimensions.columns; column = column + WORKGROUP_SIZE) {
        local_sum = local_sum + exp(input[start + column] - row_maximum);
    }
    partial[local_index] = local_sum;
    workgroupBarrier();
    reduce_sum(local_index);
    let row_sum = partial[0];

    // 3. Normalise.
    for (var column = local_index; column < dimensions.columns; column = column + WORKGROUP_SIZE) {
        output[start + column] = exp(input[start + column] - row_maximum) / row_sum;
    }
}
