//! Where a sparse linear layer starts to beat a dense one: the measurement behind the
//! `sparsify` pass's `SPARSE_DENSITY_THRESHOLD`.
//!
//! One linear layer (`size × size` weights with a given fraction of non-zeros, a batch of
//! 64 rows) is built as a graph and run by the `CpuGraph` mode twice: as it is (the dense,
//! packed, register-blocked kernel on every core) and after the `sparsify` pass (the CSR
//! kernel on every core). Both results are checked against each other before anything is
//! timed.
//!
//! `cargo run --release -p galaxy --example sparse_threshold -- [--out DIR] [--repeats R]
//!  [--machine NAME]` writes `DIR/inference-sparsity-<machine>.csv` and prints the table and
//! the crossover (the highest density at which the sparse layer is still faster) per size.

use std::path::PathBuf;
use std::time::Instant;

use clap::Parser;
use galaxy::bench::hardware::hardware_description;
use galaxy::bench::repeats::Repeats;
use galaxy::figure::{Axis, Figure, Point, Spread};
use galaxy::graph::ChainBuilder;
use galaxy::parallel::csr::random_sparse_dense;
use galaxy::runner::{ExecutionMode, WeightStorage};
use galaxy::tensor::{Tensor2d, Tolerance};

#[derive(Parser)]
struct Options {
    /// Where the CSV file goes.
    #[arg(long, default_value = "figures/data")]
    out: PathBuf,
    /// Repeats of every timed point (median, with the fastest and slowest).
    #[arg(long, default_value_t = 5)]
    repeats: usize,
    /// The machine's short name in the file name (e.g. epyc, h100).
    #[arg(long, default_value = "epyc")]
    machine: String,
}

const BATCH: usize = 64;
const SIZES: [usize; 2] = [256, 1024];
const DENSITIES_PERCENT: [f64; 10] = [1.0, 2.0, 3.0, 5.0, 7.0, 10.0, 20.0, 30.0, 50.0, 100.0];

/// The mean time of one call of `work` over enough calls to last about 20 ms, in ms.
fn mean_call_ms(calls: usize, work: &mut impl FnMut()) -> f64 {
    let start = Instant::now();
    for _ in 0..calls {
        work();
    }
    start.elapsed().as_secs_f64() * 1000.0 / calls as f64
}

/// How many calls of `work` last about 20 ms.
fn calls_for(work: &mut impl FnMut()) -> usize {
    work();
    let start = Instant::now();
    work();
    let once = start.elapsed().as_secs_f64().max(1e-7);
    ((0.02 / once).ceil() as usize).clamp(1, 10_000)
}

/// Median, fastest and slowest of `repeats` timings of each of two pieces of work, timed
/// in turn (first, second, first, …) so that both meet the same load of the machine.
fn time_pair_ms(
    repeats: usize,
    mut first: impl FnMut(),
    mut second: impl FnMut(),
) -> ((f64, Spread), (f64, Spread)) {
    let (first_calls, second_calls) = (calls_for(&mut first), calls_for(&mut second));
    let mut samples = (Vec::new(), Vec::new());
    for _ in 0..repeats.max(1) {
        samples.0.push(mean_call_ms(first_calls, &mut first));
        samples.1.push(mean_call_ms(second_calls, &mut second));
    }
    let summary = |values: Vec<f64>| {
        let repeats = Repeats::new(values).expect("at least one sample");
        (
            repeats.median(),
            Spread {
                minimum: repeats.minimum(),
                maximum: repeats.maximum(),
            },
        )
    };
    (summary(samples.0), summary(samples.1))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let options = Options::parse();
    let hardware = hardware_description(None);
    let mut figure = Figure {
        id: format!("inference-sparsity-{}", options.machine),
        title: "One linear layer in the CpuGraph mode, dense against sparse (CSR), by the density of its weights".to_string(),
        x: Axis {
            label: "weights kept (%)".to_string(),
            logarithmic: true,
        },
        y: Axis {
            label: "time per batch of 64 rows (ms)".to_string(),
            logarithmic: true,
        },
        hardware: hardware.clone(),
        command: format!(
            "cargo run --release -p galaxy --example sparse_threshold -- {} ({})",
            std::env::args().skip(1).collect::<Vec<_>>().join(" "),
            std::env::var("GALAXY_RUN_DATE").unwrap_or_else(|_| "date not recorded".into())
        ),
        series: Vec::new(),
    };
    println!("{hardware}");
    println!("size  kept %   dense ms (min-max)          sparse ms (min-max)         sparse/dense");
    for size in SIZES {
        let input = Tensor2d::random(BATCH, size, -1.0..=1.0, 1);
        let bias = Tensor2d::random(1, size, -0.1..=0.1, 3);
        let mut crossover = None;
        for percent in DENSITIES_PERCENT {
            let weights = random_sparse_dense(size, size, percent / 100.0, 2);
            let graph = ChainBuilder::input(BATCH, size)
                .linear(weights, bias.clone())
                .relu()
                .output()?;
            let mut dense = ExecutionMode::CpuGraph.prepare(&graph, None)?;
            // Every layer sparse, whatever its density: the threshold is what is measured.
            let storage = WeightStorage::Sparse {
                maximum_density: 1.0,
            };
            let mut sparse = ExecutionMode::CpuGraph.prepare_with_weights(&graph, storage, None)?;
            let expected = dense.run(&input, 1)?.remove(0);
            let result = sparse.run(&input, 1)?.remove(0);
            // The same products added in another order: a few ulps of the sum of the
            // magnitudes, which grows with the size.
            let tolerance = Tolerance::new(1e-4, 1e-6 * size as f32);
            let comparison = result.compare(&expected, tolerance)?;
            assert!(comparison.passed(), "{size} at {percent} %: {comparison}");

            let ((dense_ms, dense_spread), (sparse_ms, sparse_spread)) = time_pair_ms(
                options.repeats,
                || {
                    std::hint::black_box(dense.run(&input, 1).expect("runs"));
                },
                || {
                    std::hint::black_box(sparse.run(&input, 1).expect("runs"));
                },
            );
            if sparse_ms < dense_ms {
                crossover = Some(percent);
            }
            let at = |y| Point { x: percent, y };
            figure.push_with_spread(
                &format!("dense, {size} × {size}"),
                at(dense_ms),
                dense_spread,
            );
            figure.push_with_spread(
                &format!("CSR, {size} × {size}"),
                at(sparse_ms),
                sparse_spread,
            );
            println!(
                "{size:4}  {percent:6.0}  {dense_ms:8.4} ({:.4}-{:.4})  {sparse_ms:8.4} ({:.4}-{:.4})  {:.2}",
                dense_spread.minimum,
                dense_spread.maximum,
                sparse_spread.minimum,
                sparse_spread.maximum,
                sparse_ms / dense_ms
            );
        }
        match crossover {
            Some(percent) => println!("{size}: sparse is faster up to {percent} % kept"),
            None => println!("{size}: sparse is never faster"),
        }
    }
    std::fs::create_dir_all(&options.out)?;
    figure.write_csv(&options.out)?;
    println!("wrote {}/{}.csv", options.out.display(), figure.id);
    Ok(())
}
