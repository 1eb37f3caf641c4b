//! The graph compiler: passes that rewrite a graph into one that computes the same
//! result with less work or less memory traffic.
//!
//! Every pass is a function from a valid graph to a valid graph, so passes compose and
//! each can be tested on its own: the rewritten graph must give the same output.

pub mod fusion;

pub use fusion::fuse;
