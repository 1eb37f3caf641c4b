//! The figures of the irregular-workload pages (module 2) (see the parent module for what a spec holds).
//! Kept in its own file so that each part of the book adds its figures without touching
//! the others'.
//!
//! The sorting and sparse figures come once per machine: the example
//! `irregular_workloads --machine NAME` writes `parallel-irregular-<figure>-NAME.csv`.
//! `epyc` is the 2-core AMD EPYC with lavapipe the book is built on; `h100` is the NVIDIA
//! H100 machine (its 16-core host for the CPU series), optional until its data are brought
//! back. The Monte Carlo error is the same on every machine (the counts are exact), so it
//! has one file.

use super::*;

/// (the machine's name in the file names, whether the file may be missing).
const MACHINES: [(&str, bool); 2] = [("epyc", false), ("h100", true)];

/// The figures this part of the book draws.
pub(super) fn specs() -> Vec<FigureSpec> {
    let mut specs = Vec::new();
    for (machine, optional) in MACHINES {
        let mut figures = vec![
            FigureSpec::new(
                &format!("parallel-irregular-sorting-{machine}"),
                &format!("parallel-irregular-sorting-{machine}"),
            )
            .subtitle("Higher is better; the GPU time includes copying the keys there and back")
            .panel(
                None,
                vec![
                    emphasised("radix sort"),
                    emphasised("sort_unstable"),
                    emphasised("par_sort_unstable"),
                    emphasised("GPU bitonic (with copies)"),
                ],
            ),
            FigureSpec::new(
                &format!("parallel-irregular-sparse-{machine}"),
                &format!("parallel-irregular-sparse-{machine}"),
            )
            .subtitle("Lower is better; the dense product does the same work at every density")
            .panel(
                None,
                vec![
                    emphasised("CSR, CPU"),
                    emphasised("dense, CPU"),
                    emphasised("CSR, GPU"),
                    emphasised("dense, GPU"),
                ],
            )
            .note("One thread on the CPU; the GPU times are the dispatch alone, the operands already on the GPU."),
        ];
        if optional {
            figures = figures.into_iter().map(FigureSpec::optional).collect();
        }
        specs.extend(figures);
    }
    specs.push(
        FigureSpec::new(
            "parallel-irregular-monte-carlo",
            "parallel-irregular-monte-carlo",
        )
        .subtitle("Four times the samples halve the error")
        .panel(None, vec![emphasised("measured"), reference("1.64/√n")])
        .note("Counted, not timed: every machine and thread count gives the same counts."),
    );
    specs
}
