//! The camera, the projection of one point, and the packed key the renderers compare.
//!
//! The CPU reference and the shaders project a point with the same operations in the same
//! order, and the camera is built so that the one freedom a shader compiler has left cannot
//! change a bit. WGSL lets a compiler *fuse* a multiplication and the addition after it into
//! one instruction with one rounding instead of two (WGSL's own `fma` may even be computed
//! unfused), and the CPU code does not fuse. Fusing only matters when the product is not
//! exact, so the camera makes every product exact: the eye sits on the cloud's grid (so the
//! offset from the eye to a point has at most 17 significant bits) and each component of
//! the camera's axes is rounded to a multiple of 1/128 (at most 7 more bits), which keeps
//! every product within the 24 bits of an `f32`. The perspective step multiplies without
//! adding, and adds the image centre as a whole number after `floor`, which is exact.

use super::PointCloudError;
use super::cloud::GRID_STEP;

/// The key of a pixel that no point reached: larger than every key a point can have.
pub const EMPTY_PIXEL: u32 = u32::MAX;
/// The largest quantised depth a point may have (one less than 2²⁴ − 1, so that the key
/// of the farthest point with colour 255 is still smaller than [`EMPTY_PIXEL`]).
pub const LARGEST_DEPTH: u32 = (1 << 24) - 2;

// ANCHOR: camera
/// A pinhole camera looking from `eye` along `forward`, with an image of
/// `width × height` pixels whose centre is pixel (`width / 2`, `height / 2`). Points nearer
/// than `near` or farther than `far` are not drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Camera {
    pub eye: [f32; 3],
    pub right: [f32; 3],
    pub up: [f32; 3],
    pub forward: [f32; 3],
    /// The focal length in pixels: how many pixels one unit sideways at depth one covers.
    pub focal_pixels: f32,
    pub width: u32,
    pub height: u32,
    pub near: f32,
    pub far: f32,
    /// (2²⁴ − 1) / (far − near): turns a depth into 24 bits.
    pub depth_scale: f32,
}
// ANCHOR_END: camera

impl Camera {
    /// A camera at `eye` looking at `target`, with `vertical_field_of_view_degrees` across
    /// the image's height. The world's up is +y.
    pub fn looking_at(
        eye: [f32; 3],
        target: [f32; 3],
        vertical_field_of_view_degrees: f32,
        width: u32,
        height: u32,
        near: f32,
        far: f32,
    ) -> Result<Camera, PointCloudError> {
        if width == 0 || height == 0 {
            return Err(PointCloudError::EmptyImage { width, height });
        }
        // 2²⁴ pixels keeps every pixel coordinate exact in an f32.
        if u64::from(width) * u64::from(height) > 1 << 24 {
            return Err(PointCloudError::ImageTooLarge { width, height });
        }
        let finite = eye.iter().chain(&target).all(|value| value.is_finite());
        if !(finite && near > 0.0 && far > near && far.is_finite()) {
            return Err(PointCloudError::BadCamera {
                reason: format!(
                    "the eye, the target, near ({near}) and far ({far}) must be finite, \
                     with 0 < near < far"
                ),
            });
        }
        if !(vertical_field_of_view_degrees > 0.0 && vertical_field_of_view_degrees < 180.0) {
            return Err(PointCloudError::BadCamera {
                reason: format!(
                    "the field of view must lie between 0 and 180 degrees, not \
                     {vertical_field_of_view_degrees}"
                ),
            });
        }
        if eye.iter().any(|value| value.abs() > 3.0) {
            return Err(PointCloudError::BadCamera {
                reason: format!(
                    "the eye {eye:?} must lie within 3 units of the cloud's centre on every \
                     axis (farther, the products of the projection are no longer exact)"
                ),
            });
        }
        // The eye on the cloud's grid, the axes on multiples of 1/128: exact products.
        let eye = eye.map(|value| (value / GRID_STEP).round() * GRID_STEP);
        let round_axis = |axis: [f32; 3]| axis.map(|value| (value * 128.0).round() / 128.0);
        let forward = normalise(sub(target, eye));
        let right = normalise(cross(forward, [0.0, 1.0, 0.0]));
        if !(forward.iter().chain(&right).all(|value| value.is_finite())) {
            return Err(PointCloudError::BadCamera {
                reason: "the eye must differ from the target, and must not look straight \
                         up or down"
                    .to_string(),
            });
        }
        let up = round_axis(cross(right, forward));
        let (forward, right) = (round_axis(forward), round_axis(right));
        let half_angle = (vertical_field_of_view_degrees.to_radians() / 2.0).tan();
        Ok(Camera {
            eye,
            right,
            up,
            forward,
            focal_pixels: height as f32 / 2.0 / half_angle,
            width,
            height,
            near,
            far,
            depth_scale: ((1u32 << 24) - 1) as f32 / (far - near),
        })
    }

    pub fn pixel_count(&self) -> usize {
        self.width as usize * self.height as usize
    }

    // ANCHOR: project
    /// The pixel (row-major index) and the 24-bit depth of the point at `position`, or
    /// `None` when it lies outside the image or outside near…far.
    pub fn project(&self, position: [f32; 3]) -> Option<(usize, u32)> {
        let offset = sub(position, self.eye);
        // Every product is exact (see the module's comment), so fused or not, the sums
        // round the same way.
        let along =
            |axis: [f32; 3]| offset[0] * axis[0] + (offset[1] * axis[1] + offset[2] * axis[2]);
        let (x, y, depth) = (along(self.right), along(self.up), along(self.forward));
        if !(depth > self.near && depth < self.far) {
            return None;
        }
        let reciprocal = 1.0 / depth;
        let column = (x * reciprocal * self.focal_pixels).floor() + (self.width / 2) as f32;
        let row = (y * reciprocal * -self.focal_pixels).floor() + (self.height / 2) as f32;
        if !(column >= 0.0 && column < self.width as f32 && row >= 0.0 && row < self.height as f32)
        {
            return None;
        }
        let quantised = (((depth - self.near) * self.depth_scale) as u32).min(LARGEST_DEPTH);
        Some((
            row as usize * self.width as usize + column as usize,
            quantised,
        ))
    }
    // ANCHOR_END: project
}

// ANCHOR: key
/// Depth in the high 24 bits, colour in the low 8: the smaller key is the nearer point,
/// and between two points at the same quantised depth the smaller colour wins, whatever
/// order they arrive in.
pub fn pack_key(depth: u32, colour: u8) -> u32 {
    depth << 8 | u32::from(colour)
}

/// The colour of a pixel with `key` from a palette of 256 RGBA colours, darkened with
/// depth (a depth cue: the farthest points at half brightness); `background` where no point
/// landed. Integer arithmetic only, so the shader computes the same bytes.
pub fn shade(key: u32, palette: &[u32; 256], background: u32) -> u32 {
    if key == EMPTY_PIXEL {
        return background;
    }
    let colour = palette[(key & 0xff) as usize];
    let brightness = 256 - (key >> 25); // 256 near … 129 far
    let channel = |shift: u32| (((colour >> shift & 0xff) * brightness) >> 8) << shift;
    channel(0) | channel(8) | channel(16) | (colour & 0xff00_0000)
}
// ANCHOR_END: key

/// 256 colours from deep blue through green to pale yellow, as RGBA bytes in a `u32`
/// (red in the lowest byte, as an RGBA8 image stores them).
pub fn height_palette() -> [u32; 256] {
    std::array::from_fn(|index| {
        let t = index as f32 / 255.0;
        let red = (255.0 * (1.5 * t - 0.3).clamp(0.0, 1.0)) as u32;
        let green = (255.0 * (0.15 + 0.8 * t).clamp(0.0, 1.0)) as u32;
        let blue = (255.0 * (0.7 - 0.5 * t).clamp(0.0, 1.0)) as u32;
        red | green << 8 | blue << 16 | 0xff00_0000
    })
}

fn sub(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn cross(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

fn normalise(a: [f32; 3]) -> [f32; 3] {
    let length = (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt();
    a.map(|value| value / length)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn camera() -> Camera {
        Camera::looking_at([0.0, 0.0, -3.0], [0.0; 3], 40.0, 64, 48, 0.5, 10.0).unwrap()
    }

    #[test]
    fn the_target_lands_in_the_middle_and_nearer_points_get_smaller_keys() {
        let camera = camera();
        let (pixel, depth) = camera.project([0.0; 3]).unwrap();
        assert_eq!(pixel, 24 * 64 + 32);
        let (_, nearer) = camera.project([0.0, 0.0, -1.0]).unwrap();
        assert!(nearer < depth);
        assert!(pack_key(nearer, 255) < pack_key(depth, 0));
        assert!(pack_key(LARGEST_DEPTH, 255) < EMPTY_PIXEL);
    }

    #[test]
    fn points_behind_beside_or_beyond_are_not_drawn() {
        let camera = camera();
        assert_eq!(camera.project([0.0, 0.0, -4.0]), None); // behind the eye
        assert_eq!(camera.project([0.0, 0.0, 8.0]), None); // beyond far
        assert_eq!(camera.project([5.0, 0.0, 0.0]), None); // off to the right
        assert!(camera.project([0.0, 1.0, 0.0]).unwrap().0 < 24 * 64); // up is a smaller row
    }

    #[test]
    fn bad_cameras_are_refused_with_a_reason() {
        let make = |width, height, near, far, eye: [f32; 3]| {
            Camera::looking_at(eye, [0.0; 3], 40.0, width, height, near, far)
        };
        assert!(matches!(
            make(0, 48, 0.5, 10.0, [0.0, 0.0, -3.0]),
            Err(PointCloudError::EmptyImage { .. })
        ));
        assert!(matches!(
            make(64, 48, 0.0, 10.0, [0.0, 0.0, -3.0]),
            Err(PointCloudError::BadCamera { .. })
        ));
        assert!(matches!(
            make(64, 48, 0.5, 10.0, [0.0, f32::NAN, -3.0]),
            Err(PointCloudError::BadCamera { .. })
        ));
        let same = make(64, 48, 0.5, 10.0, [0.0; 3]).unwrap_err();
        assert!(same.to_string().contains("differ"), "{same}");
        let far_eye = make(64, 48, 0.5, 10.0, [0.0, 0.0, -3.5]).unwrap_err();
        assert!(far_eye.to_string().contains("within 3 units"), "{far_eye}");
        assert!(matches!(
            make(8192, 8192, 0.5, 10.0, [0.0, 0.0, -3.0]),
            Err(PointCloudError::ImageTooLarge { .. })
        ));
    }

    #[test]
    fn shading_keeps_alpha_and_darkens_far_points() {
        let palette = height_palette();
        let near = shade(pack_key(0, 200), &palette, 0);
        let far = shade(pack_key(LARGEST_DEPTH, 200), &palette, 0);
        assert_eq!(near, palette[200]);
        assert!(far & 0xff <= near & 0xff && far >> 24 == 0xff);
        assert_eq!(shade(EMPTY_PIXEL, &palette, 0x1234_5678), 0x1234_5678);
    }
}
