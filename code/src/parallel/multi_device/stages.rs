//! Cutting a graph into consecutive stages, one per device, for pipeline parallelism.
//!
//! Walk the computing nodes in execution order and draw a line after one of them. The
//! line is a legal *cut* when exactly one tensor crosses it — one tensor computed before
//! the line (or the graph's input) that a node after the line reads. That tensor is what
//! one stage hands to the next; a cut that more tensors cross (inside a residual block,
//! where the block's input waits beside the branch) would need several hand-overs, and the
//! stages here take one input each. In a chain of layers every gap between two nodes is a
//! cut; in a graph with branches, the gaps between blocks are.
//!
//! Among the legal cuts, [`split_into_stages`] picks those that give every stage about the
//! same number of multiply-adds: the pipeline runs at the pace of its slowest stage.

use std::collections::HashMap;

use crate::graph::{Graph, Operator, TensorId, ValidGraph};

use crate::parallel::multi_device::MultiDeviceError;

/// The nodes that compute something on every run: not the input, the constants or the
/// output marker, in execution order.
fn computing_nodes(graph: &ValidGraph) -> Vec<TensorId> {
    graph
        .execution_order()
        .iter()
        .copied()
        .filter(|&id| {
            let operator = &graph.graph().node(id).operator;
            !operator.is_constant()
                && !matches!(operator, Operator::Input { .. } | Operator::Output)
        })
        .collect()
}

// ANCHOR: cut_points
/// The legal cuts of `graph`: every `k` such that exactly one tensor produced by the
/// input or by the first `k` computing nodes is read after them. For a chain of `n`
/// computing nodes that is `1..n`.
pub fn cut_points(graph: &ValidGraph) -> Vec<usize> {
    let nodes = computing_nodes(graph);
    let position: HashMap<TensorId, usize> = nodes
        .iter()
        .enumerate()
        .map(|(index, &id)| (id, index))
        .collect();
    // The position of the last computing node that reads each tensor (`nodes.len()` for
    // the tensor the output marks: it is read "after everything").
    let mut last_reader: HashMap<TensorId, usize> = HashMap::new();
    for (index, &id) in nodes.iter().enumerate() {
        for input in &graph.graph().node(id).inputs {
            last_reader.insert(*input, index);
        }
    }
    last_reader.insert(graph.result(), nodes.len());
    // The cut after k nodes separates positions 0..k from k..: a tensor crosses it when it
    // is produced before the line (by the node at position p < k, or it is the input) and
    // read after it (last reader >= k). Counting the input as produced at 0 and a node at
    // p + 1 keeps that test in unsigned numbers: produced <= k.
    (1..nodes.len())
        .filter(|&k| {
            let crossing = last_reader
                .iter()
                .filter(|(tensor, reader)| {
                    let produced = if **tensor == graph.input() {
                        Some(0)
                    } else {
                        position.get(tensor).map(|p| p + 1)
                    };
                    matches!(produced, Some(p) if p <= k && **reader >= k)
                })
                .count();
            crossing == 1
        })
        .collect()
}
// ANCHOR_END: cut_points

/// Roughly the work of a node per row of its input: the multiply-adds of a linear layer,
/// one operation per value for the others.
fn work_per_row(graph: &ValidGraph, id: TensorId) -> usize {
    let node = graph.graph().node(id);
    match node.operator {
        Operator::Linear
        | Operator::LinearRelu
        | Operator::LinearReluSoftmax
        | Operator::LinearInt8 { .. }
        | Operator::LinearSparse { .. } => {
            let (inputs, outputs) = graph.shape(node.inputs[1]);
            inputs * outputs
        }
        _ => graph.shape(id).1,
    }
}

// ANCHOR: split_into_stages
/// Cuts `graph` into `count` consecutive stages of about equal work, each a valid graph of
/// its own whose input is what the previous stage's output is. Running them one after the
/// other computes what `graph` computes.
pub fn split_into_stages(
    graph: &ValidGraph,
    count: usize,
) -> Result<Vec<ValidGraph>, MultiDeviceError> {
    if count == 0 {
        return Err(MultiDeviceError::NoDevices);
    }
    let nodes = computing_nodes(graph);
    let cuts = cut_points(graph);
    if cuts.len() + 1 < count {
        return Err(MultiDeviceError::TooFewCuts {
            requested: count,
            possible: cuts.len() + 1,
        });
    }
    // Work done before each cut, and the cuts closest to equal shares of the total,
    // leaving enough cuts after each choice for the stages still to come.
    let mut done = vec![0usize];
    for &id in &nodes {
        done.push(done.last().unwrap() + work_per_row(graph, id));
    }
    let total = *done.last().unwrap();
    let mut chosen: Vec<usize> = Vec::with_capacity(count - 1);
    let mut first_allowed = 0;
    for stage in 1..count {
        let target = total * stage / count;
        let last_allowed = cuts.len() - (count - stage);
        let best = (first_allowed..=last_allowed)
            .min_by_key(|&index| done[cuts[index]].abs_diff(target))
            .expect("enough cuts remain: checked above");
        chosen.push(cuts[best]);
        first_allowed = best + 1;
    }
    let mut bounds = vec![0];
    bounds.extend(chosen);
    bounds.push(nodes.len());
    bounds
        .windows(2)
        .map(|pair| stage_graph(graph, &nodes[pair[0]..pair[1]]))
        .collect()
}
// ANCHOR_END: split_into_stages

/// The graph of one stage: an input node standing for the one tensor that enters it, the
/// stage's nodes with the constants they read copied in, and an output marking the one
/// tensor that leaves it.
fn stage_graph(graph: &ValidGraph, nodes: &[TensorId]) -> Result<ValidGraph, MultiDeviceError> {
    let inside: Vec<TensorId> = nodes.to_vec();
    let reads_from_outside = |tensor: &TensorId| {
        !inside.contains(tensor) && !graph.graph().node(*tensor).operator.is_constant()
    };
    let entering = nodes
        .iter()
        .flat_map(|&id| graph.graph().node(id).inputs.iter().copied())
        .find(|tensor| reads_from_outside(tensor))
        .unwrap_or(graph.input());
    let leaving = if nodes.contains(&graph.result()) {
        graph.result()
    } else {
        let consumers = graph.consumers();
        *nodes
            .iter()
            .rev()
            .find(|id| {
                consumers[id.0]
                    .iter()
                    .any(|reader| !inside.contains(reader))
            })
            .expect("a stage that is not the last hands a tensor on")
    };

    let mut stage = Graph::new();
    let mut renamed: HashMap<TensorId, TensorId> = HashMap::new();
    let (rows, columns) = graph.shape(entering);
    renamed.insert(
        entering,
        stage.push(Operator::Input { rows, columns }, Vec::new()),
    );
    for &id in nodes {
        let node = graph.graph().node(id);
        let mut inputs = Vec::with_capacity(node.inputs.len());
        for input in &node.inputs {
            if !renamed.contains_key(input) {
                // A constant (weights, a bias): every stage that reads it gets a copy.
                let constant = graph.graph().node(*input).operator.clone();
                renamed.insert(*input, stage.push(constant, Vec::new()));
            }
            inputs.push(renamed[input]);
        }
        // The stage's input is a tensor of its own, so an in-place ReLU that wrote over
        // its input in the whole graph becomes a plain one here; the runner's own passes
        // make it in-place again where that is legal.
        let operator = match node.operator {
            Operator::ReluInPlace => Operator::Relu,
            ref other => other.clone(),
        };
        renamed.insert(id, stage.push(operator, inputs));
    }
    stage.push(Operator::Output, vec![renamed[&leaving]]);
    Ok(stage
        .validate()
        .expect("a stage between legal cuts of a valid graph is valid"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{BranchShape, GraphBuilder, random_branches, random_mlp};
    use crate::runner::run_operator_by_operator;
    use crate::tensor::Tensor2d;

    /// Runs the stages one after another on the CPU.
    fn run_stages(stages: &[ValidGraph], input: &Tensor2d) -> Tensor2d {
        stages.iter().fold(input.clone(), |activation, stage| {
            run_operator_by_operator(stage, &activation).unwrap()
        })
    }

    #[test]
    fn every_gap_of_a_chain_is_a_cut() {
        let workload = random_mlp(4, 3, 7).unwrap();
        let count = computing_nodes(&workload.graph).len();
        assert_eq!(cut_points(&workload.graph), (1..count).collect::<Vec<_>>());
    }

    #[test]
    fn stages_of_a_chain_compute_what_the_whole_graph_computes() {
        let workload = random_mlp(6, 9, 3).unwrap();
        let whole = run_operator_by_operator(&workload.graph, &workload.input).unwrap();
        for count in 1..=4 {
            let stages = split_into_stages(&workload.graph, count).unwrap();
            assert_eq!(stages.len(), count);
            assert_eq!(
                run_stages(&stages, &workload.input),
                whole,
                "{count} stages"
            );
        }
    }

    #[test]
    fn stages_share_the_linear_layers_evenly() {
        let workload = random_mlp(8, 8, 5).unwrap();
        let stages = split_into_stages(&workload.graph, 4).unwrap();
        for stage in &stages {
            let linears = stage
                .graph()
                .nodes
                .iter()
                .filter(|node| node.operator == Operator::Linear)
                .count();
            assert_eq!(linears, 2, "8 equal layers over 4 stages");
        }
    }

    /// `blocks` residual blocks of width 4: `a = linear(x)`, `b = linear(relu(a))`, then
    /// `x' = b + a`.
    fn residual_blocks(blocks: usize) -> ValidGraph {
        let mut builder = GraphBuilder::new();
        let mut x = builder.input(3, 4);
        for block in 0..blocks as u64 {
            let weights = || Tensor2d::random(4, 4, -1.0..=1.0, 10 * block + 1);
            let a = builder.linear(x, weights(), Tensor2d::random(1, 4, -0.1..=0.1, block));
            let relu = builder.relu(a);
            let b = builder.linear(relu, weights().transposed(), Tensor2d::zeros(1, 4));
            x = builder.add(b, a);
        }
        builder.output(x);
        builder.build().unwrap()
    }

    #[test]
    fn a_residual_branch_is_never_cut_while_its_skip_waits_beside_it() {
        // Computing nodes in order: a, relu, b, sum per block. After `relu` and after `b`,
        // `a` waits beside the branch for the sum, so two tensors cross: no cut. After `a`
        // only `a` crosses, and after the sum only the sum.
        let graph = residual_blocks(3);
        assert_eq!(cut_points(&graph), vec![1, 4, 5, 8, 9]);
        let input = Tensor2d::random(3, 4, -1.0..=1.0, 9);
        let whole = run_operator_by_operator(&graph, &input).unwrap();
        for count in 1..=6 {
            let stages = split_into_stages(&graph, count).unwrap();
            assert_eq!(run_stages(&stages, &input), whole, "{count} stages");
        }
        assert_eq!(
            split_into_stages(&graph, 7).unwrap_err(),
            MultiDeviceError::TooFewCuts {
                requested: 7,
                possible: 6
            }
        );
    }

    #[test]
    fn parallel_branches_are_never_cut() {
        let workload = random_branches(
            BranchShape {
                rows: 3,
                columns: 5,
                branches: 3,
                depth: 2,
            },
            4,
        )
        .unwrap();
        let whole = run_operator_by_operator(&workload.graph, &workload.input).unwrap();
        // While any branch is unfinished the input, or a finished branch's end, waits
        // beside it: the only cuts come after the branches have been summed.
        let last_linear = computing_nodes(&workload.graph)
            .iter()
            .rposition(|id| workload.graph.graph().node(*id).operator == Operator::Linear)
            .unwrap();
        assert!(
            cut_points(&workload.graph)
                .iter()
                .all(|&cut| cut > last_linear)
        );
        let possible = cut_points(&workload.graph).len() + 1;
        for count in 1..=possible {
            let stages = split_into_stages(&workload.graph, count).unwrap();
            assert_eq!(
                run_stages(&stages, &workload.input),
                whole,
                "{count} stages"
            );
        }
    }
}
