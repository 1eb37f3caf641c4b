//! Writes the standard workload to a binary file, so that another framework can run
//! exactly the same network (`anchors/pytorch/mlp_anchor.py` reads it).
//!
//! ```sh
//! cargo run --release --example export_workload -- DIRECTORY              # every point of the sweeps
//! cargo run --release --example export_workload -- DIRECTORY 256 64       # one size and depth
//! ```
//!
//! Each workload is `random_mlp(size, depth, SEED)` with the seed the sweeps use, written to
//! `DIRECTORY/mlp-<size>x<depth>.bin`. Every number is little-endian:
//!
//! | offset | type | field |
//! |---|---|---|
//! | 0 | 8 bytes | magic: ASCII `GALAXMLP` |
//! | 8 | u32 | format version: 1 |
//! | 12 | u32 | size: the input is size × size, every layer size × size |
//! | 16 | u32 | depth: the number of linear layers |
//! | 20 | u64 | the seed `random_mlp` was called with |
//! | 28 | | `depth` layers, each: u32 ReLU flag (1 when a ReLU follows the layer; always 1 for the last, whose ReLU is the one before the softmax), the weights as size × size f32 (row-major, rows indexed by the layer's input: `y = x · W + b`), the bias as size f32 |
//! | | size × size f32 | the input, row-major |
//! | | size × size f32 | the crate's output for that input (CPU graph runner), row-major |
//!
//! The file ends there. The network is: for each layer, `x = x · W + b`, then `max(x, 0)`
//! where the flag is 1; then a softmax over each row.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use galaxy::bench::sweeps::modes::{DEPTH_SWEEP_SIZE, DEPTHS, SEED, SIZE_SWEEP_DEPTH, SIZES};
use galaxy::graph::{Workload, random_mlp};
use galaxy::runner::CpuGraphRunner;

const MAGIC: &[u8; 8] = b"GALAXMLP";
const FORMAT_VERSION: u32 = 1;

fn main() {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let (directory, points) = match arguments.as_slice() {
        [directory] => (directory, sweep_points()),
        [directory, size, depth] => (directory, vec![(number(size), number(depth))]),
        _ => fail("usage: export_workload DIRECTORY [SIZE DEPTH]"),
    };
    let directory = PathBuf::from(directory);
    std::fs::create_dir_all(&directory)
        .unwrap_or_else(|error| fail(&format!("{}: {error}", directory.display())));
    for (size, depth) in points {
        let path = directory.join(format!("mlp-{size}x{depth}.bin"));
        let workload = random_mlp(size, depth, SEED)
            .unwrap_or_else(|error| fail(&format!("random_mlp({size}, {depth}, {SEED}): {error}")));
        write_workload(&path, &workload, depth)
            .unwrap_or_else(|error| fail(&format!("{}: {error}", path.display())));
        println!("{}", path.display());
    }
}

/// The points of the two sweeps: every size at the size sweep's depth, every depth at the
/// depth sweep's size (the point both share is written once).
fn sweep_points() -> Vec<(usize, usize)> {
    let mut points: Vec<(usize, usize)> =
        SIZES.iter().map(|&size| (size, SIZE_SWEEP_DEPTH)).collect();
    for &depth in &DEPTHS {
        if !points.contains(&(DEPTH_SWEEP_SIZE, depth)) {
            points.push((DEPTH_SWEEP_SIZE, depth));
        }
    }
    points
}

fn write_workload(path: &Path, workload: &Workload, depth: usize) -> std::io::Result<()> {
    let size = workload.input.rows();
    let output = CpuGraphRunner::prepare(&workload.graph)
        .run(&workload.input)
        .map_err(std::io::Error::other)?;
    let layers = workload.layers();
    assert_eq!(
        layers.len(),
        depth,
        "random_mlp builds one linear node per layer"
    );
    let header_number = |value: usize| {
        u32::try_from(value)
            .map_err(|_| std::io::Error::other(format!("{value} does not fit in a u32")))
    };

    let mut file = BufWriter::new(File::create(path)?);
    file.write_all(MAGIC)?;
    file.write_all(&FORMAT_VERSION.to_le_bytes())?;
    file.write_all(&header_number(size)?.to_le_bytes())?;
    file.write_all(&header_number(depth)?.to_le_bytes())?;
    file.write_all(&SEED.to_le_bytes())?;
    for layer in &layers {
        file.write_all(&u32::from(layer.relu).to_le_bytes())?;
        write_values(&mut file, layer.weights.as_slice())?;
        write_values(&mut file, layer.bias.as_slice())?;
    }
    write_values(&mut file, workload.input.as_slice())?;
    write_values(&mut file, output.as_slice())?;
    file.flush()
}

fn write_values(file: &mut impl Write, values: &[f32]) -> std::io::Result<()> {
    for value in values {
        file.write_all(&value.to_le_bytes())?;
    }
    Ok(())
}

fn number(text: &str) -> usize {
    match text.parse() {
        Ok(value) if value > 0 => value,
        _ => fail(&format!("`{text}` is not a whole number above 0")),
    }
}

fn fail(message: &str) -> ! {
    eprintln!("export_workload: {message}");
    std::process::exit(1);
}
