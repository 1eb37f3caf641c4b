//! The figure of the "Optimising a neural network for inference" use case (module 4): the
//! digit classifier of module 3 run step by step, written by the example `inference_steps`.
//! See the parent module for what a spec holds.
//!
//! `inference-steps-<machine>` holds the CPU steps; `inference-steps-gpu-<machine>` (the
//! example's `--gpu`) the `GraphCompiled` mode with each kind of weights.
//!
//! The example names each series with the test accuracy its run measured, so the spec
//! selects no series by name: every series of the file is drawn, and each line's label
//! carries its accuracy.

use super::*;

/// The figures this part of the book draws.
pub(super) fn specs() -> Vec<FigureSpec> {
    ["epyc", "h100-host"]
        .into_iter()
        .map(|machine| {
            let id = format!("inference-steps-{machine}");
            FigureSpec::new(&id, &id)
                .title("The digit classifier, step by step: time per image")
                .subtitle(
                    "Each line is one way of running the trained network; each label gives \
                     its test accuracy. Lower is faster.",
                )
                .note(
                    "A point: the 359 test images classified in calls of 1, 64 or all 359 images; \
                     the median of the samples, taken in turn with the other points, and the \
                     fastest to the slowest as a band.",
                )
        })
        .chain(std::iter::once(
            // `--gpu` on the NVIDIA H100 machine: the compiled GPU graph with each kind of
            // weights, beside the CPU's packed runner on its host.
            FigureSpec::new("inference-steps-gpu-h100", "inference-steps-gpu-h100")
                .title("The digit classifier on the GPU: time per image")
                .subtitle(
                    "The compiled GPU graph with fp32, int8 and sparse weights, beside the \
                     CPU's packed runner (CpuGraph, fp32). Lower is faster.",
                )
                .note(
                    "A point: the 359 test images classified in calls of 1, 64 or all 359 \
                     images, with the upload and the readback of every call; the median of \
                     the samples, and the fastest to the slowest as a band.",
                ),
        ))
        .collect()
}
