//! What makes a graph well formed, checked once, before anything runs.
//!
//! A runner that trusts its graph can skip every check in its hot loop. So the checks
//! happen here, and each failure is an error that names the node:
//!
//! - the graph is not empty, and has exactly one input and exactly one output;
//! - every input id names a node of the graph (no dangling ids);
//! - there is no cycle: the nodes can be put in an order where every node comes after
//!   the nodes it reads;
//! - every operator has the right number of inputs, and their shapes fit;
//! - the output is read by nothing, and a softmax feeds only the output;
//! - an in-place ReLU overwrites only a computed tensor that nothing else reads.

use thiserror::Error;

use crate::cpu::add::add_output_shape;
use crate::graph::{Graph, Operator, TensorId};
use crate::tensor::{ShapeError, linear_output_shape};

/// Why a graph is malformed.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum GraphError {
    #[error("the graph has no nodes")]
    Empty,
    #[error("node {node} ({operator}) reads tensor {}, but the graph has only {node_count} nodes", input.0)]
    UnknownInput {
        node: usize,
        operator: &'static str,
        input: TensorId,
        node_count: usize,
    },
    #[error("the graph has a cycle through nodes {nodes:?}: no node of it can run first")]
    Cycle { nodes: Vec<usize> },
    #[error("node {node} ({operator}) takes {expected} inputs, but has {found}")]
    WrongInputCount {
        node: usize,
        operator: &'static str,
        expected: usize,
        found: usize,
    },
    #[error("node {node} ({operator}): {source}")]
    Shape {
        node: usize,
        operator: &'static str,
        // Boxed: errors are rare, and a small error keeps every `Result` small.
        source: Box<ShapeError>,
    },
    #[error(
        "node {node} ({operator}) reads its {role} from node {input} ({input_operator}); it must be a constant"
    )]
    NotConstant {
        node: usize,
        operator: &'static str,
        role: &'static str,
        input: usize,
        input_operator: &'static str,
    },
    #[error(
        "node {node} ({operator}) reads its weights from node {input} ({input_operator}); it needs a {expected} node"
    )]
    WrongWeightKind {
        node: usize,
        operator: &'static str,
        input: usize,
        input_operator: &'static str,
        expected: &'static str,
    },
    #[error("the graph needs exactly one input node, but has {count}")]
    InputCount { count: usize },
    #[error("the graph needs exactly one output node, but has {count}")]
    OutputCount { count: usize },
    #[error("node {node} ({operator}) reads the output node {output}; the output must be last")]
    OutputIsRead {
        node: usize,
        operator: &'static str,
        output: usize,
    },
    #[error(
        "node {node} (relu_in_place) overwrites tensor {input}, which {reason}; only the sole reader of a computed tensor may overwrite it"
    )]
    InPlaceNotAllowed {
        node: usize,
        input: usize,
        reason: &'static str,
    },
    #[error(
        "softmax node {node} feeds node {consumer} ({consumer_operator}); a softmax may only feed the output"
    )]
    SoftmaxNotLast {
        node: usize,
        consumer: usize,
        consumer_operator: &'static str,
    },
}

// ANCHOR: valid_graph
/// A graph that passed [`validate`], with what the checks found out on the way.
#[derive(Debug, Clone, PartialEq)]
pub struct ValidGraph {
    graph: Graph,
    /// An order in which every node comes after the nodes it reads.
    order: Vec<TensorId>,
    /// The shape of the tensor every node produces.
    shapes: Vec<(usize, usize)>,
    input: TensorId,
    output: TensorId,
}
// ANCHOR_END: valid_graph

impl ValidGraph {
    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    pub fn into_graph(self) -> Graph {
        self.graph
    }

    /// The nodes in an order that respects every data dependency.
    pub fn execution_order(&self) -> &[TensorId] {
        &self.order
    }

    pub fn shape(&self, tensor: TensorId) -> (usize, usize) {
        self.shapes[tensor.0]
    }

    pub fn input(&self) -> TensorId {
        self.input
    }

    /// The node marked `Output`.
    pub fn output(&self) -> TensorId {
        self.output
    }

    /// The tensor the output node marks as the graph's result.
    pub fn result(&self) -> TensorId {
        self.graph.node(self.output).inputs[0]
    }

    /// For every tensor, the nodes that read it.
    pub fn consumers(&self) -> Vec<Vec<TensorId>> {
        consumers(&self.graph)
    }
}

fn consumers(graph: &Graph) -> Vec<Vec<TensorId>> {
    let mut consumers = vec![Vec::new(); graph.nodes.len()];
    for (index, node) in graph.nodes.iter().enumerate() {
        for input in &node.inputs {
            if let Some(list) = consumers.get_mut(input.0)
                && !list.contains(&TensorId(index))
            {
                list.push(TensorId(index));
            }
        }
    }
    consumers
}

// ANCHOR: validate
/// Checks `graph` and returns it as a [`ValidGraph`], or the first problem found.
pub fn validate(graph: Graph) -> Result<ValidGraph, GraphError> {
    if graph.nodes.is_empty() {
        return Err(GraphError::Empty);
    }
    check_inputs_exist(&graph)?;
    let order = topological_order(&graph)?;
    let shapes = infer_shapes(&graph, &order)?;
    let (input, output) = check_input_and_output(&graph)?;
    check_softmax_feeds_only_the_output(&graph)?;
    check_in_place_nodes(&graph)?;
    Ok(ValidGraph {
        graph,
        order,
        shapes,
        input,
        output,
    })
}
// ANCHOR_END: validate

fn check_inputs_exist(graph: &Graph) -> Result<(), GraphError> {
    for (index, node) in graph.nodes.iter().enumerate() {
        let expected = node.operator.input_count();
        if node.inputs.len() != expected {
            return Err(GraphError::WrongInputCount {
                node: index,
                operator: node.operator.name(),
                expected,
                found: node.inputs.len(),
            });
        }
        if let Some(&input) = node
            .inputs
            .iter()
            .find(|input| input.0 >= graph.nodes.len())
        {
            return Err(GraphError::UnknownInput {
                node: index,
                operator: node.operator.name(),
                input,
                node_count: graph.nodes.len(),
            });
        }
    }
    Ok(())
}

// ANCHOR: topological_order
/// Kahn's algorithm: repeatedly take a node whose inputs are all computed. Nodes left
/// over at the end wait on each other: they form (or hang off) a cycle.
fn topological_order(graph: &Graph) -> Result<Vec<TensorId>, GraphError> {
    let consumers = consumers(graph);
    // How many distinct inputs of each node are not computed yet.
    let mut waiting_on: Vec<usize> = graph
        .nodes
        .iter()
        .map(|node| {
            let mut distinct = node.inputs.clone();
            distinct.sort();
            distinct.dedup();
            distinct.len()
        })
        .collect();
    let mut ready: Vec<usize> = (0..graph.nodes.len())
        .filter(|&index| waiting_on[index] == 0)
        .rev()
        .collect();
    let mut order = Vec::with_capacity(graph.nodes.len());
    while let Some(index) = ready.pop() {
        order.push(TensorId(index));
        for consumer in &consumers[index] {
            waiting_on[consumer.0] -= 1;
            if waiting_on[consumer.0] == 0 {
                ready.push(consumer.0);
            }
        }
    }
    if order.len() < graph.nodes.len() {
        let nodes = (0..graph.nodes.len())
            .filter(|&index| waiting_on[index] > 0)
            .collect();
        return Err(GraphError::Cycle { nodes });
    }
    Ok(order)
}
// ANCHOR_END: topological_order

fn infer_shapes(graph: &Graph, order: &[TensorId]) -> Result<Vec<(usize, usize)>, GraphError> {
    let mut shapes = vec![(0, 0); graph.nodes.len()];
    for &id in order {
        let node = graph.node(id);
        let input_shape = |position: usize| shapes[node.inputs[position].0];
        let shape = match &node.operator {
            Operator::Input { rows, columns } => (*rows, *columns),
            Operator::Constant(tensor) => tensor.shape(),
            Operator::QuantizedConstant(weights) => (weights.inputs(), weights.outputs()),
            Operator::SparseConstant(weights) => (weights.rows(), weights.columns()),
            Operator::Relu | Operator::ReluInPlace | Operator::Softmax | Operator::Output => {
                input_shape(0)
            }
            Operator::Add => {
                add_output_shape(input_shape(0), input_shape(1)).map_err(|source| {
                    GraphError::Shape {
                        node: id.0,
                        operator: node.operator.name(),
                        source: Box::new(source),
                    }
                })?
            }
            Operator::Linear | Operator::LinearRelu | Operator::LinearReluSoftmax => {
                for (position, role) in [(1, "weights"), (2, "bias")] {
                    let source = graph.node(node.inputs[position]);
                    if !matches!(source.operator, Operator::Constant(_)) {
                        return Err(GraphError::NotConstant {
                            node: id.0,
                            operator: node.operator.name(),
                            role,
                            input: node.inputs[position].0,
                            input_operator: source.operator.name(),
                        });
                    }
                }
                linear_output_shape(input_shape(0), input_shape(1), input_shape(2)).map_err(
                    |source| GraphError::Shape {
                        node: id.0,
                        operator: node.operator.name(),
                        source: Box::new(source),
                    },
                )?
            }
            Operator::LinearInt8 { .. } | Operator::LinearSparse { .. } => {
                check_cheaper_linear_inputs(graph, id)?;
                linear_output_shape(input_shape(0), input_shape(1), input_shape(2)).map_err(
                    |source| GraphError::Shape {
                        node: id.0,
                        operator: node.operator.name(),
                        source: Box::new(source),
                    },
                )?
            }
        };
        if shape.0 == 0 || shape.1 == 0 {
            return Err(GraphError::Shape {
                node: id.0,
                operator: node.operator.name(),
                source: Box::new(ShapeError::Empty {
                    operation: node.operator.name(),
                    rows: shape.0,
                    columns: shape.1,
                }),
            });
        }
        shapes[id.0] = shape;
    }
    Ok(shapes)
}

/// An int8 linear layer reads its weights from a `QuantizedConstant`, a sparse one from a
/// `SparseConstant`; both read their bias from a plain `Constant`.
fn check_cheaper_linear_inputs(graph: &Graph, id: TensorId) -> Result<(), GraphError> {
    let node = graph.node(id);
    let weights = graph.node(node.inputs[1]);
    let (fits, expected) = match node.operator {
        Operator::LinearInt8 { .. } => (
            matches!(weights.operator, Operator::QuantizedConstant(_)),
            "quantized_constant",
        ),
        _ => (
            matches!(weights.operator, Operator::SparseConstant(_)),
            "sparse_constant",
        ),
    };
    if !fits {
        return Err(GraphError::WrongWeightKind {
            node: id.0,
            operator: node.operator.name(),
            input: node.inputs[1].0,
            input_operator: weights.operator.name(),
            expected,
        });
    }
    let bias = graph.node(node.inputs[2]);
    if !matches!(bias.operator, Operator::Constant(_)) {
        return Err(GraphError::NotConstant {
            node: id.0,
            operator: node.operator.name(),
            role: "bias",
            input: node.inputs[2].0,
            input_operator: bias.operator.name(),
        });
    }
    Ok(())
}

fn check_input_and_output(graph: &Graph) -> Result<(TensorId, TensorId), GraphError> {
    let find = |wanted: fn(&Operator) -> bool| -> Vec<usize> {
        (0..graph.nodes.len())
            .filter(|&index| wanted(&graph.nodes[index].operator))
            .collect()
    };
    let inputs = find(|operator| matches!(operator, Operator::Input { .. }));
    let outputs = find(|operator| matches!(operator, Operator::Output));
    if inputs.len() != 1 {
        return Err(GraphError::InputCount {
            count: inputs.len(),
        });
    }
    if outputs.len() != 1 {
        return Err(GraphError::OutputCount {
            count: outputs.len(),
        });
    }
    let output = outputs[0];
    if let Some(reader) = graph
        .nodes
        .iter()
        .position(|node| node.inputs.contains(&TensorId(output)))
    {
        return Err(GraphError::OutputIsRead {
            node: reader,
            operator: graph.nodes[reader].operator.name(),
            output,
        });
    }
    Ok((TensorId(inputs[0]), TensorId(output)))
}

/// Overwriting a tensor is safe only if nothing else will read it, and only if the graph
/// owns it: the caller's input and the weights must survive the run.
fn check_in_place_nodes(graph: &Graph) -> Result<(), GraphError> {
    let consumers = consumers(graph);
    for (index, node) in graph.nodes.iter().enumerate() {
        if node.operator != Operator::ReluInPlace {
            continue;
        }
        let input = node.inputs[0].0;
        let reason = match graph.nodes[input].operator {
            Operator::Input { .. } => Some("is the graph's input"),
            ref operator if operator.is_constant() => Some("is a constant"),
            _ if consumers[input].len() > 1 => Some("other nodes read too"),
            _ => None,
        };
        if let Some(reason) = reason {
            return Err(GraphError::InPlaceNotAllowed {
                node: index,
                input,
                reason,
            });
        }
    }
    Ok(())
}

/// Softmax normalises each row into probabilities: the network's last step. The fused
/// `LinearReluSoftmax` ends in a softmax too.
fn check_softmax_feeds_only_the_output(graph: &Graph) -> Result<(), GraphError> {
    let consumers = consumers(graph);
    for (index, node) in graph.nodes.iter().enumerate() {
        if !matches!(
            node.operator,
            Operator::Softmax | Operator::LinearReluSoftmax
        ) {
            continue;
        }
        if let Some(consumer) = consumers[index]
            .iter()
            .find(|consumer| graph.node(**consumer).operator != Operator::Output)
        {
            return Err(GraphError::SoftmaxNotLast {
                node: index,
                consumer: consumer.0,
                consumer_operator: graph.node(*consumer).operator.name(),
            });
        }
    }
    Ok(())
}
