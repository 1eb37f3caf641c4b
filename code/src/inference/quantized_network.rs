//! A trained network with every linear layer quantised to int8: the same function as the
//! fp32 network, computed with int8 operands and `i32` sums, to measure what int8 costs in
//! accuracy.

use crate::inference::digits::Dataset;
use crate::inference::quantization::{
    Granularity, QuantizationError, QuantizedWeights, linear_int8,
};
use crate::inference::training::{TrainedNetwork, accuracy, argmax_rows};
use crate::tensor::Tensor2d;

/// The layers of a [`TrainedNetwork`], quantised.
#[derive(Debug, Clone, PartialEq)]
pub struct QuantizedNetwork {
    pub layers: Vec<(QuantizedWeights, Tensor2d)>,
}

impl QuantizedNetwork {
    // ANCHOR: quantize_network
    /// Quantises every layer's weights with `granularity`; biases stay `f32` (they are added
    /// once per output, so int8 would save almost nothing and cost accuracy).
    pub fn quantize(
        network: &TrainedNetwork,
        granularity: Granularity,
    ) -> Result<QuantizedNetwork, QuantizationError> {
        let layers = network
            .layers
            .iter()
            .map(|layer| {
                Ok((
                    QuantizedWeights::quantize(&layer.weights, granularity)?,
                    layer.bias.clone(),
                ))
            })
            .collect::<Result<_, QuantizationError>>()?;
        Ok(QuantizedNetwork { layers })
    }
    // ANCHOR_END: quantize_network

    /// Class probabilities: int8 linear layers, ReLU between them, softmax at the end.
    pub fn forward(&self, images: &Tensor2d) -> Result<Tensor2d, QuantizationError> {
        let mut activations = images.clone();
        for (index, (weights, bias)) in self.layers.iter().enumerate() {
            activations = linear_int8(&activations, weights, bias)?;
            if index + 1 < self.layers.len() {
                for value in activations.as_mut_slice() {
                    *value = value.max(0.0);
                }
            }
        }
        crate::cpu::softmax_in_place(&mut activations)
            .expect("row-wise softmax accepts every shape");
        Ok(activations)
    }

    /// The fraction of `dataset` classified correctly.
    pub fn accuracy(&self, dataset: &Dataset) -> Result<f32, QuantizationError> {
        let predictions = argmax_rows(&self.forward(&dataset.images)?);
        Ok(accuracy(&predictions, &dataset.labels))
    }

    /// The bytes the weights and biases take, against four per weight in `f32`.
    pub fn size_in_bytes(&self) -> usize {
        self.layers
            .iter()
            .map(|(weights, bias)| weights.size_in_bytes() + 4 * bias.len())
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inference::digits::Digits;
    use crate::inference::training::{TrainingConfig, train};

    #[test]
    fn int8_keeps_the_trained_accuracy_within_a_point() {
        let split = Digits::split(0.2, 11).unwrap();
        let config = TrainingConfig {
            epochs: 10,
            ..TrainingConfig::default()
        };
        let (network, _) = train(&config, &split).unwrap();
        let fp32 = network.accuracy(&split.test);
        for granularity in [Granularity::PerTensor, Granularity::PerOutput] {
            let quantized = QuantizedNetwork::quantize(&network, granularity).unwrap();
            let int8 = quantized.accuracy(&split.test).unwrap();
            assert!(
                (int8 - fp32).abs() <= 0.01,
                "{granularity:?}: fp32 {fp32}, int8 {int8}"
            );
            let fp32_bytes: usize = network
                .layers
                .iter()
                .map(|layer| 4 * (layer.weights.len() + layer.bias.len()))
                .sum();
            assert!(quantized.size_in_bytes() * 3 < fp32_bytes);
        }
    }
}
