//! Differential tests of the multi-device runners: data-parallel and pipeline-parallel
//! runs give what plain CPU operator calls give, on several devices requested from the one
//! adapter (lavapipe in CI), so the split of the rows, the cut into stages, the order of the
//! micro-batches and the hand-over through the host are all exercised without two GPUs.

mod common;

use std::sync::OnceLock;

use common::{assert_close, build_chain, chain_specification};
use galaxy::compiler::quantize;
use galaxy::cpu::int8::Granularity;
use galaxy::gpu::{ContextOptions, GpuContext, contexts_on_one_adapter};
use galaxy::graph::{BranchShape, GraphBuilder, ValidGraph, random_branches, random_mlp};
use galaxy::parallel::multi_device::{
    DataParallelRunner, MultiDeviceError, PipelineParallelRunner, cut_points, measure_hand_over,
    with_input_rows,
};
use galaxy::runner::{ExecutionMode, RunError, run_operator_by_operator};
use galaxy::{Tensor2d, Tolerance};
use proptest::prelude::*;

/// As in execution_modes.rs: GPU and CPU round differently inside long sums.
const TOLERANCE: Tolerance = Tolerance::new(1e-4, 1e-5);
const MAXIMUM_DEVICES: usize = 3;

/// Three devices on the one adapter, created once for the whole test binary.
fn devices() -> &'static [GpuContext] {
    static DEVICES: OnceLock<Vec<GpuContext>> = OnceLock::new();
    DEVICES.get_or_init(|| {
        contexts_on_one_adapter(&ContextOptions::from_environment(), MAXIMUM_DEVICES)
            .unwrap_or_else(|error| panic!("multi-device tests need a GPU adapter: {error}"))
    })
}

fn first(count: usize) -> Vec<&'static GpuContext> {
    devices().iter().take(count).collect()
}

/// Runs `graph` data-parallel on `count` devices, poisoned with NaN first, on two inputs
/// one after the other (a device that kept the first run's rows fails the second).
fn check_data_parallel(graph: &ValidGraph, count: usize, mode: ExecutionMode, what: &str) {
    let mut runner = DataParallelRunner::prepare(&first(count), graph, mode).unwrap();
    let (rows, columns) = graph.shape(graph.input());
    for seed in [1, 2] {
        let input = Tensor2d::random(rows, columns, -1.0..=1.0, seed);
        let expected = run_operator_by_operator(graph, &input).unwrap();
        runner.fill_result_buffers(f32::NAN);
        let actual = runner.run(&input).unwrap();
        let what = format!("{what}, data-parallel on {count} devices, {mode:?}, input {seed}");
        assert_close(actual, &expected, TOLERANCE, &what);
    }
}

/// The same for pipeline parallelism with `micro_batches` micro-batches.
fn check_pipeline(
    graph: &ValidGraph,
    count: usize,
    micro_batches: usize,
    mode: ExecutionMode,
    what: &str,
) {
    let mut runner =
        PipelineParallelRunner::prepare(&first(count), graph, mode, micro_batches).unwrap();
    assert_eq!(runner.stage_count(), count);
    let (rows, columns) = graph.shape(graph.input());
    for seed in [1, 2] {
        let input = Tensor2d::random(rows, columns, -1.0..=1.0, seed);
        let expected = run_operator_by_operator(graph, &input).unwrap();
        runner.fill_result_buffers(f32::NAN);
        let (actual, spans) = runner.run_traced(&input).unwrap();
        let what = format!(
            "{what}, {count} stages, {micro_batches} micro-batches, {mode:?}, input {seed}"
        );
        assert_close(actual, &expected, TOLERANCE, &what);
        assert_eq!(
            spans.len(),
            count * micro_batches,
            "{what}: one span per stage and micro-batch"
        );
        // A stage finishes a micro-batch before the next stage starts on it, and every
        // stage takes the micro-batches in order.
        for span in &spans {
            if let Some(next) = spans.iter().find(|later| {
                later.device == span.device + 1 && later.micro_batch == span.micro_batch
            }) {
                assert!(span.end <= next.start, "{what}: {span:?} overlaps {next:?}");
            }
        }
        for device in 0..count {
            let order: Vec<usize> = spans
                .iter()
                .filter(|span| span.device == device)
                .map(|span| span.micro_batch)
                .collect();
            assert_eq!(
                order,
                (0..micro_batches).collect::<Vec<_>>(),
                "{what}: device {device}"
            );
        }
    }
}

/// Shapes: one row and one column, odd sizes, more rows than one workgroup, depth 1 and 128.
const WORKLOADS: [(usize, usize, usize); 6] = [
    (1, 1, 1),
    (3, 5, 2),
    (7, 33, 3),
    (65, 16, 8),
    (130, 40, 1),
    (5, 4, 128),
];

#[test]
fn data_parallel_runs_agree_with_the_cpu() {
    for (rows, width, depth) in WORKLOADS {
        let workload = random_mlp(width, depth, rows as u64).unwrap();
        let graph = with_input_rows(&workload.graph, rows).unwrap();
        for count in 1..=MAXIMUM_DEVICES.min(rows) {
            for mode in [ExecutionMode::GraphCompiled, ExecutionMode::Graph] {
                let what = format!("{rows} rows × {width} wide × {depth} deep");
                check_data_parallel(&graph, count, mode, &what);
            }
        }
    }
}

#[test]
fn pipeline_runs_agree_with_the_cpu() {
    for (rows, width, depth) in WORKLOADS {
        let workload = random_mlp(width, depth, rows as u64).unwrap();
        let graph = with_input_rows(&workload.graph, rows).unwrap();
        for count in 1..=MAXIMUM_DEVICES {
            for micro_batches in [1, 2, 5].into_iter().filter(|&m| m <= rows) {
                let what = format!("{rows} rows × {width} wide × {depth} deep");
                check_pipeline(
                    &graph,
                    count,
                    micro_batches,
                    ExecutionMode::GraphCompiled,
                    &what,
                );
            }
        }
    }
}

#[test]
fn a_graph_with_branches_runs_on_several_devices() {
    let workload = random_branches(
        BranchShape {
            rows: 9,
            columns: 12,
            branches: 3,
            depth: 2,
        },
        8,
    )
    .unwrap();
    let possible = cut_points(&workload.graph).len() + 1;
    for count in 1..=MAXIMUM_DEVICES {
        check_data_parallel(
            &workload.graph,
            count,
            ExecutionMode::GraphCompiled,
            "branches",
        );
        if count <= possible {
            check_pipeline(
                &workload.graph,
                count,
                3,
                ExecutionMode::GraphCompiled,
                "branches",
            );
        }
    }
}

#[test]
fn int8_graphs_run_on_several_devices() {
    let workload = random_mlp(24, 4, 6).unwrap();
    let graph = quantize(&workload.graph, Granularity::PerOutput).unwrap();
    for count in [2, 3] {
        check_data_parallel(&graph, count, ExecutionMode::GraphCompiled, "int8");
        check_pipeline(&graph, count, 4, ExecutionMode::GraphCompiled, "int8");
    }
}

proptest! {
    // Generated chains (widths 1–40, 0–6 layers, ReLUs and softmax anywhere) on two devices.
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn generated_graphs_agree_on_two_devices(specification in chain_specification()) {
        let (graph, _) = build_chain(&specification);
        let what = format!("{specification:?}");
        if specification.rows >= 2 {
            check_data_parallel(&graph, 2, ExecutionMode::GraphCompiled, &what);
        }
        let micro_batches = specification.rows.min(3);
        if cut_points(&graph).is_empty() {
            // Nothing to cut (no computing node, or one): two stages are refused, by name.
            let error = PipelineParallelRunner::prepare(
                &first(2), &graph, ExecutionMode::GraphCompiled, micro_batches,
            ).err().expect("refused");
            prop_assert!(matches!(error, MultiDeviceError::TooFewCuts { requested: 2, possible: 1 }), "{error}");
        } else {
            check_pipeline(&graph, 2, micro_batches, ExecutionMode::GraphCompiled, &what);
        }
    }
}

#[test]
fn bad_requests_are_refused_with_messages_for_a_person() {
    let workload = random_mlp(4, 2, 1).unwrap();
    let graph = &workload.graph;
    let mode = ExecutionMode::GraphCompiled;
    let message = |error: MultiDeviceError| error.to_string();

    let none = DataParallelRunner::prepare(&[], graph, mode).err().unwrap();
    assert_eq!(none, MultiDeviceError::NoDevices);
    assert!(message(none).contains("at least one GPU context"));
    let none = PipelineParallelRunner::prepare(&[], graph, mode, 1)
        .err()
        .unwrap();
    assert_eq!(none, MultiDeviceError::NoDevices);

    let tiny = with_input_rows(graph, 2).unwrap();
    let too_many = DataParallelRunner::prepare(&first(3), &tiny, mode)
        .err()
        .unwrap();
    assert_eq!(
        too_many,
        MultiDeviceError::MoreDevicesThanRows {
            devices: 3,
            rows: 2
        }
    );
    assert!(message(too_many).contains("3 devices cannot share an input of 2 rows"));

    let zero = PipelineParallelRunner::prepare(&first(2), graph, mode, 0)
        .err()
        .unwrap();
    assert_eq!(zero, MultiDeviceError::NoMicroBatches);
    let many = PipelineParallelRunner::prepare(&first(2), graph, mode, 5)
        .err()
        .unwrap();
    assert_eq!(
        many,
        MultiDeviceError::MoreMicroBatchesThanRows {
            micro_batches: 5,
            rows: 4
        }
    );

    let cpu = DataParallelRunner::prepare(&first(2), graph, ExecutionMode::CpuGraph)
        .err()
        .unwrap();
    assert_eq!(cpu, MultiDeviceError::NotAGpuMode { mode: "CpuGraph" });
    assert!(message(cpu).contains("runs on the CPU"));

    let mut runner = DataParallelRunner::prepare(&first(2), graph, mode).unwrap();
    let wrong = runner.run(&Tensor2d::zeros(3, 4)).unwrap_err();
    assert_eq!(
        wrong,
        MultiDeviceError::Run(RunError::InputShape {
            expected: (4, 4),
            given: (3, 4)
        })
    );
    assert!(message(wrong).contains("the input is 3×4"));

    // A graph that adds a constant of its input's shape is not independent per row.
    let mut builder = GraphBuilder::new();
    let input = builder.input(4, 2);
    let constant = builder.constant(Tensor2d::filled(4, 2, 1.0));
    let sum = builder.add(input, constant);
    builder.output(sum);
    let mixed = builder.build().unwrap();
    let error = DataParallelRunner::prepare(&first(2), &mixed, mode)
        .err()
        .unwrap();
    assert!(matches!(
        error,
        MultiDeviceError::RowsNotIndependent {
            original: 4,
            rows: 2,
            ..
        }
    ));
    let text = message(error);
    assert!(
        text.contains("cannot be split by rows") && !text.contains("{"),
        "{text}"
    );

    // Immediate mode has no int8 kernel: the error names the device it happened on.
    let int8 = quantize(graph, Granularity::PerOutput).unwrap();
    let error = DataParallelRunner::prepare(&first(2), &int8, ExecutionMode::Immediate)
        .err()
        .unwrap();
    assert!(
        matches!(error, MultiDeviceError::Device { device: 0, .. }),
        "{error}"
    );
    assert!(message(error).starts_with("device 0 ("));
}

#[test]
fn a_tensor_handed_from_one_device_to_another_arrives_intact() {
    let devices = first(2);
    for (rows, columns) in [(1, 1), (3, 5), (257, 129)] {
        let times = measure_hand_over(devices[0], devices[1], rows, columns, 2).unwrap();
        assert_eq!(times.bytes, (rows * columns * 4) as u64);
        assert!(times.total >= times.read_back);
    }
}
