// alternative: interleaved addressing (the stride doubles; invocation i combines i and i + stride when i is a multiple of 2 · stride), a barrier at the start of each step instead of the end, a workgroup of 128, and workgroupUniformLoad to read the results
//
// A row-wise softmax with tree reductions, written differently from the reference
// solution. One workgroup per row, as the checker dispatches it.

struct Dimensions {
    rows: u32,
    columns: u32,
}

const WORKGROUP_SIZE: u32 = 128u;
const LOWEST: f32 = -3.40282347e+38;

@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read_write> output: array<f32>;
@group(0) @binding(2) var<uniform> dimensions: Dimensions;

var<workgroup> partial: array<f32, WORKGROUP_SIZE>;

// Interleaved addressing: after the step with stride s, partial[i] for every multiple i
// of 2s holds the combination of partial[i .. i + 2s]. The barrier comes first, so the
// values written before the call are visible; the caller reads the result with
// workgroupUniformLoad, which waits for the last step.
fn tree_maximum(local: u32) {
    for (var stride = 1u; stride < WORKGROUP_SIZE; stride = stride * 2u) {
        workgroupBarrier();
        if (local % (2u * stride) == 0u) {
            partial[local] = max(partial[local], partial[local + stride]);
        }
    }
}

fn tree_sum(local: u32) {
    for (var stride = 1u; stride < WORKGROUP_SIZE; stride = stride * 2u) {
        workgroupBarrier();
        if (local % (2u * stride) == 0u) {
            partial[local] = partial[local] + partial[local + stride];
        }
    }
}

@compute @workgroup_size(128)
fn main(@builtin(workgroup_id) workgroup: vec3u,
        @builtin(local_invocation_index) local: u32) {
    let row = workgroup.x;
    if (row >= dimensions.rows) {
        return;
    }
    let start = row * dimensions.columns;
    let columns = dimensions.columns;

    // Each invocation first combines the elements local, local + 128, local + 256, …
    var own_maximum = LOWEST;
    for (var column = local; column < columns; column = column + WORKGROUP_SIZE) {
        own_maximum = max(own_maximum, input[start + column]);
    }
    partial[local] = own_maximum;
    tree_maximum(local);
    let row_maximum = workgroupUniformLoad(&partial[0]);

    var own_sum = 0.0;
    for (var column = local; column < columns; column = column + WORKGROUP_SIZE) {
        own_sum = own_sum + exp(input[start + column] - row_maximum);
    }
    partial[local] = own_sum;
    tree_sum(local);
    let row_sum = workgroupUniformLoad(&partial[0]);

    for (var column = local; column < columns; column = column + WORKGROUP_SIZE) {
        output[start + column] = exp(input[start + column] - row_maximum) / row_sum;
    }
}
