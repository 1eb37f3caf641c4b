// peak_fma.wgsl: as many fused multiply-adds per second as the device can do, and nothing
// else. The measured rate is the ceiling a compute-bound kernel (a large linear layer) can
// approach: code/src/bench/gpu_peak.rs times it.
//
// What keeps the number honest:
// - Eight independent chains per invocation (each a vec4, so 32 scalar chains). One chain
//   alone would wait for each fma's result before starting the next; 32 give the
//   arithmetic units enough independent work to stay busy.
// - The multiplier and the addend come from a uniform, so the compiler cannot compute the
//   chains ahead of time, and the iteration count too, so it cannot drop the loop.
// - Every chain ends up in the output, so none of them is dead code. With a multiplier of
//   1 the result grows by `addend` per step, which lets the Rust side check that every
//   iteration really ran.
// - Reading and writing memory happen once per invocation, against 256 · iterations
//   floating-point operations in between.

struct Settings {
    iterations: u32,
    multiplier: f32,
    addend: f32,
    // Invocations per row of the dispatch grid (the grid is 2D when it is large).
    invocations_per_row: u32,
}

@group(0) @binding(0) var<uniform> settings: Settings;
@group(0) @binding(1) var<storage, read_write> results: array<vec4<f32>>;

// ANCHOR: peak_fma
@compute @workgroup_size(256, 1, 1)
fn main(@builtin(global_invocation_id) global: vec3u) {
    let index = global.y * settings.invocations_per_row + global.x;
    let start = f32(index % 1024u) * 0.001;
    var chain0 = vec4<f32>(start, start + 0.1, start + 0.2, start + 0.3);
    var chain1 = chain0 + 1.0;
    var chain2 = chain0 + 2.0;
    var chain3 = chain0 + 3.0;
    var chain4 = chain0 + 4.0;
    var chain5 = chain0 + 5.0;
    var chain6 = chain0 + 6.0;
    var chain7 = chain0 + 7.0;
    let multiplier = vec4<f32>(settings.multiplier);
    let addend = vec4<f32>(settings.addend);
    for (var iteration = 0u; iteration < settings.iterations; iteration += 1u) {
        // Four rounds of the eight chains: 32 vec4 fmas, 128 scalar ones, 256 flops.
        chain0 = fma(chain0, multiplier, addend);
        chain1 = fma(chain1, multiplier, addend);
        chain2 = fma(chain2, multiplier, addend);
        chain3 = fma(chain3, multiplier, addend);
        chain4 = fma(chain4, multiplier, addend);
        chain5 = fma(chain5, multiplier, addend);
        chain6 = fma(chain6, multiplier, addend);
        chain7 = fma(chain7, multiplier, addend);

        chain0 = fma(chain0, multiplier, addend);
        chain1 = fma(chain1, multiplier, addend);
        chain2 = fma(chain2, multiplier, addend);
        chain3 = fma(chain3, multiplier, addend);
        chain4 = fma(chain4, multiplier, addend);
        chain5 = fma(chain5, multiplier, addend);
        chain6 = fma(chain6, multiplier, addend);
        chain7 = fma(chain7, multiplier, addend);

        chain0 = fma(chain0, multiplier, addend);
        chain1 = fma(chain1, multiplier, addend);
        chain2 = fma(chain2, multiplier, addend);
        chain3 = fma(chain3, multiplier, addend);
        chain4 = fma(chain4, multiplier, addend);
        chain5 = fma(chain5, multiplier, addend);
        chain6 = fma(chain6, multiplier, addend);
        chain7 = fma(chain7, multiplier, addend);

        chain0 = fma(chain0, multiplier, addend);
        chain1 = fma(chain1, multiplier, addend);
        chain2 = fma(chain2, multiplier, addend);
        chain3 = fma(chain3, multiplier, addend);
        chain4 = fma(chain4, multiplier, addend);
        chain5 = fma(chain5, multiplier, addend);
        chain6 = fma(chain6, multiplier, addend);
        chain7 = fma(chain7, multiplier, addend);
    }
    results[index] = chain0 + chain1 + chain2 + chain3 + chain4 + chain5 + chain6 + chain7;
}
// ANCHOR_END: peak_fma
