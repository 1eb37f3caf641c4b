//! The figures of the data-parallelism pages (module 2) (see the parent module for what a spec holds).
//! Kept in its own file so that each part of the book adds its figures without touching
//! the others'.
//!
//! `cargo run --release --example data_parallelism -- --machine <name>` writes
//! `parallel-data-<figure>-<name>.csv`; the book draws the 2-core AMD EPYC's files
//! (`epyc`) and, once measured, the NVIDIA H100 host's 16-core files (`h100`), the same
//! figure for each machine.

use super::*;

/// The machines whose files the book draws, and whether the file must exist.
const MACHINES: [(&str, bool); 2] = [("epyc", true), ("h100", false)];

/// The figures this part of the book draws.
pub(super) fn specs() -> Vec<FigureSpec> {
    let mut specs = Vec::new();
    for (machine, required) in MACHINES {
        // The speed-ups need free cores: the 2-core machine's file is drawn only if present.
        let mut scheduling = scheduling(machine);
        if machine == "epyc" {
            scheduling = scheduling.optional();
        }
        let mut figures = vec![
            work_share(machine),
            scheduling,
            simd(machine),
            layouts(machine),
            branchless(machine),
            gpu(machine),
        ];
        if !required {
            figures = figures.into_iter().map(FigureSpec::optional).collect();
        }
        specs.extend(figures);
    }
    specs
}

/// Rayon against fixed chunks and the shared queue: balanced above, unbalanced below.
fn scheduling(machine: &str) -> FigureSpec {
    let id = format!("parallel-data-scheduling-{machine}");
    let lines = |balance: &str| {
        vec![
            labelled(emphasised(&format!("rayon, {balance}")), "rayon"),
            labelled(
                emphasised(&format!("fixed chunks, {balance}")),
                "fixed chunks",
            ),
            labelled(context(&format!("shared queue, {balance}")), "shared queue"),
        ]
    };
    FigureSpec::new(&id, &id)
        .title("Speed-up over the sequential loop, by number of threads")
        .subtitle(
            "The same total work: every item equal (top) or item cost rising along the array \
             (bottom). Threads beyond the core count only take turns.",
        )
        .panel(
            Some("Balanced: every item costs the same"),
            lines("balanced"),
        )
        .panel(
            Some("Unbalanced: the cost of an item rises with its index"),
            lines("unbalanced"),
        )
}

/// The busiest thread's share of the work: balanced above, unbalanced below.
fn work_share(machine: &str) -> FigureSpec {
    let id = format!("parallel-data-work-share-{machine}");
    let lines = |balance: &str| {
        vec![
            labelled(emphasised(&format!("rayon, {balance}")), "rayon"),
            labelled(
                emphasised(&format!("fixed chunks, {balance}")),
                "fixed chunks",
            ),
            labelled(context(&format!("shared queue, {balance}")), "shared queue"),
            labelled(reference(&format!("even split, {balance}")), "even split"),
        ]
    };
    FigureSpec::new(&id, &id)
        .title("How much of the work the busiest thread did, by number of threads")
        .subtitle(
            "The loop lasts as long as its busiest thread: at 50 % two threads can at best \
             halve the time, at 75 % only cut it by a quarter. Dashed: a perfectly even split.",
        )
        .panel(Some("Balanced: every item costs the same"), lines("balanced"))
        .panel(
            Some("Unbalanced: the cost of an item rises with its index"),
            lines("unbalanced"),
        )
        .note("Fixed chunks: the work of each chunk, decided before the run; rayon and the shared queue: measured.")
}

fn simd(machine: &str) -> FigureSpec {
    let id = format!("parallel-data-simd-{machine}");
    FigureSpec::new(&id, &id)
        .title("Summing f32 values: one at a time, in 16 lanes, and with intrinsics")
        .subtitle(
            "The in-order sum waits for each addition; the others keep many sums at once in \
             vector registers. Large arrays are limited by memory instead.",
        )
        .panel(
            None,
            vec![
                emphasised("in order (scalar)"),
                emphasised("16 lanes (auto-vectorised)"),
                emphasised("AVX2 intrinsics"),
                context("AVX-512 intrinsics"),
            ],
        )
}

fn layouts(machine: &str) -> FigureSpec {
    let id = format!("parallel-data-layouts-{machine}");
    FigureSpec::new(&id, &id)
        .title("Counting particles within a radius: array of structs against struct of arrays")
        .subtitle("The struct of arrays reads 12 bytes per particle, the array of structs 48.")
        .panel(
            None,
            vec![
                emphasised("array of structs"),
                emphasised("struct of arrays"),
            ],
        )
}

fn branchless(machine: &str) -> FigureSpec {
    let id = format!("parallel-data-branchless-{machine}");
    FigureSpec::new(&id, &id)
        .title("Clamping values to a limit: a branch against a select")
        .subtitle(
            "Shuffled data makes the branch unpredictable near a half; the select does the \
             same work whatever the data. Every call first restores the values with a copy.",
        )
        .panel(
            None,
            vec![
                emphasised("if, random"),
                context("if, sorted"),
                emphasised("select, random"),
                context("select, sorted"),
                context("min, random"),
                reference("copy alone"),
            ],
        )
}

fn gpu(machine: &str) -> FigureSpec {
    let id = format!("parallel-data-gpu-{machine}");
    FigureSpec::new(&id, &id)
        .title("The workload on CPU threads and as a WGSL kernel, by number of items")
        .subtitle(
            "Every GPU call uploads the items, runs the kernel and reads the results back. \
             Thin: the unbalanced ramp.",
        )
        .panel(
            None,
            vec![
                emphasised("one CPU thread"),
                emphasised("rayon, every core"),
                emphasised("GPU kernel"),
                context("rayon, every core, unbalanced"),
                context("GPU kernel, unbalanced"),
            ],
        )
}
