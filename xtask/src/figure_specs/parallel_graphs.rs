//! The figures of the pages on graphs in module 2 (see the parent module for what a spec holds).
//! Kept in its own file so that each part of the book adds its figures without touching
//! the others'.
//!
//! `cargo run --release --example parallel_graphs -- --machine <name>` writes the three
//! files; the book draws the 2-core AMD EPYC's (`epyc`) and, once measured, the NVIDIA
//! H100 host's 16-core files (`h100`), the same figure for each machine.

use super::*;

/// The machines whose files the book draws, and whether the file must exist.
const MACHINES: [(&str, bool); 2] = [("epyc", true), ("h100", false)];

/// The figures this part of the book draws.
pub(super) fn specs() -> Vec<FigureSpec> {
    let mut specs = Vec::new();
    for (machine, required) in MACHINES {
        let mut figures = vec![width(machine), chain(machine), traversal(machine)];
        if !required {
            figures = figures.into_iter().map(FigureSpec::optional).collect();
        }
        specs.extend(figures);
    }
    specs
}

/// Speed-up by number of branches, one panel per layer size.
fn width(machine: &str) -> FigureSpec {
    let id = format!("parallel-graphs-width-{machine}");
    let lines = |columns: usize| {
        vec![
            labelled(
                emphasised(&format!(
                    "branches in parallel, one thread per layer, {columns} columns"
                )),
                "one thread per layer",
            ),
            labelled(
                context(&format!(
                    "branches in parallel, layers split by rows, {columns} columns"
                )),
                "layers split by rows",
            ),
        ]
    };
    let mut spec = FigureSpec::new(&id, &id)
        .title("Parallel graph runner: speed-up by number of branches")
        .subtitle(
            "32 rows; every branch is 4 linear layers of columns × columns weights. Above 1: \
             faster than running the nodes one after the other.",
        )
        .panel(Some("64 columns"), lines(64))
        .panel(Some("256 columns"), lines(256))
        .panel(Some("512 columns"), lines(512));
    spec.columns = 3;
    spec
}

/// The chain-shaped standard workload: nothing to overlap.
fn chain(machine: &str) -> FigureSpec {
    let id = format!("parallel-graphs-chain-{machine}");
    FigureSpec::new(&id, &id)
        .title("A chain of layers: no branches to run side by side")
        .subtitle(
            "The standard workload, 16 layers. The parallel runner can only add its \
             bookkeeping; the fast CPU mode wins by other means.",
        )
        .panel(
            None,
            vec![
                emphasised("sequential, layers split by rows"),
                emphasised("branches in parallel, layers split by rows"),
                context("branches in parallel, one thread per layer"),
                reference("CpuGraph mode (weights packed, rows blocked)"),
            ],
        )
}

/// Pointers against indices.
fn traversal(machine: &str) -> FigureSpec {
    let id = format!("graph-representations-traversal-{machine}");
    FigureSpec::new(&id, &id)
        .title("Evaluating one graph: following pointers or walking a vector")
        .subtitle(
            "Every node averages its one or two inputs. Pointers: Rc<RefCell<…>> nodes and a \
             depth-first walk; indices: one pass over a Vec in dependency order.",
        )
        .panel(
            None,
            vec![
                emphasised("indices (one Vec)"),
                emphasised("pointers, allocated in graph order"),
                emphasised("pointers, allocated in shuffled order"),
            ],
        )
}
