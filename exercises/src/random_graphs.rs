//! Random graphs for the graph-compiler exercises (buffer reuse, in-place ReLU).
//!
//! Two kinds: the standard workload ([`galaxy::graph::random_mlp`]) at small sizes, and
//! chains whose layers change width, with zero, one or two ReLUs after a layer, a ReLU
//! on the graph's input, an optional softmax, and *dead branches*: a ReLU or a linear
//! layer that reads an intermediate tensor and that nothing reads in turn. A dead branch
//! gives a tensor a second reader, which is exactly what makes an in-place ReLU illegal
//! and what a buffer plan must not forget.

use galaxy::Tensor2d;
use galaxy::graph::{GraphBuilder, TensorId, ValidGraph, random_mlp};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A graph, the input to run it on, and a line that says what it is.
#[derive(Debug, Clone)]
pub struct GraphCase {
    pub description: String,
    pub graph: ValidGraph,
    pub input: Tensor2d,
}

/// The graphs every graph-compiler checker runs: a few standard workloads and a dozen
/// generated chains, the same on every run.
pub fn graph_cases() -> Vec<GraphCase> {
    let mut cases = Vec::new();
    for (size, depth, seed) in [(1, 0, 1), (3, 1, 2), (8, 4, 3), (8, 12, 4), (5, 24, 5)] {
        let workload = random_mlp(size, depth, seed).expect("sizes above 0 are valid");
        cases.push(GraphCase {
            description: format!("random_mlp(size {size}, depth {depth}, seed {seed})"),
            graph: workload.graph,
            input: workload.input,
        });
    }
    for seed in 0..12 {
        cases.push(random_chain(seed));
    }
    cases.push(two_readers_of_one_shape());
    cases
}

/// `input → linear → (ReLU, dead branch) → ReLU → linear → output`, every tensor 4 × 6.
///
/// The first linear layer's result has two readers, and the second reader writes a tensor
/// of the same shape. A buffer plan that frees a tensor after its *first* reader hands
/// that buffer to the second ReLU, which would then write the tensor it is reading; in
/// random chains this needs a layer that keeps its width right after a dead branch, which
/// is rare. Neither ReLU that reads the layer may go in place.
pub fn two_readers_of_one_shape() -> GraphCase {
    let layer = |seed: u64| {
        let limit = (3.0_f32 / 6.0).sqrt();
        (
            Tensor2d::random(6, 6, -limit..=limit, seed),
            Tensor2d::random(1, 6, -0.5..=0.5, seed + 1),
        )
    };
    let mut builder = GraphBuilder::new();
    let input = builder.input(4, 6);
    let (weights, bias) = layer(41);
    let first = builder.linear(input, weights, bias);
    builder.relu(first);
    let activated = builder.relu(first);
    let (weights, bias) = layer(43);
    let second = builder.linear(activated, weights, bias);
    builder.output(second);
    GraphCase {
        description: "a layer read by a dead-branch ReLU and by a ReLU of the same shape"
            .to_string(),
        graph: builder.build().expect("the graph is valid"),
        input: Tensor2d::random(4, 6, -1.0..=1.0, 45),
    }
}

/// A chain of 1 to 6 layers of widths 1 to 24, on 1 to 9 rows, with ReLUs and dead
/// branches sprinkled in.
pub fn random_chain(seed: u64) -> GraphCase {
    let mut generator = ChaCha8Rng::seed_from_u64(seed);
    let rows = generator.random_range(1..=9);
    let input_width = generator.random_range(1..=24);
    let mut builder = GraphBuilder::new();
    let mut current: TensorId = builder.input(rows, input_width);
    let mut width = input_width;
    let mut dead_branches = 0;
    let mut relus = 0;
    if generator.random_bool(0.3) {
        current = builder.relu(current);
        relus += 1;
    }
    let layers = generator.random_range(1..=6);
    for _ in 0..layers {
        let next_width = generator.random_range(1..=24);
        let limit = (3.0 / width as f32).sqrt();
        let weights =
            Tensor2d::random(width, next_width, -limit..=limit, generator.random::<u64>());
        let bias = Tensor2d::random(1, next_width, -0.5..=0.5, generator.random::<u64>());
        // A dead branch before the layer: a second reader of `current`.
        if generator.random_bool(0.25) {
            builder.relu(current);
            dead_branches += 1;
        }
        current = builder.linear(current, weights, bias);
        width = next_width;
        for _ in 0..generator.random_range(0..=2) {
            current = builder.relu(current);
            relus += 1;
        }
    }
    if generator.random_bool(0.5) {
        current = builder.softmax(current);
    }
    builder.output(current);
    let graph = builder.build().expect("generated chains are valid");
    let input = Tensor2d::random(rows, input_width, -1.0..=1.0, generator.random::<u64>());
    GraphCase {
        description: format!(
            "chain {seed}: {}, {}, {}, {}",
            counted(rows, "row"),
            counted(layers, "layer"),
            counted(relus, "ReLU"),
            counted(dead_branches, "dead branch")
        ),
        graph,
        input,
    }
}

/// `1 row`, `3 rows`, `2 dead branches`.
fn counted(count: usize, noun: &str) -> String {
    match (count, noun.ends_with("ch")) {
        (1, _) => format!("1 {noun}"),
        (_, true) => format!("{count} {noun}es"),
        (_, false) => format!("{count} {noun}s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use galaxy::graph::Operator;

    #[test]
    fn the_cases_include_dead_branches_and_relus_that_cannot_go_in_place() {
        let cases = graph_cases();
        let with_dead_branch = cases
            .iter()
            .filter(|case| !case.description.contains(" 0 dead branches"))
            .filter(|case| case.description.starts_with("chain"))
            .count();
        assert!(with_dead_branch >= 2, "too few dead branches to test with");
        let relu_on_the_input = cases.iter().any(|case| {
            let graph = case.graph.graph();
            graph.nodes.iter().any(|node| {
                node.operator == Operator::Relu
                    && matches!(graph.node(node.inputs[0]).operator, Operator::Input { .. })
            })
        });
        assert!(relu_on_the_input, "no ReLU reads the graph's input");
    }
}
