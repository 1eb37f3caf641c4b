// softmax_subgroup.wgsl: the row-wise softmax of softmax.wgsl, with subgroup operations.
//
// One workgroup still owns one row, and the two reductions (the row maximum, then the sum
// of exponentials) are still there. What changes is how a workgroup combines its 256
// values: softmax.wgsl halves them through workgroup memory eight times, with a barrier
// after every halving; here each subgroup combines its own values through the hardware's
// lane-to-lane paths (`subgroupMax`, `subgroupAdd`), writes one value per subgroup, and
// one barrier later every subgroup combines those few values the same way. Two barriers
// per reduction instead of eight.
//
// Used only when the device has the SUBGROUP feature. Nothing assumes a subgroup size
// (8 on lavapipe, 32 on NVIDIA).

struct Dimensions {
    rows: u32,
    columns: u32,
}

const WORKGROUP_SIZE: u32 = 256u;
// The lowest finite f32 stands in for −∞ in maxima over no elements.
const LOWEST: f32 = -3.40282347e+38;

@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read_write> output: array<f32>;
@group(0) @binding(2) var<uniform> dimensions: Dimensions;

// One value per subgroup; a workgroup has at most 256 subgroups (of size 1).
var<workgroup> subgroup_values: array<f32, WORKGROUP_SIZE>;

// ANCHOR: subgroup_row_maximum
// The maximum of every invocation's `value` in the workgroup, returned to all of them.
// The first barrier makes the subgroups' values visible; the second keeps the next
// reduction from overwriting them while a slower subgroup still reads them.
fn workgroup_maximum(value: f32, subgroup: u32, subgroup_count: u32, lane: u32,
                     subgroup_size: u32) -> f32 {
    let subgroup_maximum = subgroupMax(value);
    if (lane == 0u) {
        subgroup_values[subgroup] = subgroup_maximum;
    }
    workgroupBarrier();
    var share = LOWEST;
    for (var index = lane; index < subgroup_count; index += subgroup_size) {
        share = max(share, subgroup_values[index]);
    }
    let maximum = subgroupMax(share);
    workgroupBarrier();
    return maximum;
}
// ANCHOR_END: subgroup_row_maximum

fn workgroup_sum(value: f32, subgroup: u32, subgroup_count: u32, lane: u32,
                 subgroup_size: u32) -> f32 {
    let subgroup_total = subgroupAdd(value);
    if (lane == 0u) {
        subgroup_values[subgroup] = subgroup_total;
    }
    workgroupBarrier();
    var share = 0.0;
    for (var index = lane; index < subgroup_count; index += subgroup_size) {
        share += subgroup_values[index];
    }
    let total = subgroupAdd(share);
    workgroupBarrier();
    return total;
}

// ANCHOR: subgroup_softmax
@compute @workgroup_size(256, 1, 1)
fn main(@builtin(workgroup_id) workgroup: vec3u,
        @builtin(num_workgroups) workgroup_count: vec3u,
        @builtin(local_invocation_index) local_index: u32,
        @builtin(subgroup_id) subgroup: u32,
        @builtin(num_subgroups) subgroup_count: u32,
        @builtin(subgroup_invocation_id) lane: u32,
        @builtin(subgroup_size) subgroup_size: u32) {
    // The same for every invocation of the workgroup, so the early return keeps the
    // barriers and subgroup operations below in uniform control flow.
    let row = workgroup.y * workgroup_count.x + workgroup.x;
    if (row >= dimensions.rows) {
        return;
    }
    let start = row * dimensions.columns;

    var local_maximum = LOWEST;
    for (var column = local_index; column < dimensions.columns; column += WORKGROUP_SIZE) {
        local_maximum = max(local_maximum, input[start + column]);
    }
    let row_maximum =
        workgroup_maximum(local_maximum, subgroup, subgroup_count, lane, subgroup_size);

    var local_sum = 0.0;
    for (var column = local_index; column < dimensions.columns; column += WORKGROUP_SIZE) {
        local_sum += exp(input[start + column] - row_maximum);
    }
    let row_sum = workgroup_sum(local_sum, subgroup, subgroup_count, lane, subgroup_size);

    for (var column = local_index; column < dimensions.columns; column += WORKGROUP_SIZE) {
        output[start + column] = exp(input[start + column] - row_maximum) / row_sum;
    }
}
// ANCHOR_END: subgroup_softmax
