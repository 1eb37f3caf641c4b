//! The in-place rewrite and buffer reuse: each keeps the result, and buffer reuse never
//! lets two live tensors share a buffer.

mod common;

use common::{assert_close, build_chain, chain_specification, context};
use galaxy::compiler::{fuse, reuse_buffers, rewrite_in_place};
use galaxy::gpu::ShaderCompilation;
use galaxy::graph::{ChainBuilder, Graph, GraphError, Operator, ValidGraph, random_mlp};
use galaxy::runner::{BufferPlan, CpuGraphRunner, GpuGraphRunner, run_operator_by_operator};
use galaxy::{Tensor2d, Tolerance};
use proptest::prelude::*;

const TOLERANCE: Tolerance = Tolerance::new(1e-4, 1e-5);

fn count(graph: &ValidGraph, operator: Operator) -> usize {
    graph
        .graph()
        .nodes
        .iter()
        .filter(|node| node.operator == operator)
        .count()
}

#[test]
fn relus_after_computed_tensors_become_in_place() {
    let weights = Tensor2d::random(4, 4, -1.0..=1.0, 1);
    let bias = Tensor2d::random(1, 4, -1.0..=1.0, 2);
    // relu on the input (must stay), relu after a linear (may go in place).
    let graph = ChainBuilder::input(3, 4)
        .relu()
        .linear(weights, bias)
        .relu()
        .output()
        .unwrap();
    let rewritten = rewrite_in_place(&graph).unwrap();
    assert_eq!(count(&rewritten, Operator::Relu), 1);
    assert_eq!(count(&rewritten, Operator::ReluInPlace), 1);
    assert_eq!(rewritten.graph().nodes[1].operator, Operator::Relu);
    // One buffer fewer: the in-place ReLU writes into the linear layer's.
    assert_eq!(BufferPlan::new(&graph).buffer_shapes.len(), 4);
    assert_eq!(BufferPlan::new(&rewritten).buffer_shapes.len(), 3);
}

#[test]
fn an_illegal_in_place_relu_is_a_validation_error() {
    // On the graph's input.
    let mut graph = Graph::new();
    let input = graph.push(
        Operator::Input {
            rows: 2,
            columns: 2,
        },
        vec![],
    );
    let relu = graph.push(Operator::ReluInPlace, vec![input]);
    graph.push(Operator::Output, vec![relu]);
    let error = graph.validate().unwrap_err();
    assert!(
        matches!(
            error,
            GraphError::InPlaceNotAllowed {
                node: 1,
                input: 0,
                ..
            }
        ),
        "{error}"
    );

    // On a tensor another node reads too.
    let mut graph = Graph::new();
    let input = graph.push(
        Operator::Input {
            rows: 2,
            columns: 2,
        },
        vec![],
    );
    let hidden = graph.push(Operator::Relu, vec![input]);
    let clamped = graph.push(Operator::ReluInPlace, vec![hidden]);
    let _other = graph.push(Operator::Relu, vec![hidden]);
    graph.push(Operator::Output, vec![clamped]);
    let error = graph.validate().unwrap_err();
    assert!(
        matches!(
            error,
            GraphError::InPlaceNotAllowed {
                node: 2,
                input: 1,
                ..
            }
        ),
        "{error}"
    );
    assert!(
        error.to_string().contains("other nodes read too"),
        "{error}"
    );
}

#[test]
fn a_deep_chain_needs_few_buffers_and_reports_the_bytes_saved() {
    let workload = random_mlp(16, 24, 3).unwrap();
    let graph = rewrite_in_place(&workload.graph).unwrap();
    let reuse = reuse_buffers(&graph);
    // The input (kept for the whole run) and two activations taking turns; the softmax
    // result takes whichever of the two is free. Three 16×16 buffers at any depth.
    assert_eq!(reuse.plan.buffer_shapes.len(), 3);
    assert_eq!(reuse.bytes_with_reuse(), 3 * 16 * 16 * 4);
    assert_eq!(reuse.bytes_without_reuse, BufferPlan::new(&graph).bytes());
    assert_eq!(
        reuse.bytes_saved(),
        reuse.bytes_without_reuse - reuse.bytes_with_reuse()
    );
    assert!(reuse.bytes_saved() > 20 * 16 * 16 * 4, "{reuse:?}");
}

/// Replays the plan: whenever a node writes a buffer, no other live tensor may be in it.
fn assert_no_live_tensor_is_overwritten(graph: &ValidGraph, plan: &BufferPlan) {
    let nodes = &graph.graph().nodes;
    let order = graph.execution_order();
    let mut last_reader = vec![0; nodes.len()];
    for (position, id) in order.iter().enumerate() {
        for input in &nodes[id.0].inputs {
            last_reader[input.0] = last_reader[input.0].max(position);
        }
    }
    last_reader[graph.result().0] = usize::MAX;
    for (position, &id) in order.iter().enumerate() {
        let node = &nodes[id.0];
        if matches!(node.operator, Operator::Output | Operator::Constant(_)) {
            continue;
        }
        let written = plan.buffer_of[id.0].expect("computed tensors have buffers");
        for &earlier in &order[..position] {
            let still_read = last_reader[earlier.0] >= position;
            let same_buffer = plan.buffer_of[earlier.0] == Some(written);
            let handed_over = node.operator == Operator::ReluInPlace && node.inputs[0] == earlier;
            let is_output_marker = nodes[earlier.0].operator == Operator::Output;
            let overwrites_a_live_tensor =
                still_read && same_buffer && !handed_over && !is_output_marker;
            assert!(
                !overwrites_a_live_tensor,
                "node {} overwrites buffer {written} while tensor {} is still read",
                id.0, earlier.0
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn passes_keep_the_result_on_cpu_and_gpu(specification in chain_specification(), fused in any::<bool>()) {
        let (graph, input) = build_chain(&specification);
        let expected = run_operator_by_operator(&graph, &input).unwrap();
        let graph = if fused { fuse(&graph).unwrap() } else { graph };
        let graph = rewrite_in_place(&graph).unwrap();
        let reuse = reuse_buffers(&graph);
        assert_no_live_tensor_is_overwritten(&graph, &reuse.plan);

        let mut cpu = CpuGraphRunner::prepare_with_plan(&graph, reuse.plan.clone());
        assert_close(&cpu.run(&input).unwrap(), &expected, TOLERANCE, "cpu with reuse");
        let gpu = GpuGraphRunner::prepare_with_plan(context(), &graph, reuse.plan, ShaderCompilation::Cached).unwrap();
        for buffer in gpu.buffers() {
            buffer.fill(context(), f32::NAN);
        }
        let results = gpu.run_loop(&input, 2).unwrap();
        for result in &results {
            assert_close(result, &expected, TOLERANCE, "gpu loop with reuse");
        }
    }
}
