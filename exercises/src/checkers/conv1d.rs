//! Warm-ups: 1D convolution in three versions, checked against one CPU reference.
//!
//! - `conv1d-naive`: one invocation per output, taps outside the signal skipped;
//! - `conv1d-padded`: the signal zero-padded on the CPU, so no tap needs a test;
//! - `conv1d-workgroup`: the signal a workgroup needs copied into workgroup memory once.

use galaxy::{Tensor2d, Tolerance};

use crate::analysis::StaticRules;
use crate::checkers::common::{
    KernelUnderTest, load_or_fail, no_failure_yet, row_of, run_case, static_part,
    workgroup_memory_part,
};
use crate::checkers::hypotheses::{Hypothesis, explain};
use crate::kernel_run::{BufferData, to_floats, workgroups_for};
use crate::report::{PartReport, compare};
use crate::shader::{BindingSpec, Element};
use crate::submission::Submission;

pub const BINDINGS: [BindingSpec; 4] = [
    BindingSpec::read(0, "signal", Element::F32),
    BindingSpec::read(1, "weights", Element::F32),
    BindingSpec::read_write(2, "output", Element::F32),
    BindingSpec::uniform(3, "dimensions"),
];

pub const PADDED_BINDINGS: [BindingSpec; 4] = [
    BindingSpec::read(0, "padded_signal", Element::F32),
    BindingSpec::read(1, "weights", Element::F32),
    BindingSpec::read_write(2, "output", Element::F32),
    BindingSpec::uniform(3, "dimensions"),
];

/// (signal length, filter length): a single element, filters longer than the signal,
/// signals within one workgroup of 64 and across many, up to the longest filter the
/// workgroup version supports (33 taps).
pub const CASES: [(usize, usize); 9] = [
    (1, 1),
    (1, 3),
    (7, 5),
    (5, 9),
    (64, 3),
    (255, 9),
    (256, 33),
    (1000, 31),
    (4099, 17),
];

const TOLERANCE: Tolerance = Tolerance::new(1e-5, 1e-6);

/// The CPU reference: every tap, out-of-range taps zero, accumulated in f64.
pub fn convolve_1d(signal: &[f32], weights: &[f32]) -> Vec<f32> {
    let radius = (weights.len() - 1) / 2;
    (0..signal.len())
        .map(|index| {
            let mut total = 0.0_f64;
            for (tap, &weight) in weights.iter().enumerate() {
                let position = (index + tap).checked_sub(radius);
                if let Some(&value) = position.and_then(|position| signal.get(position)) {
                    total += f64::from(weight) * f64::from(value);
                }
            }
            total as f32
        })
        .collect()
}

/// As [`convolve_1d`], with the filter centred `radius` taps after its first one (the
/// right radius is `(filter_length − 1) / 2`; another one shifts every output).
pub fn convolve_1d_with_radius(signal: &[f32], weights: &[f32], radius: isize) -> Vec<f32> {
    (0..signal.len())
        .map(|index| {
            let mut total = 0.0_f64;
            for (tap, &weight) in weights.iter().enumerate() {
                let position = index as isize + tap as isize - radius;
                if let Some(&value) = usize::try_from(position)
                    .ok()
                    .and_then(|position| signal.get(position))
                {
                    total += f64::from(weight) * f64::from(value);
                }
            }
            total as f32
        })
        .collect()
}

/// What the usual mistakes of a 1D convolution produce, each with the sentence that
/// names it.
pub fn mistakes(signal: &[f32], weights: &[f32]) -> Vec<Hypothesis> {
    let row = |values: Vec<f32>| {
        Tensor2d::from_vec(1, values.len(), values).expect("one value per output")
    };
    let radius = ((weights.len() - 1) / 2) as isize;
    let with_weights = |change: &dyn Fn(&mut Vec<f32>)| {
        let mut changed = weights.to_vec();
        change(&mut changed);
        row(convolve_1d(signal, &changed))
    };
    let with_signal = |change: &dyn Fn(&mut Vec<f32>)| {
        let mut changed = signal.to_vec();
        change(&mut changed);
        row(convolve_1d(&changed, weights))
    };
    let last = signal.len() - 1;
    vec![
        Hypothesis::new(
            "cause: the result is the convolution with the filter reversed: tap t must use \
             weights[t], not weights[filter_length − 1 − t] (this exercise does not flip the \
             filter)",
            with_weights(&|weights| weights.reverse()),
        ),
        Hypothesis::new(
            "cause: every output is the sum centred one element too far to the right: the \
             radius is one too large (it is (filter_length − 1) / 2)",
            row(convolve_1d_with_radius(signal, weights, radius + 1)),
        ),
        Hypothesis::new(
            "cause: every output is the sum centred one element too far to the left: the \
             radius is one too small (it is (filter_length − 1) / 2)",
            row(convolve_1d_with_radius(signal, weights, radius - 1)),
        ),
        Hypothesis::new(
            "cause: the last tap of the filter is never added: the loop over the taps stops \
             one tap early",
            with_weights(&|weights| *weights.last_mut().expect("a filter has taps") = 0.0),
        ),
        Hypothesis::new(
            "cause: the first tap of the filter is never added",
            with_weights(&|weights| weights[0] = 0.0),
        ),
        Hypothesis::new(
            "cause: the first element of the signal is never used: the edge test skips \
             position 0 (`> 0` where `>= 0` belongs?)",
            with_signal(&|signal| signal[0] = 0.0),
        ),
        Hypothesis::new(
            "cause: the last element of the signal is never used: the edge test stops one \
             position early",
            with_signal(&|signal| signal[last] = 0.0),
        ),
    ]
}

/// `radius` zeros, the signal, `radius` zeros.
pub fn zero_padded(signal: &[f32], filter_length: usize) -> Vec<f32> {
    let radius = (filter_length - 1) / 2;
    let mut padded = vec![0.0; radius];
    padded.extend_from_slice(signal);
    padded.resize(signal.len() + 2 * radius, 0.0);
    padded
}

/// The three versions differ in how the signal is handed over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    Naive,
    Padded,
    Workgroup,
}

impl Version {
    pub fn bindings(self) -> &'static [BindingSpec; 4] {
        match self {
            Version::Padded => &PADDED_BINDINGS,
            Version::Naive | Version::Workgroup => &BINDINGS,
        }
    }

    /// The buffers for one case, in binding order.
    pub fn buffers(self, signal: &[f32], weights: &[f32]) -> [BufferData; 4] {
        let uploaded = match self {
            Version::Padded => zero_padded(signal, weights.len()),
            Version::Naive | Version::Workgroup => signal.to_vec(),
        };
        [
            BufferData::floats(&uploaded),
            BufferData::floats(weights),
            BufferData::poisoned_floats(signal.len()),
            BufferData::uniform(&[signal.len() as u32, weights.len() as u32]),
        ]
    }
}

pub fn check_naive(submission: &Submission) -> Vec<PartReport> {
    check(submission, Version::Naive)
}

pub fn check_padded(submission: &Submission) -> Vec<PartReport> {
    check(submission, Version::Padded)
}

pub fn check_workgroup(submission: &Submission) -> Vec<PartReport> {
    check(submission, Version::Workgroup)
}

fn check(submission: &Submission, version: Version) -> Vec<PartReport> {
    let part_name = "GPU kernel";
    let (context, kernel) =
        match load_or_fail(submission.wgsl.as_deref(), version.bindings(), part_name) {
            Ok(loaded) => loaded,
            Err(failed) => return vec![failed],
        };
    let mut parts = vec![
        results(context, &kernel, version, part_name),
        static_part(&kernel, &StaticRules::default()),
    ];
    if version == Version::Workgroup {
        parts.push(workgroup_memory_part(
            &kernel,
            "loading the signal into workgroup memory once per workgroup",
        ));
    }
    parts
}

fn results(
    context: &galaxy::gpu::GpuContext,
    kernel: &KernelUnderTest,
    version: Version,
    part_name: &str,
) -> PartReport {
    let workgroup = match kernel.one_dimensional_workgroup() {
        Ok(size) => size,
        Err(error) => return PartReport::failed_before_running(part_name, error),
    };
    let mut part = PartReport::new(part_name);
    for (seed, &(length, filter_length)) in CASES.iter().enumerate() {
        let seed = 100 + seed as u64;
        let signal = Tensor2d::random(1, length, -1.0..=1.0, 2 * seed);
        let weights = Tensor2d::random(1, filter_length, -1.0..=1.0, 2 * seed + 1);
        let expected = convolve_1d(signal.as_slice(), weights.as_slice());
        let data = version.buffers(signal.as_slice(), weights.as_slice());
        let grid = [workgroups_for(length, workgroup), 1, 1];
        let verdict = run_case(
            context,
            kernel,
            &data,
            grid,
            |outputs| {
                let actual = row_of(&to_floats(&outputs[0]), length);
                let verdict = compare(&actual, &row_of(&expected, length), TOLERANCE);
                explain(verdict, &actual, TOLERANCE, || {
                    mistakes(signal.as_slice(), weights.as_slice())
                })
            },
            no_failure_yet(&part),
        );
        part.push(
            format!("signal of {length}, filter of {filter_length}"),
            verdict,
        );
    }
    part
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_skips_taps_outside_the_signal() {
        // Filter [1, 2, 3] centred: output[i] = 1·s[i−1] + 2·s[i] + 3·s[i+1].
        let output = convolve_1d(&[1.0, 10.0, 100.0], &[1.0, 2.0, 3.0]);
        assert_eq!(output, vec![32.0, 321.0, 210.0]);
        assert_eq!(convolve_1d(&[5.0], &[1.0, 2.0, 3.0, 4.0, 5.0]), vec![15.0]);
    }

    #[test]
    fn padding_puts_radius_zeros_on_each_side() {
        assert_eq!(
            zero_padded(&[1.0, 2.0], 5),
            vec![0.0, 0.0, 1.0, 2.0, 0.0, 0.0]
        );
        assert_eq!(zero_padded(&[1.0], 1), vec![1.0]);
    }
}
