//! One checker per exercise. Each takes a [`crate::submission::Submission`] and returns
//! the parts of its report.

pub mod clone_free_loop;
pub mod common;
pub mod conv1d;
pub mod convolution;
pub mod every_level;
pub mod graph_runs;
pub mod histogram;
pub mod hypotheses;
pub mod iterator_chain;
pub mod linear_tiled;
pub mod matmul;
pub mod max_pool;
pub mod model_swap;
pub mod operator_enum;
pub mod parallel_histogram;
pub mod parallel_schedule;
pub mod profile_hot_spot;
pub mod relu_in_place;
pub mod reusable_buffers;
pub mod softmax_tree;
pub mod sort_step;
pub mod vector_add;
