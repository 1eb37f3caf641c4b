// alternative: one invocation per element instead of per pair: each finds its partner with an xor, decides the swap exactly as the lower element would, and writes only its own element
// A step of a GPU sort: one compare-and-exchange pass of a bitonic sort of (key, value) pairs.

struct Step {
    length: u32,
    stage_size: u32,
    step_size: u32,
}

const WORKGROUP_SIZE: u32 = 256u;
const ELEMENTS_PER_WORKGROUP: u32 = WORKGROUP_SIZE;

@group(0) @binding(0) var<storage, read> keys_in: array<u32>;
@group(0) @binding(1) var<storage, read> values_in: array<u32>;
@group(0) @binding(2) var<storage, read_write> keys_out: array<u32>;
@group(0) @binding(3) var<storage, read_write> values_out: array<u32>;
@group(0) @binding(4) var<uniform> step: Step;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) global: vec3u) {
    let index = global.x;
    if (index >= step.length) {
        return;
    }
    let partner = index ^ step.step_size;
    let low = min(index, partner);
    let high = max(index, partner);
    let ascending = (low & step.stage_size) == 0u;
    let swap = keys_in[low] != keys_in[high] && (keys_in[low] > keys_in[high]) == ascending;
    let source = select(index, partner, swap);
    keys_out[index] = keys_in[source];
    values_out[index] = values_in[source];
}
