//! Every GPU splatting kernel against the CPU reference, bit for bit: several clouds,
//! cameras and image sizes, the keys and the image poisoned before every render.

use galaxy::gpu::GpuContext;
use galaxy::use_cases::point_cloud::{
    Camera, EMPTY_PIXEL, PointCloud, PointCloudError, PointCloudRenderer, Shape, SplatStep,
    generate, height_palette, point_buffer_bytes, render_cpu,
};

fn context() -> &'static GpuContext {
    GpuContext::shared().unwrap_or_else(|error| panic!("GPU tests need an adapter: {error}"))
}

const BACKGROUND: u32 = 0xff20_1810;

/// The clouds and cameras of the comparison: three shapes, point counts around the
/// workgroup size and the batch of eight, images of odd sizes, cameras near and far, from
/// the side and from above, one so close that most points fall outside the image.
fn cases() -> Vec<(PointCloud, Camera)> {
    let camera = |eye, width, height, field_of_view| {
        Camera::looking_at(eye, [0.0; 3], field_of_view, width, height, 0.1, 8.0).unwrap()
    };
    vec![
        (
            generate(Shape::TorusKnot, 60_001, 1),
            camera([0.3, 1.2, -2.5], 97, 61, 45.0),
        ),
        (
            generate(Shape::Terrain, 100_000, 2),
            camera([1.5, 1.5, -1.5], 160, 120, 50.0),
        ),
        (
            generate(Shape::NoisyScan, 40_963, 3),
            camera([0.0, 0.4, -1.2], 64, 64, 70.0),
        ),
        (
            generate(Shape::TorusKnot, 2049, 4),
            camera([0.0, 3.0, -0.01], 31, 17, 30.0),
        ),
        (
            generate(Shape::Terrain, 255, 5),
            camera([0.2, 0.1, -0.5], 40, 30, 90.0),
        ),
    ]
}

#[test]
fn every_step_draws_exactly_the_cpu_reference() {
    let context = context();
    let renderer = PointCloudRenderer::new(context).unwrap();
    let palette = height_palette();
    for (case, (cloud, camera)) in cases().iter().enumerate() {
        let expected = render_cpu(cloud, camera, &palette, BACKGROUND);
        let drawn = expected
            .keys
            .iter()
            .filter(|&&key| key != EMPTY_PIXEL)
            .count();
        assert!(drawn > 0, "case {case}: the reference drew nothing");
        for step in SplatStep::ALL {
            let frame = renderer
                .prepare(context, cloud, camera, &palette, BACKGROUND, step)
                .unwrap();
            let got = frame.render(context).unwrap();
            for (pixel, (gpu, cpu)) in got.keys.iter().zip(&expected.keys).enumerate() {
                assert_eq!(
                    gpu,
                    cpu,
                    "case {case}, {}: key of pixel {pixel} (row {}, column {})",
                    step.name(),
                    pixel / camera.width as usize,
                    pixel % camera.width as usize
                );
            }
            assert_eq!(got.image, expected.image, "case {case}, {}", step.name());
        }
    }
}

#[test]
fn a_frame_rendered_twice_is_the_same_and_an_empty_cloud_is_all_background() {
    let context = context();
    let renderer = PointCloudRenderer::new(context).unwrap();
    let palette = height_palette();
    let camera = Camera::looking_at([0.0, 0.5, -2.0], [0.0; 3], 45.0, 33, 20, 0.1, 8.0).unwrap();
    let cloud = generate(Shape::NoisyScan, 5000, 8);
    let frame = renderer
        .prepare(
            context,
            &cloud,
            &camera,
            &palette,
            BACKGROUND,
            SplatStep::PackedPositions,
        )
        .unwrap();
    assert_eq!(
        frame.render(context).unwrap(),
        frame.render(context).unwrap()
    );
    let empty = PointCloud::from_positions(&[], &[]).unwrap();
    for step in SplatStep::ALL {
        let frame = renderer
            .prepare(context, &empty, &camera, &palette, BACKGROUND, step)
            .unwrap();
        let got = frame.render(context).unwrap();
        assert!(
            got.keys.iter().all(|&key| key == EMPTY_PIXEL),
            "{}",
            step.name()
        );
        assert!(
            got.image.iter().all(|&pixel| pixel == BACKGROUND),
            "{}",
            step.name()
        );
    }
}

#[test]
fn timing_a_frame_gives_positive_times() {
    let context = context();
    let renderer = PointCloudRenderer::new(context).unwrap();
    let palette = height_palette();
    let camera = Camera::looking_at([0.0, 0.5, -2.0], [0.0; 3], 45.0, 64, 48, 0.1, 8.0).unwrap();
    let cloud = generate(Shape::Terrain, 20_000, 9);
    let frame = renderer
        .prepare(
            context,
            &cloud,
            &camera,
            &palette,
            0,
            SplatStep::OnePointPerInvocation,
        )
        .unwrap();
    let queries = galaxy::use_cases::point_cloud::frame_queries(context, 2).unwrap();
    let times = frame.time_frames(context, queries.as_ref(), 2).unwrap();
    assert_eq!(times.len(), 2);
    for time in times {
        assert!(time.frame > 0.0 && time.frame.is_finite(), "{time:?}");
        assert!(time.splat <= time.frame, "{time:?}");
    }
}

#[test]
fn a_cloud_larger_than_a_storage_buffer_is_refused_before_any_work() {
    let context = context();
    let limit = context.limits().max_storage_buffer_binding_size;
    // The check runs on the count alone, before sorting or uploading anything.
    let largest = (limit / 16) as usize;
    assert!(
        point_buffer_bytes(
            largest.min(u32::MAX as usize - 1),
            SplatStep::MortonOrder,
            limit
        )
        .is_ok()
    );
    if largest + 1 < u32::MAX as usize {
        let refused = point_buffer_bytes(largest + 1, SplatStep::MortonOrder, limit);
        assert!(
            matches!(refused, Err(PointCloudError::TooManyPoints { .. })),
            "{refused:?}"
        );
    }
    let refused = point_buffer_bytes(u32::MAX as usize, SplatStep::PackedPositions, u64::MAX);
    assert!(
        matches!(refused, Err(PointCloudError::TooManyPoints { .. })),
        "{refused:?}"
    );
}
