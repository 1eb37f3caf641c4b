//! The graph's int8 and sparse linear layers (module 3): every operator against its `f32`
//! or dense reference on many shapes, the `quantize` and `sparsify` passes on the trained
//! digits network, and the typed errors of bad input and of modes without the kernels.
//!
//! Tolerances: an int8 layer may differ from the `f32` layer by at most
//! `inference::quantization::error_bound` per element (the rounding of both operands, plus
//! the `f32` arithmetic); a sparse layer adds the same products as the dense one in another
//! order, so it may differ by a few ulps of the sum of magnitudes.

use galaxy::compiler::{QuantizePassError, SPARSE_DENSITY_THRESHOLD, fuse, quantize, sparsify};
use galaxy::cpu::int8::{Granularity, QuantizationError, QuantizedWeights};
use galaxy::cpu::sparse::{CsrError, CsrMatrix};
use galaxy::graph::{ChainBuilder, Graph, GraphError, Operator, ValidGraph};
use galaxy::inference::quantization::error_bound;
use galaxy::inference::training::{accuracy, argmax_rows};
use galaxy::inference::{Digits, TrainingConfig, train};
use galaxy::parallel::csr::random_sparse_dense;
use galaxy::parallel::graph_runner::{LinearKernel, ParallelGraphRunner};
use galaxy::runner::{ExecutionMode, RunError, WeightStorage, run_operator_by_operator};
use galaxy::tensor::{Tensor2d, Tolerance};

/// (rows, inputs, outputs): one row, odd sizes, more rows than a lane of sixteen, wide.
const SHAPES: [(usize, usize, usize); 7] = [
    (1, 1, 1),
    (1, 7, 3),
    (3, 5, 7),
    (16, 64, 10),
    (17, 33, 65),
    (40, 130, 31),
    (64, 256, 128),
];

fn one_layer(input: (usize, usize), weights: Tensor2d, bias: Tensor2d, relu: bool) -> ValidGraph {
    let chain = ChainBuilder::input(input.0, input.1).linear(weights, bias);
    let chain = if relu { chain.relu() } else { chain };
    chain.output().expect("a valid one-layer graph")
}

/// The result of every CPU runner that has the int8 and sparse kernels.
fn cpu_results(graph: &ValidGraph, input: &Tensor2d) -> Vec<(&'static str, Tensor2d)> {
    let mut results = Vec::new();
    for mode in [ExecutionMode::Cpu, ExecutionMode::CpuGraph] {
        let mut execution = mode.prepare(graph, None).expect("prepares");
        let output = execution.run(input, 1).expect("runs").remove(0);
        results.push((mode.name(), output));
    }
    let fused = fuse(graph).expect("fuses");
    let mut fused_runner = ExecutionMode::CpuGraph.prepare(&fused, None).unwrap();
    results.push((
        "CpuGraph, fused",
        fused_runner.run(input, 1).unwrap().remove(0),
    ));
    let mut parallel = ParallelGraphRunner::prepare(graph, LinearKernel::RowParallel);
    results.push(("ParallelGraphRunner", parallel.run(input).unwrap()));
    results
}

#[test]
fn int8_layers_stay_within_the_error_bound_of_the_f32_layer() {
    for (case, &(rows, inputs, outputs)) in SHAPES.iter().enumerate() {
        let seed = 500 + 10 * case as u64;
        let input = Tensor2d::random(rows, inputs, -2.0..=2.0, seed);
        let mut weights = Tensor2d::random(inputs, outputs, -0.5..=0.5, seed + 1);
        // Outputs of different ranges, and one that is all zero (a pruned output).
        for output in 0..outputs {
            let factor = if output == outputs / 2 {
                0.0
            } else {
                1.0 + 10.0 * (output % 3) as f32
            };
            for inner in 0..inputs {
                let value = weights.get(inner, output) * factor;
                weights.set(inner, output, value);
            }
        }
        let bias = Tensor2d::random(1, outputs, -0.2..=0.2, seed + 2);
        for relu in [false, true] {
            let graph = one_layer((rows, inputs), weights.clone(), bias.clone(), relu);
            let reference = run_operator_by_operator(&graph, &input).unwrap();
            for granularity in [Granularity::PerTensor, Granularity::PerOutput] {
                let quantized_graph = quantize(&graph, granularity).unwrap();
                let quantized = QuantizedWeights::quantize(&weights, granularity).unwrap();
                // ReLU moves no two values further apart, so the bound holds after it too.
                let bound = error_bound(&input, &quantized, &weights);
                for (runner, result) in cpu_results(&quantized_graph, &input) {
                    assert_eq!(result.shape(), reference.shape());
                    for index in 0..result.len() {
                        let (got, want) = (result.as_slice()[index], reference.as_slice()[index]);
                        assert!(
                            (got - want).abs() <= bound.as_slice()[index],
                            "{runner}, {rows}×{inputs}×{outputs}, {granularity:?}, relu {relu}, \
                             element {index}: {got} against {want}, bound {}",
                            bound.as_slice()[index]
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn sparse_layers_match_the_dense_layer_at_every_density() {
    for (case, &(rows, inputs, outputs)) in SHAPES.iter().enumerate() {
        for density in [0.0, 0.01, 0.1, 0.5, 1.0] {
            let seed = 900 + 10 * case as u64;
            let input = Tensor2d::random(rows, inputs, -1.0..=1.0, seed);
            let weights = random_sparse_dense(inputs, outputs, density, seed + 1);
            let bias = Tensor2d::random(1, outputs, -0.2..=0.2, seed + 2);
            for relu in [false, true] {
                let graph = one_layer((rows, inputs), weights.clone(), bias.clone(), relu);
                let reference = run_operator_by_operator(&graph, &input).unwrap();
                let sparse_graph = sparsify(&graph, 1.0).unwrap();
                assert!(
                    sparse_graph
                        .graph()
                        .nodes
                        .iter()
                        .any(|node| matches!(node.operator, Operator::LinearSparse { .. })),
                    "the pass made the layer sparse"
                );
                let tolerance = Tolerance::new(1e-5, 1e-6 * inputs as f32);
                for (runner, result) in cpu_results(&sparse_graph, &input) {
                    let comparison = result.compare(&reference, tolerance).unwrap();
                    assert!(
                        comparison.passed(),
                        "{runner}, {rows}×{inputs}×{outputs} at {density}, relu {relu}: {comparison}"
                    );
                }
            }
        }
    }
}

#[test]
fn the_digits_network_keeps_its_accuracy_through_both_passes() {
    let split = Digits::split(0.2, 11).unwrap();
    let config = TrainingConfig {
        epochs: 10,
        ..TrainingConfig::default()
    };
    let (network, _) = train(&config, &split).unwrap();
    let rows = split.test.images.rows();
    let graph = network.to_graph(rows).unwrap();
    let graph_accuracy = |storage: WeightStorage| {
        let mut execution = ExecutionMode::CpuGraph
            .prepare_with_weights(&graph, storage, None)
            .unwrap();
        let scores = execution.run(&split.test.images, 1).unwrap().remove(0);
        accuracy(&argmax_rows(&scores), &split.test.labels)
    };
    let fp32 = graph_accuracy(WeightStorage::Float32);
    assert!((fp32 - network.accuracy(&split.test)).abs() < 1e-6);
    for granularity in [Granularity::PerTensor, Granularity::PerOutput] {
        let int8 = graph_accuracy(WeightStorage::Int8(granularity));
        assert!(
            (int8 - fp32).abs() <= 0.01,
            "{granularity:?}: fp32 {fp32}, int8 {int8}"
        );
    }

    // Pruned to half the threshold's density and fine-tuned: every layer becomes sparse,
    // and the sparse graph predicts exactly what the dense one does.
    let fine_tune = TrainingConfig {
        epochs: 3,
        ..config.clone()
    };
    let (pruned, _) = galaxy::inference::pruning::prune_and_fine_tune(
        &network,
        1.0 - SPARSE_DENSITY_THRESHOLD as f32 / 2.0,
        &fine_tune,
        &split,
    )
    .unwrap();
    let pruned_graph = pruned.to_graph(rows).unwrap();
    let sparse_graph = sparsify(&pruned_graph, SPARSE_DENSITY_THRESHOLD).unwrap();
    let sparse_layers = sparse_graph
        .graph()
        .nodes
        .iter()
        .filter(|node| matches!(node.operator, Operator::LinearSparse { .. }))
        .count();
    assert_eq!(sparse_layers, pruned.layers.len());
    let dense_scores = run_operator_by_operator(&pruned_graph, &split.test.images).unwrap();
    let mut sparse = ExecutionMode::CpuGraph
        .prepare(&sparse_graph, None)
        .unwrap();
    let sparse_scores = sparse.run(&split.test.images, 1).unwrap().remove(0);
    assert_eq!(argmax_rows(&sparse_scores), argmax_rows(&dense_scores));
}

#[test]
fn modes_without_the_kernels_name_the_node_and_the_mode() {
    let graph = one_layer(
        (2, 4),
        Tensor2d::random(4, 3, -1.0..=1.0, 1),
        Tensor2d::zeros(1, 3),
        true,
    );
    let int8 = fuse(&quantize(&graph, Granularity::PerOutput).unwrap()).unwrap();
    let sparse = sparsify(&graph, 1.0).unwrap();
    for mode in ExecutionMode::ALL {
        if mode.runs_cheaper_operators() {
            continue;
        }
        // Refused before any GPU is touched, so no context is needed to see the error.
        let Err(error) = mode.prepare(&int8, None) else {
            panic!("{mode:?} prepared an int8 graph");
        };
        assert!(matches!(
            error,
            RunError::CheaperOperatorNotSupported { .. }
        ));
        let text = error.to_string();
        assert!(
            text.contains(&format!(
                "the {} mode cannot run a linear_int8_relu node",
                mode.name()
            )) && text.contains("use a CPU mode (Cpu, CpuGraph) or a GPU graph mode"),
            "{text}"
        );
        let text = mode.prepare(&sparse, None).err().unwrap().to_string();
        assert!(text.contains("cannot run a linear_sparse node"), "{text}");
    }
}

#[test]
fn bad_scales_are_refused_with_readable_errors() {
    for (scale, shown) in [
        (0.0, "0"),
        (-0.5, "-0.5"),
        (f32::NAN, "NaN"),
        (f32::INFINITY, "inf"),
    ] {
        let error = QuantizedWeights::from_parts(
            2,
            2,
            vec![1, 2, 3, 4],
            vec![0.25, scale],
            Granularity::PerOutput,
        )
        .unwrap_err();
        assert!(matches!(
            error,
            QuantizationError::BadScale { index: 1, .. }
        ));
        assert_eq!(
            error.to_string(),
            format!(
                "scale 1 is {shown}; a scale must be positive and finite (a zero scale would map every value to 0)"
            )
        );
    }
}

#[test]
fn nan_and_infinite_weights_are_refused_by_the_quantize_pass() {
    for bad in [f32::NAN, f32::INFINITY] {
        let mut weights = Tensor2d::random(5, 4, -1.0..=1.0, 2);
        weights.set(3, 0, bad);
        let graph = one_layer((2, 5), weights, Tensor2d::zeros(1, 4), false);
        let error = quantize(&graph, Granularity::PerOutput).unwrap_err();
        assert!(matches!(
            error,
            QuantizePassError::Weights {
                node: 3,
                source: QuantizationError::NonFinite {
                    row: 3,
                    column: 0,
                    ..
                }
            }
        ));
        assert!(
            error
                .to_string()
                .starts_with("the weights of linear layer 3 cannot be quantised: the weights contain a non-finite value"),
            "{error}"
        );
    }
}

#[test]
fn broken_sparse_structure_is_a_typed_error() {
    // Offsets for 3 rows given to a 2-row matrix.
    let error =
        CsrMatrix::from_parts(2, 3, vec![0, 1, 2, 3], vec![0, 1, 2], vec![1.0; 3]).unwrap_err();
    assert_eq!(
        error.to_string(),
        "a matrix of 2 rows needs 3 row offsets (one more than its rows), but 4 were given"
    );
    // The last offset promises more values than there are.
    let error =
        CsrMatrix::from_parts(2, 3, vec![0, 1, 4], vec![0, 1, 2], vec![1.0; 3]).unwrap_err();
    assert!(matches!(error, CsrError::LengthsDisagree { last: 4, .. }));
    // A column past the last.
    let error = CsrMatrix::from_parts(2, 3, vec![0, 1, 2], vec![0, 7], vec![1.0, 2.0]).unwrap_err();
    assert_eq!(
        error.to_string(),
        "row 1 has an entry in column 7, but the matrix has only 3 columns (0 to 3 − 1)"
    );
}

#[test]
fn validation_checks_the_kind_and_shape_of_cheaper_weights() {
    let quantized = QuantizedWeights::quantize(
        &Tensor2d::random(4, 3, -1.0..=1.0, 3),
        Granularity::PerTensor,
    )
    .unwrap();
    let sparse = CsrMatrix::from_dense(&random_sparse_dense(4, 3, 0.5, 4), 0.0).unwrap();
    let build = |weights: Operator, layer: Operator, input_columns: usize, bias_columns: usize| {
        let mut graph = Graph::new();
        let input = graph.push(
            Operator::Input {
                rows: 2,
                columns: input_columns,
            },
            vec![],
        );
        let weights = graph.push(weights, vec![]);
        let bias = graph.push(Operator::Constant(Tensor2d::zeros(1, bias_columns)), vec![]);
        let layer = graph.push(layer, vec![input, weights, bias]);
        graph.push(Operator::Output, vec![layer]);
        graph.validate()
    };
    let int8 = Operator::LinearInt8 { relu: false };
    let csr = Operator::LinearSparse { relu: false };
    assert!(
        build(
            Operator::QuantizedConstant(quantized.clone()),
            int8.clone(),
            4,
            3
        )
        .is_ok()
    );
    assert!(build(Operator::SparseConstant(sparse.clone()), csr.clone(), 4, 3).is_ok());
    // Sparse weights under an int8 layer.
    let error = build(Operator::SparseConstant(sparse.clone()), int8.clone(), 4, 3).unwrap_err();
    assert_eq!(
        error,
        GraphError::WrongWeightKind {
            node: 3,
            operator: "linear_int8",
            input: 1,
            input_operator: "sparse_constant",
            expected: "quantized_constant",
        }
    );
    assert_eq!(
        error.to_string(),
        "node 3 (linear_int8) reads its weights from node 1 (sparse_constant); it needs a quantized_constant node"
    );
    // f32 weights under a sparse layer.
    let error = build(Operator::Constant(Tensor2d::zeros(4, 3)), csr.clone(), 4, 3).unwrap_err();
    assert!(
        matches!(error, GraphError::WrongWeightKind { .. }),
        "{error}"
    );
    // An input of the wrong width, and a bias of the wrong length.
    for (input_columns, bias_columns) in [(5, 3), (4, 2)] {
        let error = build(
            Operator::QuantizedConstant(quantized.clone()),
            int8.clone(),
            input_columns,
            bias_columns,
        )
        .unwrap_err();
        assert!(
            matches!(
                error,
                GraphError::Shape {
                    node: 3,
                    operator: "linear_int8",
                    ..
                }
            ),
            "{error}"
        );
        let error = build(
            Operator::SparseConstant(sparse.clone()),
            csr.clone(),
            input_columns,
            bias_columns,
        )
        .unwrap_err();
        assert!(
            matches!(error, GraphError::Shape { node: 3, .. }),
            "{error}"
        );
    }
}
