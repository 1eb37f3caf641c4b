//! Graphs whose branches meet again with `Add`: validation, and every execution mode
//! against plain CPU operator calls (the op-code mode, which has no `Add`, refuses them
//! with an error that names the operator and the mode).

mod common;

use common::{SHAPES, assert_close, context};
use galaxy::gpu::ShaderCompilation;
use galaxy::graph::{BranchShape, GraphBuilder, GraphError, random_branches};
use galaxy::immediate::ImmediateGpu;
use galaxy::runner::{ExecutionMode, GpuGraphRunner, RunError, run_operator_by_operator};
use galaxy::tensor::ShapeError;
use galaxy::{Tensor2d, Tolerance, cpu};

const TOLERANCE: Tolerance = Tolerance::new(1e-4, 1e-5);

#[test]
fn adding_tensors_of_different_shapes_is_a_graph_error() {
    let mut builder = GraphBuilder::new();
    let input = builder.input(2, 3);
    let weights = Tensor2d::random(3, 4, -1.0..=1.0, 1);
    let bias = Tensor2d::random(1, 4, -1.0..=1.0, 2);
    let wider = builder.linear(input, weights, bias);
    let sum = builder.add(input, wider);
    builder.output(sum);
    let error = builder.build().unwrap_err();
    let GraphError::Shape {
        node,
        operator,
        source,
    } = &error
    else {
        panic!("expected a shape error, got {error}");
    };
    assert_eq!((*node, *operator), (4, "add"));
    assert!(matches!(**source, ShapeError::Incompatible { .. }));
    assert!(error.to_string().contains("2×3"), "{error}");
    assert!(error.to_string().contains("2×4"), "{error}");
}

#[test]
fn an_add_with_one_input_is_a_graph_error() {
    let mut graph = galaxy::graph::Graph::new();
    let input = graph.push(
        galaxy::graph::Operator::Input {
            rows: 1,
            columns: 1,
        },
        vec![],
    );
    let sum = graph.push(galaxy::graph::Operator::Add, vec![input]);
    graph.push(galaxy::graph::Operator::Output, vec![sum]);
    assert_eq!(
        graph.validate(),
        Err(GraphError::WrongInputCount {
            node: 1,
            operator: "add",
            expected: 2,
            found: 1
        })
    );
}

#[test]
fn the_immediate_add_matches_the_cpu_on_every_shape() {
    let gpu = ImmediateGpu::new(context(), ShaderCompilation::Cached).with_output_fill(f32::NAN);
    for (index, &(rows, columns)) in SHAPES.iter().enumerate() {
        let left = Tensor2d::random(rows, columns, -2.0..=2.0, index as u64);
        let right = Tensor2d::random(rows, columns, -2.0..=2.0, 100 + index as u64);
        let expected = cpu::add(&left, &right).unwrap();
        let actual = gpu.add(&left, &right).unwrap();
        assert_close(
            &actual,
            &expected,
            Tolerance::new(1e-6, 1e-7),
            &format!("{rows}×{columns}"),
        );
    }
    assert!(
        gpu.add(&Tensor2d::zeros(2, 3), &Tensor2d::zeros(3, 2))
            .is_err()
    );
}

#[test]
fn every_mode_but_op_codes_agrees_on_branching_graphs() {
    for (rows, columns, branches, depth, seed) in [
        (1, 1, 2, 1, 1),
        (5, 7, 3, 2, 2),
        (17, 33, 4, 3, 3),
        (64, 64, 8, 2, 4),
        (3, 300, 5, 1, 5),
    ] {
        let shape = BranchShape {
            rows,
            columns,
            branches,
            depth,
        };
        let workload = random_branches(shape, seed).unwrap();
        let expected = run_operator_by_operator(&workload.graph, &workload.input).unwrap();
        for mode in ExecutionMode::ALL {
            let prepared = mode.prepare(&workload.graph, Some(context()));
            if mode == ExecutionMode::OpCode {
                let Err(error) = prepared else {
                    panic!("the op-code mode must refuse a graph with add");
                };
                assert!(
                    matches!(
                        error,
                        RunError::OperatorNotSupported {
                            operator: "add",
                            mode: "OpCode",
                            ..
                        }
                    ),
                    "{error}"
                );
                continue;
            }
            let mut execution = prepared.unwrap_or_else(|error| panic!("{mode:?}: {error}"));
            for (iteration, actual) in execution
                .run(&workload.input, 2)
                .unwrap()
                .iter()
                .enumerate()
            {
                assert_close(
                    actual,
                    &expected,
                    TOLERANCE,
                    &format!("{shape:?}: {mode:?} iteration {iteration}"),
                );
            }
        }
    }
}

#[test]
fn the_gpu_graph_runner_computes_every_add_even_in_poisoned_buffers() {
    let shape = BranchShape {
        rows: 9,
        columns: 20,
        branches: 6,
        depth: 2,
    };
    let workload = random_branches(shape, 12).unwrap();
    let expected = run_operator_by_operator(&workload.graph, &workload.input).unwrap();
    let runner =
        GpuGraphRunner::prepare(context(), &workload.graph, ShaderCompilation::Cached).unwrap();
    for buffer in runner.buffers() {
        buffer.fill(context(), f32::NAN);
    }
    let actual = runner.run(&workload.input).unwrap();
    assert_close(&actual, &expected, TOLERANCE, "poisoned GPU graph runner");
}
