// Sparse (CSR) × dense matrix products on the GPU, and the dense product they are
// compared with.
//
// sparse_times_dense: one invocation per output element (row, column) of A · B, with A in
// CSR form. It walks row `row` of A, and for each non-zero reads B at the row the
// non-zero's column index names: a gather whose addresses come from the data.
// dense_times_dense: the same output from a dense A, every entry multiplied, zeros too.

struct Dimensions {
    // Rows of A and of the output.
    rows: u32,
    // Columns of B and of the output.
    columns: u32,
    // Columns of A, rows of B.
    inner: u32,
}

@group(0) @binding(0) var<storage, read> row_offsets: array<u32>;
@group(0) @binding(1) var<storage, read> column_indices: array<u32>;
@group(0) @binding(2) var<storage, read> values: array<f32>;
@group(0) @binding(3) var<storage, read> right: array<f32>;
@group(0) @binding(4) var<storage, read_write> output: array<f32>;
@group(0) @binding(5) var<uniform> dimensions: Dimensions;
@group(0) @binding(6) var<storage, read> dense_left: array<f32>;

const WORKGROUP_SIZE: u32 = 256u;

fn output_index(workgroup: vec3u, workgroups: vec3u, local: u32) -> u32 {
    return (workgroup.y * workgroups.x + workgroup.x) * WORKGROUP_SIZE + local;
}

// ANCHOR: sparse_times_dense
@compute @workgroup_size(256)
fn sparse_times_dense(@builtin(workgroup_id) workgroup: vec3u,
                      @builtin(num_workgroups) workgroups: vec3u,
                      @builtin(local_invocation_index) local: u32) {
    let index = output_index(workgroup, workgroups, local);
    if (index >= dimensions.rows * dimensions.columns) {
        return;
    }
    let row = index / dimensions.columns;
    let column = index % dimensions.columns;
    var sum = 0.0;
    for (var position = row_offsets[row]; position < row_offsets[row + 1u]; position = position + 1u) {
        sum = sum + values[position] * right[column_indices[position] * dimensions.columns + column];
    }
    output[index] = sum;
}
// ANCHOR_END: sparse_times_dense

@compute @workgroup_size(256)
fn dense_times_dense(@builtin(workgroup_id) workgroup: vec3u,
                     @builtin(num_workgroups) workgroups: vec3u,
                     @builtin(local_invocation_index) local: u32) {
    let index = output_index(workgroup, workgroups, local);
    if (index >= dimensions.rows * dimensions.columns) {
        return;
    }
    let row = index / dimensions.columns;
    let column = index % dimensions.columns;
    var sum = 0.0;
    for (var inner = 0u; inner < dimensions.inner; inner = inner + 1u) {
        sum = sum + dense_left[row * dimensions.inner + inner] * right[inner * dimensions.columns + column];
    }
    output[index] = sum;
}
