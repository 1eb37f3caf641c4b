//! The sample program of the exercise `profile-hot-spot`, for a profiler to watch.
//!
//! ```text
//! profile_hot_spot [--starter | --solution] [--pixels N] [--colours N] [--repeats N]
//! ```
//!
//! Maps a random image (1920 × 1080 pixels unless told otherwise) to a random palette
//! (16 colours) `repeats` times (default 5) with your `work.rs` (the starter until you have
//! one), or with the starter or the reference solution, and prints the time of each call
//! and how many pixels each palette colour got. `cargo xtask profile
//! exercise:profile-hot-spot` builds it and runs it under a profiler.

use std::process::ExitCode;
use std::time::Instant;

use galaxy_exercises::Variant;
use galaxy_exercises::checkers::profile_hot_spot::{function_of, random_case};

const USAGE: &str =
    "usage: profile_hot_spot [--starter | --solution] [--pixels N] [--colours N] [--repeats N]";

fn main() -> ExitCode {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let mut variant = Variant::Student;
    let mut pixels = 1920 * 1080;
    let mut colours = 16;
    let mut repeats = 5;
    let mut remaining = arguments.iter();
    while let Some(argument) = remaining.next() {
        let mut number = |name: &str| -> Result<usize, String> {
            let text = remaining
                .next()
                .ok_or_else(|| format!("{name} needs a number"))?;
            text.parse()
                .map_err(|_| format!("{name} needs a whole number, not {text:?}"))
        };
        let parsed = match argument.as_str() {
            "--starter" => {
                variant = Variant::Starter;
                Ok(())
            }
            "--solution" => {
                variant = Variant::Solution;
                Ok(())
            }
            "--pixels" => number("--pixels").map(|value| pixels = value),
            "--colours" => number("--colours").map(|value| colours = value),
            "--repeats" => number("--repeats").map(|value| repeats = value),
            other => Err(format!("unknown argument {other:?}")),
        };
        if let Err(problem) = parsed {
            eprintln!("error: {problem}\n{USAGE}");
            return ExitCode::from(2);
        }
    }
    let which = match variant {
        Variant::Starter => "the starter",
        Variant::Solution => "the reference solution",
        _ => "your work.rs (the starter until you have one)",
    };
    println!("mapping {pixels} pixels to {colours} colours, {repeats} times, with {which}");
    let (image, palette) = random_case(pixels, colours, 1);
    let map_to_palette = function_of(variant);
    for repeat in 1..=repeats {
        let start = Instant::now();
        let mapping = map_to_palette(&image, &palette);
        let elapsed = start.elapsed();
        match mapping {
            Ok((_, counts)) => println!(
                "call {repeat}: {:.1} ms; pixels per colour: {counts:?}",
                elapsed.as_secs_f64() * 1e3
            ),
            Err(message) => {
                eprintln!("error: {message}");
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}
