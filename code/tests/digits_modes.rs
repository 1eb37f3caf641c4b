//! The trained digits network, turned into a graph, gives the training code's probabilities
//! and predictions in every execution mode, for batches of one image, an odd size, and the
//! whole test set; and its quantised and sparse versions predict alike in every mode that
//! runs them.

mod common;

use common::{assert_close, context};
use galaxy::Tolerance;
use galaxy::cpu::int8::Granularity;
use galaxy::inference::training::argmax_rows;
use galaxy::inference::{Digits, TrainedNetwork, TrainingConfig, train};
use galaxy::runner::ExecutionMode;
use galaxy::runner::execution::WeightStorage;
use galaxy::runner::execution::{CompiledBuffers, prepare_compiled_variant};
use galaxy::runner::gpu::ComputePasses;

/// As in execution_modes.rs: GPU and CPU round differently, and the differences pass
/// through three layers; the softmax keeps every output within 0 … 1.
const MODE_TOLERANCE: Tolerance = Tolerance::new(1e-4, 1e-5);

fn trained_network() -> (TrainedNetwork, galaxy::inference::Split) {
    let split = Digits::split(0.2, 1).unwrap();
    let config = TrainingConfig {
        epochs: 4,
        ..TrainingConfig::default()
    };
    let (network, report) = train(&config, &split).unwrap();
    // A network that learned something, so that its predictions are worth comparing.
    assert!(report.final_test_accuracy() > 0.9, "{report:?}");
    (network, split)
}

/// Predictions may differ only where the reference's two best classes are closer than the
/// tolerance lets a mode's rounding move them.
fn assert_same_predictions(actual: &[u8], expected: &galaxy::Tensor2d, what: &str) {
    let reference = argmax_rows(expected);
    for (row, (&got, &wanted)) in actual.iter().zip(&reference).enumerate() {
        if got != wanted {
            let gap = expected.get(row, wanted as usize) - expected.get(row, got as usize);
            assert!(
                gap < 1e-4,
                "{what}: image {row} classified {got} instead of {wanted} (gap {gap})"
            );
        }
    }
}

#[test]
fn every_mode_runs_the_trained_network_as_the_training_code_does() {
    let (network, split) = trained_network();
    for batch in [1, 37, split.test.len()] {
        let indices: Vec<usize> = (0..batch).collect();
        let images = split.test.select(&indices).images;
        let expected = network.forward(&images);
        let graph = network.to_graph(batch).unwrap();
        for mode in ExecutionMode::ALL {
            let mut execution = mode.prepare(&graph, Some(context())).unwrap();
            let actual = execution.run(&images, 1).unwrap().pop().unwrap();
            let what = format!("{mode:?}, batch {batch}");
            assert_close(&actual, &expected, MODE_TOLERANCE, &what);
            assert_same_predictions(&argmax_rows(&actual), &expected, &what);
        }
    }
}

#[test]
fn the_compiled_mode_overwrites_every_poisoned_buffer() {
    // Every buffer of the compiled runner filled with NaN first: a kernel that skipped an
    // output element would leave a NaN, which no tolerance accepts.
    let (network, split) = trained_network();
    let images = split.test.images.clone();
    let expected = network.forward(&images);
    let graph = network.to_graph(images.rows()).unwrap();
    for buffers in [CompiledBuffers::Reused, CompiledBuffers::OnePerTensor] {
        let runner =
            prepare_compiled_variant(context(), &graph, buffers, ComputePasses::OnePerRun).unwrap();
        for buffer in runner.buffers() {
            buffer.fill(context(), f32::NAN);
        }
        let actual = runner.run(&images).unwrap();
        assert_close(&actual, &expected, MODE_TOLERANCE, &format!("{buffers:?}"));
        assert_same_predictions(&argmax_rows(&actual), &expected, &format!("{buffers:?}"));
    }
}

#[test]
fn quantised_and_sparse_networks_predict_alike_on_the_cpu_and_in_every_gpu_mode() {
    // The same quantised (or CSR) graph in every mode that runs it: the `Cpu` mode is the
    // reference. An int8 graph can differ a little more than an `f32` one: a hidden value
    // one rounding away from a half-way point quantises to the neighbouring level on one
    // side only, so the tolerance is ten times the `f32` modes'.
    let (network, split) = trained_network();
    let images = split.test.images.clone();
    let graph = network.to_graph(images.rows()).unwrap();
    for storage in [
        WeightStorage::Int8(Granularity::PerTensor),
        WeightStorage::Int8(Granularity::PerOutput),
        WeightStorage::Sparse {
            maximum_density: 1.0,
        },
    ] {
        let mut reference = ExecutionMode::Cpu
            .prepare_with_weights(&graph, storage, None)
            .unwrap();
        let expected = reference.run(&images, 1).unwrap().remove(0);
        for mode in ExecutionMode::ALL {
            if !mode.runs_cheaper_operators() {
                continue;
            }
            let mut execution = mode
                .prepare_with_weights(&graph, storage, Some(context()))
                .unwrap();
            let actual = execution.run(&images, 1).unwrap().remove(0);
            let what = format!("{storage:?}, {mode:?}");
            assert_close(&actual, &expected, Tolerance::new(1e-3, 1e-4), &what);
            assert_same_predictions(&argmax_rows(&actual), &expected, &what);
        }
    }
}
