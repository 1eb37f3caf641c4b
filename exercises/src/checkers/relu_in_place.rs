//! Exercise: the in-place ReLU rewrite. The checker compares the rewritten graph with
//! the original node by node (only `Relu` may become `ReluInPlace`, and every ReLU that
//! legally can, must), then runs it on both runners.

use galaxy::graph::{GraphError, Operator, ValidGraph};
use galaxy::runner::BufferPlan;

use crate::checkers::common::context;
use crate::checkers::graph_runs::same_results;
use crate::random_graphs::graph_cases;
use crate::report::{PartReport, Verdict, catching_panics};
use crate::submission::{Submission, Variant};

pub type Rewrite = fn(&ValidGraph) -> Result<ValidGraph, GraphError>;

pub fn rewrite_of(variant: Variant) -> Rewrite {
    crate::rust_exercises::with_rust_module!(relu_in_place, variant, |code| {
        code::rewrite_relus_in_place
    })
}

/// The ReLUs of `graph` that may overwrite their input: those reading a computed tensor
/// that nothing else reads.
pub fn legal_in_place(graph: &ValidGraph) -> Vec<usize> {
    let readers = graph.consumers();
    let nodes = &graph.graph().nodes;
    (0..nodes.len())
        .filter(|&index| {
            let node = &nodes[index];
            if node.operator != Operator::Relu {
                return false;
            }
            let input = node.inputs[0];
            let computed = !matches!(
                nodes[input.0].operator,
                Operator::Input { .. } | Operator::Constant(_)
            );
            computed && readers[input.0].len() == 1
        })
        .collect()
}

pub fn check(submission: &Submission) -> Vec<PartReport> {
    let rewrite = rewrite_of(submission.rust);
    let context = match context() {
        Ok(context) => context,
        Err(error) => return vec![PartReport::failed_before_running("results", error)],
    };
    let mut rewriting = PartReport::new("every legal ReLU rewritten, nothing else");
    let mut results = PartReport::new("same results");
    for case in graph_cases() {
        let rewritten = match catching_panics(|| rewrite(&case.graph)) {
            Ok(Ok(rewritten)) => rewritten,
            Ok(Err(error)) => {
                rewriting.push(
                    case.description,
                    Verdict::Error(format!("the rewritten graph is not valid: {error}")),
                );
                continue;
            }
            Err(panicked) => {
                rewriting.push(case.description, panicked);
                continue;
            }
        };
        let verdict = compare_rewrite(&case.graph, &rewritten);
        let passed = verdict.passed();
        rewriting.push(case.description.clone(), verdict);
        let results_verdict = if passed {
            same_results(
                context,
                &case.graph,
                &rewritten,
                &BufferPlan::new(&rewritten),
                &case.input,
            )
        } else {
            Verdict::Error("not run until the rewrite is right".to_string())
        };
        results.push(case.description, results_verdict);
    }
    vec![rewriting, results]
}

/// The rewrite must keep every node and input, change only legal ReLUs, and change all
/// of them.
fn compare_rewrite(original: &ValidGraph, rewritten: &ValidGraph) -> Verdict {
    let before = &original.graph().nodes;
    let after = &rewritten.graph().nodes;
    if before.len() != after.len() {
        return Verdict::Unmet(format!(
            "the graph had {} nodes, the rewritten one has {}: the rewrite changes operators, \
             it adds and removes nothing",
            before.len(),
            after.len()
        ));
    }
    let legal = legal_in_place(original);
    for (index, (old, new)) in before.iter().zip(after).enumerate() {
        if old.inputs != new.inputs {
            return Verdict::Unmet(format!(
                "node {index} ({}) read {:?} and now reads {:?}",
                old.operator.name(),
                old.inputs,
                new.inputs
            ));
        }
        let changed_to_in_place =
            old.operator == Operator::Relu && new.operator == Operator::ReluInPlace;
        if !changed_to_in_place && old.operator != new.operator {
            return Verdict::Unmet(format!(
                "node {index} changed from {} to {}; only relu may become relu_in_place",
                old.operator.name(),
                new.operator.name()
            ));
        }
        if legal.contains(&index) && !changed_to_in_place {
            let input = old.inputs[0].0;
            return Verdict::Unmet(format!(
                "node {index} (relu) may overwrite its input, node {input} ({}), which nothing \
                 else reads, but it was not rewritten",
                before[input].operator.name()
            ));
        }
    }
    let saved = BufferPlan::new(original).buffer_shapes.len()
        - BufferPlan::new(rewritten).buffer_shapes.len();
    Verdict::Pass(format!(
        "{} ReLU(s) in place, {saved} buffer(s) fewer",
        legal.len()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_legal_relus_are_those_the_crates_pass_rewrites() {
        for case in graph_cases() {
            let crate_rewrite = galaxy::compiler::rewrite_in_place(&case.graph).unwrap();
            let rewritten: Vec<usize> = (0..crate_rewrite.graph().nodes.len())
                .filter(|&index| {
                    crate_rewrite.graph().nodes[index].operator == Operator::ReluInPlace
                })
                .collect();
            assert_eq!(
                legal_in_place(&case.graph),
                rewritten,
                "{}",
                case.description
            );
        }
    }

    #[test]
    fn some_relus_cannot_go_in_place() {
        let cases = graph_cases();
        let left_alone = cases.iter().any(|case| {
            let relus = case
                .graph
                .graph()
                .nodes
                .iter()
                .filter(|node| node.operator == Operator::Relu)
                .count();
            legal_in_place(&case.graph).len() < relus
        });
        assert!(left_alone, "every ReLU of every case could go in place");
    }
}
