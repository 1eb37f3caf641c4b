//! The op-code compiler: generated WGSL validates, generated kernels compute what the CPU
//! operators compute, every error is reported, and no program makes it panic.

mod common;

use std::collections::BTreeSet;

use common::{assert_close, context};
use galaxy::compiler::opcode::{
    Binding, OpCode, OpCodeError, Program, Slot, fuse_programs, generate_wgsl, lower_graph,
    lower_node,
};
use galaxy::compiler::preprocessor::{PreprocessorError, preprocess};
use galaxy::compiler::{fuse, rewrite_in_place};
use galaxy::cpu;
use galaxy::gpu::{GpuTensor, Readback};
use galaxy::graph::{ChainBuilder, Graph, Operator, TensorId, ValidGraph, random_mlp};
use galaxy::runner::gpu::ComputePasses;
use galaxy::runner::opcode::{bind_program, compile_program};
use galaxy::runner::{OpCodeRunner, RunError, run_operator_by_operator};
use galaxy::{Tensor2d, Tolerance};
use proptest::prelude::*;

/// GPU sums round differently from the CPU's (another order, fused multiply-adds).
const TOLERANCE: Tolerance = Tolerance::new(1e-4, 1e-5);

/// Shapes of the output: single elements, single rows and columns, odd sizes, sizes
/// larger than a 16 × 16 workgroup and than a 256-wide row workgroup.
const SHAPES: [(usize, usize); 7] = [
    (1, 1),
    (1, 37),
    (29, 1),
    (7, 5),
    (33, 17),
    (20, 300),
    (70, 41),
];

/// The operators a compute node can have.
fn operators() -> [Operator; 5] {
    [
        Operator::Linear,
        Operator::LinearRelu,
        Operator::LinearReluSoftmax,
        Operator::Relu,
        Operator::Softmax,
    ]
}

fn validate_with_naga(source: &str, what: &str) {
    let module = naga::front::wgsl::parse_str(source)
        .unwrap_or_else(|error| panic!("{what}: {}\n{source}", error.emit_to_string(source)));
    naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::all(),
    )
    .validate(&module)
    .unwrap_or_else(|error| panic!("{what}: {}\n{source}", error.emit_to_string(source)));
}

/// A graph with one node of `operator` producing a `rows × columns` output (with an
/// inner size of `inner` for the linear operators), the node's id, and its arguments.
fn one_node_graph(
    operator: &Operator,
    (rows, columns): (usize, usize),
    inner: usize,
    seed: u64,
) -> (ValidGraph, TensorId, Vec<Tensor2d>) {
    let mut graph = Graph::new();
    let linear = matches!(
        operator,
        Operator::Linear | Operator::LinearRelu | Operator::LinearReluSoftmax
    );
    let input_columns = if linear { inner } else { columns };
    let input = Tensor2d::random(rows, input_columns, -2.0..=2.0, seed);
    let input_id = graph.push(
        Operator::Input {
            rows,
            columns: input_columns,
        },
        vec![],
    );
    let mut arguments = vec![input];
    let mut inputs = vec![input_id];
    if linear {
        let weights = Tensor2d::random(inner, columns, -1.0..=1.0, seed + 1);
        let bias = Tensor2d::random(1, columns, -1.0..=1.0, seed + 2);
        for tensor in [weights, bias] {
            inputs.push(graph.push(Operator::Constant(tensor.clone()), vec![]));
            arguments.push(tensor);
        }
    }
    let node = graph.push(operator.clone(), inputs);
    graph.push(Operator::Output, vec![node]);
    (graph.validate().unwrap(), node, arguments)
}

fn cpu_reference(operator: &Operator, arguments: &[Tensor2d]) -> Tensor2d {
    match operator {
        Operator::Linear => cpu::linear_naive(&arguments[0], &arguments[1], &arguments[2]),
        Operator::LinearRelu => cpu::linear_relu_fused(&arguments[0], &arguments[1], &arguments[2]),
        Operator::LinearReluSoftmax => {
            cpu::linear_relu_softmax_fused(&arguments[0], &arguments[1], &arguments[2])
        }
        Operator::Relu => Ok(cpu::relu(&arguments[0])),
        Operator::Softmax => cpu::softmax(&arguments[0]),
        other => panic!("{other:?} computes nothing"),
    }
    .unwrap()
}

/// Compiles the program's generated kernel, dispatches it once on `arguments` into an
/// output filled with NaN first, and reads the output back.
fn run_program(program: &Program, arguments: &[Tensor2d]) -> Tensor2d {
    let context = context();
    let pipeline = compile_program(context, program).unwrap();
    let uploaded: Vec<GpuTensor> = arguments
        .iter()
        .map(|tensor| GpuTensor::upload(context, tensor, Readback::Never).unwrap())
        .collect();
    let references: Vec<&GpuTensor> = uploaded.iter().collect();
    let (rows, columns) = program.output_shape;
    let output = GpuTensor::uninitialized(context, rows, columns, Readback::Needed).unwrap();
    // An element the kernel forgets to write stays NaN and fails the comparison.
    output.fill(context, f32::NAN);
    let kernel = bind_program(context, &pipeline, program, &references, &output).unwrap();
    let mut encoder = context
        .device()
        .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
    kernel.record(&mut encoder);
    context.queue().submit([encoder.finish()]);
    output.download(context).unwrap()
}

#[test]
fn generated_wgsl_of_every_operator_validates_with_naga() {
    for operator in operators() {
        for (index, &shape) in SHAPES.iter().enumerate() {
            let (graph, node, _) = one_node_graph(&operator, shape, 3 + index, index as u64);
            let lowered = lower_node(&graph, node).unwrap();
            let source = generate_wgsl(&lowered.program).unwrap();
            validate_with_naga(&source, &format!("{operator:?} {shape:?}"));
        }
    }
}

#[test]
fn generated_wgsl_of_fused_programs_validates_with_naga() {
    let workload = random_mlp(12, 4, 3).unwrap();
    // Lowered after the fusion pass, and fused by appending op codes.
    for node in lower_graph(&fuse(&workload.graph).unwrap()) {
        let source = generate_wgsl(&node.program).unwrap();
        validate_with_naga(&source, &node.program.name());
    }
    let chain = ChainBuilder::input(5, 6)
        .linear(Tensor2d::zeros(6, 7), Tensor2d::zeros(1, 7))
        .relu()
        .relu()
        .softmax()
        .output()
        .unwrap();
    let programs: Vec<Program> = lower_graph(&chain)
        .into_iter()
        .map(|node| node.program)
        .collect();
    for end in 2..=programs.len() {
        let fused = fuse_programs(&programs[..end]).unwrap();
        validate_with_naga(&generate_wgsl(&fused).unwrap(), &fused.name());
    }
}

#[test]
fn fusing_by_appending_gives_the_program_of_the_fused_operator() {
    let chain = ChainBuilder::input(4, 8)
        .linear(
            Tensor2d::random(8, 5, -1.0..=1.0, 1),
            Tensor2d::random(1, 5, -1.0..=1.0, 2),
        )
        .relu()
        .softmax()
        .output()
        .unwrap();
    let unfused = lower_graph(&chain);
    assert_eq!(unfused.len(), 3, "linear, relu and softmax: three programs");
    let fused_graph = lower_graph(&fuse(&chain).unwrap());
    assert_eq!(fused_graph.len(), 1, "fused: one program");
    let programs: Vec<Program> = unfused.into_iter().map(|node| node.program).collect();
    assert_eq!(fuse_programs(&programs).unwrap(), fused_graph[0].program);
}

#[test]
fn generated_kernels_match_the_cpu_operators() {
    for operator in operators() {
        for (index, &shape) in SHAPES.iter().enumerate() {
            // Inner sizes of 1, odd, and larger than a workgroup.
            let inner = [1, 9, 40][index % 3];
            let seed = 100 + index as u64;
            let (graph, node, arguments) = one_node_graph(&operator, shape, inner, seed);
            let program = lower_node(&graph, node).unwrap().program;
            let actual = run_program(&program, &arguments);
            let expected = cpu_reference(&operator, &arguments);
            let what = format!("{operator:?} {shape:?} inner {inner}");
            assert_close(&actual, &expected, TOLERANCE, &what);
        }
    }
}

#[test]
fn a_relu_meant_to_run_in_place_gets_its_own_buffer_and_the_same_values() {
    let graph = ChainBuilder::input(9, 6)
        .linear(
            Tensor2d::random(6, 11, -1.0..=1.0, 1),
            Tensor2d::random(1, 11, -1.0..=1.0, 2),
        )
        .relu()
        .output()
        .unwrap();
    let in_place = rewrite_in_place(&graph).unwrap();
    assert!(
        in_place
            .graph()
            .nodes
            .iter()
            .any(|node| node.operator == Operator::ReluInPlace)
    );
    let input = Tensor2d::random(9, 6, -1.0..=1.0, 3);
    let runner = OpCodeRunner::prepare(context(), &in_place).unwrap();
    let expected = run_operator_by_operator(&graph, &input).unwrap();
    assert_close(
        &runner.run(&input).unwrap(),
        &expected,
        TOLERANCE,
        "in place",
    );
}

#[test]
fn a_softmax_over_more_rows_than_one_grid_row_uses_the_2d_grid() {
    let limit = context().limits().max_compute_workgroups_per_dimension as usize;
    let rows = limit + 5;
    for operator in [Operator::Softmax, Operator::LinearReluSoftmax] {
        let (graph, node, arguments) = one_node_graph(&operator, (rows, 3), 2, 7);
        let program = lower_node(&graph, node).unwrap().program;
        let actual = run_program(&program, &arguments);
        let expected = cpu_reference(&operator, &arguments);
        assert_close(
            &actual,
            &expected,
            TOLERANCE,
            &format!("{operator:?} {rows} rows"),
        );
    }
}

#[test]
fn an_element_kernel_over_more_row_tiles_than_one_grid_axis_uses_z() {
    // 16 rows per workgroup: one more row tile than fits along y.
    let limit = context().limits().max_compute_workgroups_per_dimension as usize;
    let rows = limit * 16 + 1;
    let (graph, node, arguments) = one_node_graph(&Operator::LinearRelu, (rows, 2), 2, 8);
    let program = lower_node(&graph, node).unwrap().program;
    let actual = run_program(&program, &arguments);
    let expected = cpu_reference(&Operator::LinearRelu, &arguments);
    assert_close(
        &actual,
        &expected,
        TOLERANCE,
        "linear_relu beyond one grid axis",
    );
}

#[test]
fn the_runner_compiles_each_distinct_text_once() {
    // Every hidden layer is 16 × 16 and fuses into the same linear + relu program.
    let workload = random_mlp(16, 5, 4).unwrap();
    let fused = fuse(&workload.graph).unwrap();
    let runner = OpCodeRunner::prepare(context(), &fused).unwrap();
    let programs = runner.programs().len();
    assert!(
        runner.compilations() < programs,
        "{} of {programs}",
        runner.compilations()
    );
    for buffer in runner.buffers() {
        buffer.fill(context(), f32::NAN);
    }
    let expected = run_operator_by_operator(&workload.graph, &workload.input).unwrap();
    let actual = runner.run(&workload.input).unwrap();
    assert_close(&actual, &expected, TOLERANCE, "random_mlp(16, 5, 4)");
}

#[test]
fn the_runner_runs_unfused_graphs_too() {
    for (size, depth, seed) in [(1, 1, 1), (5, 3, 2), (33, 4, 3)] {
        let workload = random_mlp(size, depth, seed).unwrap();
        let runner = OpCodeRunner::prepare(context(), &workload.graph).unwrap();
        let expected = run_operator_by_operator(&workload.graph, &workload.input).unwrap();
        for run in 0..2 {
            for buffer in runner.buffers() {
                buffer.fill(context(), f32::NAN);
            }
            let actual = runner.run(&workload.input).unwrap();
            let what = format!("random_mlp({size}, {depth}, {seed}) run {run}");
            assert_close(&actual, &expected, TOLERANCE, &what);
        }
    }
}

#[test]
fn one_compute_pass_per_run_gives_the_same_values_as_one_per_kernel() {
    for (size, depth, seed) in [(1, 1, 5), (17, 3, 6), (40, 6, 7)] {
        let workload = random_mlp(size, depth, seed).unwrap();
        let fused = fuse(&workload.graph).unwrap();
        let expected = run_operator_by_operator(&workload.graph, &workload.input).unwrap();
        for passes in [ComputePasses::OnePerDispatch, ComputePasses::OnePerRun] {
            let runner = OpCodeRunner::prepare_with_passes(context(), &fused, passes).unwrap();
            assert_eq!(runner.passes(), passes);
            for buffer in runner.buffers() {
                buffer.fill(context(), f32::NAN);
            }
            let actual = runner.run(&workload.input).unwrap();
            let what = format!("random_mlp({size}, {depth}, {seed}), {passes:?}");
            assert_close(&actual, &expected, TOLERANCE, &what);
        }
    }
    let plain = OpCodeRunner::prepare(context(), &random_mlp(4, 1, 1).unwrap().graph).unwrap();
    assert_eq!(plain.passes(), ComputePasses::OnePerDispatch);
}

#[test]
fn the_runner_rejects_an_input_of_the_wrong_shape() {
    let workload = random_mlp(4, 2, 1).unwrap();
    let runner = OpCodeRunner::prepare(context(), &workload.graph).unwrap();
    assert_eq!(
        runner.run(&Tensor2d::zeros(4, 5)).unwrap_err(),
        RunError::InputShape {
            expected: (4, 4),
            given: (4, 5)
        }
    );
}

// ANCHOR: every_error
/// The name of every variant. The match has no wildcard, so a new variant does not
/// compile until a test below triggers it.
fn op_code_error_name(error: &OpCodeError) -> &'static str {
    match error {
        OpCodeError::Empty => "Empty",
        OpCodeError::NoValueYet { .. } => "NoValueYet",
        OpCodeError::UnknownSlot { .. } => "UnknownSlot",
        OpCodeError::ShapeMismatch { .. } => "ShapeMismatch",
        OpCodeError::SoftmaxNotLast { .. } => "SoftmaxNotLast",
        OpCodeError::InvalidBindingName { .. } => "InvalidBindingName",
        OpCodeError::UnusedBinding { .. } => "UnusedBinding",
        OpCodeError::ShapeOutOfRange { .. } => "ShapeOutOfRange",
        OpCodeError::NothingToFuse => "NothingToFuse",
        OpCodeError::FusionNeedsLoad { .. } => "FusionNeedsLoad",
        OpCodeError::FusionReadsIntermediate { .. } => "FusionReadsIntermediate",
        OpCodeError::FusionShape { .. } => "FusionShape",
        OpCodeError::ArgumentCount { .. } => "ArgumentCount",
        OpCodeError::ArgumentShape { .. } => "ArgumentShape",
    }
}
// ANCHOR_END: every_error

const ALL_OP_CODE_ERRORS: [&str; 14] = [
    "Empty",
    "NoValueYet",
    "UnknownSlot",
    "ShapeMismatch",
    "SoftmaxNotLast",
    "InvalidBindingName",
    "UnusedBinding",
    "ShapeOutOfRange",
    "NothingToFuse",
    "FusionNeedsLoad",
    "FusionReadsIntermediate",
    "FusionShape",
    "ArgumentCount",
    "ArgumentShape",
];

/// load + relu over one 2 × 3 input.
fn relu_program() -> Program {
    Program {
        bindings: vec![Binding::new("input", (2, 3))],
        op_codes: vec![OpCode::Load { source: Slot(0) }, OpCode::Relu],
        output_shape: (2, 3),
    }
}

fn linear_program() -> Program {
    Program {
        bindings: vec![
            Binding::new("input", (2, 4)),
            Binding::new("weights", (4, 3)),
            Binding::new("bias", (1, 3)),
        ],
        op_codes: vec![
            OpCode::MatrixMultiply {
                input: Slot(0),
                weights: Slot(1),
            },
            OpCode::AddBias { bias: Slot(2) },
        ],
        output_shape: (2, 3),
    }
}

#[test]
fn every_op_code_error_is_reported() {
    let mut errors: Vec<OpCodeError> = Vec::new();
    let mut invalid = |change: &dyn Fn(&mut Program)| {
        let mut program = linear_program();
        change(&mut program);
        let error = program.validate().unwrap_err();
        // Generation refuses the same program with the same error.
        assert_eq!(generate_wgsl(&program).unwrap_err(), error);
        errors.push(error);
    };
    invalid(&|program| program.op_codes.clear());
    invalid(&|program| program.op_codes.insert(0, OpCode::Relu));
    invalid(&|program| program.op_codes.insert(0, OpCode::RowSoftmax));
    invalid(&|program| program.op_codes[1] = OpCode::AddBias { bias: Slot(7) });
    invalid(&|program| program.bindings[0] = Binding::new("input", (2, 5)));
    invalid(&|program| program.bindings[1] = Binding::new("weights", (4, 2)));
    invalid(&|program| program.bindings[2] = Binding::new("bias", (2, 3)));
    invalid(&|program| {
        program.bindings.push(Binding::new("other", (3, 3)));
        program.op_codes.push(OpCode::Load { source: Slot(3) });
    });
    invalid(&|program| program.op_codes.insert(1, OpCode::RowSoftmax));
    invalid(&|program| program.bindings[1].name = "2weights".into());
    invalid(&|program| program.bindings.push(Binding::new("unused", (1, 1))));
    invalid(&|program| program.output_shape = (0, 3));
    invalid(&|program| program.bindings[0] = Binding::new("input", (1 << 20, 1 << 13)));

    errors.push(fuse_programs(&[]).unwrap_err());
    errors.push(fuse_programs(&[relu_program(), linear_program()]).unwrap_err());
    let mut reads_again = relu_program();
    reads_again.op_codes.push(OpCode::AddBias { bias: Slot(0) });
    reads_again.bindings[0] = Binding::new("input", (1, 3));
    reads_again.output_shape = (1, 3);
    let mut one_row = relu_program();
    one_row.bindings[0] = Binding::new("input", (1, 3));
    one_row.output_shape = (1, 3);
    errors.push(fuse_programs(&[one_row, reads_again]).unwrap_err());
    errors.push(
        fuse_programs(&[linear_program(), {
            let mut wider = relu_program();
            wider.bindings[0] = Binding::new("input", (2, 4));
            wider.output_shape = (2, 4);
            wider
        }])
        .unwrap_err(),
    );

    // The tensors handed to a kernel must fit its bindings.
    let context = context();
    let program = relu_program();
    let pipeline = compile_program(context, &program).unwrap();
    let tensor =
        |rows, columns| GpuTensor::uninitialized(context, rows, columns, Readback::Never).unwrap();
    let (right, wrong) = (tensor(2, 3), tensor(3, 2));
    for (arguments, output) in [
        (vec![], &right),
        (vec![&wrong], &right),
        (vec![&right], &wrong),
    ] {
        match bind_program(context, &pipeline, &program, &arguments, output) {
            Err(RunError::OpCode(error)) => errors.push(error),
            Err(other) => panic!("expected an op-code error, got {other}"),
            Ok(_) => panic!("mismatched tensors were bound"),
        }
    }

    for error in &errors {
        // Every error has a message.
        assert!(!error.to_string().is_empty());
    }
    let seen: BTreeSet<&str> = errors.iter().map(op_code_error_name).collect();
    let all: BTreeSet<&str> = ALL_OP_CODE_ERRORS.into_iter().collect();
    assert_eq!(seen, all, "errors: {errors:#?}");
}

#[test]
fn every_preprocessor_error_is_reported() {
    fn name(error: &PreprocessorError) -> &'static str {
        match error {
            PreprocessorError::UnknownDirective { .. } => "UnknownDirective",
            PreprocessorError::MalformedDefine { .. } => "MalformedDefine",
            PreprocessorError::MalformedCondition { .. } => "MalformedCondition",
            PreprocessorError::Unmatched { .. } => "Unmatched",
            PreprocessorError::SecondElse { .. } => "SecondElse",
            PreprocessorError::Unterminated { .. } => "Unterminated",
            PreprocessorError::InvalidDefineName { .. } => "InvalidDefineName",
        }
    }
    /// A source, the defines passed from Rust, and the error expected.
    type Case = (
        &'static str,
        &'static [(&'static str, &'static str)],
        PreprocessorError,
    );
    let cases: [Case; 8] = [
        (
            "let a = 1;\n#pragma once\n",
            &[],
            PreprocessorError::UnknownDirective {
                line: 2,
                directive: "pragma".into(),
            },
        ),
        (
            "#define\n",
            &[],
            PreprocessorError::MalformedDefine {
                line: 1,
                text: "#define".into(),
            },
        ),
        (
            "#ifdef\n#endif\n",
            &[],
            PreprocessorError::MalformedCondition {
                line: 1,
                directive: "ifdef",
                text: String::new(),
            },
        ),
        (
            "a\nb\n#else\n",
            &[],
            PreprocessorError::Unmatched {
                line: 3,
                directive: "else",
            },
        ),
        (
            "#endif\n",
            &[],
            PreprocessorError::Unmatched {
                line: 1,
                directive: "endif",
            },
        ),
        (
            "#ifndef A\n#else\n#else\n#endif\n",
            &[],
            PreprocessorError::SecondElse { line: 3, opened: 1 },
        ),
        (
            "#ifdef A\n#ifdef B\n#endif\n",
            &[],
            PreprocessorError::Unterminated { line: 1 },
        ),
        (
            "",
            &[("WORKGROUP SIZE", "8")],
            PreprocessorError::InvalidDefineName {
                name: "WORKGROUP SIZE".into(),
            },
        ),
    ];
    let mut seen = BTreeSet::new();
    for (source, defines, expected) in cases {
        let error = preprocess(source, defines).unwrap_err();
        assert_eq!(error, expected, "{source:?}");
        assert!(!error.to_string().is_empty());
        seen.insert(name(&error));
    }
    assert_eq!(seen.len(), 7, "every variant: {seen:?}");
}

/// Programs made of anything: shapes that may be empty, names that may be invalid, op
/// codes in any order, slots that may not exist.
fn any_program() -> impl Strategy<Value = Program> {
    let shape = (0usize..=4, 0usize..=4);
    let name = prop::sample::select(vec!["input", "weights", "bias", "b2", "", "9lives", "a b"]);
    let binding = (name, shape.clone()).prop_map(|(name, shape)| Binding::new(name, shape));
    let slot = (0usize..5).prop_map(Slot);
    let op_code = prop_oneof![
        slot.clone().prop_map(|source| OpCode::Load { source }),
        (slot.clone(), slot.clone())
            .prop_map(|(input, weights)| OpCode::MatrixMultiply { input, weights }),
        slot.prop_map(|bias| OpCode::AddBias { bias }),
        Just(OpCode::Relu),
        Just(OpCode::RowSoftmax),
    ];
    (
        prop::collection::vec(binding, 0..4),
        prop::collection::vec(op_code, 0..5),
        shape,
    )
        .prop_map(|(bindings, op_codes, output_shape)| Program {
            bindings,
            op_codes,
            output_shape,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    /// Whatever the program, validation, generation and fusion answer with a value or a
    /// typed error, and a program that passes validation generates valid WGSL.
    #[test]
    fn a_malformed_program_never_panics(program in any_program(), other in any_program()) {
        let validation = program.validate();
        match generate_wgsl(&program) {
            Ok(source) => {
                prop_assert!(validation.is_ok());
                validate_with_naga(&source, &program.to_string());
            }
            Err(error) => prop_assert_eq!(validation, Err(error)),
        }
        let _ = fuse_programs(&[program.clone(), other.clone()]);
        let _ = fuse_programs(&[other, program]);
    }
}
