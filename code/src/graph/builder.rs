//! Writing a graph the way the network reads.
//!
//! [`ChainBuilder`] covers the common case, a chain of layers:
//!
//! ```
//! use galaxy::graph::ChainBuilder;
//! use galaxy::Tensor2d;
//!
//! let weights = Tensor2d::random(4, 3, -0.5..=0.5, 1);
//! let bias = Tensor2d::random(1, 3, -0.5..=0.5, 2);
//! let graph = ChainBuilder::input(2, 4)
//!     .linear(weights, bias)
//!     .relu()
//!     .softmax()
//!     .output()
//!     .unwrap();
//! assert_eq!(graph.graph().nodes.len(), 7); // input, 2 constants, linear, relu, softmax, output
//! ```
//!
//! [`GraphBuilder`] builds any DAG: every call returns the id of the tensor it adds, and
//! later calls name their inputs with those ids.

use crate::graph::{Graph, GraphError, Operator, TensorId, ValidGraph};
use crate::tensor::Tensor2d;

/// Builds a graph node by node; `build` validates it.
#[derive(Debug, Default)]
pub struct GraphBuilder {
    graph: Graph,
}

impl GraphBuilder {
    pub fn new() -> GraphBuilder {
        GraphBuilder::default()
    }

    pub fn input(&mut self, rows: usize, columns: usize) -> TensorId {
        self.graph.push(Operator::Input { rows, columns }, vec![])
    }

    pub fn constant(&mut self, tensor: Tensor2d) -> TensorId {
        self.graph.push(Operator::Constant(tensor), vec![])
    }

    /// `input · weights + bias`, with the weights and the bias added as constants.
    pub fn linear(&mut self, input: TensorId, weights: Tensor2d, bias: Tensor2d) -> TensorId {
        let weights = self.constant(weights);
        let bias = self.constant(bias);
        self.graph
            .push(Operator::Linear, vec![input, weights, bias])
    }

    pub fn relu(&mut self, input: TensorId) -> TensorId {
        self.graph.push(Operator::Relu, vec![input])
    }

    /// `left + right`, element by element: where two branches meet.
    pub fn add(&mut self, left: TensorId, right: TensorId) -> TensorId {
        self.graph.push(Operator::Add, vec![left, right])
    }

    pub fn softmax(&mut self, input: TensorId) -> TensorId {
        self.graph.push(Operator::Softmax, vec![input])
    }

    pub fn output(&mut self, result: TensorId) -> TensorId {
        self.graph.push(Operator::Output, vec![result])
    }

    /// Validates the graph built so far.
    pub fn build(self) -> Result<ValidGraph, GraphError> {
        self.graph.validate()
    }
}

// ANCHOR: chain_builder
/// Builds a chain of layers: every step reads the result of the step before.
#[derive(Debug)]
pub struct ChainBuilder {
    builder: GraphBuilder,
    last: TensorId,
}

impl ChainBuilder {
    /// Starts the chain with the graph's input, a `rows × columns` tensor.
    pub fn input(rows: usize, columns: usize) -> ChainBuilder {
        let mut builder = GraphBuilder::new();
        let last = builder.input(rows, columns);
        ChainBuilder { builder, last }
    }

    pub fn linear(mut self, weights: Tensor2d, bias: Tensor2d) -> ChainBuilder {
        self.last = self.builder.linear(self.last, weights, bias);
        self
    }

    pub fn relu(mut self) -> ChainBuilder {
        self.last = self.builder.relu(self.last);
        self
    }

    pub fn softmax(mut self) -> ChainBuilder {
        self.last = self.builder.softmax(self.last);
        self
    }

    /// Marks the last step as the result and validates the graph.
    pub fn output(mut self) -> Result<ValidGraph, GraphError> {
        self.builder.output(self.last);
        self.builder.build()
    }
}
// ANCHOR_END: chain_builder
