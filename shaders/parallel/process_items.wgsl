// process_items.wgsl: the data-parallelism chapter's workload on the GPU. One invocation
// per item runs `steps[index]` steps of xorshift32 from `seeds[index]` and writes the top
// 24 bits of the final state as a float in [0, 1), exactly as
// galaxy::parallel::workloads::process_item does on the CPU. Integer arithmetic is exact
// on every device and a 24-bit integer converts to f32 exactly, so the GPU's output must
// equal the CPU's bit for bit.
//
// Neighbouring invocations run in lockstep in a subgroup (a warp of 32 on NVIDIA). The
// loop runs as long as its longest lane: with every item's step count equal, no lane
// waits; on the unbalanced ramp neighbours differ by a step or so, and little is lost.

struct Dimensions {
    item_count: u32,
}

@group(0) @binding(0) var<storage, read> seeds: array<u32>;
@group(0) @binding(1) var<storage, read> steps: array<u32>;
@group(0) @binding(2) var<storage, read_write> output: array<f32>;
@group(0) @binding(3) var<uniform> dimensions: Dimensions;

// ANCHOR: process_items
@compute @workgroup_size(256, 1, 1)
fn main(@builtin(workgroup_id) workgroup: vec3u,
        @builtin(num_workgroups) workgroup_count: vec3u,
        @builtin(local_invocation_index) local_index: u32) {
    // Workgroups laid out on a 2D grid when there are more than 65,535 of them.
    let index = (workgroup.y * workgroup_count.x + workgroup.x) * 256u + local_index;
    if (index >= dimensions.item_count) {
        return;
    }
    var state = seeds[index];
    for (var step = 0u; step < steps[index]; step += 1u) {
        state ^= state << 13u;
        state ^= state >> 17u;
        state ^= state << 5u;
    }
    output[index] = f32(state >> 8u) * (1.0 / 16777216.0);
}
// ANCHOR_END: process_items
