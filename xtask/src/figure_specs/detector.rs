//! The figures of the "Running YOLO" use case (module 4): a PicoDet detector's pipeline under
//! ONNX Runtime on the CPU, written by `anchors/detector/profile_detector.py`: on the 2-core
//! AMD EPYC (`-epyc`, a loaded machine) and on the 16-core Intel Xeon host of the NVIDIA H100
//! machine (`-h100-host`, a quiet one). See the parent module for what a spec holds.

use super::*;

/// The figures this part of the book draws.
pub(super) fn specs() -> Vec<FigureSpec> {
    vec![
        FigureSpec::new("detector-stages-epyc", "detector-stages-epyc")
            .subtitle(
                "One 1754 × 1240 page: the network is most of the time, but resizing and \
                 normalising the picture in NumPy is not free",
            )
            .panel(
                None,
                vec![
                    emphasised("network"),
                    emphasised("pre-processing"),
                    context("post-processing"),
                ],
            )
            .note(
                "Medians of 20 runs after a warm-up, one and two threads in turn; the bands \
                 run from the fastest run to the slowest. Other programs shared the two cores.",
            ),
        FigureSpec::new("detector-operators-epyc", "detector-operators-epyc")
            .subtitle(
                "ONNX Runtime's profiler: the convolutions take more than half of the \
                 network's time; the hard-swish's Mul and Div and the layout changes follow",
            )
            .panel(
                None,
                vec![
                    emphasised("Conv"),
                    context("Mul"),
                    context("Div"),
                    context("ReorderOutput"),
                    context("ReorderInput"),
                    context("other operators"),
                ],
            )
            .note(
                "Kernel time per operator type, the mean over 21 profiled runs. Other programs \
                 shared the two cores.",
            ),
        FigureSpec::new("detector-stages-h100-host", "detector-stages-h100-host")
            .subtitle(
                "One 1754 × 1240 page on a quiet 16-core machine: sixteen threads cut the \
                 network to a third, the NumPy pre-processing hardly at all",
            )
            .panel(
                None,
                vec![
                    emphasised("network"),
                    emphasised("pre-processing"),
                    context("post-processing"),
                ],
            )
            .note(
                "Medians of 20 runs after a warm-up, one and sixteen threads in turn; the \
                 bands run from the fastest run to the slowest. Load average below 1.",
            ),
        FigureSpec::new(
            "detector-operators-h100-host",
            "detector-operators-h100-host",
        )
        .subtitle(
            "ONNX Runtime's profiler: sixteen threads divide the convolutions' time by \
                 four, the layout changes' by less than two",
        )
        .panel(
            None,
            vec![
                emphasised("Conv"),
                emphasised("ReorderOutput"),
                emphasised("ReorderInput"),
                context("Mul"),
                context("Add"),
                context("other operators"),
            ],
        )
        .note(
            "Kernel time per operator type, the mean over 21 profiled runs. Load average \
                 below 1.",
        ),
    ]
}
