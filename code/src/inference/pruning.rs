//! Magnitude pruning: set the smallest weights of each layer to zero, train the rest a little
//! further with the pruned ones held at zero, and run the result as sparse layers.
//!
//! A weight near zero contributes little to any output, so removing the fraction `s`
//! (the *sparsity*) with the smallest magnitudes changes the network least. Accuracy usually
//! survives a surprising sparsity, and fine-tuning (a few epochs with the pruned weights
//! masked) recovers most of what pruning lost. Speed is another matter: a sparse layer skips
//! the zeros but pays for indices and irregular access, so it is faster than a dense one only
//! below some density, which measurements decide (the graph compiler's `sparsify` pass uses
//! sparse layers at or below `compiler::SPARSE_DENSITY_THRESHOLD`, the measured crossover).

use thiserror::Error;

use crate::inference::digits::Split;
use crate::inference::training::{
    TrainedNetwork, TrainingConfig, TrainingError, TrainingReport, WeightMasks, continue_training,
};
use crate::parallel::csr::{CsrError, CsrMatrix, dense_times_sparse};
use crate::tensor::{ShapeError, Tensor2d};

/// Pruning that cannot be done, said for a person.
#[derive(Debug, Error, PartialEq)]
pub enum PruningError {
    #[error("a sparsity of {0} is not a fraction of the weights; it must lie in 0 ≤ sparsity < 1")]
    BadSparsity(f32),
    #[error(transparent)]
    Training(#[from] TrainingError),
    #[error(transparent)]
    Sparse(#[from] CsrError),
    #[error(transparent)]
    Shape(#[from] ShapeError),
}

// ANCHOR: magnitude_masks
/// For each layer, keeps the `1 − sparsity` fraction of its weights with the largest
/// magnitudes (rounded to the nearest weight) and marks the rest for removal. Every layer
/// loses the same fraction, so no layer is cut off entirely.
pub fn magnitude_masks(
    network: &TrainedNetwork,
    sparsity: f32,
) -> Result<WeightMasks, PruningError> {
    if !(0.0..1.0).contains(&sparsity) {
        return Err(PruningError::BadSparsity(sparsity));
    }
    Ok(network
        .layers
        .iter()
        .map(|layer| {
            let weights = layer.weights.as_slice();
            let remove = (weights.len() as f32 * sparsity).round() as usize;
            // Sort the indices by magnitude, smallest first (ties by position, so the
            // result does not depend on the sort's stability).
            let mut order: Vec<usize> = (0..weights.len()).collect();
            order.sort_by(|&a, &b| {
                weights[a]
                    .abs()
                    .total_cmp(&weights[b].abs())
                    .then(a.cmp(&b))
            });
            let mut keep = vec![true; weights.len()];
            for &index in &order[..remove] {
                keep[index] = false;
            }
            keep
        })
        .collect())
}
// ANCHOR_END: magnitude_masks

/// Zeroes the weights `masks` marks for removal.
pub fn apply(network: &TrainedNetwork, masks: &WeightMasks) -> TrainedNetwork {
    let mut pruned = network.clone();
    for (layer, mask) in pruned.layers.iter_mut().zip(masks) {
        for (weight, &keep) in layer.weights.as_mut_slice().iter_mut().zip(mask) {
            if !keep {
                *weight = 0.0;
            }
        }
    }
    pruned
}

// ANCHOR: prune_and_fine_tune
/// Prunes `network` to `sparsity` and trains the kept weights for `config.epochs` more epochs
/// with the pruned ones held at zero.
pub fn prune_and_fine_tune(
    network: &TrainedNetwork,
    sparsity: f32,
    config: &TrainingConfig,
    split: &Split,
) -> Result<(TrainedNetwork, TrainingReport), PruningError> {
    let masks = magnitude_masks(network, sparsity)?;
    Ok(continue_training(
        network.clone(),
        Some(&masks),
        config,
        split,
    )?)
}
// ANCHOR_END: prune_and_fine_tune

/// A network whose linear layers are stored sparse (CSR over the `inputs × outputs` weights).
#[derive(Debug, Clone, PartialEq)]
pub struct SparseNetwork {
    pub layers: Vec<(CsrMatrix, Tensor2d)>,
}

impl SparseNetwork {
    /// Stores every exactly-zero weight of `network` implicitly.
    pub fn from_network(network: &TrainedNetwork) -> Result<SparseNetwork, PruningError> {
        let layers = network
            .layers
            .iter()
            .map(|layer| {
                Ok((
                    CsrMatrix::from_dense(&layer.weights, 0.0)?,
                    layer.bias.clone(),
                ))
            })
            .collect::<Result<_, CsrError>>()?;
        Ok(SparseNetwork { layers })
    }

    /// The fraction of weights stored, over all layers.
    pub fn density(&self) -> f64 {
        let stored: usize = self
            .layers
            .iter()
            .map(|(weights, _)| weights.non_zeros())
            .sum();
        let total: usize = self
            .layers
            .iter()
            .map(|(weights, _)| weights.rows() * weights.columns())
            .sum();
        stored as f64 / total.max(1) as f64
    }

    /// Class probabilities, computed with sparse products: the same function as the dense
    /// network's `forward`.
    pub fn forward(&self, images: &Tensor2d) -> Result<Tensor2d, PruningError> {
        let mut activations = images.clone();
        for (index, (weights, bias)) in self.layers.iter().enumerate() {
            let mut output = dense_times_sparse(&activations, weights)?;
            for row in 0..output.rows() {
                for (value, &offset) in output.row_mut(row).iter_mut().zip(bias.as_slice()) {
                    *value += offset;
                    if index + 1 < self.layers.len() {
                        *value = value.max(0.0);
                    }
                }
            }
            activations = output;
        }
        crate::cpu::softmax_in_place(&mut activations)?;
        Ok(activations)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inference::digits::{CLASSES, Digits, PIXELS};
    use crate::inference::training::{argmax_rows, train};

    #[test]
    fn masks_remove_the_smallest_magnitudes_of_each_layer() {
        let network = TrainedNetwork::initialise(PIXELS, &[16], CLASSES, 9);
        for sparsity in [0.0, 0.25, 0.5, 0.9] {
            let masks = magnitude_masks(&network, sparsity).unwrap();
            for (layer, mask) in network.layers.iter().zip(&masks) {
                let weights = layer.weights.as_slice();
                let removed = mask.iter().filter(|&&keep| !keep).count();
                assert_eq!(removed, (weights.len() as f32 * sparsity).round() as usize);
                let largest_removed = weights
                    .iter()
                    .zip(mask)
                    .filter(|(_, keep)| !**keep)
                    .map(|(weight, _)| weight.abs())
                    .fold(0.0f32, f32::max);
                let smallest_kept = weights
                    .iter()
                    .zip(mask)
                    .filter(|(_, keep)| **keep)
                    .map(|(weight, _)| weight.abs())
                    .fold(f32::INFINITY, f32::min);
                assert!(largest_removed <= smallest_kept, "sparsity {sparsity}");
            }
        }
        for bad in [-0.1, 1.0, f32::NAN] {
            assert!(matches!(
                magnitude_masks(&network, bad),
                Err(PruningError::BadSparsity(_))
            ));
        }
    }

    #[test]
    fn the_sparse_network_computes_what_the_pruned_dense_one_computes() {
        let split = Digits::split(0.2, 11).unwrap();
        let network = TrainedNetwork::initialise(PIXELS, &[32, 16], CLASSES, 5);
        for sparsity in [0.0, 0.5, 0.95] {
            let pruned = apply(&network, &magnitude_masks(&network, sparsity).unwrap());
            let sparse = SparseNetwork::from_network(&pruned).unwrap();
            assert!((sparse.density() - (1.0 - sparsity as f64)).abs() < 0.01);
            let comparison = sparse
                .forward(&split.test.images)
                .unwrap()
                .compare(
                    &pruned.forward(&split.test.images),
                    crate::Tolerance::new(1e-5, 1e-6),
                )
                .unwrap();
            assert!(comparison.passed(), "sparsity {sparsity}: {comparison:?}");
        }
    }

    #[test]
    fn fine_tuning_keeps_pruned_weights_at_zero_and_recovers_accuracy() {
        let split = Digits::split(0.2, 11).unwrap();
        let config = TrainingConfig {
            epochs: 10,
            ..TrainingConfig::default()
        };
        let (network, _) = train(&config, &split).unwrap();
        let sparsity = 0.9;
        let masks = magnitude_masks(&network, sparsity).unwrap();
        let pruned_only = apply(&network, &masks);
        let fine_tune = TrainingConfig {
            epochs: 3,
            ..config
        };
        let (tuned, _) = prune_and_fine_tune(&network, sparsity, &fine_tune, &split).unwrap();
        for (layer, mask) in tuned.layers.iter().zip(&masks) {
            for (weight, keep) in layer.weights.as_slice().iter().zip(mask) {
                if !keep {
                    assert_eq!(*weight, 0.0);
                }
            }
        }
        let before = pruned_only.accuracy(&split.test);
        let after = tuned.accuracy(&split.test);
        assert!(after >= before, "pruned {before}, fine-tuned {after}");
        assert!(
            after > 0.85,
            "fine-tuned accuracy {after} at sparsity {sparsity}"
        );
        let sparse = SparseNetwork::from_network(&tuned).unwrap();
        let predictions = argmax_rows(&sparse.forward(&split.test.images).unwrap());
        assert_eq!(predictions, tuned.predict(&split.test.images));
    }
}
