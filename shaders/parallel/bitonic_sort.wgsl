// One compare-and-exchange pass of a bitonic sort of u32 keys.
//
// The host dispatches this kernel once per (stage, step) of the network, with
// stage_size = 2, 4, 8, ... up to the (power-of-two) length, and for each stage
// step_size = stage_size / 2, stage_size / 4, ..., 1. Invocation t handles one pair:
// the key at `low` and the key at `low + step_size`, where `low` is t with a zero bit
// inserted at the position of step_size. Every key belongs to exactly one pair, so no two
// invocations ever touch the same key within a pass.

struct Step {
    // Half the number of keys: how many pairs this pass compares.
    pair_count: u32,
    stage_size: u32,
    step_size: u32,
}

@group(0) @binding(0) var<storage, read_write> keys: array<u32>;
@group(0) @binding(1) var<uniform> step: Step;

// ANCHOR: compare_and_exchange
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) workgroup: vec3u,
        @builtin(num_workgroups) workgroups: vec3u,
        @builtin(local_invocation_index) local: u32) {
    let pair = (workgroup.y * workgroups.x + workgroup.x) * 256u + local;
    if (pair >= step.pair_count) {
        return;
    }
    // The bits of `pair` above step_size's bit move up by one; the bit itself is zero.
    let below = pair & (step.step_size - 1u);
    let low = ((pair - below) << 1u) | below;
    let high = low + step.step_size;
    // Blocks of stage_size keys alternate between ascending and descending order, so
    // that each pair of neighbouring blocks forms a bitonic sequence for the next stage.
    let ascending = (low & step.stage_size) == 0u;
    let first = keys[low];
    let second = keys[high];
    if ((first > second) == ascending && first != second) {
        keys[low] = second;
        keys[high] = first;
    }
}
// ANCHOR_END: compare_and_exchange
