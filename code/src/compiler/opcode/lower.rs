//! Lowering: every compute node of a graph becomes a program.
//!
//! Each operator is a short list of op codes, and the fused operators are the lists of
//! their parts, one after the other. Fusing is appending op codes: `LinearRelu` is
//! `Linear` with a `Relu` on the end, because the ReLU can work on the value while it is
//! still in a register. [`fuse_programs`] does the same for programs that were lowered
//! separately.

use crate::compiler::opcode::{Binding, OpCode, OpCodeError, Program, Slot};
use crate::graph::{Operator, TensorId, ValidGraph};

// ANCHOR: lowered_node
/// A compute node as a program, with the graph tensor bound to each of its slots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoweredNode {
    /// The node, which is also the tensor the program's output becomes.
    pub node: TensorId,
    pub program: Program,
    /// `arguments[slot]` is the tensor bound to that slot.
    pub arguments: Vec<TensorId>,
}
// ANCHOR_END: lowered_node

// ANCHOR: operator_op_codes
/// The op codes of an operator, or `None` for the nodes that compute nothing (input,
/// constants, output) and for `Add`, which has no op code yet (the op-code runner
/// refuses a graph that holds one). Slots 0, 1 and 2 are the node's inputs 0, 1 and 2.
pub fn operator_op_codes(operator: &Operator) -> Option<Vec<OpCode>> {
    let linear = [
        OpCode::MatrixMultiply {
            input: Slot(0),
            weights: Slot(1),
        },
        OpCode::AddBias { bias: Slot(2) },
    ];
    let load = OpCode::Load { source: Slot(0) };
    Some(match operator {
        Operator::Linear => linear.to_vec(),
        Operator::LinearRelu => [&linear[..], &[OpCode::Relu]].concat(),
        Operator::LinearReluSoftmax => [&linear[..], &[OpCode::Relu, OpCode::RowSoftmax]].concat(),
        // The op-code runner gives every node a buffer of its own, so a ReLU meant to run
        // in place computes the same values into that buffer.
        Operator::Relu | Operator::ReluInPlace => vec![load, OpCode::Relu],
        Operator::Softmax => vec![load, OpCode::RowSoftmax],
        Operator::Add | Operator::Input { .. } | Operator::Constant(_) | Operator::Output => {
            return None;
        }
        // Int8 and sparse layers have no op codes: the OpCode mode refuses such graphs.
        Operator::QuantizedConstant(_)
        | Operator::SparseConstant(_)
        | Operator::LinearInt8 { .. }
        | Operator::LinearSparse { .. } => return None,
    })
}
// ANCHOR_END: operator_op_codes

/// The names the bindings of an operator get in the generated WGSL.
fn binding_names(operator: &Operator) -> &'static [&'static str] {
    match operator {
        Operator::Linear | Operator::LinearRelu | Operator::LinearReluSoftmax => {
            &["input", "weights", "bias"]
        }
        _ => &["input"],
    }
}

// ANCHOR: lower_node
/// The program of the node at `id`, or `None` if the node computes nothing.
pub fn lower_node(graph: &ValidGraph, id: TensorId) -> Option<LoweredNode> {
    let node = graph.graph().nodes.get(id.0)?;
    let op_codes = operator_op_codes(&node.operator)?;
    let bindings = binding_names(&node.operator)
        .iter()
        .zip(&node.inputs)
        .map(|(name, &input)| Binding::new(name, graph.shape(input)))
        .collect();
    Some(LoweredNode {
        node: id,
        program: Program {
            bindings,
            op_codes,
            output_shape: graph.shape(id),
        },
        arguments: node.inputs.clone(),
    })
}

/// Every compute node of the graph as a program, in execution order.
pub fn lower_graph(graph: &ValidGraph) -> Vec<LoweredNode> {
    graph
        .execution_order()
        .iter()
        .filter_map(|&id| lower_node(graph, id))
        .collect()
}
// ANCHOR_END: lower_node

// ANCHOR: fuse_programs
/// Fuses a chain of programs, each reading the result of the one before, into one.
///
/// Every program after the first must start with a `Load` of the previous result. That
/// `Load` is dropped: the running value already *is* the loaded element, still in a
/// register. The rest of its op codes are appended, its other bindings are added after
/// the bindings so far, and its slots are renumbered to match.
pub fn fuse_programs(programs: &[Program]) -> Result<Program, OpCodeError> {
    let (first, rest) = programs.split_first().ok_or(OpCodeError::NothingToFuse)?;
    first.validate()?;
    let mut fused = first.clone();
    for (offset, next) in rest.iter().enumerate() {
        let index = offset + 1;
        next.validate()?;
        let Some(&OpCode::Load { source }) = next.op_codes.first() else {
            return Err(OpCodeError::FusionNeedsLoad { program: index });
        };
        let loads = next.bindings[source.0].shape();
        if loads != fused.output_shape {
            return Err(OpCodeError::FusionShape {
                program: index,
                loads,
                produces: fused.output_shape,
            });
        }
        let remaining = &next.op_codes[1..];
        if remaining
            .iter()
            .any(|op_code| op_code.slots().iter().any(|(_, slot)| *slot == source))
        {
            return Err(OpCodeError::FusionReadsIntermediate {
                program: index,
                slot: source,
            });
        }
        // The loaded binding disappears; the others move behind the bindings so far.
        let base = fused.bindings.len();
        let renumber = |slot: Slot| {
            let shift = usize::from(slot.0 > source.0);
            Slot(base + slot.0 - shift)
        };
        for (slot, binding) in next.bindings.iter().enumerate() {
            if slot != source.0 {
                fused.bindings.push(binding.clone());
            }
        }
        fused
            .op_codes
            .extend(remaining.iter().map(|op_code| op_code.with_slots(renumber)));
        fused.output_shape = next.output_shape;
    }
    fused.validate()?;
    Ok(fused)
}
// ANCHOR_END: fuse_programs

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::ChainBuilder;
    use crate::tensor::Tensor2d;

    fn chain() -> ValidGraph {
        ChainBuilder::input(3, 5)
            .linear(Tensor2d::zeros(5, 4), Tensor2d::zeros(1, 4))
            .relu()
            .softmax()
            .output()
            .unwrap()
    }

    #[test]
    fn fused_operators_append_op_codes() {
        let linear = operator_op_codes(&Operator::Linear).unwrap();
        let linear_relu = operator_op_codes(&Operator::LinearRelu).unwrap();
        let all = operator_op_codes(&Operator::LinearReluSoftmax).unwrap();
        assert_eq!(linear_relu[..2], linear[..]);
        assert_eq!(all[..3], linear_relu[..]);
        assert_eq!(all[3], OpCode::RowSoftmax);
    }

    #[test]
    fn only_compute_nodes_become_programs() {
        let lowered = lower_graph(&chain());
        let names: Vec<String> = lowered.iter().map(|node| node.program.name()).collect();
        assert_eq!(
            names,
            ["matrix_multiply+add_bias", "load+relu", "load+row_softmax"]
        );
        for node in &lowered {
            assert_eq!(node.program.validate(), Ok(()));
            assert_eq!(node.arguments.len(), node.program.bindings.len());
        }
    }

    #[test]
    fn fusing_the_lowered_chain_gives_the_fused_operator() {
        let graph = chain();
        let programs: Vec<Program> = lower_graph(&graph)
            .into_iter()
            .map(|node| node.program)
            .collect();
        let fused = fuse_programs(&programs).unwrap();
        let fused_graph = crate::compiler::fuse(&graph).unwrap();
        let lowered_fused = lower_graph(&fused_graph);
        assert_eq!(lowered_fused.len(), 1);
        assert_eq!(fused, lowered_fused[0].program);
    }

    #[test]
    fn a_program_that_does_not_load_cannot_be_fused_after_another() {
        let programs: Vec<Program> = lower_graph(&chain())
            .into_iter()
            .map(|node| node.program)
            .collect();
        let error = fuse_programs(&[programs[1].clone(), programs[0].clone()]).unwrap_err();
        assert_eq!(error, OpCodeError::FusionNeedsLoad { program: 1 });
    }
}
