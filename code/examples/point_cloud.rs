//! The measurements behind the page "Optimising a point cloud renderer": the GPU time of a
//! frame (clear, splat, resolve) for every optimisation step at two point counts, each
//! step's image checked against the CPU reference first, and one render as a PNG.
//!
//! `cargo run --release -p galaxy --example point_cloud -- [--out DIR] [--repeats R]
//!  [--frames F] [--machine NAME] [--points N]...`
//! writes `DIR/point-cloud-steps-<machine>.csv` and `DIR/point-cloud-<machine>.png`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Parser;
use galaxy::bench::hardware::hardware_description;
use galaxy::bench::repeats::{Repeats, interleaved};
use galaxy::figure::{Axis, Figure, Point, Spread};
use galaxy::gpu::{GpuContext, TimestampSupport};
use galaxy::use_cases::point_cloud::{
    Camera, FrameTimes, PointCloudError, PointCloudRenderer, Rendering, Shape, SplatStep,
    frame_queries, generate, height_palette, render_cpu,
};

#[derive(Parser)]
struct Options {
    /// Where the CSV file and the PNG go.
    #[arg(long, default_value = "figures/data")]
    out: PathBuf,
    /// Timed submissions per step and point count (median, with the fastest and slowest).
    #[arg(long, default_value_t = 5)]
    repeats: usize,
    /// Frames recorded into each timed submission (their mean is one sample).
    #[arg(long, default_value_t = 4)]
    frames: u32,
    /// The machine's short name in the file names (e.g. epyc, h100).
    #[arg(long, default_value = "epyc")]
    machine: String,
    /// The point counts (two by default: 1 Mi and 4 Mi).
    #[arg(long)]
    points: Vec<usize>,
}

const WIDTH: u32 = 1280;
const HEIGHT: u32 = 720;
const BACKGROUND: u32 = 0xff18_1410;

/// The scene: the terrain seen from above at an angle.
fn camera(width: u32, height: u32) -> Camera {
    Camera::looking_at(
        [0.6, 0.8, -1.4],
        [0.0, -0.3, 0.1],
        50.0,
        width,
        height,
        0.1,
        6.0,
    )
    .expect("a valid camera")
}

fn label(points: usize) -> String {
    if points.is_multiple_of(1 << 20) {
        format!("{} Mi points", points >> 20)
    } else {
        format!("{points} points")
    }
}

fn differing_pixels(got: &Rendering, expected: &Rendering) -> usize {
    got.keys
        .iter()
        .zip(&expected.keys)
        .filter(|(gpu, cpu)| gpu != cpu)
        .count()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let options = Options::parse();
    let counts = if options.points.is_empty() {
        vec![1 << 20, 4 << 20]
    } else {
        options.points.clone()
    };
    let context = GpuContext::shared()?;
    let hardware = hardware_description(Some(context));
    println!("adapter: {}", context.describe());
    println!("timing: {}", TimestampSupport::of(context).describe());
    std::fs::create_dir_all(&options.out)?;
    let renderer = PointCloudRenderer::new(context)?;
    let palette = height_palette();
    let camera = camera(WIDTH, HEIGHT);
    let queries = frame_queries(context, options.frames)?;
    let mut figure = Figure {
        id: format!("point-cloud-steps-{}", options.machine),
        title: "GPU time per frame of the point-cloud renderer, step by step".to_string(),
        x: Axis {
            label: "optimisation step".to_string(),
            logarithmic: false,
        },
        y: Axis {
            label: "time per frame (ms)".to_string(),
            logarithmic: true,
        },
        hardware: hardware.clone(),
        command: format!(
            "cargo run --release -p galaxy --example point_cloud -- {} ({})",
            std::env::args().skip(1).collect::<Vec<_>>().join(" "),
            std::env::var("GALAXY_RUN_DATE").unwrap_or_else(|_| "date not recorded".into())
        ),
        series: Vec::new(),
    };
    for &count in &counts {
        let cloud = generate(Shape::Terrain, count, 2026);
        let start = Instant::now();
        let expected = render_cpu(&cloud, &camera, &palette, BACKGROUND);
        println!(
            "\n{}: CPU reference {:.0} ms; {} × {} image",
            label(count),
            start.elapsed().as_secs_f64() * 1e3,
            WIDTH,
            HEIGHT
        );
        println!(
            "{:<32} {:>10} {:>10} {:>10} {:>10}  {:>13} {:>8}",
            "step", "frame ms", "(min", "max)", "splat ms", "point bytes", "pixels≠"
        );
        // Every step prepared and checked first, then timed in interleaved rounds (each
        // round times every step once), so that a busy moment of the machine falls on all
        // of them alike.
        let mut frames = Vec::new();
        let mut notes = Vec::new();
        for step in SplatStep::ALL {
            let start = Instant::now();
            let frame = renderer.prepare(context, &cloud, &camera, &palette, BACKGROUND, step)?;
            let prepare_ms = start.elapsed().as_secs_f64() * 1e3;
            let differing = differing_pixels(&frame.render(context)?, &expected);
            frame.time_frames(context, queries.as_ref(), 1)?; // warm-up
            notes.push((prepare_ms, differing, frame.point_bytes));
            frames.push(frame);
        }
        let measured = interleaved(frames.len(), options.repeats, |index, _| {
            let times = frames[index].time_frames(context, queries.as_ref(), options.frames)?;
            let mean = |pick: fn(&FrameTimes) -> f64| {
                times.iter().map(pick).sum::<f64>() / times.len() as f64
            };
            Ok::<_, PointCloudError>(Some((mean(|time| time.frame), mean(|time| time.splat))))
        })?;
        for (step_number, (step, samples)) in SplatStep::ALL.into_iter().zip(measured).enumerate() {
            let frame_ms = Repeats::new(samples.iter().map(|sample| sample.0).collect())
                .expect("at least one repeat");
            let splat_ms = Repeats::new(samples.iter().map(|sample| sample.1).collect())
                .expect("at least one repeat");
            let (prepare_ms, differing, point_bytes) = notes[step_number];
            println!(
                "{:<32} {:>10.3} {:>10.3} {:>10.3} {:>10.3}  {:>13} {:>8}   (upload{} {:.0} ms)",
                step.name(),
                frame_ms.median(),
                frame_ms.minimum(),
                frame_ms.maximum(),
                splat_ms.median(),
                point_bytes,
                differing,
                if step.sorts_points() { " and sort" } else { "" },
                prepare_ms
            );
            let x = (step_number + 1) as f64;
            for (series, repeats) in [("frame", &frame_ms), ("splat pass", &splat_ms)] {
                if series == "splat pass" && queries.is_none() {
                    continue;
                }
                figure.push_with_spread(
                    &format!("{series} ({})", label(count)),
                    Point {
                        x,
                        y: repeats.median(),
                    },
                    Spread {
                        minimum: repeats.minimum(),
                        maximum: repeats.maximum(),
                    },
                );
            }
            if differing > 0 {
                println!(
                    "  {differing} pixels differ from the CPU reference: this device's \
                     arithmetic differs in the last bit somewhere (see the page)"
                );
            }
        }
    }
    figure.write_csv(&options.out)?;
    println!("\nwrote {}/{}.csv", options.out.display(), figure.id);
    let png = options
        .out
        .join(format!("point-cloud-{}.png", options.machine));
    write_render(&png, &renderer, context, &palette)?;
    println!("wrote {}", png.display());
    Ok(())
}

/// Renders a 640 × 360 view of a 1 Mi-point terrain with the last step and writes it as an
/// RGB PNG.
fn write_render(
    path: &Path,
    renderer: &PointCloudRenderer,
    context: &GpuContext,
    palette: &[u32; 256],
) -> Result<(), Box<dyn std::error::Error>> {
    let (width, height) = (640, 360);
    let cloud = generate(Shape::Terrain, 1 << 20, 2026);
    let frame = renderer.prepare(
        context,
        &cloud,
        &camera(width, height),
        palette,
        BACKGROUND,
        SplatStep::PackedPositions,
    )?;
    let rendering = frame.render(context)?;
    let bytes: Vec<u8> = rendering
        .image
        .iter()
        .flat_map(|&pixel| [pixel as u8, (pixel >> 8) as u8, (pixel >> 16) as u8])
        .collect();
    let file = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut encoder = png::Encoder::new(file, width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_compression(png::Compression::High);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(&bytes)?;
    writer.finish()?;
    Ok(())
}
