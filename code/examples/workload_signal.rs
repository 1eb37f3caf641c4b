//! Follows the standard workload's activations layer by layer, and measures how much its
//! output depends on its input.
//!
//! ```sh
//! cargo run --release --example workload_signal -- 256 128        # size, depth
//! cargo run --release --example workload_signal -- 256 128 7      # and a seed (default: the sweeps')
//! ```
//!
//! The table gives the root mean square of every layer's result (after its ReLU, where it
//! has one), computed with the CPU operators. Then the input is replaced by a completely
//! different one, and the output's relative change ‖y′ − y‖ / ‖y‖ shows whether the
//! network still sees its input at this depth. The same measurement runs once more on the
//! same draws with every weight scaled for gain 1 (uniform in ±√(3/size) everywhere),
//! which ignores that a ReLU halves the mean square.

use galaxy::bench::hardware_description;
use galaxy::bench::sweeps::modes::SEED;
use galaxy::cpu::{linear_into, relu_in_place, softmax};
use galaxy::graph::random_mlp::Layer;
use galaxy::graph::{ChainBuilder, ValidGraph, Workload, random_mlp};
use galaxy::runner::CpuGraphRunner;
use galaxy::{Tensor2d, Tolerance};

/// The tolerance the differential tests of the execution modes compare with.
const COMPARISON_TOLERANCE: Tolerance = Tolerance::new(1e-4, 1e-5);

/// The seed of the second input: any seed the generator does not use for the first.
const OTHER_INPUT_SEED: u64 = 0x5ee_d0fa_d1ff;

fn main() {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let number = |index: usize, default: u64| -> u64 {
        arguments.get(index).map_or(default, |text| {
            text.parse()
                .unwrap_or_else(|_| fail(&format!("`{text}` is not a whole number")))
        })
    };
    let (size, depth, seed) = (
        number(0, 256) as usize,
        number(1, 128) as usize,
        number(2, SEED),
    );
    if size == 0 || depth == 0 {
        fail("the size and the depth must be at least 1");
    }
    let workload = random_mlp(size, depth, seed)
        .unwrap_or_else(|error| fail(&format!("random_mlp({size}, {depth}, {seed}): {error}")));

    println!("# command: cargo run --release --example workload_signal -- {size} {depth} {seed}");
    println!("# hardware: {}", hardware_description(None));
    println!("# random_mlp({size}, {depth}, {seed}): root mean square of every layer's result");
    println!("layer,relu,rms");
    println!("input,,{:.4}", root_mean_square(&workload.input));
    let layers = workload.layers();
    let activations = layer_results(&layers, &workload.input);
    for (index, (layer, activation)) in layers.iter().zip(&activations).enumerate() {
        let relu = if layer.relu { "yes" } else { "no" };
        println!("{},{relu},{:.4}", index + 1, root_mean_square(activation));
    }
    let (lowest, highest) = extremes(&activations);
    println!(
        "# rms over layers 1..{depth}: lowest {:.3} (layer {}), highest {:.3} (layer {})",
        lowest.1,
        lowest.0 + 1,
        highest.1,
        highest.0 + 1
    );

    let other_input = Tensor2d::random(size, size, -1.0..=1.0, OTHER_INPUT_SEED);
    let output = CpuGraphRunner::prepare(&workload.graph)
        .run(&workload.input)
        .unwrap_or_else(|error| fail(&error.to_string()));
    let by_layers = softmax(activations.last().unwrap_or(&workload.input))
        .unwrap_or_else(|error| fail(&error.to_string()));
    let agreement = by_layers
        .compare(&output, COMPARISON_TOLERANCE)
        .unwrap_or_else(|error| fail(&error.to_string()));
    if !agreement.passed() {
        fail(&format!(
            "the layer-by-layer run disagrees with the graph runner: {agreement}"
        ));
    }
    let other_output = CpuGraphRunner::prepare(&workload.graph)
        .run(&other_input)
        .unwrap_or_else(|error| fail(&error.to_string()));
    report_sensitivity("the standard workload", &output, &other_output);

    let gain_one = Workload {
        graph: with_gain_one(&layers),
        input: workload.input.clone(),
    };
    let (lowest, highest) = extremes(&layer_results(&gain_one.layers(), &gain_one.input));
    let mut runner = CpuGraphRunner::prepare(&gain_one.graph);
    let gain_one_output = runner
        .run(&gain_one.input)
        .unwrap_or_else(|error| fail(&error.to_string()));
    let gain_one_other = runner
        .run(&other_input)
        .unwrap_or_else(|error| fail(&error.to_string()));
    println!(
        "# gain 1 before every ReLU as well (weights uniform in ±√(3/size), the same draws): \
         rms from {:.2e} (layer {}) to {:.2e} (layer {})",
        lowest.1,
        lowest.0 + 1,
        highest.1,
        highest.0 + 1
    );
    report_sensitivity("the gain-1 network", &gain_one_output, &gain_one_other);
}

/// The result of every layer on `input`, each after its ReLU where it has one.
fn layer_results(layers: &[Layer<'_>], input: &Tensor2d) -> Vec<Tensor2d> {
    let mut results: Vec<Tensor2d> = Vec::new();
    for layer in layers {
        let previous = results.last().unwrap_or(input);
        let mut result = Tensor2d::zeros(previous.rows(), layer.weights.columns());
        linear_into(previous, layer.weights, layer.bias, &mut result)
            .unwrap_or_else(|error| fail(&error.to_string()));
        if layer.relu {
            relu_in_place(&mut result);
        }
        results.push(result);
    }
    results
}

/// The same network with the weights before each ReLU divided by √2: gain 1 everywhere.
fn with_gain_one(layers: &[Layer<'_>]) -> ValidGraph {
    let (rows, columns) = layers[0].weights.shape();
    let chain = layers
        .iter()
        .fold(ChainBuilder::input(rows, columns), |chain, layer| {
            let mut weights = layer.weights.clone();
            if layer.relu {
                for weight in weights.as_mut_slice() {
                    *weight *= std::f32::consts::FRAC_1_SQRT_2;
                }
            }
            let chain = chain.linear(weights, layer.bias.clone());
            if layer.relu { chain.relu() } else { chain }
        });
    chain
        .softmax()
        .output()
        .unwrap_or_else(|error| fail(&error.to_string()))
}

fn root_mean_square(tensor: &Tensor2d) -> f64 {
    let values = tensor.as_slice();
    let sum: f64 = values.iter().map(|&value| f64::from(value).powi(2)).sum();
    (sum / values.len() as f64).sqrt()
}

/// The (index, rms) of the layers with the lowest and the highest rms.
fn extremes(results: &[Tensor2d]) -> ((usize, f64), (usize, f64)) {
    let rms: Vec<(usize, f64)> = results.iter().map(root_mean_square).enumerate().collect();
    let lowest = rms.iter().copied().min_by(|a, b| a.1.total_cmp(&b.1));
    let highest = rms.iter().copied().max_by(|a, b| a.1.total_cmp(&b.1));
    (
        lowest.unwrap_or((0, f64::NAN)),
        highest.unwrap_or((0, f64::NAN)),
    )
}

fn report_sensitivity(name: &str, output: &Tensor2d, other_output: &Tensor2d) {
    let difference: f64 = output
        .as_slice()
        .iter()
        .zip(other_output.as_slice())
        .map(|(&a, &b)| (f64::from(a) - f64::from(b)).powi(2))
        .sum();
    let norm: f64 = output
        .as_slice()
        .iter()
        .map(|&a| f64::from(a).powi(2))
        .sum();
    let comparison = other_output
        .compare(output, COMPARISON_TOLERANCE)
        .unwrap_or_else(|error| fail(&error.to_string()));
    println!(
        "# {name}: another input changes the output by {:.3e} (relative, ‖y′ − y‖ / ‖y‖); \
         {} of {} elements differ by more than the comparison tolerance (relative {:e}, absolute {:e})",
        (difference / norm).sqrt(),
        comparison.elements_outside_tolerance,
        comparison.compared_elements,
        COMPARISON_TOLERANCE.relative,
        COMPARISON_TOLERANCE.absolute,
    );
}

fn fail(message: &str) -> ! {
    eprintln!("workload_signal: {message}");
    std::process::exit(1);
}
