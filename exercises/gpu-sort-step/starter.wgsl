// A step of a GPU sort: one compare-and-exchange pass of a bitonic sort of (key, value)
// pairs, from one pair of buffers into another.
//
// The host sorts `length` pairs (a power of two) by running this kernel once for each
// (stage_size, step_size) of the network: stage_size = 2, 4, …, length and, within a
// stage, step_size = stage_size / 2, …, 2, 1. In one pass, element i is compared with
// element i + step_size, for every i whose step_size bit is 0. Such a pair belongs to an
// ascending block when the stage_size bit of i is 0 and to a descending block otherwise.
// If the two keys are out of that order (and not equal: equal keys are never swapped),
// the pair is exchanged: both keys AND both values move. Every element of keys_out and
// values_out must be written, swapped or not: the checker fills them with poison first.
//
// The checker dispatches ceil(length / ELEMENTS_PER_WORKGROUP) workgroups along x.
// ELEMENTS_PER_WORKGROUP is read from this file: with one invocation per pair, each
// invocation covers two elements.
//
// This starter only copies the input to the output. Write the pass.

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
    let first = 2u * pair;
    keys_out[first] = keys_in[first];
    values_out[first] = values_in[first];
    keys_out[first + 1u] = keys_in[first + 1u];
    values_out[first + 1u] = values_in[first + 1u];
}
