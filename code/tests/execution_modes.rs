//! Differential tests: every execution mode gives the same output as plain CPU operator
//! calls, on graphs proptest generates (random depth, widths and operator mix).

mod common;

use common::{assert_close, context};
use galaxy::graph::{ChainBuilder, ValidGraph, random_mlp};
use galaxy::runner::{ExecutionMode, RunError};
use galaxy::{Tensor2d, Tolerance};
use proptest::prelude::*;

/// Differences between GPU and CPU rounding pass through every layer (see
/// gpu_graph_runner.rs); without a softmax at the end outputs are not bounded by 1, so
/// the absolute part is a little larger.
const MODE_TOLERANCE: Tolerance = Tolerance::new(1e-4, 1e-5);

/// One layer of a generated chain: its width and how many ReLUs follow it (0, 1 or 2).
#[derive(Debug, Clone)]
struct Layer {
    width: usize,
    relus: usize,
}

#[derive(Debug, Clone)]
struct ChainSpecification {
    rows: usize,
    input_width: usize,
    layers: Vec<Layer>,
    relu_first: bool,
    softmax: bool,
    seed: u64,
}

fn chain_specification() -> impl Strategy<Value = ChainSpecification> {
    let layer = (1usize..=40, 0usize..=2).prop_map(|(width, relus)| Layer { width, relus });
    (
        1usize..=24,
        1usize..=40,
        prop::collection::vec(layer, 0..=6),
        any::<bool>(),
        any::<bool>(),
        any::<u64>(),
    )
        .prop_map(|(rows, input_width, layers, relu_first, softmax, seed)| ChainSpecification {
            rows,
            input_width,
            layers,
            relu_first,
            softmax,
            seed,
        })
}

fn build(specification: &ChainSpecification) -> (ValidGraph, Tensor2d) {
    let mut seed = specification.seed;
    let mut next_seed = || {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        seed
    };
    let mut chain = ChainBuilder::input(specification.rows, specification.input_width);
    if specification.relu_first {
        chain = chain.relu();
    }
    let mut width = specification.input_width;
    for layer in &specification.layers {
        let limit = (3.0 / width as f32).sqrt();
        let weights = Tensor2d::random(width, layer.width, -limit..=limit, next_seed());
        let bias = Tensor2d::random(1, layer.width, -0.5..=0.5, next_seed());
        chain = chain.linear(weights, bias);
        for _ in 0..layer.relus {
            chain = chain.relu();
        }
        width = layer.width;
    }
    if specification.softmax {
        chain = chain.softmax();
    }
    let graph = chain.output().expect("generated chains are valid");
    let input = Tensor2d::random(specification.rows, specification.input_width, -1.0..=1.0, next_seed());
    (graph, input)
}

fn check_every_mode(graph: &ValidGraph, input: &Tensor2d, what: &str) {
    let mut reference = ExecutionMode::Cpu.prepare(graph, None).unwrap();
    let expected = reference.run(input, 1).unwrap().pop().unwrap();
    for mode in ExecutionMode::ALL {
        let mut execution = mode.prepare(graph, Some(context())).unwrap();
        let results = execution.run(input, 2).unwrap();
        assert_eq!(results.len(), 2, "{mode:?} returns one result per iteration");
        for (iteration, actual) in results.iter().enumerate() {
            assert_close(actual, &expected, MODE_TOLERANCE, &format!("{what}: {mode:?} iteration {iteration}"));
        }
    }
}

proptest! {
    // 200 generated graphs per run, each in all 12 modes (PROPTEST_CASES overrides).
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn every_mode_agrees_on_generated_graphs(specification in chain_specification()) {
        let (graph, input) = build(&specification);
        check_every_mode(&graph, &input, &format!("{specification:?}"));
    }
}

#[test]
fn every_mode_agrees_on_the_standard_workload() {
    let workload = random_mlp(32, 16, 11).unwrap();
    check_every_mode(&workload.graph, &workload.input, "random_mlp(32, 16, 11)");
}

#[test]
fn gpu_modes_without_a_context_are_an_error() {
    let workload = random_mlp(4, 2, 1).unwrap();
    for mode in ExecutionMode::ALL {
        let prepared = mode.prepare(&workload.graph, None);
        if mode.uses_gpu() {
            assert!(matches!(prepared, Err(RunError::NoGpuContext { .. })), "{mode:?}");
        } else {
            assert!(prepared.is_ok(), "{mode:?}");
        }
    }
}
