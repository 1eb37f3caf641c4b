//! The figures of the Quantisation page (see the parent module for what a spec holds). Kept
//! in its own file so that each part of the book adds its figures without touching the
//! others'.

use super::*;

/// The figures this part of the book draws.
pub(super) fn specs() -> Vec<FigureSpec> {
    let mut specs = Vec::new();
    for machine in ["epyc", "h100"] {
        let mut speed = FigureSpec::new(
            &format!("inference-int8-speed-{machine}"),
            &format!("inference-int8-speed-{machine}"),
        )
        .subtitle("Higher is faster. CPU: one thread; GPU: input upload and readback included")
        .panel(
            Some("CPU"),
            vec![
                labelled(
                    emphasised("CPU int8 product, avx512-vnni"),
                    "int8 product, VNNI",
                ),
                labelled(
                    emphasised("CPU int8 layer, input quantised"),
                    "int8 layer (VNNI + quantising)",
                ),
                labelled(emphasised("CPU fp32"), "fp32, register-blocked"),
                labelled(context("CPU int8 product, avx2"), "int8 product, AVX2"),
                labelled(
                    context("CPU int8 product, portable"),
                    "int8 product, plain loop",
                ),
            ],
        )
        .panel(
            Some("GPU"),
            vec![
                labelled(emphasised("GPU int8, dot4I8Packed"), "int8, dot4I8Packed"),
                labelled(emphasised("GPU fp32, GraphCompiled"), "fp32, compiled graph"),
                labelled(context("GPU int8, bytes unpacked"), "int8, bytes unpacked"),
                labelled(context("GPU fp32, GraphCached"), "fp32, simple kernel"),
            ],
        )
        .note(
            "The int8 layer counts quantising the input rows and scaling the sums back; the products count the int8 product alone.",
        );
        speed.columns = 2;
        specs.push(speed);
    }
    for machine in ["epyc", "h100"] {
        let id = format!("inference-bits-{machine}");
        let bits = FigureSpec::new(&id, &id)
            .subtitle("Median of three trained networks; the fp32 network for comparison")
            .panel(
                None,
                vec![
                    labelled(
                        emphasised("weights rounded (one scale per output)"),
                        "weights rounded, one scale per output",
                    ),
                    labelled(
                        emphasised("int8 layers, one scale per output"),
                        "int8 layers, per output",
                    ),
                    labelled(
                        context("int8 layers, one scale per tensor"),
                        "int8 layers, per tensor",
                    ),
                    labelled(reference("fp32"), "fp32"),
                ],
            );
        specs.push(bits);
    }
    specs.push(
        FigureSpec::new("inference-pruning-epyc", "inference-pruning-epyc")
            .subtitle("Median of three trained networks; fine-tuning: 5 more epochs with the pruned weights held at zero")
            .panel(
                None,
                vec![
                    emphasised("pruned, then fine-tuned"),
                    labelled(context("pruned"), "pruned only"),
                ],
            ),
    );
    specs
}
