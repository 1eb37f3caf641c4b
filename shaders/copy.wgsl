// copy.wgsl: destination = source, sixteen bytes per invocation. The simplest kernel that
// is bound by memory bandwidth alone: code/src/bench/copy_bandwidth.rs times it against
// the copy the API offers (`copy_buffer_to_buffer`) on buffers of 1 MiB to 1 GiB.
//
// Each invocation moves one vec4 (16 bytes): loads and stores that wide are what lets a
// GPU's memory system run at full speed, and neighbouring invocations touch neighbouring
// vec4s, so a warp reads and writes 512 contiguous bytes. The values are copied as u32
// bits, so nothing about them (a NaN, a denormal) can change on the way.

struct Settings {
    // How many vec4s the buffers hold.
    vec4_count: u32,
    // Invocations per row of the dispatch grid (the grid is 2D for large buffers).
    invocations_per_row: u32,
}

@group(0) @binding(0) var<storage, read> source: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> destination: array<vec4<u32>>;
@group(0) @binding(2) var<uniform> settings: Settings;

// ANCHOR: copy
@compute @workgroup_size(256, 1, 1)
fn main(@builtin(global_invocation_id) global: vec3u) {
    let index = global.y * settings.invocations_per_row + global.x;
    if (index < settings.vec4_count) {
        destination[index] = source[index];
    }
}
// ANCHOR_END: copy
