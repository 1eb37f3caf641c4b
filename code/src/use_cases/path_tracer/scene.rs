//! What the path tracer draws: spheres and planes, their materials, the sky and a camera.
//!
//! The same numbers go to the CPU reference and to the GPU. The GPU reads them from
//! storage buffers laid out as WGSL expects (`#[repr(C)]`, every `vec3<f32>` followed by a
//! 4-byte field so that a struct is a whole number of 16-byte rows); the CPU reads the
//! very same structs, so there is one description of the scene, not two.

// ANCHOR: vector
/// Three `f32`s: a point, a direction or a colour. The few operations below are written
/// out in the order the shader computes them, so that both round the same way.
pub type Vec3 = [f32; 3];

pub fn add(a: Vec3, b: Vec3) -> Vec3 {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

pub fn subtract(a: Vec3, b: Vec3) -> Vec3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

pub fn scale(a: Vec3, factor: f32) -> Vec3 {
    [a[0] * factor, a[1] * factor, a[2] * factor]
}

/// Component by component: a colour filtered by another.
pub fn multiply(a: Vec3, b: Vec3) -> Vec3 {
    [a[0] * b[0], a[1] * b[1], a[2] * b[2]]
}

pub fn dot(a: Vec3, b: Vec3) -> f32 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

pub fn normalize(a: Vec3) -> Vec3 {
    scale(a, 1.0 / dot(a, a).sqrt())
}
// ANCHOR_END: vector

pub fn cross(a: Vec3, b: Vec3) -> Vec3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

// ANCHOR: primitives
/// How a surface answers light.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum MaterialKind {
    /// Scatters an incoming ray into a random direction of the hemisphere, more often
    /// near the normal (a Lambertian surface); `colour` is the fraction it reflects.
    Diffuse = 0,
    /// Reflects like a mirror; `colour` tints the reflection.
    Mirror = 1,
    /// Gives off light of radiance `colour` and reflects nothing: a path ends there.
    Emissive = 2,
}

#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Material {
    pub colour: Vec3,
    /// A [`MaterialKind`] as a number, as the shader reads it.
    pub kind: u32,
}

#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Sphere {
    pub centre: Vec3,
    pub radius: f32,
    /// Index into the scene's materials.
    pub material: u32,
    pub padding: [u32; 3],
}

/// The points `p` with `dot(normal, p) == offset`: an infinite floor or wall.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Plane {
    pub normal: Vec3,
    pub offset: f32,
    pub material: u32,
    pub padding: [u32; 3],
}

/// A sphere that encloses the spheres `first .. first + count`: a ray that misses it
/// misses all of them, so one test can stand for `count`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Group {
    pub centre: Vec3,
    pub radius: f32,
    pub first: u32,
    pub count: u32,
    pub padding: [u32; 2],
}
// ANCHOR_END: primitives

/// Where rays start: the eye, and the image rectangle they pass through.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Camera {
    pub origin: Vec3,
    /// The image's lower left corner, in the scene.
    pub lower_left: Vec3,
    /// From the left edge of the image to the right edge.
    pub horizontal: Vec3,
    /// From the bottom edge of the image to the top edge.
    pub vertical: Vec3,
}

impl Camera {
    /// A camera at `origin` looking at `target`, `vertical_degrees` of field of view,
    /// for an image `aspect` times as wide as it is high.
    pub fn looking_at(origin: Vec3, target: Vec3, vertical_degrees: f32, aspect: f32) -> Camera {
        let half_height = (vertical_degrees.to_radians() / 2.0).tan();
        let half_width = aspect * half_height;
        let forward = normalize(subtract(target, origin));
        let right = normalize(cross(forward, [0.0, 1.0, 0.0]));
        let up = cross(right, forward);
        let centre = add(origin, forward);
        let lower_left = subtract(
            subtract(centre, scale(right, half_width)),
            scale(up, half_height),
        );
        Camera {
            origin,
            lower_left,
            horizontal: scale(right, 2.0 * half_width),
            vertical: scale(up, 2.0 * half_height),
        }
    }
}

/// A whole scene. The spheres are stored group after group, so that every group's
/// members are a contiguous range.
#[derive(Debug, Clone, PartialEq)]
pub struct Scene {
    pub materials: Vec<Material>,
    pub spheres: Vec<Sphere>,
    pub planes: Vec<Plane>,
    pub groups: Vec<Group>,
    /// The radiance of a ray that leaves the scene, towards the horizon and straight up.
    pub sky_horizon: Vec3,
    pub sky_zenith: Vec3,
}

/// Materials of the demonstration scene, by index.
const GROUND: u32 = 0;
const LAMP: u32 = 1;
const CHROME: u32 = 2;
const FIRST_COLOUR: u32 = 3;
const COLOURS: u32 = 5;

impl Scene {
    /// The scene of the chapter: a grey floor under a pale sky, a big mirror ball, a lamp
    /// and `clusters` × `clusters` clusters of eight small coloured balls (three of every
    /// eight are mirrors), each cluster enclosed by its own bounding sphere.
    pub fn demonstration(clusters: u32) -> Scene {
        let mut materials = vec![
            material([0.6, 0.6, 0.6], MaterialKind::Diffuse),
            material([12.0, 10.0, 8.0], MaterialKind::Emissive),
            material([0.9, 0.9, 0.9], MaterialKind::Mirror),
        ];
        let palette = [
            [0.8, 0.25, 0.2],
            [0.25, 0.7, 0.3],
            [0.2, 0.35, 0.8],
            [0.85, 0.75, 0.3],
            [0.75, 0.75, 0.75],
        ];
        for colour in palette {
            materials.push(material(colour, MaterialKind::Diffuse));
        }
        materials.push(material([0.95, 0.8, 0.6], MaterialKind::Mirror));
        let gold = FIRST_COLOUR + COLOURS;

        let mut scene = Scene {
            materials,
            spheres: Vec::new(),
            planes: vec![Plane {
                normal: [0.0, 1.0, 0.0],
                offset: 0.0,
                material: GROUND,
                padding: [0; 3],
            }],
            groups: Vec::new(),
            sky_horizon: [0.9, 0.9, 1.0],
            sky_zenith: [0.35, 0.5, 0.9],
        };
        // The big pieces, each its own group of one.
        scene.push_group(&[sphere([0.0, 1.2, -1.0], 1.2, CHROME)]);
        scene.push_group(&[sphere([-2.2, 3.2, 0.6], 0.5, LAMP)]);
        // The clusters on a square grid in front of and around the mirror ball.
        let spacing = 1.6;
        let start = -(clusters as f32 - 1.0) * spacing / 2.0;
        for row in 0..clusters {
            for column in 0..clusters {
                let centre_x = start + column as f32 * spacing;
                let centre_z = 1.5 + start + row as f32 * spacing;
                let mut members = Vec::new();
                for member in 0..8_u32 {
                    let angle = member as f32 * std::f32::consts::TAU / 8.0;
                    let radius = 0.12 + 0.03 * (member % 3) as f32;
                    let material = if member % 8 < 3 {
                        gold
                    } else {
                        FIRST_COLOUR + (row * clusters + column + member) % COLOURS
                    };
                    members.push(sphere(
                        [
                            centre_x + 0.45 * angle.cos(),
                            radius,
                            centre_z + 0.45 * angle.sin(),
                        ],
                        radius,
                        material,
                    ));
                }
                scene.push_group(&members);
            }
        }
        scene
    }

    /// Appends `members` and a group whose sphere encloses them all, with a margin so that
    /// rounding never lets a ray slip past the bound and still hit a member.
    fn push_group(&mut self, members: &[Sphere]) {
        let count = members.len() as f32;
        let mut centre = [0.0; 3];
        for member in members {
            centre = add(centre, scale(member.centre, 1.0 / count));
        }
        let radius = members
            .iter()
            .map(|member| dot_length(subtract(member.centre, centre)) + member.radius)
            .fold(0.0_f32, f32::max);
        self.groups.push(Group {
            centre,
            radius: radius * 1.001 + 1e-4,
            first: self.spheres.len() as u32,
            count: members.len() as u32,
            padding: [0; 2],
        });
        self.spheres.extend_from_slice(members);
    }

    /// The camera of the chapter's images for an image of `width` × `height`.
    pub fn camera(width: u32, height: u32) -> Camera {
        Camera::looking_at(
            [0.0, 2.6, 7.5],
            [0.0, 0.7, 0.0],
            40.0,
            width as f32 / height as f32,
        )
    }
}

fn dot_length(a: Vec3) -> f32 {
    dot(a, a).sqrt()
}

fn material(colour: Vec3, kind: MaterialKind) -> Material {
    Material {
        colour,
        kind: kind as u32,
    }
}

fn sphere(centre: Vec3, radius: f32, material: u32) -> Sphere {
    Sphere {
        centre,
        radius,
        material,
        padding: [0; 3],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_member_lies_inside_its_bounding_sphere() {
        let scene = Scene::demonstration(3);
        assert_eq!(scene.groups.len(), 2 + 9);
        assert_eq!(scene.spheres.len(), 2 + 9 * 8);
        for group in &scene.groups {
            let members = &scene.spheres[group.first as usize..][..group.count as usize];
            for member in members {
                let reach = dot_length(subtract(member.centre, group.centre)) + member.radius;
                assert!(reach < group.radius, "{reach} >= {}", group.radius);
            }
        }
    }

    #[test]
    fn the_camera_spans_the_image_rectangle() {
        let camera = Scene::camera(200, 100);
        // The image is twice as wide as it is high, and the two edges are perpendicular.
        let width = dot_length(camera.horizontal);
        let height = dot_length(camera.vertical);
        assert!((width / height - 2.0).abs() < 1e-5);
        assert!(dot(camera.horizontal, camera.vertical).abs() < 1e-5);
    }

    #[test]
    fn the_layouts_match_the_shader() {
        // WGSL: a vec3<f32> then a 4-byte field fills 16 bytes; the structs are 16 or 32.
        assert_eq!(std::mem::size_of::<Material>(), 16);
        assert_eq!(std::mem::size_of::<Sphere>(), 32);
        assert_eq!(std::mem::size_of::<Plane>(), 32);
        assert_eq!(std::mem::size_of::<Group>(), 32);
    }
}
