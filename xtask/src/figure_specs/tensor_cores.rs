//! The figures of tensor cores (see the parent module for what a spec holds). Kept in its own
//! file so that each part of the book adds its figures without touching the others'.

use super::*;

/// The figures this part of the book draws: one per machine, from
/// `cargo run --release -p galaxy --example tensor_cores -- --machine <machine>`.
pub(super) fn specs() -> Vec<FigureSpec> {
    let mut specs = Vec::new();
    // lavapipe has no matrix units to offer; the H100 run adds the cooperative-matrix line.
    for (machine, matrix_units) in [("epyc", false), ("h100", true)] {
        let id = format!("tensor-cores-{machine}");
        let mut lines = vec![
            emphasised("f16 values, f32 sums"),
            context("f16 values, f16 sums"),
            labelled(context("fp32, tiled 16×16"), "fp32, same tiled kernel"),
            emphasised("fp32, fastest kernel"),
            labelled(
                reference("fp32 peak (peak_fma, measured)"),
                "fp32 peak (measured)",
            ),
        ];
        if matrix_units {
            lines.insert(0, emphasised("f16 on matrix units, f32 sums"));
        }
        let figure = FigureSpec::new(&id, &id)
            .title("Square matrix products on the GPU, by number format")
            .subtitle(
                "Data already on the GPU; every result checked on 256 elements against an \
                 exact product. Dashed: the fp32 rate the device reaches on pure multiply-adds.",
            )
            .panel(None, lines);
        specs.push(figure);
    }
    specs
}
