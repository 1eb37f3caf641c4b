//! Threads and shared state, measured: one shared counter three ways, a histogram three
//! ways, per-thread counters with and without false sharing, a channel pipeline, and what
//! async does (and does not do) for waiting and for arithmetic.
//!
//! ```sh
//! cargo run --release --example threads_shared_state                 # the tables
//! cargo run --release --example threads_shared_state -- --out figures/data --machine epyc
//! ```
//!
//! With `--out DIR` it also writes the figures' CSV files, `parallel-<figure>-<machine>.csv`
//! (the machine name defaults to `local`). The thread counts run from 1 to the number of
//! cores and on to four times as many, to show what oversubscription costs. Every point is
//! the median of several runs, with the fastest and slowest kept in the CSV.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use galaxy::bench::hardware_description;
use galaxy::bench::repeats::Repeats;
use galaxy::figure::{Axis, Figure, Point};
use galaxy::parallel::async_wait::{
    block_on, mix_repeatedly, mix_repeatedly_async, wait_all_at_once, wait_one_after_another,
};
use galaxy::parallel::channels::{ChannelKind, run_pipeline};
use galaxy::parallel::false_sharing::{CounterLayout, count_per_thread};
use galaxy::parallel::histogram::{HistogramStrategy, histogram, random_bin_values};
use galaxy::parallel::shared_counter::{CounterStrategy, count_below};
use galaxy::parallel::threads::random_values;

/// Values counted by the shared counter and by the histogram.
const ITEMS: usize = 2_000_000;
/// Increments per thread in the false-sharing measurement.
const INCREMENTS_PER_THREAD: u64 = 2_000_000;
/// Items through the channel pipeline.
const PIPELINE_ITEMS: u64 = 1_000_000;
const HISTOGRAM_BINS: u32 = 256;
const REPEATS: usize = 5;

struct Options {
    out: Option<PathBuf>,
    machine: String,
}

fn options() -> Result<Options, String> {
    let mut options = Options {
        out: None,
        machine: "local".to_string(),
    };
    let mut arguments = std::env::args().skip(1);
    while let Some(argument) = arguments.next() {
        let mut value = |name: &str| {
            arguments
                .next()
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match argument.as_str() {
            "--out" => options.out = Some(PathBuf::from(value("--out")?)),
            "--machine" => options.machine = value("--machine")?,
            other => {
                return Err(format!(
                    "unknown argument `{other}`; usage: threads_shared_state [--out DIR] [--machine NAME]"
                ));
            }
        }
    }
    Ok(options)
}

/// 1, 2, 3, 4, 6, 8, 12, 16, … up to the core count, the core count itself, then twice and
/// four times as many threads as cores.
fn thread_counts(cores: usize) -> Vec<usize> {
    let mut counts: Vec<usize> = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64]
        .into_iter()
        .filter(|count| *count <= cores)
        .collect();
    counts.extend([cores, 2 * cores, 4 * cores]);
    counts.sort_unstable();
    counts.dedup();
    counts
}

/// Runs `work` `REPEATS` times (after one warm-up run) and returns the rates, `items`
/// divided by the seconds each run took, in millions per second.
fn millions_per_second(items: f64, mut work: impl FnMut()) -> Repeats {
    work();
    let rates = (0..REPEATS)
        .map(|_| {
            let start = Instant::now();
            work();
            items / start.elapsed().as_secs_f64() / 1e6
        })
        .collect();
    Repeats::new(rates).expect("REPEATS is above zero")
}

fn figure(id: &str, machine: &str, title: &str, x: &str, y: &str, command: &str) -> Figure {
    Figure {
        id: format!("{id}-{machine}"),
        title: title.to_string(),
        x: Axis {
            label: x.to_string(),
            logarithmic: true,
        },
        y: Axis {
            label: y.to_string(),
            logarithmic: true,
        },
        hardware: hardware_description(None),
        command: command.to_string(),
        series: Vec::new(),
    }
}

fn push(figure: &mut Figure, series: &str, x: usize, rates: &Repeats) {
    let point = Point {
        x: x as f64,
        y: rates.median(),
    };
    match rates.spread() {
        Some(spread) => figure.push_with_spread(series, point, spread),
        None => figure.push(series, point),
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let options = options()?;
    let cores = galaxy::bench::hardware::core_count();
    let threads = thread_counts(cores);
    let command = format!(
        "threads_shared_state --out DIR --machine {} (release build of code/examples/threads_shared_state.rs), {}",
        options.machine,
        today()
    );
    println!("{}\n", hardware_description(None));
    println!("Millions per second, median of {REPEATS} runs; {cores} cores.\n");

    // The shared counter: every value is below the threshold, so every value is one update.
    let values = random_values(ITEMS, 1000, 1);
    let mut counter = figure(
        "parallel-shared-counter",
        &options.machine,
        "Counting with one shared counter: a mutex, an atomic, or partial counts",
        "threads",
        "updates per second (millions)",
        &command,
    );
    println!("Shared counter ({ITEMS} updates)");
    println!(
        "{:>8} {:>12} {:>12} {:>16}",
        "threads", "mutex", "atomic", "partial counts"
    );
    for &count in &threads {
        let mut row = format!("{count:>8}");
        for strategy in CounterStrategy::ALL {
            let rates = millions_per_second(ITEMS as f64, || {
                let counted = count_below(&values, 1000, count, strategy);
                assert_eq!(counted, Ok(ITEMS as u64), "{}", strategy.name());
            });
            push(&mut counter, strategy.name(), count, &rates);
            let width = strategy.name().len().max(12);
            row.push_str(&format!(" {:>width$.1}", rates.median()));
        }
        println!("{row}");
    }

    // The histogram, the same three ways.
    let bin_values = random_bin_values(ITEMS, HISTOGRAM_BINS, 2);
    let mut histograms = figure(
        "parallel-histogram",
        &options.machine,
        "A 256-bin histogram on threads: one lock, atomic bins, or partial histograms",
        "threads",
        "values per second (millions)",
        &command,
    );
    println!("\nHistogram ({ITEMS} values, {HISTOGRAM_BINS} bins)");
    println!(
        "{:>8} {:>12} {:>12} {:>20}",
        "threads", "mutex", "atomic", "partial histograms"
    );
    for &count in &threads {
        let mut row = format!("{count:>8}");
        for strategy in HistogramStrategy::ALL {
            let rates = millions_per_second(ITEMS as f64, || {
                let counts = histogram(&bin_values, HISTOGRAM_BINS as usize, count, strategy);
                assert!(counts.is_ok_and(|counts| counts.iter().sum::<u64>() == ITEMS as u64));
            });
            push(&mut histograms, strategy.name(), count, &rates);
            let width = strategy.name().len().max(12);
            row.push_str(&format!(" {:>width$.1}", rates.median()));
        }
        println!("{row}");
    }

    // False sharing: each thread increments only its own counter.
    let mut sharing = figure(
        "parallel-false-sharing",
        &options.machine,
        "Each thread increments its own counter: side by side in one cache line, or padded apart",
        "threads",
        "increments per second, all threads (millions)",
        &command,
    );
    println!("\nPer-thread counters ({INCREMENTS_PER_THREAD} increments per thread)");
    println!("{:>8} {:>14} {:>14}", "threads", "side by side", "padded");
    for &count in &threads {
        let mut row = format!("{count:>8}");
        for layout in CounterLayout::ALL {
            let total = INCREMENTS_PER_THREAD * count as u64;
            let rates = millions_per_second(total as f64, || {
                let counts = count_per_thread(count, INCREMENTS_PER_THREAD, layout);
                assert_eq!(counts, Ok(vec![INCREMENTS_PER_THREAD; count]));
            });
            push(&mut sharing, layout.name(), count, &rates);
            row.push_str(&format!(" {:>14.1}", rates.median()));
        }
        println!("{row}");
    }

    // The channel pipeline, by batch size.
    let kinds = [
        ChannelKind::StandardUnbounded,
        ChannelKind::StandardBounded { capacity: 64 },
        ChannelKind::CrossbeamUnbounded,
        ChannelKind::CrossbeamBounded { capacity: 64 },
    ];
    let mut channels = figure(
        "parallel-channels",
        &options.machine,
        "A producer → worker → consumer pipeline: items per second by batch size",
        "items per message",
        "items per second (millions)",
        &command,
    );
    println!("\nPipeline of three threads ({PIPELINE_ITEMS} items)");
    print!("{:>8}", "batch");
    for kind in kinds {
        print!(" {:>22}", kind.name());
    }
    println!();
    let expected = galaxy::parallel::channels::pipeline_sequential(PIPELINE_ITEMS);
    for batch in [1usize, 4, 16, 64, 256, 1024, 4096] {
        print!("{batch:>8}");
        for kind in kinds {
            let rates = millions_per_second(PIPELINE_ITEMS as f64, || {
                assert_eq!(run_pipeline(PIPELINE_ITEMS, batch, kind), Ok(expected));
            });
            push(&mut channels, &kind.name(), batch, &rates);
            print!(" {:>22.1}", rates.median());
        }
        println!();
    }

    // Async: waiting, then arithmetic.
    println!("\nAsync on one thread: 8 waits of 20 ms");
    let pause = Duration::from_millis(20);
    let start = Instant::now();
    block_on(wait_one_after_another(8, pause));
    let one_after_another = start.elapsed();
    let start = Instant::now();
    block_on(wait_all_at_once(8, pause));
    let all_at_once = start.elapsed();
    println!(
        "  one after another: {:>7.1} ms",
        one_after_another.as_secs_f64() * 1e3
    );
    println!(
        "  all at once:       {:>7.1} ms",
        all_at_once.as_secs_f64() * 1e3
    );
    // The two take turns, so that a busy moment of the machine hits both alike.
    let rounds = 50_000_000u64;
    let (mut plain, mut in_async) = (Vec::new(), Vec::new());
    for _ in 0..=REPEATS {
        let start = Instant::now();
        std::hint::black_box(mix_repeatedly(1, std::hint::black_box(rounds)));
        plain.push(rounds as f64 / start.elapsed().as_secs_f64() / 1e6);
        let start = Instant::now();
        std::hint::black_box(block_on(mix_repeatedly_async(
            1,
            std::hint::black_box(rounds),
        )));
        in_async.push(rounds as f64 / start.elapsed().as_secs_f64() / 1e6);
    }
    // The first turn warms up.
    let plain = Repeats::new(plain.split_off(1)).expect("REPEATS is above zero");
    let in_async = Repeats::new(in_async.split_off(1)).expect("REPEATS is above zero");
    println!(
        "Arithmetic ({rounds} mixing steps): plain {:.0}, in an async fn {:.0} million steps per second",
        plain.median(),
        in_async.median()
    );

    println!(
        "\nWhat to look for: the mutex row falls as threads are added, the partial counts rise\n\
         up to the core count; padded counters scale where side-by-side ones do not; channel\n\
         throughput grows with the batch size until the work per item dominates; waiting\n\
         all at once takes one pause, not eight; async arithmetic is no faster."
    );
    if let Some(directory) = options.out {
        for figure in [&counter, &histograms, &sharing, &channels] {
            figure.write_csv(&directory)?;
            println!("wrote {}/{}.csv", directory.display(), figure.id);
        }
    }
    Ok(())
}

/// Today's date (UTC) as YYYY-MM-DD, for the CSV's command line.
fn today() -> String {
    let days = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs() / 86_400) as i64;
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}
