//! Preparing a configuration and timing it: every configuration prepared first, then the
//! samples of all of them taken in turn.

use std::time::Instant;

use galaxy::bench::repeats::{Repeats, interleaved};
use galaxy::compiler::{quantize, sparsify};
use galaxy::cpu::int8::Granularity;
use galaxy::gpu::GpuContext;
use galaxy::graph::{Operator, ValidGraph};
use galaxy::inference::training::{accuracy, argmax_rows};
use galaxy::inference::{Split, TrainedNetwork};
use galaxy::runner::execution::Execution;
use galaxy::tensor::Tensor2d;

use crate::steps::{Batch, Configuration, Weights};

/// The trained network, and its pruned and fine-tuned copy.
pub struct Networks {
    pub full: TrainedNetwork,
    pub pruned: TrainedNetwork,
}

/// One configuration, prepared: its executions (one per call size: a last, shorter batch
/// needs its own), the test images cut into its batches, and what its first pass found.
pub struct Prepared {
    executions: Vec<(usize, Execution<'static>)>,
    batches: Vec<Tensor2d>,
    images: usize,
    pub images_per_call: usize,
    /// Passes over the test set per timed sample.
    passes: usize,
    pub accuracy_percent: f64,
    /// Test images whose predicted class differs from the full fp32 network's.
    pub changed_predictions: usize,
    predictions: Vec<u8>,
}

// ANCHOR: measure
impl Prepared {
    /// Prepares the graphs (the weight passes run here, once, not in the timed passes),
    /// runs one pass to measure the accuracy, and a second to decide how many passes one
    /// sample takes.
    fn new(
        configuration: Configuration,
        networks: &Networks,
        split: &Split,
        reference_predictions: &[u8],
        context: Option<&'static GpuContext>,
    ) -> Result<Prepared, Box<dyn std::error::Error>> {
        let test = &split.test;
        let images_per_call = match configuration.batch {
            Batch::Images(count) => count.min(test.len()),
            Batch::WholeTestSet => test.len(),
        };
        let network = match configuration.weights {
            Weights::PrunedSparse => &networks.pruned,
            _ => &networks.full,
        };
        let mut executions = Vec::new();
        for rows in batch_sizes(test.len(), images_per_call) {
            let graph = network.to_graph(rows)?;
            check_storage(&graph, configuration)?;
            let execution = configuration.mode.prepare_with_weights(
                &graph,
                configuration.storage(),
                context,
            )?;
            executions.push((rows, execution));
        }
        let mut prepared = Prepared {
            executions,
            batches: cut_into_batches(&test.images, images_per_call)?,
            images: test.len(),
            images_per_call,
            passes: 1,
            accuracy_percent: 0.0,
            changed_predictions: 0,
            predictions: Vec::with_capacity(test.len()),
        };
        prepared.pass()?;
        prepared.accuracy_percent = 100.0 * accuracy(&prepared.predictions, &test.labels) as f64;
        prepared.changed_predictions = prepared
            .predictions
            .iter()
            .zip(reference_predictions)
            .filter(|(a, b)| a != b)
            .count();
        // Enough passes per sample to last about 20 ms, so that the clock's resolution
        // and one-off interruptions matter little.
        let start = Instant::now();
        prepared.pass()?;
        let once = start.elapsed().as_secs_f64().max(1e-7);
        prepared.passes = ((0.02 / once).ceil() as usize).clamp(1, 10_000);
        Ok(prepared)
    }

    /// One pass over the test set: every batch through the execution prepared for its
    /// size, the class probabilities read back and turned into predictions.
    fn pass(&mut self) -> Result<(), Box<dyn std::error::Error>> {
        self.predictions.clear();
        for batch in &self.batches {
            let (_, execution) = self
                .executions
                .iter_mut()
                .find(|(rows, _)| *rows == batch.rows())
                .ok_or("no execution prepared for a batch size")?;
            let probabilities = execution.run(batch, 1)?;
            self.predictions.extend(argmax_rows(&probabilities[0]));
        }
        Ok(())
    }

    /// One timed sample: milliseconds per image over `passes` passes.
    fn sample(&mut self) -> Result<f64, Box<dyn std::error::Error>> {
        let start = Instant::now();
        for _ in 0..self.passes {
            self.pass()?;
        }
        let milliseconds = start.elapsed().as_secs_f64() * 1000.0;
        Ok(milliseconds / (self.passes * self.images) as f64)
    }
}
// ANCHOR_END: measure

/// Prepares every configuration, then takes `repeats` samples of each, interleaved (one of
/// each in turn), so that whatever else the machine does slows every configuration alike.
pub fn measure_all(
    configurations: &[Configuration],
    networks: &Networks,
    split: &Split,
    reference_predictions: &[u8],
    repeats: usize,
    context: Option<&'static GpuContext>,
) -> Result<Vec<(Prepared, Repeats)>, Box<dyn std::error::Error>> {
    let mut prepared = configurations
        .iter()
        .map(|&configuration| {
            Prepared::new(
                configuration,
                networks,
                split,
                reference_predictions,
                context,
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    let samples = interleaved(prepared.len(), repeats, |index, _| {
        prepared[index].sample().map(Some)
    })?;
    prepared
        .into_iter()
        .zip(samples)
        .map(|(prepared, samples)| Ok((prepared, Repeats::new(samples).ok_or("no samples")?)))
        .collect()
}

/// The call sizes a pass over `total` images in calls of `per_call` needs: `per_call`, and
/// the remainder if there is one.
fn batch_sizes(total: usize, per_call: usize) -> Vec<usize> {
    let mut sizes = Vec::new();
    if total >= per_call {
        sizes.push(per_call);
    }
    if !total.is_multiple_of(per_call) {
        sizes.push(total % per_call);
    }
    sizes
}

fn cut_into_batches(
    images: &Tensor2d,
    per_call: usize,
) -> Result<Vec<Tensor2d>, Box<dyn std::error::Error>> {
    let columns = images.columns();
    images
        .as_slice()
        .chunks(per_call * columns)
        .map(|chunk| {
            Ok(Tensor2d::from_vec(
                chunk.len() / columns,
                columns,
                chunk.to_vec(),
            )?)
        })
        .collect()
}

/// Checks that the pass the storage asks for really rewrote every linear layer, so that a
/// step never measures the fp32 layers under another name.
fn check_storage(
    graph: &ValidGraph,
    configuration: Configuration,
) -> Result<(), Box<dyn std::error::Error>> {
    let count = |graph: &ValidGraph, wanted: fn(&Operator) -> bool| {
        graph
            .graph()
            .nodes
            .iter()
            .filter(|node| wanted(&node.operator))
            .count()
    };
    let (rewritten, name) = match configuration.weights {
        Weights::Float32 => return Ok(()),
        Weights::Int8 => (
            count(&quantize(graph, Granularity::PerOutput)?, |operator| {
                matches!(operator, Operator::LinearInt8 { .. })
            }),
            "int8",
        ),
        Weights::PrunedSparse => (
            count(&sparsify(graph, 1.0)?, |operator| {
                matches!(operator, Operator::LinearSparse { .. })
            }),
            "sparse",
        ),
    };
    let layers = count(graph, |operator| {
        matches!(
            operator,
            Operator::Linear | Operator::LinearRelu | Operator::LinearReluSoftmax
        )
    });
    if rewritten != layers {
        return Err(format!("only {rewritten} of {layers} linear layers became {name}").into());
    }
    Ok(())
}
