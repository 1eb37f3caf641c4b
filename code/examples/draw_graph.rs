//! Prints the standard workload as a Graphviz DOT graph, before or after fusion, and a
//! count of its nodes on standard error.
//!
//! ```sh
//! cargo run --example draw_graph                      # size 4, depth 3
//! cargo run --example draw_graph -- 4 6 --fused       # size 4, depth 6, after fusion
//! cargo run --example draw_graph > graph.dot && dot -Tsvg graph.dot > graph.svg
//! ```
//!
//! It only writes text, so it needs no GPU. Rendering the picture needs Graphviz
//! (`sudo apt-get install graphviz`) or any online DOT viewer.

use galaxy::compiler::fuse;
use galaxy::graph::dot::to_dot;
use galaxy::graph::{Operator, ValidGraph, random_mlp};

// ANCHOR: draw_graph
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let fused = arguments.iter().any(|argument| argument == "--fused");
    let numbers: Vec<usize> = arguments
        .iter()
        .filter(|argument| *argument != "--fused")
        .map(|argument| argument.parse())
        .collect::<Result<_, _>>()
        .map_err(|error| format!("arguments are: [size] [depth] [--fused] ({error})"))?;
    let size = numbers.first().copied().unwrap_or(4);
    let depth = numbers.get(1).copied().unwrap_or(3);

    let workload = random_mlp(size, depth, 2026)?;
    let graph = if fused {
        fuse(&workload.graph)?
    } else {
        workload.graph
    };
    eprintln!("random_mlp(size {size}, depth {depth}, seed 2026), fused: {fused}");
    eprintln!("{}", node_counts(&graph));
    print!("{}", to_dot(&graph));
    Ok(())
}

/// How many nodes the graph has, of each operator, and how many of them compute.
fn node_counts(graph: &ValidGraph) -> String {
    let nodes = &graph.graph().nodes;
    // Operator names in the order they first appear, each with its count.
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for node in nodes {
        let name = node.operator.name();
        match counts.iter_mut().find(|(seen, _)| *seen == name) {
            Some((_, count)) => *count += 1,
            None => counts.push((name, 1)),
        }
    }
    let computing = nodes
        .iter()
        .filter(|node| {
            !matches!(
                node.operator,
                Operator::Input { .. } | Operator::Constant(_) | Operator::Output
            )
        })
        .count();
    let listed: Vec<String> = counts
        .iter()
        .map(|(name, count)| format!("{count} {name}"))
        .collect();
    format!(
        "{} nodes ({}), {computing} of which compute",
        nodes.len(),
        listed.join(", ")
    )
}
// ANCHOR_END: draw_graph
