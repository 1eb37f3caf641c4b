//! Exercise: buffer reuse. The student's plan must be safe (checked by replaying it),
//! give the same results as one buffer per tensor (run by both runners), and really
//! share: need no more bytes than the crate's own pass, `galaxy::compiler::reuse_buffers`.

use galaxy::compiler::{reuse_buffers, rewrite_in_place};
use galaxy::graph::{Operator, ValidGraph};
use galaxy::runner::BufferPlan;

use crate::checkers::common::context;
use crate::checkers::graph_runs::same_results;
use crate::random_graphs::graph_cases;
use crate::report::{PartReport, Verdict, catching_panics};
use crate::submission::{Submission, Variant};

pub type PlanBuffers = fn(&ValidGraph) -> BufferPlan;

pub fn plan_buffers_of(variant: Variant) -> PlanBuffers {
    crate::rust_exercises::with_rust_module!(reusable_buffers, variant, |code| {
        code::plan_buffers
    })
}

pub fn check(submission: &Submission) -> Vec<PartReport> {
    let plan_buffers = plan_buffers_of(submission.rust);
    let context = match context() {
        Ok(context) => context,
        Err(error) => return vec![PartReport::failed_before_running("results", error)],
    };
    let mut safety = PartReport::new("the plan is safe");
    let mut results = PartReport::new("same results as without reuse");
    let mut sharing = PartReport::new("buffers are shared");
    for (index, case) in graph_cases().into_iter().enumerate() {
        // Every other graph goes through the in-place rewrite first, so that plans must
        // also handle `ReluInPlace`.
        let (graph, description) = if index % 2 == 1 {
            let rewritten = rewrite_in_place(&case.graph).expect("the crate's pass is valid");
            (rewritten, format!("{}, ReLUs in place", case.description))
        } else {
            (case.graph.clone(), case.description.clone())
        };
        let plan = match catching_panics(|| plan_buffers(&graph)) {
            Ok(plan) => plan,
            Err(panicked) => {
                safety.push(description, panicked);
                continue;
            }
        };
        let problem = unsafe_plan(&graph, &plan);
        match problem {
            Some(problem) => {
                safety.push(description.clone(), Verdict::Unmet(problem));
                results.push(
                    description.clone(),
                    Verdict::Error("not run until the plan is safe".to_string()),
                );
            }
            None => {
                safety.push(
                    description.clone(),
                    Verdict::Pass("every tensor has a buffer of its shape while it is live".into()),
                );
                results.push(
                    description.clone(),
                    same_results(context, &case.graph, &graph, &plan, &case.input),
                );
            }
        }
        sharing.push(description, sharing_verdict(&graph, &plan));
    }
    vec![safety, results, sharing]
}

/// Compares the plan's bytes with those of the crate's pass on the same graph.
fn sharing_verdict(graph: &ValidGraph, plan: &BufferPlan) -> Verdict {
    let reference = reuse_buffers(graph);
    let bytes = plan.bytes();
    let counts = format!(
        "{} buffers, {bytes} bytes; one buffer per tensor would take {} bytes",
        plan.buffer_shapes.len(),
        reference.bytes_without_reuse
    );
    if bytes <= reference.bytes_with_reuse() {
        Verdict::Pass(counts)
    } else {
        Verdict::Unmet(format!(
            "{counts}, and a plan with {} buffers ({} bytes) exists: tensors that are never live \
             at the same time can share",
            reference.plan.buffer_shapes.len(),
            reference.bytes_with_reuse()
        ))
    }
}

/// Replays the plan and returns the first rule it breaks, in words, or `None`.
pub fn unsafe_plan(graph: &ValidGraph, plan: &BufferPlan) -> Option<String> {
    let nodes = &graph.graph().nodes;
    if plan.buffer_of.len() != nodes.len() {
        return Some(format!(
            "buffer_of has {} entries, but the graph has {} nodes",
            plan.buffer_of.len(),
            nodes.len()
        ));
    }
    let name = |index: usize| format!("node {index} ({})", nodes[index].operator.name());
    let order = graph.execution_order();
    for &id in order {
        let node = &nodes[id.0];
        let buffer = plan.buffer_of[id.0];
        let problem = match (&node.operator, buffer) {
            (Operator::Constant(_), None) => None,
            (Operator::Constant(_), Some(_)) => {
                Some("is a constant: it lives in the graph and needs no buffer".to_string())
            }
            (_, None) => Some("has no buffer".to_string()),
            (Operator::Output | Operator::ReluInPlace, Some(buffer)) => {
                (Some(buffer) != plan.buffer_of[node.inputs[0].0]).then(|| {
                    format!(
                        "must share the buffer of its input, {}, but is in buffer {buffer}",
                        name(node.inputs[0].0)
                    )
                })
            }
            (_, Some(buffer)) => match plan.buffer_shapes.get(buffer) {
                None => Some(format!(
                    "is in buffer {buffer}, but the plan has only {} buffers",
                    plan.buffer_shapes.len()
                )),
                Some(&shape) if shape != graph.shape(id) => Some(format!(
                    "is {}×{}, but buffer {buffer} is {}×{}: a tensor needs a buffer of exactly \
                     its shape",
                    graph.shape(id).0,
                    graph.shape(id).1,
                    shape.0,
                    shape.1
                )),
                Some(_) => None,
            },
        };
        if let Some(problem) = problem {
            return Some(format!("{} {problem}", name(id.0)));
        }
    }

    // Liveness: a tensor is live until its last reader has run; the input and the result
    // until the end.
    let mut last_read = vec![None; nodes.len()];
    for (position, id) in order.iter().enumerate() {
        for input in &nodes[id.0].inputs {
            last_read[input.0] = Some(position);
        }
    }
    last_read[graph.input().0] = Some(usize::MAX);
    last_read[graph.result().0] = Some(usize::MAX);
    for (position, &id) in order.iter().enumerate() {
        let node = &nodes[id.0];
        if matches!(node.operator, Operator::Constant(_) | Operator::Output) {
            continue;
        }
        let written = plan.buffer_of[id.0];
        for &earlier in &order[..position] {
            let earlier_node = &nodes[earlier.0];
            if matches!(
                earlier_node.operator,
                Operator::Constant(_) | Operator::Output
            ) {
                continue;
            }
            let handed_over = node.operator == Operator::ReluInPlace && node.inputs[0] == earlier;
            let still_needed = last_read[earlier.0].is_some_and(|last| last >= position);
            if plan.buffer_of[earlier.0] == written && still_needed && !handed_over {
                let until = match last_read[earlier.0] {
                    Some(usize::MAX) => "to the end of the run".to_string(),
                    Some(last) => format!("by {}", name(order[last].0)),
                    None => unreachable!("a tensor that is still needed has a reader"),
                };
                return Some(format!(
                    "{} writes buffer {} while {} is still in it, needed {until}",
                    name(id.0),
                    written.expect("computed tensors were checked to have buffers"),
                    name(earlier.0)
                ));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use galaxy::Tensor2d;
    use galaxy::graph::ChainBuilder;

    fn chain() -> ValidGraph {
        let layer = |seed| {
            (
                Tensor2d::random(4, 4, -1.0..=1.0, seed),
                Tensor2d::random(1, 4, -1.0..=1.0, seed + 1),
            )
        };
        let (w1, b1) = layer(1);
        let (w2, b2) = layer(3);
        let (w3, b3) = layer(5);
        ChainBuilder::input(2, 4)
            .linear(w1, b1)
            .linear(w2, b2)
            .linear(w3, b3)
            .output()
            .unwrap()
    }

    #[test]
    fn the_crates_own_plans_are_safe() {
        for case in graph_cases() {
            let graph = rewrite_in_place(&case.graph).unwrap();
            assert_eq!(unsafe_plan(&graph, &reuse_buffers(&graph).plan), None);
            assert_eq!(unsafe_plan(&graph, &BufferPlan::new(&graph)), None);
        }
    }

    #[test]
    fn a_plan_that_overwrites_a_live_tensor_is_named() {
        let graph = chain();
        // Nodes: 0 input, 1–2 constants, 3 linear, 4–5 constants, 6 linear, 7–8, 9 linear,
        // 10 output. Put the second linear layer into the buffer of its own input.
        let mut plan = BufferPlan::new(&graph);
        plan.buffer_of[6] = plan.buffer_of[3];
        let problem = unsafe_plan(&graph, &plan).expect("the plan overwrites node 3");
        assert!(
            problem.contains("node 6 (linear) writes buffer"),
            "{problem}"
        );
        assert!(
            problem.contains("node 3 (linear) is still in it"),
            "{problem}"
        );
    }

    #[test]
    fn reusing_the_input_buffer_is_unsafe() {
        let graph = chain();
        let mut plan = BufferPlan::new(&graph);
        // The third layer into the input's buffer: nothing reads the input any more, but
        // a graph loop writes it only once.
        plan.buffer_of[9] = plan.buffer_of[0];
        plan.buffer_of[10] = plan.buffer_of[0];
        let problem = unsafe_plan(&graph, &plan).expect("the input must survive");
        assert!(
            problem.contains("node 0 (input) is still in it"),
            "{problem}"
        );
        assert!(problem.contains("to the end of the run"), "{problem}");
    }

    #[test]
    fn wrong_shapes_and_missing_buffers_are_named() {
        let graph = chain();
        let mut plan = BufferPlan::new(&graph);
        plan.buffer_shapes[1] = (4, 2);
        let problem = unsafe_plan(&graph, &plan).unwrap();
        assert!(problem.contains("is 2×4, but buffer 1 is 4×2"), "{problem}");
        let mut plan = BufferPlan::new(&graph);
        plan.buffer_of[3] = None;
        assert!(
            unsafe_plan(&graph, &plan)
                .unwrap()
                .contains("node 3 (linear) has no buffer")
        );
    }
}
