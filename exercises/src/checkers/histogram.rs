//! Warm-ups: histograms with global atomics, and with workgroup sub-histograms.
//!
//! Counts are compared exactly. The inputs are chosen to make races show: every value
//! in the same bin, a heavily skewed distribution, a single bin, and no values at all.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::analysis::StaticRules;
use crate::checkers::common::{
    KernelUnderTest, load_or_fail, no_failure_yet, run_case, static_part, with_cause,
    workgroup_memory_part,
};
use crate::kernel_run::{BufferData, to_words, workgroups_for};
use crate::report::{PartReport, compare_counts};
use crate::shader::{BindingSpec, Element};
use crate::submission::Submission;

pub const BINDINGS: [BindingSpec; 3] = [
    BindingSpec::read(0, "values", Element::U32),
    BindingSpec::read_write(1, "bins", Element::U32),
    BindingSpec::uniform(2, "dimensions"),
];

/// What no run on a software driver can show: `bins` is updated by many workgroups at
/// once, so it must hold atomics updated with atomicAdd, and a count at an index taken
/// from `values` must be atomic wherever it is kept.
pub const RULES: StaticRules = StaticRules {
    atomic_bindings: &["bins"],
    data_index_bindings: &["values"],
};

/// The most bins the workgroup version has room for.
pub const MAX_BINS: u32 = 256;

/// One input: its description, the values, and the number of bins.
pub struct HistogramCase {
    pub description: String,
    pub values: Vec<u32>,
    pub bin_count: u32,
}

impl HistogramCase {
    pub fn expected(&self) -> Vec<u32> {
        let mut bins = vec![0; self.bin_count as usize];
        for &value in &self.values {
            bins[value as usize] += 1;
        }
        bins
    }

    /// The buffers in binding order; `bins` starts at zero.
    pub fn buffers(&self) -> [BufferData; 3] {
        [
            BufferData::words(&self.values),
            BufferData::zeroed_words(self.bin_count as usize),
            BufferData::uniform(&[self.values.len() as u32, self.bin_count]),
        ]
    }
}

/// `count` values from `draw`, with a seeded generator.
fn generated(
    description: &str,
    count: usize,
    bin_count: u32,
    seed: u64,
    mut draw: impl FnMut(&mut ChaCha8Rng) -> u32,
) -> HistogramCase {
    let mut generator = ChaCha8Rng::seed_from_u64(seed);
    HistogramCase {
        description: description.to_string(),
        values: (0..count).map(|_| draw(&mut generator)).collect(),
        bin_count,
    }
}

pub fn cases() -> Vec<HistogramCase> {
    vec![
        generated("no values, 16 bins", 0, 16, 1, |_| 0),
        generated("1 value, 1 bin", 1, 1, 2, |_| 0),
        generated("10 000 values all in bin 3 of 16", 10_000, 16, 3, |_| 3),
        generated("777 values over 7 bins", 777, 7, 4, |generator| {
            generator.random_range(0..7)
        }),
        generated(
            "50 000 values over 64 bins, most in the first few",
            50_000,
            64,
            5,
            |generator| {
                // The product of three uniform numbers crowds towards zero.
                let crowded: f32 = (0..3).map(|_| generator.random::<f32>()).product();
                ((crowded * 64.0) as u32).min(63)
            },
        ),
        generated(
            "100 003 values over 256 bins",
            100_003,
            256,
            6,
            |generator| generator.random_range(0..256),
        ),
        generated("2 048 values all in bin 255 of 256", 2048, 256, 7, |_| 255),
    ]
}

pub fn check_global(submission: &Submission) -> Vec<PartReport> {
    check(submission, false)
}

pub fn check_workgroup(submission: &Submission) -> Vec<PartReport> {
    check(submission, true)
}

/// The values one workgroup counts: `const ELEMENTS_PER_WORKGROUP` if the shader
/// declares it, else one per invocation.
pub fn elements_per_workgroup(kernel: &KernelUnderTest) -> u32 {
    kernel
        .shader
        .constant_u32("ELEMENTS_PER_WORKGROUP")
        .unwrap_or(kernel.shader.invocations_per_workgroup())
        .max(1)
}

fn check(submission: &Submission, workgroup_version: bool) -> Vec<PartReport> {
    let part_name = "GPU kernel";
    let (context, kernel) = match load_or_fail(submission.wgsl.as_deref(), &BINDINGS, part_name) {
        Ok(loaded) => loaded,
        Err(failed) => return vec![failed],
    };
    if let Err(error) = kernel.one_dimensional_workgroup() {
        return vec![PartReport::failed_before_running(part_name, error)];
    }
    let per_workgroup = elements_per_workgroup(&kernel);
    let mut part = PartReport::new(part_name);
    for case in cases() {
        let grid = [
            workgroups_for(case.values.len(), per_workgroup).max(1),
            1,
            1,
        ];
        let expected = case.expected();
        let verdict = run_case(
            context,
            &kernel,
            &case.buffers(),
            grid,
            |outputs| {
                let bins = to_words(&outputs[0]);
                let bins = &bins[..case.bin_count as usize];
                match counting_cause(bins, &expected) {
                    Some(cause) => with_cause(compare_counts(bins, &expected), &cause),
                    None => compare_counts(bins, &expected),
                }
            },
            no_failure_yet(&part),
        );
        part.push(case.description, verdict);
    }
    let mut parts = vec![part, static_part(&kernel, &RULES)];
    if workgroup_version {
        parts.push(workgroup_memory_part(
            &kernel,
            "counting into a sub-histogram in workgroup memory first",
        ));
    }
    parts
}

/// What the wrong counts say about the mistake: how many values went missing or were
/// counted too often, and whether only the last bin is wrong. `None` when the counts are
/// right.
pub fn counting_cause(bins: &[u32], expected: &[u32]) -> Option<String> {
    if bins == expected {
        return None;
    }
    let total = |counts: &[u32]| counts.iter().map(|&count| u64::from(count)).sum::<u64>();
    let (counted, values) = (total(bins), total(expected));
    let last = expected.len() - 1;
    let only_last_bin_wrong =
        expected.len() > 1 && bins[last] != expected[last] && bins[..last] == expected[..last];
    let mut cause = if counted < values {
        format!(
            "cause: the bins hold {counted} counts for {values} values: {} value(s) were never \
             counted (lost updates, or values skipped)",
            values - counted
        )
    } else if counted > values {
        format!(
            "cause: the bins hold {counted} counts for {values} values: {} count(s) too many \
             (a value counted twice, or an invocation past the last value counting)",
            counted - values
        )
    } else {
        format!(
            "cause: the bins hold one count per value ({values}), but in the wrong bins: the \
             bin is not the value itself"
        )
    };
    if only_last_bin_wrong {
        cause.push_str(&format!(
            "; only the last bin, bin {last}, is wrong: an off-by-one at the top of the range of \
             bins?"
        ));
    }
    Some(cause)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrong_counts_are_explained() {
        assert_eq!(counting_cause(&[1, 2], &[1, 2]), None);
        let lost = counting_cause(&[1, 1, 0], &[1, 2, 0]).unwrap();
        assert!(
            lost.contains("hold 2 counts for 3 values: 1 value(s) were never"),
            "{lost}"
        );
        let extra = counting_cause(&[3, 2], &[1, 2]).unwrap();
        assert!(extra.contains("2 count(s) too many"), "{extra}");
        let moved = counting_cause(&[2, 1], &[1, 2]).unwrap();
        assert!(moved.contains("in the wrong bins"), "{moved}");
        let top = counting_cause(&[4, 5, 0], &[4, 5, 6]).unwrap();
        assert!(top.contains("only the last bin, bin 2, is wrong"), "{top}");
    }

    #[test]
    fn every_case_stays_inside_its_bins_and_counts_every_value() {
        for case in cases() {
            assert!(case.bin_count <= MAX_BINS, "{}", case.description);
            assert!(case.values.iter().all(|&value| value < case.bin_count));
            let total: u32 = case.expected().iter().sum();
            assert_eq!(total as usize, case.values.len(), "{}", case.description);
        }
    }
}
