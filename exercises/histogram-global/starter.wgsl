// Warm-up: a histogram with global atomics.
//
// Every value is a bin number below `dimensions.bin_count`; bins[b] must end up holding
// how many values equal b. The checker zeroes `bins` before the run and dispatches
// ceil(element_count / 256) workgroups along x (at least one, even for no values).
//
// This kernel loses counts when several invocations hit the same bin. Run the checker
// to see which bins come out short, then fix it.

struct Dimensions {
    element_count: u32,
    bin_count: u32,
}

@group(0) @binding(0) var<storage, read> values: array<u32>;
@group(0) @binding(1) var<storage, read_write> bins: array<atomic<u32>>;
@group(0) @binding(2) var<uniform> dimensions: Dimensions;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) global: vec3u) {
    let index = global.x;
    if (index >= dimensions.element_count) {
        return;
    }
    let bin = values[index];
    // Read the count, add one, write it back. Each step is atomic on its own...
    let count = atomicLoad(&bins[bin]);
    atomicStore(&bins[bin], count + 1u);
}
