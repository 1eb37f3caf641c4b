//! A step of a GPU sort: one compare-and-exchange pass of a bitonic sort of (key, value)
//! pairs, written out of place.
//!
//! Every case runs one pass on random keys with many duplicates (values are the original
//! positions, all distinct, so a value that moves without its key shows), and compares
//! both outputs word for word with [`bitonic_pass_on_cpu`], the crate's own pass. The
//! cases cover every (stage, step) of short networks and chosen ones of long networks:
//! the first step of a stage (where a partner `stage_size / 2` away is right by accident),
//! the last one (step 1) and those between, on lengths below one workgroup and above it.
//! Outputs start as poison, so an element left unwritten shows.

use galaxy::parallel::sorting_network::{BitonicStep, bitonic_pass_on_cpu};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::analysis::StaticRules;
use crate::checkers::common::{load_or_fail, static_part, with_cause};
use crate::checkers::histogram;
use crate::kernel_run::{BufferData, Scalar, to_words, workgroups_for};
use crate::report::{PartReport, compare_counts};
use crate::shader::{BindingSpec, Element};
use crate::submission::Submission;

pub const BINDINGS: [BindingSpec; 5] = [
    BindingSpec::read(0, "keys_in", Element::U32),
    BindingSpec::read(1, "values_in", Element::U32),
    BindingSpec::read_write(2, "keys_out", Element::U32),
    BindingSpec::read_write(3, "values_out", Element::U32),
    BindingSpec::uniform(4, "step"),
];

/// No atomics: every element of a pass belongs to exactly one pair.
pub const RULES: StaticRules = StaticRules {
    atomic_bindings: &[],
    data_index_bindings: &[],
};

/// What the outputs hold before the run: no key or value of a case is this large.
pub const POISON_WORD: u32 = 0xDEAD_BEEF;

/// One pass on one input.
pub struct SortStepCase {
    pub description: String,
    pub keys: Vec<u32>,
    pub values: Vec<u32>,
    pub step: BitonicStep,
}

impl SortStepCase {
    /// The keys and values after the pass, by the crate's CPU pass; the values move with
    /// their keys.
    pub fn expected(&self) -> (Vec<u32>, Vec<u32>) {
        expected_pass(&self.keys, &self.values, self.step, false)
    }
}

/// The pass on the CPU; with `swap_equal_keys`, the rule a mutant follows, to name it.
fn expected_pass(
    keys: &[u32],
    values: &[u32],
    step: BitonicStep,
    swap_equal_keys: bool,
) -> (Vec<u32>, Vec<u32>) {
    if swap_equal_keys {
        let mut keys = keys.to_vec();
        let mut values = values.to_vec();
        for pair in 0..step.pair_count {
            let below = pair & (step.step_size - 1);
            let low = (((pair - below) << 1) | below) as usize;
            let high = low + step.step_size as usize;
            let ascending = (low as u32 & step.stage_size) == 0;
            if (keys[low] >= keys[high]) == ascending {
                keys.swap(low, high);
                values.swap(low, high);
            }
        }
        return (keys, values);
    }
    // The crate's pass on the keys; a pair was exchanged exactly where its lower key
    // changed (equal keys are never exchanged), and its values move with it.
    let mut by_key = keys.to_vec();
    bitonic_pass_on_cpu(&mut by_key, step);
    let mut out_values = values.to_vec();
    for pair in 0..step.pair_count {
        let below = pair & (step.step_size - 1);
        let low = (((pair - below) << 1) | below) as usize;
        let high = low + step.step_size as usize;
        if by_key[low] != keys[low] {
            out_values.swap(low, high);
        }
    }
    (by_key, out_values)
}

/// The cases: every pass of the networks for 2 to 64 keys, and chosen passes of longer
/// networks.
pub fn cases() -> Vec<SortStepCase> {
    let mut steps = Vec::new();
    for exponent in 1..=6 {
        let length = 1_u32 << exponent;
        let mut stage_size = 2;
        while stage_size <= length {
            let mut step_size = stage_size / 2;
            while step_size >= 1 {
                steps.push((length, stage_size, step_size));
                step_size /= 2;
            }
            stage_size *= 2;
        }
    }
    for &(length, stage_size, step_size) in &[
        (512, 512, 256),
        (512, 256, 32),
        (1024, 64, 1),
        (1024, 1024, 2),
        (4096, 2048, 512),
        (4096, 4096, 2048),
        (65_536, 65_536, 16),
        (65_536, 1024, 1024 / 2),
        (65_536, 65_536, 32_768),
        (65_536, 8, 2),
    ] {
        steps.push((length, stage_size, step_size));
    }
    steps
        .into_iter()
        .enumerate()
        .map(|(index, (length, stage_size, step_size))| {
            let mut generator = ChaCha8Rng::seed_from_u64(index as u64);
            // Few distinct keys: most pairs hold equal keys, the rest are out of order
            // about half the time.
            let distinct = if index % 2 == 0 { 4 } else { 1000 };
            let keys = (0..length)
                .map(|_| generator.random_range(0..distinct))
                .collect();
            SortStepCase {
                description: format!("{length} keys, stage {stage_size}, step {step_size}"),
                keys,
                values: (0..length).collect(),
                step: BitonicStep {
                    pair_count: length / 2,
                    stage_size,
                    step_size,
                },
            }
        })
        .collect()
}

/// The elements one workgroup covers: `const ELEMENTS_PER_WORKGROUP`, else one per
/// invocation.
fn elements_per_workgroup(kernel: &crate::checkers::common::KernelUnderTest) -> u32 {
    histogram::elements_per_workgroup(kernel)
}

fn poisoned_words(count: usize) -> BufferData {
    BufferData::Output {
        bytes: bytemuck::cast_slice(&vec![POISON_WORD; count]).to_vec(),
        scalar: Scalar::U32,
    }
}

pub fn check(submission: &Submission) -> Vec<PartReport> {
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
        let length = case.keys.len();
        let data = [
            BufferData::words(&case.keys),
            BufferData::words(&case.values),
            poisoned_words(length),
            poisoned_words(length),
            BufferData::uniform(&[length as u32, case.step.stage_size, case.step.step_size]),
        ];
        let grid = [workgroups_for(length, per_workgroup).max(1), 1, 1];
        let (expected_keys, expected_values) = case.expected();
        kernel.check_case(
            context,
            &mut part,
            &case.description,
            &data,
            grid,
            |outputs| {
                let keys = to_words(&outputs[0]);
                let values = to_words(&outputs[1]);
                let (keys, values) = (&keys[..length], &values[..length]);
                let mut actual = keys.to_vec();
                actual.extend_from_slice(values);
                let mut expected = expected_keys.clone();
                expected.extend_from_slice(&expected_values);
                let verdict = compare_counts(&actual, &expected);
                match cause(&case, keys, values) {
                    Some(cause) => with_cause(verdict, &cause),
                    None => verdict,
                }
            },
        );
    }
    vec![part, static_part(&kernel, &RULES)]
}

/// What the wrong outputs say about the mistake. The report lists keys first (elements
/// 0 to length − 1) and then values (length to 2·length − 1).
pub fn cause(case: &SortStepCase, keys: &[u32], values: &[u32]) -> Option<String> {
    let (expected_keys, expected_values) = case.expected();
    if keys == expected_keys && values == expected_values {
        return None;
    }
    let unwritten = keys
        .iter()
        .chain(values)
        .filter(|&&word| word == POISON_WORD)
        .count();
    if unwritten > 0 {
        return Some(format!(
            "cause: {unwritten} element(s) still hold the poison the outputs were filled with: \
             never written. Every element must be written, whether its pair is exchanged or not"
        ));
    }
    let (_, swapped_equal_values) = expected_pass(&case.keys, &case.values, case.step, true);
    if keys == expected_keys && values == swapped_equal_values {
        return Some(
            "cause: the keys are right, but pairs of equal keys were exchanged: a pass must \
             leave equal keys (and their values) where they are"
                .to_string(),
        );
    }
    if keys == expected_keys {
        return Some(
            "cause: the keys are right but the values do not follow their keys: when a pair is \
             exchanged, both its keys and both its values move"
                .to_string(),
        );
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases_cover_first_middle_and_last_steps_with_duplicates() {
        let cases = cases();
        assert!(cases.len() > 40);
        assert!(
            cases
                .iter()
                .any(|case| case.step.step_size == case.step.stage_size / 2)
        );
        assert!(
            cases
                .iter()
                .any(|case| case.step.step_size == 1 && case.step.stage_size > 2)
        );
        assert!(
            cases
                .iter()
                .any(|case| case.step.step_size > 1
                    && case.step.step_size < case.step.stage_size / 2)
        );
        for case in &cases {
            let (keys, values) = case.expected();
            // The pass moves (key, value) pairs: the multiset of pairs stays the same.
            let mut before: Vec<(u32, u32)> = case
                .keys
                .iter()
                .copied()
                .zip(case.values.iter().copied())
                .collect();
            let mut after: Vec<(u32, u32)> = keys.into_iter().zip(values).collect();
            before.sort_unstable();
            after.sort_unstable();
            assert_eq!(before, after, "{}", case.description);
            assert!(case.keys.iter().all(|&key| key < 1 << 16));
        }
    }

    #[test]
    fn wrong_outputs_are_explained() {
        let case = &cases()[5];
        let (keys, values) = case.expected();
        assert_eq!(cause(case, &keys, &values), None);
        let mut unwritten = keys.clone();
        unwritten[0] = POISON_WORD;
        assert!(
            cause(case, &unwritten, &values)
                .unwrap()
                .contains("never written")
        );
        let stayed = case.values.clone();
        if stayed != values {
            assert!(
                cause(case, &keys, &stayed)
                    .unwrap()
                    .contains("values do not follow their keys")
            );
        }
    }
}
