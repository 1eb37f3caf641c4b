//! Training a small classifier for the digits with the graph's own operators: linear layers,
//! ReLU, and a softmax whose cross-entropy loss drives backpropagation.
//!
//! Everything here runs on the CPU in a fixed order: the same seed gives bit-for-bit the
//! same weights on any machine, because no sum is reordered (every version of the matrix
//! products in [`TrainingKernels`] adds each product into its output in the order of the inner
//! dimension, with a separate multiply and add, however it groups the work into vector
//! instructions). The trained network then becomes an ordinary
//! graph ([`TrainedNetwork::to_graph`]) that every runner of the crate can execute.

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use thiserror::Error;

use crate::graph::{ChainBuilder, GraphError, ValidGraph};
use crate::inference::digits::{CLASSES, Dataset, PIXELS, Split};
use crate::tensor::Tensor2d;

mod kernels;
pub use kernels::TrainingKernels;

/// What a training run does. [`TrainingConfig::default`] reaches about 97 % test accuracy on
/// the digits (see the test `default_training_reaches_the_stated_accuracy`).
#[derive(Debug, Clone, PartialEq)]
pub struct TrainingConfig {
    /// The width of each hidden layer; each is followed by a ReLU.
    pub hidden_sizes: Vec<usize>,
    pub epochs: usize,
    pub batch_size: usize,
    pub learning_rate: f32,
    /// Stochastic gradient descent with momentum: the step follows a running sum of
    /// gradients that forgets this fraction less per step.
    pub momentum: f32,
    /// Seeds the initial weights and the order of the examples in every epoch.
    pub seed: u64,
}

impl Default for TrainingConfig {
    fn default() -> Self {
        TrainingConfig {
            hidden_sizes: vec![64, 64],
            epochs: 30,
            batch_size: 32,
            learning_rate: 0.05,
            momentum: 0.9,
            seed: 2026,
        }
    }
}

/// A configuration or a run that cannot train, said for a person.
#[derive(Debug, Error, PartialEq)]
pub enum TrainingError {
    #[error("hidden layer {index} has width 0; every layer needs at least one unit")]
    EmptyHiddenLayer { index: usize },
    #[error("the batch size is 0; a step needs at least one example")]
    EmptyBatch,
    #[error("the number of epochs is 0; training would return the random initial weights")]
    NoEpochs,
    #[error("the learning rate is {0}; it must be a positive, finite number")]
    BadLearningRate(f32),
    #[error("the momentum is {0}; it must lie in 0 ≤ momentum < 1")]
    BadMomentum(f32),
    #[error("the {name} set has images of {found} pixels, but the network reads {expected}")]
    WrongImageSize {
        name: &'static str,
        expected: usize,
        found: usize,
    },
    #[error("the {0} set is empty")]
    EmptySet(&'static str),
    #[error("training diverged in epoch {epoch}: the loss became {loss}; lower the learning rate")]
    Diverged { epoch: usize, loss: f32 },
}

/// One linear layer: `x · weights + bias`.
#[derive(Debug, Clone, PartialEq)]
pub struct Layer {
    /// `inputs × outputs`.
    pub weights: Tensor2d,
    /// `1 × outputs`.
    pub bias: Tensor2d,
}

/// A multi-layer perceptron: linear layers with a ReLU after each but the last, then a
/// row-wise softmax.
#[derive(Debug, Clone, PartialEq)]
pub struct TrainedNetwork {
    pub layers: Vec<Layer>,
}

/// The loss and accuracies after each epoch.
#[derive(Debug, Clone, PartialEq)]
pub struct EpochRecord {
    pub epoch: usize,
    /// Mean cross-entropy over the training set's batches during the epoch.
    pub training_loss: f32,
    pub training_accuracy: f32,
    pub test_accuracy: f32,
}

/// Everything a training run measured.
#[derive(Debug, Clone, PartialEq)]
pub struct TrainingReport {
    pub epochs: Vec<EpochRecord>,
}

impl TrainingReport {
    /// The test accuracy after the last epoch.
    pub fn final_test_accuracy(&self) -> f32 {
        self.epochs
            .last()
            .map_or(0.0, |record| record.test_accuracy)
    }
}

impl TrainedNetwork {
    // ANCHOR: initialise
    /// Random weights, uniform in ±√(6 / inputs) before a ReLU and ±√(3 / inputs) before the
    /// softmax (the same reasoning as the standard workload's scaling: a ReLU halves the mean
    /// square, so layers it follows get twice the variance). Biases start at zero.
    pub fn initialise(inputs: usize, hidden_sizes: &[usize], classes: usize, seed: u64) -> Self {
        let mut widths = vec![inputs];
        widths.extend_from_slice(hidden_sizes);
        widths.push(classes);
        let layer_count = widths.len() - 1;
        let layers = (0..layer_count)
            .map(|index| {
                let (fan_in, fan_out) = (widths[index], widths[index + 1]);
                let gain = if index + 1 < layer_count { 2.0 } else { 1.0 };
                let limit = (3.0 * gain / fan_in as f32).sqrt();
                Layer {
                    weights: Tensor2d::random(
                        fan_in,
                        fan_out,
                        -limit..=limit,
                        seed.wrapping_add(index as u64),
                    ),
                    bias: Tensor2d::zeros(1, fan_out),
                }
            })
            .collect();
        TrainedNetwork { layers }
    }
    // ANCHOR_END: initialise

    /// The class probabilities for each row of `images`: the reference the graph runners are
    /// compared with.
    pub fn forward(&self, images: &Tensor2d) -> Tensor2d {
        self.forward_with(images, TrainingKernels::fastest())
    }

    fn forward_with(&self, images: &Tensor2d, kernels: TrainingKernels) -> Tensor2d {
        let mut activations = self.forward_keeping_activations(images, kernels);
        let logits = activations.pop().expect("at least one layer");
        softmax_rows(&logits)
    }

    /// The most probable class of each row.
    pub fn predict(&self, images: &Tensor2d) -> Vec<u8> {
        argmax_rows(&self.forward(images))
    }

    /// The fraction of `dataset` classified correctly.
    pub fn accuracy(&self, dataset: &Dataset) -> f32 {
        self.accuracy_with(dataset, TrainingKernels::fastest())
    }

    fn accuracy_with(&self, dataset: &Dataset, kernels: TrainingKernels) -> f32 {
        let predictions = argmax_rows(&self.forward_with(&dataset.images, kernels));
        accuracy(&predictions, &dataset.labels)
    }

    // ANCHOR: to_graph
    /// The network as a graph for a batch of `rows` images, which any runner of the crate
    /// executes: linear, ReLU, …, linear, softmax.
    pub fn to_graph(&self, rows: usize) -> Result<ValidGraph, GraphError> {
        let inputs = self.layers[0].weights.rows();
        let mut chain = ChainBuilder::input(rows, inputs);
        for (index, layer) in self.layers.iter().enumerate() {
            chain = chain.linear(layer.weights.clone(), layer.bias.clone());
            if index + 1 < self.layers.len() {
                chain = chain.relu();
            }
        }
        chain.softmax().output()
    }
    // ANCHOR_END: to_graph

    /// The input of every layer and the last layer's logits: `activations[0]` is the input,
    /// `activations[l]` the output of layer `l` after its ReLU, the last entry the logits.
    pub fn forward_keeping_activations(
        &self,
        images: &Tensor2d,
        kernels: TrainingKernels,
    ) -> Vec<Tensor2d> {
        let mut activations = vec![images.clone()];
        for (index, layer) in self.layers.iter().enumerate() {
            let mut output =
                kernels.multiply(activations.last().expect("the input"), &layer.weights);
            add_bias(&mut output, &layer.bias);
            if index + 1 < self.layers.len() {
                for value in output.as_mut_slice() {
                    *value = value.max(0.0);
                }
            }
            activations.push(output);
        }
        activations
    }
}

// ANCHOR: train
/// Trains a network on `split.training` with mini-batch gradient descent and momentum, and
/// measures it on `split.test` after every epoch.
pub fn train(
    config: &TrainingConfig,
    split: &Split,
) -> Result<(TrainedNetwork, TrainingReport), TrainingError> {
    check_config(config, split)?;
    let network = TrainedNetwork::initialise(PIXELS, &config.hidden_sizes, CLASSES, config.seed);
    continue_training(network, None, config, split)
}
// ANCHOR_END: train

/// Which weights of each layer may be non-zero: `true` keeps a weight, `false` holds it at
/// zero. Pruning trains the kept weights further with the others masked out.
pub type WeightMasks = Vec<Vec<bool>>;

/// Trains `network` further (its hidden sizes must match `config.hidden_sizes`), keeping
/// every weight that `masks` marks `false` at zero after every step.
pub fn continue_training(
    network: TrainedNetwork,
    masks: Option<&WeightMasks>,
    config: &TrainingConfig,
    split: &Split,
) -> Result<(TrainedNetwork, TrainingReport), TrainingError> {
    continue_training_with(network, masks, config, split, TrainingKernels::fastest())
}

/// [`continue_training`] with the inner loops run by `kernels`: every version
/// trains the same network, bit for bit, at its own speed.
pub fn continue_training_with(
    mut network: TrainedNetwork,
    masks: Option<&WeightMasks>,
    config: &TrainingConfig,
    split: &Split,
    kernels: TrainingKernels,
) -> Result<(TrainedNetwork, TrainingReport), TrainingError> {
    check_config(config, split)?;
    apply_masks(&mut network, masks);
    let mut velocities: Vec<Layer> = network
        .layers
        .iter()
        .map(|layer| Layer {
            weights: Tensor2d::zeros(layer.weights.rows(), layer.weights.columns()),
            bias: Tensor2d::zeros(1, layer.bias.columns()),
        })
        .collect();
    let mut shuffler = ChaCha8Rng::seed_from_u64(config.seed);
    let mut order: Vec<usize> = (0..split.training.len()).collect();
    let mut report = TrainingReport { epochs: Vec::new() };

    for epoch in 1..=config.epochs {
        order.shuffle(&mut shuffler);
        let mut loss_sum = 0.0;
        let mut batches = 0;
        for batch_indices in order.chunks(config.batch_size) {
            let batch = split.training.select(batch_indices);
            let (loss, gradients) = loss_and_gradients(&network, &batch, kernels);
            let weights_finite = network.layers.iter().all(|layer| {
                layer
                    .weights
                    .as_slice()
                    .iter()
                    .all(|value| value.is_finite())
            });
            if !loss.is_finite() || !weights_finite {
                return Err(TrainingError::Diverged { epoch, loss });
            }
            loss_sum += loss;
            batches += 1;
            for ((layer, velocity), gradient) in network
                .layers
                .iter_mut()
                .zip(&mut velocities)
                .zip(&gradients)
            {
                momentum_step(
                    &mut layer.weights,
                    &mut velocity.weights,
                    &gradient.weights,
                    config,
                );
                momentum_step(&mut layer.bias, &mut velocity.bias, &gradient.bias, config);
            }
            apply_masks(&mut network, masks);
        }
        report.epochs.push(EpochRecord {
            epoch,
            training_loss: loss_sum / batches as f32,
            training_accuracy: network.accuracy_with(&split.training, kernels),
            test_accuracy: network.accuracy_with(&split.test, kernels),
        });
    }
    Ok((network, report))
}

/// Sets every weight that `masks` marks `false` to zero.
fn apply_masks(network: &mut TrainedNetwork, masks: Option<&WeightMasks>) {
    let Some(masks) = masks else {
        return;
    };
    for (layer, mask) in network.layers.iter_mut().zip(masks) {
        for (weight, &keep) in layer.weights.as_mut_slice().iter_mut().zip(mask) {
            if !keep {
                *weight = 0.0;
            }
        }
    }
}

// ANCHOR: backpropagation
/// The mean cross-entropy of `batch` and its gradient with respect to every weight and bias.
///
/// For a softmax followed by cross-entropy, the gradient with respect to the logits is simply
/// `probabilities − one_hot(labels)` (divided by the batch size, for the mean). From there each
/// layer passes its gradient back: `∂weights = inputᵀ · ∂output`, `∂bias = Σ_rows ∂output`,
/// `∂input = ∂output · weightsᵀ`, and a ReLU lets the gradient through only where its input
/// was positive.
fn loss_and_gradients(
    network: &TrainedNetwork,
    batch: &Dataset,
    kernels: TrainingKernels,
) -> (f32, Vec<Layer>) {
    let activations = network.forward_keeping_activations(&batch.images, kernels);
    let logits = activations.last().expect("logits");
    let probabilities = softmax_rows(logits);
    let rows = batch.len() as f32;

    let mut loss = 0.0;
    let mut gradient = probabilities.clone();
    for (row, &label) in batch.labels.iter().enumerate() {
        // −log softmax(z)_label = log Σ exp(z) − z_label, computed from the logits so that a
        // confident wrong answer costs what it should instead of log(0).
        let values = logits.row(row);
        let largest = values.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let log_total = largest
            + values
                .iter()
                .map(|value| (value - largest).exp())
                .sum::<f32>()
                .ln();
        loss += log_total - values[label as usize];
        let value = gradient.get(row, label as usize);
        gradient.set(row, label as usize, value - 1.0);
    }
    for value in gradient.as_mut_slice() {
        *value /= rows;
    }

    let mut gradients = Vec::with_capacity(network.layers.len());
    for index in (0..network.layers.len()).rev() {
        let layer_input = &activations[index];
        gradients.push(Layer {
            weights: kernels.multiply_transposed_left(layer_input, &gradient),
            bias: sum_rows(&gradient),
        });
        if index > 0 {
            let mut input_gradient =
                kernels.multiply_transposed_right(&gradient, &network.layers[index].weights);
            // The input of this layer is the previous layer's output after its ReLU: zero
            // exactly where the ReLU blocked, so the gradient stops there.
            kernels.mask_by_relu(input_gradient.as_mut_slice(), layer_input.as_slice());
            gradient = input_gradient;
        }
    }
    gradients.reverse();
    (loss / rows, gradients)
}
// ANCHOR_END: backpropagation

// ANCHOR: momentum
/// One step of gradient descent with momentum for one tensor of parameters: the velocity
/// keeps `momentum` of its last value and adds the new gradient, and the parameter moves
/// against the velocity.
pub fn momentum_step(
    parameter: &mut Tensor2d,
    velocity: &mut Tensor2d,
    gradient: &Tensor2d,
    config: &TrainingConfig,
) {
    for ((value, speed), &slope) in parameter
        .as_mut_slice()
        .iter_mut()
        .zip(velocity.as_mut_slice())
        .zip(gradient.as_slice())
    {
        *speed = config.momentum * *speed + slope;
        *value -= config.learning_rate * *speed;
    }
}
// ANCHOR_END: momentum

/// Checks that `config` can train on `split`, with an error a person can act on.
pub fn check_config(config: &TrainingConfig, split: &Split) -> Result<(), TrainingError> {
    if let Some(index) = config.hidden_sizes.iter().position(|&width| width == 0) {
        return Err(TrainingError::EmptyHiddenLayer { index });
    }
    if config.batch_size == 0 {
        return Err(TrainingError::EmptyBatch);
    }
    if config.epochs == 0 {
        return Err(TrainingError::NoEpochs);
    }
    if !(config.learning_rate.is_finite() && config.learning_rate > 0.0) {
        return Err(TrainingError::BadLearningRate(config.learning_rate));
    }
    if !(0.0..1.0).contains(&config.momentum) {
        return Err(TrainingError::BadMomentum(config.momentum));
    }
    for (name, set) in [("training", &split.training), ("test", &split.test)] {
        if set.is_empty() {
            return Err(TrainingError::EmptySet(name));
        }
        if set.images.columns() != PIXELS {
            return Err(TrainingError::WrongImageSize {
                name,
                expected: PIXELS,
                found: set.images.columns(),
            });
        }
    }
    Ok(())
}

/// The fraction of `predictions` equal to `labels`.
pub fn accuracy(predictions: &[u8], labels: &[u8]) -> f32 {
    let correct = predictions
        .iter()
        .zip(labels)
        .filter(|(prediction, label)| prediction == label)
        .count();
    correct as f32 / labels.len().max(1) as f32
}

/// The index of the largest value of each row (the first, on ties).
pub fn argmax_rows(scores: &Tensor2d) -> Vec<u8> {
    (0..scores.rows())
        .map(|row| {
            let values = scores.row(row);
            let mut best = 0;
            for (column, &value) in values.iter().enumerate() {
                if value > values[best] {
                    best = column;
                }
            }
            best as u8
        })
        .collect()
}

/// Row-wise softmax, shifted by each row's maximum so that no exponential overflows.
pub fn softmax_rows(logits: &Tensor2d) -> Tensor2d {
    let mut output = logits.clone();
    for row in 0..output.rows() {
        let values = output.row_mut(row);
        let largest = values.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let mut total = 0.0;
        for value in values.iter_mut() {
            *value = (*value - largest).exp();
            total += *value;
        }
        for value in values.iter_mut() {
            *value /= total;
        }
    }
    output
}

fn add_bias(output: &mut Tensor2d, bias: &Tensor2d) {
    for row in 0..output.rows() {
        for (value, &offset) in output.row_mut(row).iter_mut().zip(bias.as_slice()) {
            *value += offset;
        }
    }
}

/// The sum of each column over all rows: the bias gradient, a `1 × columns` row.
pub fn sum_rows(tensor: &Tensor2d) -> Tensor2d {
    let mut sums = Tensor2d::zeros(1, tensor.columns());
    for row in 0..tensor.rows() {
        for (sum, &value) in sums.as_mut_slice().iter_mut().zip(tensor.row(row)) {
            *sum += value;
        }
    }
    sums
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inference::digits::Digits;
    use crate::runner::CpuGraphRunner;

    fn small_split() -> Split {
        Digits::split(0.2, 11).unwrap()
    }

    #[test]
    fn gradients_match_finite_differences() {
        // A tiny network on a few images: every analytic gradient entry against a central
        // difference of the loss.
        let split = small_split();
        let batch = split.training.select(&[0, 1, 2, 3, 4]);
        let network = TrainedNetwork::initialise(PIXELS, &[6], CLASSES, 3);
        let (_, gradients) = loss_and_gradients(&network, &batch, TrainingKernels::Naive);
        let step = 1e-2;
        let mut checked = 0;
        for (layer_index, layer) in network.layers.iter().enumerate() {
            for is_bias in [false, true] {
                let count = if is_bias {
                    layer.bias.len()
                } else {
                    layer.weights.len()
                };
                for entry in (0..count).step_by(7) {
                    let loss_with = |delta: f32| {
                        let mut changed = network.clone();
                        let tensor = if is_bias {
                            &mut changed.layers[layer_index].bias
                        } else {
                            &mut changed.layers[layer_index].weights
                        };
                        tensor.as_mut_slice()[entry] += delta;
                        loss_and_gradients(&changed, &batch, TrainingKernels::fastest()).0
                    };
                    let numeric = (loss_with(step) - loss_with(-step)) / (2.0 * step);
                    let analytic = if is_bias {
                        gradients[layer_index].bias.as_slice()[entry]
                    } else {
                        gradients[layer_index].weights.as_slice()[entry]
                    };
                    assert!(
                        (numeric - analytic).abs() <= 2e-3 + 0.05 * analytic.abs(),
                        "layer {layer_index}, {} entry {entry}: numeric {numeric}, analytic {analytic}",
                        if is_bias { "bias" } else { "weight" }
                    );
                    checked += 1;
                }
            }
        }
        assert!(checked > 50, "only {checked} entries checked");
    }

    #[test]
    fn default_training_reaches_the_stated_accuracy() {
        let split = small_split();
        let config = TrainingConfig {
            epochs: 12,
            ..TrainingConfig::default()
        };
        let (network, report) = train(&config, &split).unwrap();
        let first = &report.epochs[0];
        let last = report.epochs.last().unwrap();
        assert!(last.training_loss < first.training_loss / 2.0, "{report:?}");
        assert!(
            last.test_accuracy >= 0.94,
            "test accuracy {} after {} epochs",
            last.test_accuracy,
            config.epochs
        );
        assert_eq!(network.accuracy(&split.test), last.test_accuracy);
    }

    #[test]
    fn the_same_seed_gives_the_same_weights_bit_for_bit() {
        let split = small_split();
        let config = TrainingConfig {
            epochs: 2,
            hidden_sizes: vec![16],
            ..TrainingConfig::default()
        };
        let (first, _) = train(&config, &split).unwrap();
        let (second, _) = train(&config, &split).unwrap();
        assert_eq!(first, second);
        let (other, _) = train(
            &TrainingConfig {
                seed: config.seed + 1,
                ..config.clone()
            },
            &split,
        )
        .unwrap();
        assert_ne!(first, other);
    }

    #[test]
    fn every_version_of_the_products_trains_the_same_network() {
        // The speed-ups of the use case change how the products are computed, never which
        // numbers are added in which order: the weights and the report agree bit for bit.
        let split = small_split();
        let config = TrainingConfig {
            epochs: 2,
            hidden_sizes: vec![24, 12],
            ..TrainingConfig::default()
        };
        let start = TrainedNetwork::initialise(PIXELS, &config.hidden_sizes, CLASSES, 9);
        let runs: Vec<_> = TrainingKernels::ALL
            .iter()
            .map(|&kernels| {
                continue_training_with(start.clone(), None, &config, &split, kernels).unwrap()
            })
            .collect();
        assert_ne!(runs[0].0, start, "training changed nothing");
        for (kernels, run) in TrainingKernels::ALL.iter().zip(&runs) {
            assert_eq!(run, &runs[0], "{kernels:?} trains another network");
        }
    }

    #[test]
    fn the_graph_computes_what_the_network_computes() {
        let split = small_split();
        let network = TrainedNetwork::initialise(PIXELS, &[32, 16], CLASSES, 5);
        let graph = network.to_graph(split.test.len()).unwrap();
        let mut runner = CpuGraphRunner::prepare(&graph);
        let from_graph = runner.run(&split.test.images).unwrap();
        let reference = network.forward(&split.test.images);
        let comparison = from_graph
            .compare(&reference, crate::Tolerance::new(1e-5, 1e-6))
            .unwrap();
        assert!(comparison.passed(), "{comparison:?}");
    }

    #[test]
    fn bad_configurations_are_errors_a_person_can_read() {
        let split = small_split();
        let base = TrainingConfig::default();
        let cases = [
            (
                TrainingConfig {
                    hidden_sizes: vec![8, 0],
                    ..base.clone()
                },
                TrainingError::EmptyHiddenLayer { index: 1 },
            ),
            (
                TrainingConfig {
                    batch_size: 0,
                    ..base.clone()
                },
                TrainingError::EmptyBatch,
            ),
            (
                TrainingConfig {
                    epochs: 0,
                    ..base.clone()
                },
                TrainingError::NoEpochs,
            ),
            (
                TrainingConfig {
                    learning_rate: -1.0,
                    ..base.clone()
                },
                TrainingError::BadLearningRate(-1.0),
            ),
            (
                TrainingConfig {
                    momentum: 1.0,
                    ..base.clone()
                },
                TrainingError::BadMomentum(1.0),
            ),
        ];
        for (config, expected) in cases {
            assert_eq!(train(&config, &split).unwrap_err(), expected);
            assert!(!expected.to_string().contains("TrainingError"));
        }
        let exploding = TrainingConfig {
            learning_rate: 1e30,
            epochs: 3,
            ..base
        };
        assert!(matches!(
            train(&exploding, &split),
            Err(TrainingError::Diverged { .. })
        ));
    }
}
