//! The graph IR: validation errors that name the node, the standard workload, the CPU
//! runner against plain operator calls, in-place ReLU, and the fusion pass.

mod common;

use common::assert_close;
use galaxy::compiler::{fuse, rewrite_in_place};
use galaxy::cpu::{linear_into, relu_in_place, softmax};
use galaxy::graph::dot::to_dot;
use galaxy::graph::{
    ChainBuilder, Graph, GraphBuilder, GraphError, Operator, TensorId, Workload, random_mlp,
};
use galaxy::runner::{CpuGraphRunner, RunError, run_operator_by_operator};
use galaxy::{ShapeError, Tensor2d, Tolerance};
use proptest::prelude::*;

fn weights(rows: usize, columns: usize, seed: u64) -> Tensor2d {
    Tensor2d::random(rows, columns, -0.5..=0.5, seed)
}

/// input(2×4) → linear(4×3) → relu → softmax → output, as raw nodes.
fn small_graph() -> Graph {
    let mut graph = Graph::new();
    let input = graph.push(
        Operator::Input {
            rows: 2,
            columns: 4,
        },
        vec![],
    );
    let w = graph.push(Operator::Constant(weights(4, 3, 1)), vec![]);
    let b = graph.push(Operator::Constant(weights(1, 3, 2)), vec![]);
    let linear = graph.push(Operator::Linear, vec![input, w, b]);
    let relu = graph.push(Operator::Relu, vec![linear]);
    let softmax = graph.push(Operator::Softmax, vec![relu]);
    graph.push(Operator::Output, vec![softmax]);
    graph
}

#[test]
fn a_well_formed_graph_validates() {
    let valid = small_graph().validate().unwrap();
    assert_eq!(valid.shape(TensorId(3)), (2, 3));
    assert_eq!(valid.result(), TensorId(5));
}

#[test]
fn an_empty_graph_is_rejected() {
    assert_eq!(Graph::new().validate().unwrap_err(), GraphError::Empty);
}

#[test]
fn a_dangling_input_names_the_node() {
    let mut graph = small_graph();
    graph.nodes[4].inputs[0] = TensorId(99);
    let error = graph.validate().unwrap_err();
    assert!(
        matches!(
            error,
            GraphError::UnknownInput {
                node: 4,
                input: TensorId(99),
                ..
            }
        ),
        "{error}"
    );
    assert!(error.to_string().contains("node 4 (relu)"), "{error}");
}

#[test]
fn a_cycle_is_rejected() {
    let mut graph = small_graph();
    // The linear layer now reads the ReLU that reads it.
    graph.nodes[3].inputs[0] = TensorId(4);
    match graph.validate().unwrap_err() {
        GraphError::Cycle { nodes } => {
            assert!(nodes.contains(&3) && nodes.contains(&4), "{nodes:?}")
        }
        other => panic!("expected a cycle, got {other}"),
    }
}

#[test]
fn wrong_weight_and_bias_shapes_name_the_node() {
    let mut graph = small_graph();
    graph.nodes[1].operator = Operator::Constant(weights(5, 3, 1));
    let error = graph.validate().unwrap_err();
    match &error {
        GraphError::Shape {
            node: 3, source, ..
        } => {
            assert!(
                matches!(**source, ShapeError::Incompatible { .. }),
                "{error}"
            )
        }
        other => panic!("expected a shape error at node 3, got {other}"),
    }

    let mut graph = small_graph();
    // A full-size bias instead of a row vector.
    graph.nodes[2].operator = Operator::Constant(weights(2, 3, 2));
    let error = graph.validate().unwrap_err();
    assert!(
        matches!(error, GraphError::Shape { node: 3, .. }),
        "{error}"
    );
}

#[test]
fn weights_must_be_constants() {
    let mut graph = small_graph();
    graph.nodes[3].inputs[1] = TensorId(0);
    let error = graph.validate().unwrap_err();
    assert!(
        matches!(
            error,
            GraphError::NotConstant {
                node: 3,
                role: "weights",
                ..
            }
        ),
        "{error}"
    );
}

#[test]
fn wrong_input_counts_are_rejected() {
    let mut graph = small_graph();
    graph.nodes[4].inputs.push(TensorId(0));
    let error = graph.validate().unwrap_err();
    assert!(
        matches!(
            error,
            GraphError::WrongInputCount {
                node: 4,
                expected: 1,
                found: 2,
                ..
            }
        ),
        "{error}"
    );
}

#[test]
fn input_and_output_must_each_be_unique() {
    let mut graph = small_graph();
    graph.push(
        Operator::Input {
            rows: 1,
            columns: 1,
        },
        vec![],
    );
    assert_eq!(
        graph.validate().unwrap_err(),
        GraphError::InputCount { count: 2 }
    );

    let mut graph = small_graph();
    graph.nodes.pop();
    assert_eq!(
        graph.validate().unwrap_err(),
        GraphError::OutputCount { count: 0 }
    );
}

#[test]
fn output_and_softmax_in_the_wrong_place_are_rejected() {
    let mut graph = small_graph();
    graph.push(Operator::Relu, vec![TensorId(6)]);
    let error = graph.validate().unwrap_err();
    assert!(
        matches!(
            error,
            GraphError::OutputIsRead {
                node: 7,
                output: 6,
                ..
            }
        ),
        "{error}"
    );

    // softmax → relu → output
    let mut graph = small_graph();
    graph.nodes[6].inputs[0] = TensorId(7);
    graph.push(Operator::Relu, vec![TensorId(5)]);
    let error = graph.validate().unwrap_err();
    assert!(
        matches!(
            error,
            GraphError::SoftmaxNotLast {
                node: 5,
                consumer: 7,
                ..
            }
        ),
        "{error}"
    );
}

#[test]
fn nodes_may_be_listed_in_any_order() {
    // The same network with the output node first: validation finds an order.
    let mut graph = Graph::new();
    graph.push(Operator::Output, vec![TensorId(4)]);
    graph.push(
        Operator::Input {
            rows: 2,
            columns: 4,
        },
        vec![],
    );
    graph.push(Operator::Constant(weights(4, 3, 1)), vec![]);
    graph.push(Operator::Constant(weights(1, 3, 2)), vec![]);
    graph.push(
        Operator::Linear,
        vec![TensorId(1), TensorId(2), TensorId(3)],
    );
    let valid = graph.validate().unwrap();
    let order = valid.execution_order();
    let position = |id: usize| order.iter().position(|tensor| tensor.0 == id).unwrap();
    assert!(position(4) < position(0) && position(1) < position(4));
}

#[test]
fn the_chain_builder_reads_like_the_network() {
    let valid = ChainBuilder::input(2, 4)
        .linear(weights(4, 3, 1), weights(1, 3, 2))
        .relu()
        .softmax()
        .output()
        .unwrap();
    assert_eq!(valid.graph(), &small_graph());
    let error = ChainBuilder::input(2, 4)
        .linear(weights(5, 3, 1), weights(1, 3, 2))
        .output();
    assert!(matches!(error, Err(GraphError::Shape { .. })));
}

#[test]
fn a_dag_with_a_shared_tensor_runs() {
    // Two branches read the same hidden tensor; a ReLU on a shared tensor may not run
    // in place, or the other branch would see clamped values.
    let mut builder = GraphBuilder::new();
    let input = builder.input(3, 4);
    let hidden = builder.linear(input, weights(4, 4, 1), weights(1, 4, 2));
    let clamped = builder.relu(hidden);
    let summed = builder.linear(hidden, weights(4, 4, 3), weights(1, 4, 4));
    let _ = clamped;
    builder.output(summed);
    let valid = builder.build().unwrap();
    let data = Tensor2d::random(3, 4, -1.0..=1.0, 5);
    let mut runner = CpuGraphRunner::prepare(&valid);
    let expected = run_operator_by_operator(&valid, &data).unwrap();
    assert_close(
        &runner.run(&data).unwrap(),
        &expected,
        Tolerance::new(1e-6, 1e-6),
        "shared tensor",
    );
}

#[test]
fn the_standard_workload_stays_finite_at_depth_128() {
    for (size, seed) in [(4, 1), (4, 2), (17, 3), (64, 4)] {
        let workload = random_mlp(size, 128, seed).unwrap();
        let output = CpuGraphRunner::prepare(&workload.graph)
            .run(&workload.input)
            .unwrap();
        assert!(
            output.as_slice().iter().all(|value| value.is_finite()),
            "size {size}: {output:?}"
        );
        for row in 0..size {
            let sum: f32 = output.row(row).iter().sum();
            assert!(
                (sum - 1.0).abs() < 1e-4,
                "size {size}, row {row} sums to {sum}"
            );
        }
    }
    assert!(random_mlp(0, 4, 1).is_err());
}

/// The tolerance the differential tests of the execution modes compare outputs with.
const MODE_TOLERANCE: Tolerance = Tolerance::new(1e-4, 1e-5);

fn root_mean_square(tensor: &Tensor2d) -> f64 {
    let sum: f64 = tensor
        .as_slice()
        .iter()
        .map(|&value| f64::from(value).powi(2))
        .sum();
    (sum / tensor.len() as f64).sqrt()
}

/// Every layer's result on `input` (after its ReLU, where it has one), with the CPU
/// operators, one layer at a time.
fn layer_results(workload: &Workload, input: &Tensor2d) -> Vec<Tensor2d> {
    let mut results: Vec<Tensor2d> = Vec::new();
    for layer in workload.layers() {
        let previous = results.last().unwrap_or(input);
        let mut result = Tensor2d::zeros(previous.rows(), layer.weights.columns());
        linear_into(previous, layer.weights, layer.bias, &mut result).unwrap();
        if layer.relu {
            relu_in_place(&mut result);
        }
        results.push(result);
    }
    results
}

/// `‖y′ − y‖ / ‖y‖` for the outputs of `workload` on its own input and on a completely
/// different one, and how many elements of the two differ beyond `MODE_TOLERANCE`.
fn input_sensitivity(workload: &Workload) -> (f64, usize) {
    let (rows, columns) = workload.input.shape();
    let other_input = Tensor2d::random(rows, columns, -1.0..=1.0, 0x5ee_d0fa_d1ff);
    let mut runner = CpuGraphRunner::prepare(&workload.graph);
    let output = runner.run(&workload.input).unwrap();
    let other_output = runner.run(&other_input).unwrap();
    let squared =
        |values: &mut dyn Iterator<Item = f64>| values.map(|value| value * value).sum::<f64>();
    let difference = squared(
        &mut output
            .as_slice()
            .iter()
            .zip(other_output.as_slice())
            .map(|(&a, &b)| f64::from(a) - f64::from(b)),
    );
    let norm = squared(&mut output.as_slice().iter().map(|&a| f64::from(a)));
    let comparison = other_output.compare(&output, MODE_TOLERANCE).unwrap();
    (
        (difference / norm).sqrt(),
        comparison.elements_outside_tolerance,
    )
}

#[test]
fn activations_keep_their_scale_through_128_layers() {
    // The input's values are uniform in ±1: rms 1/√3 ≈ 0.577. The weights keep the mean
    // square in expectation; at a finite width each layer still multiplies it by a random
    // factor near 1, so over 128 layers the rms wanders, by less the wider the layers.
    for (size, seed) in [(64, 2026), (64, 1), (128, 2026)] {
        let workload = random_mlp(size, 128, seed).unwrap();
        let results = layer_results(&workload, &workload.input);
        assert_eq!(results.len(), 128);
        for (index, result) in results.iter().enumerate() {
            let rms = root_mean_square(result);
            assert!(
                (0.1..=4.0).contains(&rms),
                "size {size}, seed {seed}: layer {} has rms {rms}",
                index + 1
            );
        }
        // The layers are the network: a softmax of the last result is the runner's output.
        let by_layers = softmax(results.last().unwrap()).unwrap();
        let output = CpuGraphRunner::prepare(&workload.graph)
            .run(&workload.input)
            .unwrap();
        assert_close(
            &by_layers,
            &output,
            MODE_TOLERANCE,
            &format!("size {size}, seed {seed}"),
        );
    }
}

#[test]
fn at_depth_128_a_different_input_changes_the_output_far_beyond_the_tolerance() {
    for (size, seed) in [(64, 2026), (64, 3), (128, 2026)] {
        let workload = random_mlp(size, 128, seed).unwrap();
        let (relative_change, elements_outside) = input_sensitivity(&workload);
        // The differential tests allow a relative difference of 1e-4 per element; a new
        // input must move the output by more than a hundred times that.
        assert!(
            relative_change > 1e-2,
            "size {size}, seed {seed}: a new input changes the output by only {relative_change:e}"
        );
        assert!(
            elements_outside * 10 > workload.input.len() * 9,
            "size {size}, seed {seed}: only {elements_outside} elements moved beyond the tolerance"
        );
    }
}

#[test]
fn the_sensitivity_check_catches_weights_that_ignore_the_relu() {
    // The same draws with gain 1 before every ReLU too (weights uniform in ±√(3/size)
    // everywhere): each ReLU halves the input's share of the mean square, and after 128
    // layers the output no longer depends on the input within any tolerance.
    let workload = random_mlp(64, 128, 2026).unwrap();
    let chain = workload
        .layers()
        .iter()
        .fold(ChainBuilder::input(64, 64), |chain, layer| {
            let mut weights = layer.weights.clone();
            if layer.relu {
                for weight in weights.as_mut_slice() {
                    *weight *= std::f32::consts::FRAC_1_SQRT_2;
                }
            }
            let chain = chain.linear(weights, layer.bias.clone());
            if layer.relu { chain.relu() } else { chain }
        });
    let gain_one = Workload {
        graph: chain.softmax().output().unwrap(),
        input: workload.input.clone(),
    };
    let results = layer_results(&gain_one, &gain_one.input);
    assert!(results.iter().any(|result| root_mean_square(result) < 0.1));
    let (relative_change, elements_outside) = input_sensitivity(&gain_one);
    assert!(relative_change < 1e-5, "{relative_change:e}");
    assert_eq!(elements_outside, 0);
}

#[test]
fn random_mlp_is_reproducible() {
    let first = random_mlp(8, 6, 42).unwrap();
    let second = random_mlp(8, 6, 42).unwrap();
    assert_eq!(first.graph, second.graph);
    assert_eq!(first.input, second.input);
    assert_ne!(random_mlp(8, 6, 43).unwrap().graph, first.graph);
}

#[test]
fn the_cpu_runner_matches_plain_operator_calls() {
    for (size, depth, seed) in [(1, 1, 1), (5, 3, 2), (16, 8, 3), (33, 12, 4)] {
        let workload = random_mlp(size, depth, seed).unwrap();
        let expected = run_operator_by_operator(&workload.graph, &workload.input).unwrap();
        let mut runner = CpuGraphRunner::prepare(&workload.graph);
        for _ in 0..2 {
            // Twice: a second run on the same buffers must not see leftovers of the first.
            let actual = runner.run(&workload.input).unwrap();
            assert_close(
                &actual,
                &expected,
                Tolerance::new(1e-6, 1e-7),
                &format!("size {size} depth {depth}"),
            );
        }
    }
}

#[test]
fn relu_runs_in_place_after_the_rewrite_and_saves_buffers() {
    let valid = ChainBuilder::input(2, 4)
        .linear(weights(4, 4, 1), weights(1, 4, 2))
        .relu()
        .linear(weights(4, 4, 3), weights(1, 4, 4))
        .relu()
        .softmax()
        .output()
        .unwrap();
    // As written: input, linear, relu, linear, relu, softmax each get a buffer.
    assert_eq!(CpuGraphRunner::prepare(&valid).buffer_count(), 6);
    // Rewritten, the two ReLUs overwrite the linear layers' results: four buffers.
    let rewritten = rewrite_in_place(&valid).unwrap();
    let mut runner = CpuGraphRunner::prepare(&rewritten);
    assert_eq!(runner.buffer_count(), 4);
    let data = Tensor2d::random(2, 4, -1.0..=1.0, 9);
    let expected = run_operator_by_operator(&valid, &data).unwrap();
    assert_close(
        &runner.run(&data).unwrap(),
        &expected,
        Tolerance::new(1e-6, 1e-7),
        "in place",
    );
    // A ReLU straight on the input may not overwrite the caller's input.
    let valid = ChainBuilder::input(2, 4).relu().output().unwrap();
    assert_eq!(
        CpuGraphRunner::prepare(&rewrite_in_place(&valid).unwrap()).buffer_count(),
        2
    );
}

#[test]
fn the_runner_rejects_an_input_of_the_wrong_shape() {
    let workload = random_mlp(4, 2, 1).unwrap();
    let error = CpuGraphRunner::prepare(&workload.graph)
        .run(&Tensor2d::zeros(3, 4))
        .unwrap_err();
    assert_eq!(
        error,
        RunError::InputShape {
            expected: (4, 4),
            given: (3, 4)
        }
    );
}

#[test]
fn fusion_removes_nodes_and_keeps_the_result() {
    for seed in 0..12 {
        let (size, depth) = (4 + seed as usize, 6 + seed as usize);
        let workload = random_mlp(size, depth, seed).unwrap();
        let fused = fuse(&workload.graph).unwrap();
        let count = |graph: &galaxy::graph::ValidGraph, wanted: fn(&Operator) -> bool| {
            graph
                .graph()
                .nodes
                .iter()
                .filter(|node| wanted(&node.operator))
                .count()
        };
        // Every ReLU after a linear layer is absorbed, and the last one with the softmax.
        assert_eq!(
            count(&fused, |operator| matches!(operator, Operator::Relu)),
            0
        );
        assert_eq!(
            count(&fused, |operator| matches!(
                operator,
                Operator::LinearReluSoftmax
            )),
            1
        );
        assert_eq!(
            count(&fused, |operator| matches!(operator, Operator::Softmax)),
            0
        );
        assert!(fused.graph().nodes.len() < workload.graph.graph().nodes.len());
        let expected = run_operator_by_operator(&workload.graph, &workload.input).unwrap();
        let actual = CpuGraphRunner::prepare(&fused)
            .run(&workload.input)
            .unwrap();
        assert_close(&actual, &expected, Tolerance::new(1e-6, 1e-7), "fused");
    }
}

#[test]
fn the_fused_graph_draws_fewer_nodes() {
    // The node lines of a DOT text: `  n3 [label=…]`, not the arrows `  n3 -> n4`.
    fn node_lines(dot: &str) -> usize {
        dot.lines()
            .filter(|line| line.starts_with("  n") && !line.starts_with("  node "))
            .filter(|line| !line.contains(" -> "))
            .count()
    }
    let workload = random_mlp(8, 6, 4).unwrap();
    let fused = fuse(&workload.graph).unwrap();
    let unfused_dot = to_dot(&workload.graph);
    let fused_dot = to_dot(&fused);
    assert!(
        node_lines(&fused_dot) < node_lines(&unfused_dot),
        "{fused_dot}"
    );
    assert!(
        fused_dot.contains(": linear_relu_softmax\\n8×8\""),
        "{fused_dot}"
    );
    assert!(!fused_dot.contains(": softmax\\n"), "{fused_dot}");
}

#[test]
fn fusion_folds_a_repeated_relu() {
    let valid = ChainBuilder::input(2, 4)
        .linear(weights(4, 4, 1), weights(1, 4, 2))
        .relu()
        .relu()
        .softmax()
        .output()
        .unwrap();
    let fused = fuse(&valid).unwrap();
    let operators: Vec<&str> = fused
        .graph()
        .nodes
        .iter()
        .map(|node| node.operator.name())
        .collect();
    assert_eq!(
        operators,
        [
            "input",
            "constant",
            "constant",
            "linear_relu_softmax",
            "output"
        ]
    );
    let data = Tensor2d::random(2, 4, -1.0..=1.0, 3);
    let expected = run_operator_by_operator(&valid, &data).unwrap();
    let actual = CpuGraphRunner::prepare(&fused).run(&data).unwrap();
    assert_close(
        &actual,
        &expected,
        Tolerance::new(1e-6, 1e-7),
        "repeated relu",
    );
}

#[test]
fn fusion_leaves_a_shared_intermediate_alone() {
    let mut builder = GraphBuilder::new();
    let input = builder.input(2, 4);
    let hidden = builder.linear(input, weights(4, 4, 1), weights(1, 4, 2));
    let clamped = builder.relu(hidden);
    let other = builder.linear(hidden, weights(4, 4, 3), weights(1, 4, 4));
    let _ = (clamped, other);
    builder.output(other);
    let valid = builder.build().unwrap();
    let fused = fuse(&valid).unwrap();
    assert_eq!(fused.graph(), valid.graph());
}

/// An arbitrary node: any operator, with 0–3 input ids that may point anywhere,
/// including past the end of the graph.
fn arbitrary_node() -> impl Strategy<Value = (Operator, Vec<TensorId>)> {
    let operator = prop_oneof![
        (1usize..4, 1usize..4).prop_map(|(rows, columns)| Operator::Input { rows, columns }),
        (1usize..4, 1usize..4, any::<u64>()).prop_map(|(rows, columns, seed)| Operator::Constant(
            Tensor2d::random(rows, columns, -1.0..=1.0, seed)
        )),
        Just(Operator::Linear),
        Just(Operator::Relu),
        Just(Operator::ReluInPlace),
        Just(Operator::Softmax),
        Just(Operator::LinearRelu),
        Just(Operator::LinearReluSoftmax),
        Just(Operator::Output),
    ];
    let inputs = prop::collection::vec((0usize..10).prop_map(TensorId), 0..=3);
    (operator, inputs)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Whatever the nodes, validation answers with a graph or a typed error, and a graph
    /// that validates runs (on the CPU, in both runners) without panicking.
    #[test]
    fn malformed_graphs_give_errors_not_panics(nodes in prop::collection::vec(arbitrary_node(), 0..10)) {
        let mut graph = Graph::new();
        for (operator, inputs) in nodes {
            graph.push(operator, inputs);
        }
        if let Ok(valid) = graph.validate() {
            let (rows, columns) = valid.shape(valid.input());
            let input = Tensor2d::random(rows, columns, -1.0..=1.0, 1);
            let expected = run_operator_by_operator(&valid, &input).unwrap();
            let actual = CpuGraphRunner::prepare(&valid).run(&input).unwrap();
            assert_close(&actual, &expected, Tolerance::new(1e-6, 1e-7), "a generated valid graph");
            let fused = fuse(&valid).unwrap();
            let rewritten = rewrite_in_place(&fused).unwrap();
            let actual = CpuGraphRunner::prepare(&rewritten).run(&input).unwrap();
            assert_close(&actual, &expected, Tolerance::new(1e-6, 1e-7), "after the passes");
        }
    }
}
