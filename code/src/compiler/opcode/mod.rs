//! The op-code compiler: operators as lists of instructions, kernels as generated text.
//!
//! The hand-written kernels hard-wire one operator each, and fusion needs a hand-written
//! kernel for every fused pair. Here an operator is instead a short list of *op codes*
//! (load a value, multiply by a matrix, add a bias, apply ReLU, normalise the row), and a
//! kernel is WGSL that a generator writes from such a list. A shader is only a string,
//! after all. Fusing two operators is then appending one list to the other: the value
//! stays in a register between them, and no kernel has to be written by hand.
//!
//! Read the files in this order: `program` (the instruction set and its rules), `lower`
//! (graph nodes to programs, and fusion by appending), `generate` (programs to WGSL).
//! `crate::runner::opcode` compiles and runs the generated kernels.

pub mod generate;
pub mod lower;
pub mod program;

pub use generate::{Template, generate_wgsl};
pub use lower::{LoweredNode, fuse_programs, lower_graph, lower_node, operator_op_codes};
pub use program::{Binding, OpCode, OpCodeError, Program, Slot};
