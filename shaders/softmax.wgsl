// softmax.wgsl: numerically stable softmax of every row.
//
//   output[row][j] = exp(input[row][j] − m) / Σ_k exp(input[row][k] − m),  m = max_k input[row][k]
//
// One workgroup owns one row. Its 256 invocations walk the row with a stride of 256, then
// combine their partial results with tree reductions in workgroup memory: first the
// maximum, then the sum of exponentials. Finally every invocation writes its share of the
// normalised row.

struct Dimensions {
    rows: u32,
    columns: u32,
}

const WORKGROUP_SIZE: u32 = 256u;

@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read_write> output: array<f32>;
@group(0) @binding(2) var<uniform> dimensions: Dimensions;

// Shared by the invocations of one workgroup, and only by them.
var<workgroup> partial: array<f32, WORKGROUP_SIZE>;

// ANCHOR: tree_reduction
// Halve the number of active invocations each step: invocation i combines its value with
// that of invocation i + stride. After log2(256) = 8 steps, partial[0] holds the result.
// Every invocation reaches every barrier: the `if` is inside the loop, not around it.
fn reduce_maximum(local_index: u32) {
    for (var stride = WORKGROUP_SIZE / 2u; stride > 0u; stride = stride / 2u) {
        if (local_index < stride) {
            partial[local_index] = max(partial[local_index], partial[local_index + stride]);
        }
        workgroupBarrier();
    }
}
// ANCHOR_END: tree_reduction

fn reduce_sum(local_index: u32) {
    for (var stride = WORKGROUP_SIZE / 2u; stride > 0u; stride = stride / 2u) {
        if (local_index < stride) {
            partial[local_index] = partial[local_index] + partial[local_index + stride];
        }
        workgroupBarrier();
    }
}

// ANCHOR: softmax
@compute @workgroup_size(256, 1, 1)
fn main(@builtin(workgroup_id) workgroup: vec3u,
        @builtin(num_workgroups) workgroup_count: vec3u,
        @builtin(local_invocation_index) local_index: u32) {
    // `row` comes from built-ins shared by the whole workgroup and `dimensions` from the
    // uniform address space, which WGSL's uniformity analysis treats as uniform: the early
    // return keeps the barriers below in uniform control flow.
    let row = workgroup.y * workgroup_count.x + workgroup.x;
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
// ANCHOR_END: softmax
