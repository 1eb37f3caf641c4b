// mutant: edge — only a swapped pair is written; a pair already in order is left unwritten
// expect: element
// A step of a GPU sort: one compare-and-exchange pass of a bitonic sort of (key, value) pairs.

struct Step {
    length: u32,
    stage_size: u32,
    step_size: u32,
}

const WORKGROUP_SIZE: u32 = 256u;
const ELEMENTS_PER_WORKGROUP: u32 = 2u * WORKGROUP_SIZE;

@group(0) @binding(0) var<storage, read> keys_in: array<u32>;
@group(0) @binding(1) var<storage, read> values_in: array<u32>;
@group(0) @binding(2) var<storage, read_write> keys_out: array<u32>;
@group(0) @binding(3) var<storage, read_write> values_out: array<u32>;
@group(0) @binding(4) var<uniform> step: Step;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) global: vec3u) {
    let pair = global.x;
    if (pair >= step.length / 2u) {
        return;
    }
    // Insert a zero bit at the position of step_size: the lower element of pair `pair`.
    let below = pair & (step.step_size - 1u);
    let low = ((pair - below) << 1u) | below;
    let high = low + step.step_size;
    let ascending = (low & step.stage_size) == 0u;
    let low_key = keys_in[low];
    let high_key = keys_in[high];
    let swap = low_key != high_key && (low_key > high_key) == ascending;
    if (swap) {
        keys_out[low] = high_key;
        keys_out[high] = low_key;
        values_out[low] = values_in[high];
        values_out[high] = values_in[low];
    }
}
