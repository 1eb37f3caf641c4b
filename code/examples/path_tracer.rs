//! The measurements of the path-tracer chapter: every step of the optimisation checked
//! against the CPU reference, its work counted, then timed per frame at two resolutions,
//! and the final image written as a PNG.
//!
//! `cargo run --release -p galaxy --example path_tracer -- [--out DIR] [--repeats R]
//!  [--machine NAME]` writes into DIR:
//! - `path-tracer-steps-<machine>.csv`: ms per frame of every step at two resolutions
//!   (the GPU's clock where the adapter has timestamp queries);
//! - `path-tracer-report-<machine>.txt`: the adapter, the check of every step against the
//!   CPU, and the work the CPU reference counted (rays per path, sphere tests per ray);
//! - `path-tracer-render-<machine>.png`: the last step's image at 320 × 240.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use galaxy::bench::hardware::hardware_description;
use galaxy::bench::repeats::Repeats;
use galaxy::figure::{Axis, Figure, Point};
use galaxy::gpu::{GpuContext, TimestampSupport};
use galaxy::use_cases::path_tracer::compare::Agreement;
use galaxy::use_cases::path_tracer::gpu::{GpuPathTracer, Step};
use galaxy::use_cases::path_tracer::scene::Scene;
use galaxy::use_cases::path_tracer::{RenderSettings, Termination, Traversal, cpu, image};

#[derive(Parser)]
struct Options {
    /// Where the files go.
    #[arg(long, default_value = "figures/data")]
    out: PathBuf,
    /// Timed frames of every step at every resolution (median, fastest and slowest).
    #[arg(long, default_value_t = 5)]
    repeats: usize,
    /// The machine's short name in the file names (e.g. epyc, h100).
    #[arg(long, default_value = "epyc")]
    machine: String,
}

/// Clusters of eight balls per side of the scene's grid: 4 × 4 × 8 + 2 = 130 spheres.
const CLUSTERS: u32 = 4;
/// The two image sizes of the figure.
const RESOLUTIONS: [(u32, u32); 2] = [(320, 240), (640, 480)];
const SAMPLES_PER_FRAME: u32 = 4;
const MAX_BOUNCES: u32 = 8;

fn settings(width: u32, height: u32, samples: u32) -> RenderSettings {
    RenderSettings {
        width,
        height,
        samples_per_pixel: samples,
        max_bounces: MAX_BOUNCES,
        seed: 2026,
        termination: Termination::FixedBounces,
        traversal: Traversal::EverySphere,
    }
}

fn main() -> ExitCode {
    let options = Options::parse();
    match run(&options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("path_tracer: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run(options: &Options) -> Result<(), String> {
    if !options
        .machine
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-')
    {
        return Err("--machine takes a short name of letters, digits and dashes".into());
    }
    let repeats = options.repeats.max(1);
    std::fs::create_dir_all(&options.out)
        .map_err(|error| format!("cannot create {}: {error}", options.out.display()))?;
    let context = GpuContext::new().map_err(|error| error.to_string())?;
    let hardware = hardware_description(Some(&context));
    let timestamps = TimestampSupport::of(&context);
    eprintln!("adapter: {}", context.describe());
    let mut report = format!(
        "# path tracer, {CLUSTERS}×{CLUSTERS} clusters of 8 balls, {MAX_BOUNCES} bounces at most\n\
         # hardware: {hardware}\n# timing: {}\n",
        timestamps.describe()
    );
    let scene = Scene::demonstration(CLUSTERS);
    let tracer = GpuPathTracer::new(&context, &scene).map_err(|error| error.to_string())?;

    // Correct first: every step against the CPU reference, and the work each one does.
    let check = settings(160, 120, 2);
    report.push_str(&format!(
        "\n# check: {}×{}, {} samples per pixel, GPU against CPU reference\n\
         step,pixels within 1e-3 (%),largest difference,reference mean,GPU mean,rays per path,sphere tests per ray,bound tests per ray\n",
        check.width, check.height, check.samples_per_pixel
    ));
    for step in Step::ALL {
        let (reference, counts) = cpu::render(&scene, &step.settings(check));
        let gpu = tracer
            .render(&context, step, &check)
            .map_err(|error| error.to_string())?;
        let agreement = Agreement::of(&reference, &gpu);
        if !agreement.passes() {
            return Err(format!(
                "{} disagrees with the CPU: {}",
                step.label(),
                agreement.describe()
            ));
        }
        let per_ray = |count: u64| count as f64 / counts.rays as f64;
        report.push_str(&format!(
            "{},{:.3},{:.2e},{:.6},{:.6},{:.3},{:.2},{:.2}\n",
            step.label(),
            100.0 * agreement.fraction_within(),
            agreement.largest_difference,
            agreement.reference_mean,
            agreement.candidate_mean,
            counts.rays as f64 / counts.paths as f64,
            per_ray(counts.sphere_tests),
            per_ray(counts.bound_tests),
        ));
        eprintln!("checked {}: {}", step.label(), agreement.describe());
    }

    // Then fast: ms per frame, every step, two resolutions.
    let command = format!(
        "cargo run --release -p galaxy --example path_tracer -- {} ({})",
        std::env::args().skip(1).collect::<Vec<_>>().join(" "),
        std::env::var("GALAXY_RUN_DATE").unwrap_or_else(|_| "date not recorded".into())
    );
    let mut figure = Figure {
        id: format!("path-tracer-steps-{}", options.machine),
        title: format!(
            "Path tracer, {SAMPLES_PER_FRAME} samples per pixel per frame: time per frame, step by step"
        ),
        x: Axis {
            label: "pixels per frame".into(),
            logarithmic: true,
        },
        y: Axis {
            label: "time per frame (ms)".into(),
            logarithmic: true,
        },
        hardware: hardware.clone(),
        command,
        series: Vec::new(),
    };
    report.push_str("\n# time per frame (ms): step,width,height,median,min,max,clock\n");
    for (width, height) in RESOLUTIONS {
        let frame = settings(width, height, SAMPLES_PER_FRAME);
        for step in Step::ALL {
            // One frame to warm up (the driver may finish compiling on first use).
            tracer
                .time_frames(&context, step, &frame, 1)
                .map_err(|error| error.to_string())?;
            let times = tracer
                .time_frames(&context, step, &frame, repeats as u32)
                .map_err(|error| error.to_string())?;
            let clock = if times.iter().all(|time| time.gpu_clock) {
                "GPU"
            } else {
                "host"
            };
            let repeats = Repeats::new(times.iter().map(|time| time.milliseconds).collect())
                .ok_or("no frames were timed")?;
            let pixels = f64::from(width * height);
            match repeats.spread() {
                Some(spread) => figure.push_with_spread(
                    step.label(),
                    Point {
                        x: pixels,
                        y: repeats.median(),
                    },
                    spread,
                ),
                None => figure.push(
                    step.label(),
                    Point {
                        x: pixels,
                        y: repeats.median(),
                    },
                ),
            }
            report.push_str(&format!(
                "{},{width},{height},{:.3},{:.3},{:.3},{clock}\n",
                step.label(),
                repeats.median(),
                repeats.minimum(),
                repeats.maximum()
            ));
            eprintln!(
                "{width}×{height} {}: {:.3} ms ({:.3}–{:.3})",
                step.label(),
                repeats.median(),
                repeats.minimum(),
                repeats.maximum()
            );
        }
    }
    figure
        .write_csv(&options.out)
        .map_err(|error| error.to_string())?;

    // The picture: the last step, many samples, one frame.
    let (width, height) = RESOLUTIONS[0];
    let last = *Step::ALL.last().ok_or("no steps")?;
    let radiance = tracer
        .render(&context, last, &settings(width, height, 64))
        .map_err(|error| error.to_string())?;
    let png = image::png(width, height, &image::to_bytes(&radiance))
        .map_err(|error| error.to_string())?;
    let write = |name: String, bytes: &[u8]| {
        let path = options.out.join(name);
        std::fs::write(&path, bytes)
            .map_err(|error| format!("cannot write {}: {error}", path.display()))
    };
    write(format!("path-tracer-render-{}.png", options.machine), &png)?;
    write(
        format!("path-tracer-report-{}.txt", options.machine),
        report.as_bytes(),
    )?;
    print!("{report}");
    Ok(())
}
