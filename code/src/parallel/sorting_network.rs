//! The bitonic sorting network: which keys each pass compares, and one pass on the CPU.
//!
//! For n = 2ᵐ keys the network has m(m + 1)/2 passes. A pass is named by its stage size
//! k (2, 4, …, n) and its step j (k/2, k/4, …, 1): key `i` is paired with key `i + j` for
//! every `i` whose bit j is 0, and the pair is put in ascending order when bit k of `i` is
//! 0, in descending order otherwise. `gpu_sort` runs the same passes on the GPU, and the
//! exercise "A step of a GPU sort" is checked against [`bitonic_pass_on_cpu`].

/// The `Step` uniform of bitonic_sort.wgsl.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct BitonicStep {
    pub pair_count: u32,
    pub stage_size: u32,
    pub step_size: u32,
}

// ANCHOR: network
/// Every pass of the bitonic network for `padded_length` keys (a power of two), in order.
pub fn bitonic_steps(padded_length: u32) -> Vec<BitonicStep> {
    let mut steps = Vec::new();
    let mut stage_size = 2;
    while stage_size <= padded_length {
        let mut step_size = stage_size / 2;
        while step_size >= 1 {
            steps.push(BitonicStep {
                pair_count: padded_length / 2,
                stage_size,
                step_size,
            });
            step_size /= 2;
        }
        stage_size *= 2;
    }
    steps
}

/// One pass on the CPU, exactly as the shader does it: the reference the GPU pass and the
/// exercise are checked against.
pub fn bitonic_pass_on_cpu(keys: &mut [u32], step: BitonicStep) {
    for pair in 0..step.pair_count {
        let below = pair & (step.step_size - 1);
        let low = (((pair - below) << 1) | below) as usize;
        let high = low + step.step_size as usize;
        let ascending = (low as u32 & step.stage_size) == 0;
        if (keys[low] > keys[high]) == ascending && keys[low] != keys[high] {
            keys.swap(low, high);
        }
    }
}
// ANCHOR_END: network

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parallel::sorting::random_keys;

    #[test]
    fn the_network_on_the_cpu_sorts_every_power_of_two() {
        for exponent in 0..=12 {
            let length = 1_u32 << exponent;
            let mut keys = random_keys(length as usize, 50, u64::from(length));
            let mut expected = keys.clone();
            expected.sort_unstable();
            for step in bitonic_steps(length) {
                bitonic_pass_on_cpu(&mut keys, step);
            }
            assert_eq!(keys, expected, "length {length}");
        }
        assert_eq!(bitonic_steps(8).len(), 6);
    }
}
