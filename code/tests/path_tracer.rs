//! Every GPU step of the path tracer against the CPU reference: the same paths from the
//! same random streams, on several image sizes (some not multiples of a workgroup), seeds
//! and bounce limits; and the primary hits, which use no random numbers, exactly on a
//! software adapter and within a derived tolerance on a hardware GPU.

mod common;

use common::adapter_is_software;
use galaxy::gpu::GpuContext;
use galaxy::use_cases::path_tracer::compare::Agreement;
use galaxy::use_cases::path_tracer::gpu::{GpuPathTracer, RenderError, Step};
use galaxy::use_cases::path_tracer::scene::Scene;
use galaxy::use_cases::path_tracer::{
    PathTracerError, RenderSettings, Termination, Traversal, cpu,
};

fn base(width: u32, height: u32, samples: u32, bounces: u32, seed: u32) -> RenderSettings {
    RenderSettings {
        width,
        height,
        samples_per_pixel: samples,
        max_bounces: bounces,
        seed,
        termination: Termination::FixedBounces,
        traversal: Traversal::EverySphere,
    }
}

#[test]
fn every_step_traces_the_paths_the_cpu_traces() {
    let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
    for (clusters, settings) in [
        (2, base(48, 32, 2, 8, 1)),
        (3, base(37, 29, 3, 6, 77)),
        (1, base(1, 1, 1, 1, 5)),
        (2, base(65, 9, 1, 16, 123_456)),
    ] {
        let scene = Scene::demonstration(clusters);
        let tracer = GpuPathTracer::new(context, &scene).unwrap();
        for step in Step::ALL {
            let reference_settings = step.settings(settings);
            let (reference, _) = cpu::render(&scene, &reference_settings);
            let image = tracer.render(context, step, &settings).unwrap();
            let agreement = Agreement::of(&reference, &image);
            assert!(
                agreement.passes(),
                "{step:?}, {}×{}: {}",
                settings.width,
                settings.height,
                agreement.describe()
            );
        }
    }
}

/// How far a hardware GPU's primary-hit value may lie from the CPU's, in units of
/// `ε · max(|value|, 1)` (`ε = 2^-23`). Vulkan does not round every operation as the CPU:
/// a division may be 2.5 ulp off, a square root about 3 ulp, and a compiler may fuse a
/// multiply and an add (one rounding instead of two). A ray meets a handful of each: the
/// camera ray's normalisation (a square root and a division), the dot products and the
/// square root of the sphere test, the plane's division, the normal's normalisation. So
/// the direction and the distance move by a few ulp; the normal, `(point − centre) / r`,
/// carries the hit point's error of a few ulp of `|point|` divided by the radius, and in the
/// demonstration scene `|point| / r` reaches a few tens. 256 covers that with room to spare
/// and still fails a kernel with any wrong term, which moves values by far more.
const PRIMARY_HIT_ULPS: f32 = 256.0;

/// How many pixels of an image may disagree beyond that on a hardware GPU. Where a ray
/// grazes a sphere, the discriminant is near 0 and its square root turns a rounding of the
/// discriminant into a large change of the distance, or into a miss; where two surfaces lie
/// at nearly the same distance, a rounding can pick the other one. Both happen only on the
/// few pixels along silhouettes and contacts: one in a hundred bounds them, while a wrong
/// kernel changes most pixels of the image.
fn allowed_disagreeing_pixels(pixels: usize) -> usize {
    pixels.div_ceil(100)
}

/// Whether one pixel's hit, `[distance, normal x, y, z]` or `[-1, 0, 0, 0]` for the sky,
/// agrees within `PRIMARY_HIT_ULPS`: both sky, or both a hit with every value close.
fn hit_agrees(gpu: &[f32], cpu: &[f32]) -> bool {
    let sky = |hit: &[f32]| hit[0] < 0.0;
    if sky(gpu) || sky(cpu) {
        return sky(gpu) && sky(cpu);
    }
    gpu.iter().zip(cpu).all(|(&gpu, &cpu)| {
        (gpu - cpu).abs() <= PRIMARY_HIT_ULPS * f32::EPSILON * cpu.abs().max(1.0)
    })
}

#[test]
fn primary_hits_agree_exactly_on_software_and_closely_elsewhere() {
    let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
    let exact = adapter_is_software();
    for (clusters, width, height) in [(3, 64, 48), (2, 33, 17)] {
        let scene = Scene::demonstration(clusters);
        let tracer = GpuPathTracer::new(context, &scene).unwrap();
        let settings = base(width, height, 1, 1, 0);
        let gpu = tracer.primary_hits(context, &settings).unwrap();
        let cpu = cpu::primary_hits(&scene, &settings);
        assert_eq!(gpu.len(), cpu.len());
        if exact {
            // Lavapipe rounds every operation as the CPU does: nothing may differ.
            let differing: Vec<usize> = (0..gpu.len())
                .filter(|&index| gpu[index].to_bits() != cpu[index].to_bits())
                .collect();
            assert!(
                differing.is_empty(),
                "{} of {} values differ, first at {}: GPU {} CPU {}",
                differing.len(),
                gpu.len(),
                differing[0],
                gpu[differing[0]],
                cpu[differing[0]]
            );
        } else {
            let disagreeing: Vec<usize> = (0..gpu.len() / 4)
                .filter(|&pixel| {
                    let values = 4 * pixel..4 * pixel + 4;
                    !hit_agrees(&gpu[values.clone()], &cpu[values])
                })
                .collect();
            let pixels = gpu.len() / 4;
            assert!(
                disagreeing.len() <= allowed_disagreeing_pixels(pixels),
                "{} of {pixels} pixels disagree beyond {PRIMARY_HIT_ULPS} ulp, first {}: GPU {:?} CPU {:?}",
                disagreeing.len(),
                disagreeing[0],
                &gpu[4 * disagreeing[0]..4 * disagreeing[0] + 4],
                &cpu[4 * disagreeing[0]..4 * disagreeing[0] + 4],
            );
        }
        // Not all sky, not all floor: the test would pass on a blank image otherwise.
        let sky = cpu.chunks_exact(4).filter(|hit| hit[0] < 0.0).count();
        assert!(sky > 0 && sky < cpu.len() / 4, "{sky} sky pixels");
    }
}

#[test]
fn bad_settings_give_typed_errors_not_panics() {
    let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
    let scene = Scene::demonstration(1);
    let tracer = GpuPathTracer::new(context, &scene).unwrap();
    let error = tracer
        .render(context, Step::Naive, &base(8, 8, 1, 0, 0))
        .unwrap_err();
    assert!(matches!(
        error,
        RenderError::Settings(PathTracerError::Bounces { bounces: 0, .. })
    ));
    let too_wide = base(70_000 * 64, 1, 1, 1, 0);
    assert!(matches!(
        tracer.render(context, Step::Naive, &too_wide),
        Err(RenderError::Gpu(_))
    ));
}

#[test]
fn frames_are_timed() {
    let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
    let scene = Scene::demonstration(1);
    let tracer = GpuPathTracer::new(context, &scene).unwrap();
    let times = tracer
        .time_frames(context, Step::Tiles, &base(16, 16, 1, 4, 0), 3)
        .unwrap();
    assert_eq!(times.len(), 3);
    assert!(
        times
            .iter()
            .all(|time| time.milliseconds > 0.0 && time.milliseconds.is_finite())
    );
}
