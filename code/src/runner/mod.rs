//! Graph runners: executing a validated graph, on the CPU or the GPU.
//!
//! A runner is *prepared* once for a graph (buffers allocated, weights placed where the
//! kernels read them) and then *run* many times on new inputs. Everything that can be
//! done once is done in preparation; a run only computes.

pub mod cpu;
pub mod cpu_prepacked;
pub mod execution;
pub mod fused;
pub mod gpu;
pub mod node_by_node;
pub mod opcode;

// The plan lives with the graph, where the compiler's buffer reuse can reach it too.
pub use crate::graph::BufferPlan;
pub use cpu::{CpuGraphRunner, run_operator_by_operator};
pub use cpu_prepacked::CpuPrepackedRunner;
pub use execution::{Execution, ExecutionMode, WeightStorage};
pub use gpu::GpuGraphRunner;
pub use opcode::OpCodeRunner;

use thiserror::Error;

use crate::compiler::opcode::OpCodeError;
use crate::cpu::int8::QuantizationError;
use crate::gpu::GpuError;
use crate::gpu::fused_mlp::FusedMlpError;
use crate::graph::{GraphError, Operator, ValidGraph};
use crate::tensor::ShapeError;

/// Why a graph could not be prepared or run.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum RunError {
    #[error(transparent)]
    Graph(#[from] GraphError),
    #[error("the input is {}×{}, but the graph's input node expects {}×{}", given.0, given.1, expected.0, expected.1)]
    InputShape {
        expected: (usize, usize),
        given: (usize, usize),
    },
    #[error(transparent)]
    Shape(#[from] ShapeError),
    #[error(transparent)]
    Gpu(#[from] GpuError),
    #[error(transparent)]
    OpCode(#[from] OpCodeError),
    #[error("the execution mode {mode:?} runs on the GPU, but no GPU context was given")]
    NoGpuContext { mode: ExecutionMode },
    #[error(transparent)]
    FusedKernel(FusedMlpError),
    #[error(
        "node {node} ({operator}): the {mode} execution mode has no kernel for this operator; run the graph in another mode"
    )]
    OperatorNotSupported {
        node: usize,
        operator: &'static str,
        mode: &'static str,
    },
    #[error("the graph cannot run as one fused kernel:\n{reason}")]
    FusionNotPossible { reason: String },
    #[error(transparent)]
    Quantization(#[from] QuantizationError),
    #[error(transparent)]
    QuantizePass(#[from] crate::compiler::QuantizePassError),
    #[error("node {node}: the {mode} mode cannot run a {operator} node; use {supported}")]
    CheaperOperatorNotSupported {
        node: usize,
        operator: &'static str,
        mode: &'static str,
        supported: &'static str,
    },
}

/// Fails with [`RunError::CheaperOperatorNotSupported`] if `graph` holds an int8 or sparse
/// node: the modes that have no kernel for them (immediate mode and the op-code runner)
/// call this before preparing anything.
pub fn reject_cheaper_operators(graph: &ValidGraph, mode: &'static str) -> Result<(), RunError> {
    let found = graph.graph().nodes.iter().enumerate().find(|(_, node)| {
        matches!(
            node.operator,
            Operator::LinearInt8 { .. } | Operator::LinearSparse { .. }
        )
    });
    match found {
        None => Ok(()),
        Some((node, found)) => Err(RunError::CheaperOperatorNotSupported {
            node,
            operator: found.operator.name(),
            mode,
            supported: "a CPU mode (Cpu, CpuGraph) or a GPU graph mode (Graph…, GraphLoop…, GraphCompiled)",
        }),
    }
}
