// Quantises every row of a tensor to int8 with a scale of its own, exactly as the CPU's
// `cpu::int8::quantize_rows` does: scale = (largest magnitude of the row) / 127, or 1 for
// a row of zeros; level = round(value / scale), halves away from zero, clamped to ±127.
// The levels are packed four to a u32, the first in the lowest byte, for linear_int8.wgsl.
//
// One workgroup per row: its invocations find the row's largest magnitude together, then
// each packs every 64th word of the row.
//
// Bit-for-bit agreement also needs the two divisions (largest / 127 and value / scale) to
// round as the CPU's do. Vulkan drivers that compute division exactly, lavapipe among them,
// give the CPU's levels, and code/tests/gpu_int8_sparse.rs asserts them there. WGSL itself
// allows a division 2.5 ulp of error (addition and multiplication are correctly rounded),
// and an NVIDIA driver uses it: the scale may be a few ulp off, and a value whose quotient
// lies within a few ulp of a half-way point may land on the neighbouring level, which moves
// an output by one level of its weight. `galaxy::gpu::quantization_flips` finds those values
// and bounds what their flips can do; the tests and examples allow exactly that elsewhere.

struct Dimensions {
    rows: u32,
    columns: u32,
    words: u32,
    padding: u32,
}

const WORKGROUP_SIZE: u32 = 64u;
const LARGEST_LEVEL: f32 = 127.0;
// The exponent bits of an f32: all ones means infinity or NaN.
const EXPONENT_MASK: u32 = 0x7f800000u;
const SIGN_MASK: u32 = 0x80000000u;

@group(0) @binding(0) var<storage, read> input: array<f32>;        // rows × columns
@group(0) @binding(1) var<storage, read_write> words: array<u32>;  // rows × words
@group(0) @binding(2) var<storage, read_write> scales: array<f32>; // one per row
@group(0) @binding(3) var<uniform> dimensions: Dimensions;

// The largest magnitudes found so far, as bit patterns (see below).
var<workgroup> largest_bits: array<u32, WORKGROUP_SIZE>;

// ANCHOR: round_half_away
// Rust's `f32::round` rounds halves away from zero (2.5 → 3, -2.5 → -3); WGSL's `round`
// rounds them to even (2.5 → 2). The difference decides a level whenever a value sits
// exactly half-way, so round by hand: `value - trunc(value)` is exact in floating point.
fn round_half_away_from_zero(value: f32) -> f32 {
    let whole = trunc(value);
    return whole + select(0.0, sign(value), abs(value - whole) >= 0.5);
}
// ANCHOR_END: round_half_away

@compute @workgroup_size(64)
fn quantize_rows(@builtin(workgroup_id) workgroup: vec3u,
                 @builtin(num_workgroups) workgroup_count: vec3u,
                 @builtin(local_invocation_index) local: u32) {
    let row = workgroup.y * workgroup_count.x + workgroup.x;
    if row >= dimensions.rows {
        return;
    }
    let start = row * dimensions.columns;

    // ANCHOR: largest_magnitude
    // The largest magnitude, compared as bits: for values without their sign bit the
    // order of the u32 patterns is the order of the numbers, with infinity above every
    // finite value and NaN above infinity. Integer `max` is exact and well defined where
    // the float `max` of WGSL is not defined for NaN.
    var largest = 0u;
    for (var column = local; column < dimensions.columns; column += WORKGROUP_SIZE) {
        largest = max(largest, bitcast<u32>(input[start + column]) & ~SIGN_MASK);
    }
    largest_bits[local] = largest;
    workgroupBarrier();
    for (var stride = WORKGROUP_SIZE / 2u; stride > 0u; stride /= 2u) {
        if local < stride {
            largest_bits[local] = max(largest_bits[local], largest_bits[local + stride]);
        }
        workgroupBarrier();
    }
    let bits = largest_bits[0];
    // ANCHOR_END: largest_magnitude

    // A row holding infinity or NaN gets a NaN scale (a quiet NaN made from the bits
    // themselves), so every output of the row becomes NaN: the CPU refuses such a row
    // with an error, which a kernel has no way to return.
    var scale = 1.0;
    if bits >= EXPONENT_MASK {
        scale = bitcast<f32>(bits | 0x00400000u);
    } else if bits > 0u {
        scale = bitcast<f32>(bits) / LARGEST_LEVEL;
    }
    if local == 0u {
        scales[row] = scale;
    }

    for (var word = local; word < dimensions.words; word += WORKGROUP_SIZE) {
        var packed = 0u;
        for (var byte = 0u; byte < 4u; byte++) {
            let column = word * 4u + byte;
            if column < dimensions.columns {
                let level = clamp(round_half_away_from_zero(input[start + column] / scale),
                                  -LARGEST_LEVEL, LARGEST_LEVEL);
                packed |= (bitcast<u32>(i32(level)) & 0xffu) << (byte * 8u);
            }
        }
        words[row * dimensions.words + word] = packed;
    }
}
