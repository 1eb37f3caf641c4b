//! Drawing a graph: the text of a validated graph in Graphviz's DOT language.
//!
//! A graph held as a list of nodes is easy for a program to walk and hard for a person
//! to read once it has more than a dozen nodes. DOT is a small text format for graphs
//! that Graphviz (`dot -Tsvg graph.dot > graph.svg`) and many online viewers turn into a
//! picture. Writing it is a single walk over the nodes: one line per node, one line per
//! data dependency.

use std::fmt::Write;

use crate::graph::{Operator, TensorId, ValidGraph};

// ANCHOR: to_dot
/// The graph in DOT: one box per node, labelled with its index, its operator and the
/// shape of the tensor it produces, and one arrow per data dependency, from the node
/// that produces a tensor to the node that reads it.
///
/// Constants (weights and biases) are drawn dashed, the input and the output as ellipses,
/// and an arrow into a linear layer names the role of the tensor it carries.
pub fn to_dot(graph: &ValidGraph) -> String {
    let mut dot = String::from("digraph computational_graph {\n");
    dot.push_str("  node [shape=box, fontname=\"Helvetica\"];\n");
    dot.push_str("  edge [fontname=\"Helvetica\", fontsize=10];\n");
    let nodes = &graph.graph().nodes;
    for (index, node) in nodes.iter().enumerate() {
        let (rows, columns) = graph.shape(TensorId(index));
        let style = match node.operator {
            Operator::Input { .. } | Operator::Output => ", shape=ellipse",
            _ if node.operator.is_constant() => ", style=dashed",
            _ => "",
        };
        let name = node.operator.name();
        // `writeln!` into a `String` cannot fail.
        let _ = writeln!(
            dot,
            "  n{index} [label=\"{index}: {name}\\n{rows}×{columns}\"{style}];"
        );
    }
    for (index, node) in nodes.iter().enumerate() {
        let roles = input_roles(&node.operator);
        for (position, input) in node.inputs.iter().enumerate() {
            let label = match roles.get(position) {
                Some(role) => format!(" [label=\"{role}\"]"),
                None => String::new(),
            };
            let _ = writeln!(dot, "  n{} -> n{index}{label};", input.0);
        }
    }
    dot.push_str("}\n");
    dot
}

/// What each input of an operator is for, where it has several.
fn input_roles(operator: &Operator) -> &'static [&'static str] {
    match operator {
        Operator::Linear | Operator::LinearRelu | Operator::LinearReluSoftmax => {
            &["input", "weights", "bias"]
        }
        _ => &[],
    }
}
// ANCHOR_END: to_dot

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{ChainBuilder, random_mlp};
    use crate::tensor::Tensor2d;

    /// The node lines and the arrow lines of a DOT text.
    fn node_and_arrow_lines(dot: &str) -> (Vec<&str>, Vec<&str>) {
        let lines: Vec<&str> = dot
            .lines()
            .filter(|line| line.starts_with("  n") && !line.starts_with("  node "))
            .collect();
        lines.into_iter().partition(|line| !line.contains(" -> "))
    }

    #[test]
    fn a_small_network_is_drawn_exactly_as_expected() {
        let graph = ChainBuilder::input(2, 4)
            .linear(
                Tensor2d::random(4, 3, -0.5..=0.5, 1),
                Tensor2d::random(1, 3, -0.5..=0.5, 2),
            )
            .relu()
            .softmax()
            .output()
            .unwrap();
        assert_eq!(to_dot(&graph), include_str!("small_network.dot"));
    }

    #[test]
    fn every_node_and_every_dependency_is_drawn_once() {
        let workload = random_mlp(8, 5, 3).unwrap();
        let dot = to_dot(&workload.graph);
        let nodes = &workload.graph.graph().nodes;
        let (node_lines, arrow_lines) = node_and_arrow_lines(&dot);
        assert_eq!(node_lines.len(), nodes.len(), "{dot}");
        for (index, node) in nodes.iter().enumerate() {
            let name = node.operator.name();
            assert!(
                node_lines[index].starts_with(&format!("  n{index} [label=\"{index}: {name}\\n")),
                "node {index}: {dot}"
            );
            for input in &node.inputs {
                let arrow = format!("  n{} -> n{index}", input.0);
                assert!(
                    arrow_lines.iter().any(|line| line.starts_with(&arrow)),
                    "{arrow}: {dot}"
                );
            }
        }
        let dependencies: usize = nodes.iter().map(|node| node.inputs.len()).sum();
        assert_eq!(arrow_lines.len(), dependencies, "{dot}");
        assert!(dot.starts_with("digraph computational_graph {\n") && dot.ends_with("}\n"));
    }
}
