//! Every GPU step of the path tracer against the CPU reference: the same paths from the
//! same random streams, on several image sizes (some not multiples of a workgroup), seeds
//! and bounce limits; and the primary hits, which use no random numbers, exactly.

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

#[test]
fn primary_hits_agree_exactly() {
    let context = GpuContext::shared().unwrap_or_else(|error| panic!("{error}"));
    for (clusters, width, height) in [(3, 64, 48), (2, 33, 17)] {
        let scene = Scene::demonstration(clusters);
        let tracer = GpuPathTracer::new(context, &scene).unwrap();
        let settings = base(width, height, 1, 1, 0);
        let gpu = tracer.primary_hits(context, &settings).unwrap();
        let cpu = cpu::primary_hits(&scene, &settings);
        assert_eq!(gpu.len(), cpu.len());
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
