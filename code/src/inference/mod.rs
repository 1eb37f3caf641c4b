//! Module 3, part 2: inference on a real model. A small, openly licensed dataset (the 8 × 8
//! handwritten digits of the UCI repository), a training loop for the graph's own operators
//! (linear, ReLU, softmax with cross-entropy, backpropagation on the CPU), and the trained
//! network as a graph that every runner of the crate can execute.

pub mod cooperative_matrix;
pub mod digits;
pub mod gpu_f16;
pub mod gpu_int8;
pub mod model_swap;
pub mod pruning;
pub mod quantization;
pub mod quantized_network;
pub mod training;

pub use digits::{Dataset, DatasetError, Digits, Split};
pub use training::{TrainedNetwork, TrainingConfig, TrainingError, TrainingReport, train};
