// mutant: overflow — `reduce_maximum` left empty, as in the starter: the row is shifted by invocation 0's maximum
// expect: overflow
// Exercise: the tree reductions inside a row-wise softmax. A wrong hand-in: the solution with the one mistake named on the first line.
//
//   output[row][j] = exp(input[row][j] − m) / Σ_k exp(input[row][k] − m),   m = max_k input[row][k]
//
// One workgroup owns one row: the checker dispatches one workgroup per row (the row is
// workgroup_id.x) and fills `output` with NaN. The 256 invocations walk the row with a
// stride of 256, each keeping its own maximum (then its own sum) of the elements it
// visits, and put it in `partial`; the tree reductions combine those 256 partial values
// into one.

struct Dimensions {
    rows: u32,
    columns: u32,
}

const WORKGROUP_SIZE: u32 = 256u;

@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read_write> output: array<f32>;
@group(0) @binding(2) var<uniform> dimensions: Dimensions;

var<workgroup> partial: array<f32, WORKGROUP_SIZE>;

// After the step with stride s, partial[i] for i < s combines 2 · WORKGROUP_SIZE / s of
// the original values. log2(256) = 8 steps leave the result in partial[0]. The `if` is
// inside the loop and the barrier outside it, so every invocation reaches every barrier.
fn reduce_maximum(local_index: u32) {
}

fn reduce_sum(local_index: u32) {
    for (var stride = WORKGROUP_SIZE / 2u; stride > 0u; stride = stride / 2u) {
        if (local_index < stride) {
            partial[local_index] = partial[local_index] + partial[local_index + stride];
        }
        workgroupBarrier();
    }
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
