//! The figures of batching (module 3) and of the training use case (module 4), see the parent
//! module for what a spec holds. Kept in its own file so that each part of the book adds its
//! figures without touching the others'.

use super::*;

/// The machines the batching sweep runs on: the 2-core EPYC with lavapipe (its "GPU" modes
/// run on the same two cores) and the H100 machine with its 16-core Xeon host.
const MACHINES: [&str; 2] = ["epyc", "h100"];

/// The four modes of the batching sweep: the two the text compares emphasised, the simpler
/// one of each kind beside them.
fn batch_lines() -> Vec<LineSpec> {
    vec![
        labelled(context("Cpu"), "Cpu (operator by operator)"),
        labelled(emphasised("CpuGraph"), "CpuGraph"),
        labelled(
            context("ImmediateCached"),
            "ImmediateCached (GPU, op by op)",
        ),
        labelled(emphasised("GraphCompiled"), "GraphCompiled (GPU)"),
    ]
}

/// The figures this part of the book draws.
pub(super) fn specs() -> Vec<FigureSpec> {
    let mut specs = Vec::new();
    for machine in MACHINES {
        // Throughput and latency come from the same runs, written as two files because
        // their y axes differ; the page shows them side by side.
        let id = format!("inference-batch-{machine}");
        let mut throughput = FigureSpec::new(&id, &id)
            .title("Throughput: images per second against the batch size")
            .subtitle("The trained digits network (64 → 64 → 64 → 10), every run read back.")
            .panel(None, batch_lines());
        let id = format!("inference-batch-latency-{machine}");
        let mut latency = FigureSpec::new(&id, &id)
            .title("Latency: milliseconds per batch against the batch size")
            .subtitle("The same runs: the time until the last image of a batch has its answer.")
            .panel(None, batch_lines());
        if machine == "epyc" {
            for figure in [&mut throughput, &mut latency] {
                figure.notes.push(
                    "lavapipe, a software Vulkan driver, runs the GPU modes on the same two \
                     cores, so they never overtake the CPU here."
                        .to_string(),
                );
            }
        } else {
            // Measured: the compiled graph on the H100 is slower than the 16-core CPU runner
            // at 4 096 images and faster at 16 384; a straight line between those two points
            // of the latency file crosses near 10 000.
            let crossover = [(10_000.0, "crossover")];
            throughput = throughput.markers("H100", &crossover);
            latency = latency.markers("H100", &crossover);
        }
        specs.push(throughput);
        specs.push(latency);
    }
    // Module 4's training use case: one line per step of the optimisation.
    for machine in MACHINES {
        let id = format!("training-speed-{machine}");
        let figure = FigureSpec::new(&id, &id)
            .title("Training the digits network: processor time per epoch, step by step")
            .subtitle(
                "Every step trains the same network, bit for bit. Grey: the steps before the \
                 last.",
            )
            .panel(
                None,
                vec![
                    labelled(context("Naive"), "0: naive loops"),
                    labelled(context("DotProductFree"), "1: no dot products"),
                    labelled(context("RegisterBlocked"), "2: register tiles"),
                    labelled(emphasised("RegisterBlockedAvx2"), "3: tiles in AVX2"),
                    labelled(emphasised("BranchFreeMask"), "4: branch-free ReLU mask"),
                ],
            );
        specs.push(figure);
    }
    specs
}
