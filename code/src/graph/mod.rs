//! The computational graph: what the network computes, written down as data.
//!
//! A graph is a list of nodes. Every node applies one operator to the tensors named by its
//! inputs and produces one new tensor, named by the node's position: node 3 produces
//! `TensorId(3)`. Because the inputs are explicit ids, the graph records every data
//! dependency, and a runner or a compiler can see which node needs which result, reorder
//! what is independent, and free what nothing needs any more.
//!
//! Read the files in this order: this one (the data types), `builder` (writing a graph
//! the way the network reads), `validate` (what makes a graph well formed), `random_mlp`
//! (the standard workload the benchmarks run), `random_branches` (a wide workload whose
//! branches may run at the same time), `dot` (drawing a graph with Graphviz),
//! `buffer_plan` (which buffer each tensor lives in: the runners follow it, and the
//! compiler's buffer reuse writes one).
//!
//! The compiler passes that rewrite graphs live in [`crate::compiler`].

pub mod buffer_plan;
pub mod builder;
pub mod dot;
pub mod random_branches;
pub mod random_mlp;
pub mod validate;

pub use buffer_plan::BufferPlan;
pub use builder::{ChainBuilder, GraphBuilder};
pub use random_branches::{BranchShape, random_branches};
pub use random_mlp::{Workload, random_mlp};
pub use validate::{GraphError, ValidGraph};

use crate::cpu::int8::QuantizedWeights;
use crate::cpu::sparse::CsrMatrix;
use crate::tensor::Tensor2d;

// ANCHOR: tensor_id
/// The tensor produced by the node at this index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TensorId(pub usize);
// ANCHOR_END: tensor_id

// ANCHOR: operator
/// What a node computes.
#[derive(Debug, Clone, PartialEq)]
pub enum Operator {
    /// The graph's input: a tensor of this shape, supplied on every run.
    Input { rows: usize, columns: usize },
    /// A tensor known when the graph is built, such as weights or a bias.
    Constant(Tensor2d),
    /// `inputs[0] · inputs[1] + inputs[2]`: input, weights, bias (a row vector).
    Linear,
    /// `max(inputs[0], 0)`.
    Relu,
    /// `max(inputs[0], 0)`, written over `inputs[0]` (made by the in-place pass). Legal
    /// only when this node is the one reader of a tensor the graph computed.
    ReluInPlace,
    /// Row-wise softmax of `inputs[0]`.
    Softmax,
    /// `inputs[0] + inputs[1]`, element by element, two tensors of one shape: where two
    /// branches of a network meet again (a residual connection, a multi-branch block).
    Add,
    /// `Linear` and then `Relu` in one operator (made by the fusion pass).
    LinearRelu,
    /// `Linear`, `Relu` and `Softmax` in one operator (made by the fusion pass).
    LinearReluSoftmax,
    /// Marks `inputs[0]` as the graph's result.
    Output,
    // ANCHOR: cheaper_operators
    /// Weights quantised to int8 (`inputs × outputs`), known when the graph is built: what
    /// the `quantize` pass puts in place of a `Constant` weight matrix.
    QuantizedConstant(QuantizedWeights),
    /// Weights stored sparse, in CSR (`inputs × outputs`): what the `sparsify` pass puts in
    /// place of a `Constant` weight matrix that is mostly zeros.
    SparseConstant(CsrMatrix),
    /// `inputs[0] · inputs[1] + inputs[2]` with the weights a `QuantizedConstant`: the input
    /// is quantised per row at run time and the products are summed in `i32`. With `relu`,
    /// a ReLU follows in the same operator (made by the fusion pass).
    LinearInt8 { relu: bool },
    /// `inputs[0] · inputs[1] + inputs[2]` with the weights a `SparseConstant`: only the
    /// non-zero weights are multiplied. With `relu`, a ReLU follows in the same operator.
    LinearSparse { relu: bool },
    // ANCHOR_END: cheaper_operators
}
// ANCHOR_END: operator

impl Operator {
    /// A short name for messages.
    pub fn name(&self) -> &'static str {
        match self {
            Operator::Input { .. } => "input",
            Operator::Constant(_) => "constant",
            Operator::Linear => "linear",
            Operator::Relu => "relu",
            Operator::ReluInPlace => "relu_in_place",
            Operator::Softmax => "softmax",
            Operator::Add => "add",
            Operator::LinearRelu => "linear_relu",
            Operator::LinearReluSoftmax => "linear_relu_softmax",
            Operator::Output => "output",
            Operator::QuantizedConstant(_) => "quantized_constant",
            Operator::SparseConstant(_) => "sparse_constant",
            Operator::LinearInt8 { relu: false } => "linear_int8",
            Operator::LinearInt8 { relu: true } => "linear_int8_relu",
            Operator::LinearSparse { relu: false } => "linear_sparse",
            Operator::LinearSparse { relu: true } => "linear_sparse_relu",
        }
    }

    /// Whether the operator holds data known when the graph is built (weights, a bias)
    /// rather than computing a tensor on every run.
    pub fn is_constant(&self) -> bool {
        matches!(
            self,
            Operator::Constant(_) | Operator::QuantizedConstant(_) | Operator::SparseConstant(_)
        )
    }

    /// How many inputs the operator takes.
    pub fn input_count(&self) -> usize {
        match self {
            Operator::Input { .. }
            | Operator::Constant(_)
            | Operator::QuantizedConstant(_)
            | Operator::SparseConstant(_) => 0,
            Operator::Linear
            | Operator::LinearRelu
            | Operator::LinearReluSoftmax
            | Operator::LinearInt8 { .. }
            | Operator::LinearSparse { .. } => 3,
            Operator::Add => 2,
            Operator::Relu | Operator::ReluInPlace | Operator::Softmax | Operator::Output => 1,
        }
    }
}

// ANCHOR: node
/// One operation: an operator and the tensors it reads.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub operator: Operator,
    pub inputs: Vec<TensorId>,
}
// ANCHOR_END: node

/// A computational graph. Node `i` produces `TensorId(i)`.
///
/// A `Graph` can be malformed (a dangling input, a cycle, shapes that do not fit): it is
/// plain data. [`Graph::validate`] checks it and returns a [`ValidGraph`], which is what
/// the runners accept.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Graph {
    pub nodes: Vec<Node>,
}

impl Graph {
    pub fn new() -> Graph {
        Graph::default()
    }

    /// Appends a node and returns the id of the tensor it produces.
    pub fn push(&mut self, operator: Operator, inputs: Vec<TensorId>) -> TensorId {
        self.nodes.push(Node { operator, inputs });
        TensorId(self.nodes.len() - 1)
    }

    pub fn node(&self, id: TensorId) -> &Node {
        &self.nodes[id.0]
    }

    /// Checks the graph; see [`validate`].
    pub fn validate(&self) -> Result<ValidGraph, GraphError> {
        validate::validate(self.clone())
    }
}
