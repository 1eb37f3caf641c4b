//! Naming the machine a measurement ran on.
//!
//! A number without its hardware is not worth much: the same program is a hundred times
//! faster on one machine than on another. Every figure's caption and every report starts
//! with the line [`hardware_description`] returns, for example
//!
//! ```text
//! CPU Intel(R) Xeon(R) Processor (x86_64, 2 cores, AVX2 FMA); GPU llvmpipe (LLVM 15.0.7, 256 bits) (Vulkan, Cpu)
//! ```

use crate::gpu::GpuContext;

// ANCHOR: hardware_description
/// One line naming the CPU (model, architecture, cores, vector extensions) and, when a
/// context is given, the GPU adapter (name, backend, device type).
pub fn hardware_description(context: Option<&GpuContext>) -> String {
    let cpu = format!(
        "CPU {} ({}, {} cores{})",
        cpu_model(),
        std::env::consts::ARCH,
        core_count(),
        vector_extensions()
    );
    match context {
        Some(context) => format!("{cpu}; GPU {}", context.describe()),
        None => cpu,
    }
}
// ANCHOR_END: hardware_description

/// The CPU's model name. Linux says it in `/proc/cpuinfo` (`model name` on x86,
/// sometimes only `Hardware` or `Processor` on ARM); elsewhere, or when the file says
/// nothing useful, the architecture has to do.
pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| model_from_cpuinfo(&text))
        .unwrap_or_else(|| format!("unknown {} CPU", std::env::consts::ARCH))
}

/// The first `model name`, `Hardware` or `Processor` line of a `/proc/cpuinfo` text.
fn model_from_cpuinfo(text: &str) -> Option<String> {
    ["model name", "Hardware", "Processor"]
        .iter()
        .find_map(|wanted| {
            text.lines().find_map(|line| {
                let (key, value) = line.split_once(':')?;
                (key.trim() == *wanted && !value.trim().is_empty())
                    .then(|| value.trim().to_string())
            })
        })
}

/// The number of threads the operating system lets this process run at once.
pub fn core_count() -> usize {
    std::thread::available_parallelism().map_or(1, |count| count.get())
}

/// The wide vector extensions the CPU offers, as `, AVX2 FMA`: they decide how fast the
/// CPU kernels can be, and the baseline x86-64 target the crate compiles for uses none.
fn vector_extensions() -> String {
    #[cfg(target_arch = "x86_64")]
    {
        let found: Vec<&str> = [
            ("AVX2", std::arch::is_x86_feature_detected!("avx2")),
            ("FMA", std::arch::is_x86_feature_detected!("fma")),
            ("AVX-512", std::arch::is_x86_feature_detected!("avx512f")),
        ]
        .into_iter()
        .filter_map(|(name, present)| present.then_some(name))
        .collect();
        if found.is_empty() {
            String::new()
        } else {
            format!(", {}", found.join(" "))
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_comes_from_the_first_model_name_line() {
        let text = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Gold 6338\n\
                    processor\t: 1\nmodel name\t: Intel(R) Xeon(R) Gold 6338\n";
        assert_eq!(
            model_from_cpuinfo(text).as_deref(),
            Some("Intel(R) Xeon(R) Gold 6338")
        );
    }

    #[test]
    fn arm_boards_name_their_hardware_instead() {
        let text = "processor\t: 0\nBogoMIPS\t: 108.00\nHardware\t: BCM2835\n";
        assert_eq!(model_from_cpuinfo(text).as_deref(), Some("BCM2835"));
        assert_eq!(model_from_cpuinfo("processor\t: 0\n"), None);
    }

    #[test]
    fn the_description_names_the_cpu_and_its_cores() {
        let description = hardware_description(None);
        assert!(description.starts_with("CPU "), "{description}");
        assert!(
            description.contains(&format!("{} cores", core_count())),
            "{description}"
        );
        assert!(!description.contains("GPU"), "{description}");
    }
}
