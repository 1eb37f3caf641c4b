//! Every GPU splatting kernel against the CPU reference, bit for bit: several clouds,
//! cameras and image sizes, the keys and the image poisoned before every render.
//!
//! Bit for bit on a CPU adapter (lavapipe), whose `1.0 / depth` is correctly rounded like
//! the CPU's. Vulkan lets a GPU driver compute that reciprocal within 2.5 units in the last
//! place, which can move a point on the edge between two pixels to the neighbour; on such an
//! adapter every pixel's key must still be one that some choice of reciprocal within
//! `RECIPROCAL_STEPS` per point explains (see `keys_explained_by_the_reciprocal`).

use galaxy::gpu::GpuContext;
use galaxy::use_cases::point_cloud::{
    Camera, EMPTY_PIXEL, PointCloud, PointCloudError, PointCloudRenderer, Rendering, Shape,
    SplatStep, generate, height_palette, pack_key, point_buffer_bytes, render_cpu, shade,
};

fn context() -> &'static GpuContext {
    GpuContext::shared().unwrap_or_else(|error| panic!("GPU tests need an adapter: {error}"))
}

const BACKGROUND: u32 = 0xff20_1810;

/// How many steps of its bits a driver's `1.0 / depth` may lie from the correctly rounded
/// one: Vulkan allows 2.5 units in the last place, which is 3 steps, or 6 just below a power
/// of two, where the steps are half as large.
const RECIPROCAL_STEPS: i32 = 6;

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
fn every_step_draws_exactly_the_cpu_reference_on_lavapipe_and_within_the_reciprocal_elsewhere() {
    let context = context();
    let renderer = PointCloudRenderer::new(context).unwrap();
    let palette = height_palette();
    // Lavapipe rounds 1.0 / depth correctly, as the CPU does: there, nothing may differ.
    let exact = context.adapter_info().device_type == wgpu::DeviceType::Cpu;
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
            if exact {
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
            } else {
                let explained = keys_explained_by_the_reciprocal(cloud, camera);
                check_within(
                    &got,
                    &explained,
                    &palette,
                    camera,
                    &format!("case {case}, {}", step.name()),
                );
            }
        }
    }
}

/// The projection of `Camera::project` with the reciprocal of the depth given, so that the
/// test can try the values a driver may compute for `1.0 / depth`.
fn project_with(
    camera: &Camera,
    position: [f32; 3],
    reciprocal_steps: i32,
) -> Option<(usize, u32)> {
    let offset = [
        position[0] - camera.eye[0],
        position[1] - camera.eye[1],
        position[2] - camera.eye[2],
    ];
    let along = |axis: [f32; 3]| offset[0] * axis[0] + (offset[1] * axis[1] + offset[2] * axis[2]);
    let (x, y, depth) = (along(camera.right), along(camera.up), along(camera.forward));
    if !(depth > camera.near && depth < camera.far) {
        return None;
    }
    let exact = 1.0 / depth; // positive and normal: neighbours are one step of the bits away
    let reciprocal = f32::from_bits(exact.to_bits().wrapping_add_signed(reciprocal_steps));
    let column = (x * reciprocal * camera.focal_pixels).floor() + (camera.width / 2) as f32;
    let row = (y * reciprocal * -camera.focal_pixels).floor() + (camera.height / 2) as f32;
    if !(column >= 0.0 && column < camera.width as f32 && row >= 0.0 && row < camera.height as f32)
    {
        return None;
    }
    let quantised = (((depth - camera.near) * camera.depth_scale) as u32).min((1 << 24) - 2);
    Some((
        row as usize * camera.width as usize + column as usize,
        quantised,
    ))
}

/// For every pixel, the smallest key the GPU may leave there when each point's reciprocal
/// may be off by up to `RECIPROCAL_STEPS` steps of its bits (the nearest point that lands
/// there for some such reciprocal), and the largest (the nearest point that lands there for
/// all of them; empty if none does).
fn keys_explained_by_the_reciprocal(cloud: &PointCloud, camera: &Camera) -> Vec<(u32, u32)> {
    let mut bounds = vec![(EMPTY_PIXEL, EMPTY_PIXEL); camera.pixel_count()];
    for index in 0..cloud.len() {
        let position = cloud.position(index);
        let landings: Vec<_> = (-RECIPROCAL_STEPS..=RECIPROCAL_STEPS)
            .map(|steps| project_with(camera, position, steps))
            .collect();
        let certain = landings.iter().all(|landing| *landing == landings[0]);
        for (pixel, depth) in landings.into_iter().flatten() {
            let key = pack_key(depth, cloud.colours[index]);
            let (smallest, largest) = &mut bounds[pixel];
            *smallest = (*smallest).min(key);
            if certain {
                *largest = (*largest).min(key);
            }
        }
    }
    bounds
}

fn check_within(
    got: &Rendering,
    bounds: &[(u32, u32)],
    palette: &[u32; 256],
    camera: &Camera,
    what: &str,
) {
    for (pixel, (&key, &(smallest, largest))) in got.keys.iter().zip(bounds).enumerate() {
        assert!(
            smallest <= key && key <= largest,
            "{what}: key {key:#x} of pixel {pixel} (row {}, column {}) is not between \
             {smallest:#x} and {largest:#x}, the keys a reciprocal within {RECIPROCAL_STEPS} \
             steps of its bits explains",
            pixel / camera.width as usize,
            pixel % camera.width as usize
        );
        assert_eq!(
            got.image[pixel],
            shade(key, palette, BACKGROUND),
            "{what}: pixel {pixel}"
        );
    }
}

#[test]
fn the_tolerance_of_other_adapters_accepts_the_reference_and_refuses_a_missing_point() {
    // The check used off lavapipe must accept the CPU's own image, and must still fail a
    // kernel that loses a point which lands on its pixel whatever the reciprocal.
    let palette = height_palette();
    for (cloud, camera) in cases() {
        let expected = render_cpu(&cloud, &camera, &palette, BACKGROUND);
        let bounds = keys_explained_by_the_reciprocal(&cloud, &camera);
        check_within(&expected, &bounds, &palette, &camera, "the CPU reference");
        let pixel = (0..expected.keys.len())
            .find(|&pixel| bounds[pixel].0 == bounds[pixel].1 && bounds[pixel].0 != EMPTY_PIXEL)
            .expect("a pixel whose nearest point lands there for every reciprocal");
        let mut wrong = expected.clone();
        wrong.keys[pixel] = EMPTY_PIXEL;
        wrong.image[pixel] = BACKGROUND;
        let refused = std::panic::catch_unwind(|| {
            check_within(&wrong, &bounds, &palette, &camera, "a lost point")
        });
        assert!(
            refused.is_err(),
            "a lost point at pixel {pixel} was accepted"
        );
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
