// Counter-based random streams, and a Monte Carlo estimate of π that uses them.
//
// The same hash as code/src/parallel/random_streams.rs, word for word: the counter-th
// number of a stream is computed from (seed, stream, counter) alone, so every invocation
// draws its own numbers without sharing any state, and the CPU can check them bit for bit.
//
// Two entry points share the two bindings:
// - fill_draws writes the first `per_stream` words of `stream_count` streams, so that a
//   test can compare them with the Rust hash;
// - count_inside runs the Monte Carlo estimate: invocation s takes stream s, the samples
//   s * per_stream up to (s + 1) * per_stream, and each workgroup writes how many of its
//   samples fell inside the quarter circle.

struct Parameters {
    seed: u32,
    stream_count: u32,
    per_stream: u32,
    sample_count: u32,
}

@group(0) @binding(0) var<uniform> parameters: Parameters;
@group(0) @binding(1) var<storage, read_write> output: array<u32>;

const WORKGROUP_SIZE: u32 = 256u;

// ANCHOR: pcg_hash
fn pcg_hash(input: u32) -> u32 {
    let state = input * 747796405u + 2891336453u;
    let word = ((state >> ((state >> 28u) + 4u)) ^ state) * 277803737u;
    return (word >> 22u) ^ word;
}

fn random_u32(seed: u32, stream: u32, counter: u32) -> u32 {
    return pcg_hash(pcg_hash(pcg_hash(seed) ^ stream) ^ counter);
}
// ANCHOR_END: pcg_hash

// The number of this invocation across a grid that may spill into y.
fn invocation_index(workgroup: vec3u, workgroups: vec3u, local: u32) -> u32 {
    return (workgroup.y * workgroups.x + workgroup.x) * WORKGROUP_SIZE + local;
}

@compute @workgroup_size(256)
fn fill_draws(@builtin(workgroup_id) workgroup: vec3u,
              @builtin(num_workgroups) workgroups: vec3u,
              @builtin(local_invocation_index) local: u32) {
    let index = invocation_index(workgroup, workgroups, local);
    if (index >= parameters.stream_count * parameters.per_stream) {
        return;
    }
    let stream = index / parameters.per_stream;
    let counter = index % parameters.per_stream;
    output[index] = random_u32(parameters.seed, stream, counter);
}

// ANCHOR: is_inside
// Whether the point at the centre of lattice cell (x, y), x and y the top 16 bits of two
// random words, lies inside the quarter circle of radius 2^16:
// (x + 1/2)^2 + (y + 1/2)^2 < 2^32  <=>  x(x + 1) + y(y + 1) < 2^32 for integers,
// and x(x + 1) < 2^32 fits a u32, so the test is exact integer arithmetic.
fn is_inside(x_word: u32, y_word: u32) -> bool {
    let x = x_word >> 16u;
    let y = y_word >> 16u;
    let x_part = x * (x + 1u);
    let y_part = y * (y + 1u);
    return y_part <= 0xFFFFFFFFu - x_part;
}
// ANCHOR_END: is_inside

var<workgroup> partial_counts: array<u32, WORKGROUP_SIZE>;

// ANCHOR: count_inside
@compute @workgroup_size(256)
fn count_inside(@builtin(workgroup_id) workgroup: vec3u,
                @builtin(num_workgroups) workgroups: vec3u,
                @builtin(local_invocation_index) local: u32) {
    let stream = invocation_index(workgroup, workgroups, local);
    var inside = 0u;
    if (stream < parameters.stream_count) {
        let first = stream * parameters.per_stream;
        let samples = min(parameters.per_stream, parameters.sample_count - first);
        for (var sample = 0u; sample < samples; sample = sample + 1u) {
            let x_word = random_u32(parameters.seed, stream, 2u * sample);
            let y_word = random_u32(parameters.seed, stream, 2u * sample + 1u);
            inside = inside + select(0u, 1u, is_inside(x_word, y_word));
        }
    }
    // A tree reduction of the workgroup's 256 counts in workgroup memory.
    partial_counts[local] = inside;
    workgroupBarrier();
    for (var half = WORKGROUP_SIZE / 2u; half > 0u; half = half / 2u) {
        if (local < half) {
            partial_counts[local] = partial_counts[local] + partial_counts[local + half];
        }
        workgroupBarrier();
    }
    if (local == 0u) {
        output[workgroup.y * workgroups.x + workgroup.x] = partial_counts[0];
    }
}
// ANCHOR_END: count_inside
