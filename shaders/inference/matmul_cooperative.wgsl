// A matrix product on the GPU's matrix units (tensor cores on NVIDIA, simdgroup matrices
// on Apple) through wgpu's experimental cooperative matrices:
// `output = left · right`, left rows × inner and right inner × columns in f16, row-major,
// output in f32.
//
// A cooperative matrix is one small tile held jointly by all the invocations of a
// subgroup: no invocation owns a known element, and the subgroup loads, multiplies and
// stores the tile together. So every call below must be reached by the whole subgroup at
// once (uniform control flow: no early return, no branch on the invocation's index).
//
// One workgroup is one subgroup (its size is set to the subgroup size when the pipeline is
// created) and computes a 32 × 32 block of the output as four 16 × 16 tiles: each step
// along the inner dimension loads two 16 × 16 tiles of `left` and two of `right` and does
// four 16 × 16 × 16 multiply-adds, so every tile loaded is used twice. The host pads rows
// and columns to multiples of 32 and the inner dimension to a multiple of 16 with zeros.

enable f16;
enable wgpu_cooperative_matrix;

struct Dimensions {
    rows: u32,
    inner: u32,
    columns: u32,
    padding: u32,
}

@group(0) @binding(0) var<storage, read> left: array<f16>;         // rows × inner
@group(0) @binding(1) var<storage, read> right: array<f16>;        // inner × columns
@group(0) @binding(2) var<storage, read_write> output: array<f32>; // rows × columns
@group(0) @binding(3) var<uniform> dimensions: Dimensions;

// The subgroup size of the device, set by the host.
override subgroup_size: u32 = 32u;

// ANCHOR: kernel
@compute @workgroup_size(subgroup_size)
fn matmul_cooperative(@builtin(workgroup_id) workgroup: vec3u) {
    let inner = dimensions.inner;
    let columns = dimensions.columns;
    let top = workgroup.y * 32u;
    let bottom = top + 16u;
    let left_column = workgroup.x * 32u;
    let right_column = left_column + 16u;

    // Accumulators in f32, starting at zero.
    var top_left = coop_mat16x16<f32, C>();
    var top_right = coop_mat16x16<f32, C>();
    var bottom_left = coop_mat16x16<f32, C>();
    var bottom_right = coop_mat16x16<f32, C>();

    for (var k = 0u; k < inner; k += 16u) {
        // `coopLoadT` reads a row-major tile: element (i, j) at pointer + i · stride + j.
        let top_start = top * inner + k;
        let bottom_start = bottom * inner + k;
        let left_start = k * columns + left_column;
        let right_start = k * columns + right_column;
        let a_top = coopLoadT<coop_mat16x16<f16, A>>(&left[top_start], inner);
        let a_bottom = coopLoadT<coop_mat16x16<f16, A>>(&left[bottom_start], inner);
        let b_left = coopLoadT<coop_mat16x16<f16, B>>(&right[left_start], columns);
        let b_right = coopLoadT<coop_mat16x16<f16, B>>(&right[right_start], columns);
        // C = A · B + C on the matrix units.
        top_left = coopMultiplyAdd(a_top, b_left, top_left);
        top_right = coopMultiplyAdd(a_top, b_right, top_right);
        bottom_left = coopMultiplyAdd(a_bottom, b_left, bottom_left);
        bottom_right = coopMultiplyAdd(a_bottom, b_right, bottom_right);
    }

    let top_left_start = top * columns + left_column;
    let top_right_start = top * columns + right_column;
    let bottom_left_start = bottom * columns + left_column;
    let bottom_right_start = bottom * columns + right_column;
    coopStoreT(top_left, &output[top_left_start], columns);
    coopStoreT(top_right, &output[top_right_start], columns);
    coopStoreT(bottom_left, &output[bottom_left_start], columns);
    coopStoreT(bottom_right, &output[bottom_right_start], columns);
}
// ANCHOR_END: kernel
