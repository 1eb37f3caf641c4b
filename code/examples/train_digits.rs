//! Trains the digits classifier and prints the loss and accuracy after every epoch, then runs
//! the trained network as a graph on the CPU runner and checks it agrees.
//!
//! `cargo run --release -p galaxy --example train_digits -- [epochs] [seed]`

use galaxy::inference::training::argmax_rows;
use galaxy::inference::{Digits, TrainingConfig, train};
use galaxy::runner::CpuGraphRunner;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut arguments = std::env::args().skip(1);
    let defaults = TrainingConfig::default();
    let epochs = match arguments.next() {
        Some(text) => text.parse()?,
        None => defaults.epochs,
    };
    let seed = match arguments.next() {
        Some(text) => text.parse()?,
        None => defaults.seed,
    };
    let config = TrainingConfig {
        epochs,
        seed,
        ..defaults
    };

    // ANCHOR: train_and_run
    let split = Digits::split(0.2, 1)?;
    let (network, report) = train(&config, &split)?;
    println!("epoch  training loss  training accuracy  test accuracy");
    for record in &report.epochs {
        println!(
            "{:5}  {:13.4}  {:17.1}%  {:12.1}%",
            record.epoch,
            record.training_loss,
            100.0 * record.training_accuracy,
            100.0 * record.test_accuracy
        );
    }

    // The trained network is an ordinary graph: any runner of the crate can execute it.
    let graph = network.to_graph(split.test.len())?;
    let probabilities = CpuGraphRunner::prepare(&graph).run(&split.test.images)?;
    let predictions = argmax_rows(&probabilities);
    let agree = predictions == network.predict(&split.test.images);
    println!(
        "{} training and {} test images; the graph runner agrees with the training code: {agree}",
        split.training.len(),
        split.test.len()
    );
    // ANCHOR_END: train_and_run
    Ok(())
}
