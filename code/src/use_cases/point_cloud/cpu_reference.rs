//! The CPU reference: the simplest correct splatting renderer, the yardstick every GPU
//! kernel is compared with, bit for bit.

use super::PointCloud;
use super::camera::{Camera, EMPTY_PIXEL, pack_key, shade};

/// What a renderer produces: the key of every pixel (depth and colour of the nearest
/// point) and the shaded RGBA image, both row-major.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendering {
    pub keys: Vec<u32>,
    pub image: Vec<u32>,
}

// ANCHOR: render_cpu
/// Splats every point of `cloud` into a `camera.width × camera.height` image, keeping the
/// nearest per pixel, then shades each pixel from `palette`.
pub fn render_cpu(
    cloud: &PointCloud,
    camera: &Camera,
    palette: &[u32; 256],
    background: u32,
) -> Rendering {
    let mut keys = vec![EMPTY_PIXEL; camera.pixel_count()];
    for index in 0..cloud.len() {
        if let Some((pixel, depth)) = camera.project(cloud.position(index)) {
            let key = pack_key(depth, cloud.colours[index]);
            keys[pixel] = keys[pixel].min(key);
        }
    }
    let image = keys
        .iter()
        .map(|&key| shade(key, palette, background))
        .collect();
    Rendering { keys, image }
}
// ANCHOR_END: render_cpu

#[cfg(test)]
mod tests {
    use super::*;
    use crate::use_cases::point_cloud::camera::height_palette;

    #[test]
    fn the_nearer_of_two_points_on_one_pixel_wins_in_either_order() {
        let camera =
            Camera::looking_at([0.0, 0.0, -3.0], [0.0; 3], 40.0, 16, 16, 0.5, 10.0).unwrap();
        let positions = [[0.0, 0.0, 0.5], [0.0, 0.0, -0.5]];
        let palette = height_palette();
        for order in [[0, 1], [1, 0]] {
            let cloud = PointCloud::from_positions(
                &order.map(|index| positions[index]),
                &order.map(|index| [10u8, 20][index]),
            )
            .unwrap();
            let rendering = render_cpu(&cloud, &camera, &palette, 0);
            let (pixel, depth) = camera.project(cloud.position(0)).unwrap();
            let (_, nearer) = camera.project(positions[1]).unwrap();
            assert!(nearer < depth || order == [1, 0]);
            assert_eq!(rendering.keys[pixel] & 0xff, 20, "order {order:?}");
            let drawn = rendering.keys.iter().filter(|&&key| key != EMPTY_PIXEL);
            assert_eq!(drawn.count(), 1);
            assert_eq!(rendering.image[0], 0, "background");
        }
    }
}
