//! The figures of the data- and model-distributed parallelism pages (module 2's
//! specialisations) (see the parent module for what a spec holds).
//!
//! They come from the example `multi_device --machine NAME`, which writes
//! `multi-device-{time,speedup,hand-over}-NAME.csv`. `h100` is one NVIDIA H100 with two
//! Vulkan devices requested on it (`--devices-per-adapter 2`): no two-GPU machine was
//! available, so the figures show what two devices on one GPU do, beside the line two GPUs
//! would reach at best.

use super::*;

/// The figures this part of the book draws.
pub(super) fn specs() -> Vec<FigureSpec> {
    vec![
        FigureSpec::new("multi-device-time-h100", "multi-device-time-h100")
            .title("Two devices on one H100: milliseconds per run")
            .subtitle("Lower is better; 16 layers 1024 wide, in the compiled GPU mode on every device")
            .panel(
                None,
                vec![
                    labelled(emphasised("one device"), "one device"),
                    labelled(emphasised("data-parallel, 2 devices"), "data-parallel"),
                    labelled(
                        emphasised("pipeline, 2 devices, 4 micro-batches"),
                        "pipeline, 4 micro-batches",
                    ),
                    labelled(
                        context("pipeline, 2 devices, 16 micro-batches"),
                        "pipeline, 16 micro-batches",
                    ),
                ],
            )
            .note("Both devices are Vulkan devices requested on the one GPU: they share its processors.")
            .optional(),
        FigureSpec::new("multi-device-speedup-h100", "multi-device-speedup-h100")
            .title("Two devices on one H100: speed-up over one device")
            .subtitle("Higher is better; the dashed line is what two separate GPUs would give at best")
            .panel(
                None,
                vec![
                    labelled(emphasised("data-parallel, 2 devices"), "data-parallel"),
                    labelled(
                        emphasised("pipeline, 2 devices, 4 micro-batches"),
                        "pipeline, 4 micro-batches",
                    ),
                    labelled(
                        context("pipeline, 2 devices, 1 micro-batch"),
                        "pipeline, 1 micro-batch",
                    ),
                    labelled(
                        context("pipeline, 2 devices, 16 micro-batches"),
                        "pipeline, 16",
                    ),
                    labelled(reference("ideal, 2 devices"), "two GPUs, ideal"),
                ],
            )
            .note("Both devices are Vulkan devices requested on the one GPU: they share its processors, so a speed-up above 1 most likely comes from one device's copies overlapping the other's kernels.")
            .optional(),
        FigureSpec::new("multi-device-hand-over-h100", "multi-device-hand-over-h100")
            .title("Two devices on one H100: handing an activation through host memory")
            .subtitle("Lower is better; a 1024-wide activation of 256 to 8192 rows")
            .panel(
                None,
                vec![
                    labelled(emphasised("whole hand-over"), "whole hand-over"),
                    labelled(context("read back from device 0"), "read back"),
                    labelled(context("upload to device 1"), "upload"),
                ],
            )
            .note("Both devices are Vulkan devices requested on the one GPU.")
            .optional(),
    ]
}
