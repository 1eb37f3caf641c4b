//! A path tracer: a CPU reference, and WGSL compute kernels made faster one measured step
//! at a time.
//!
//! Read in this order: `scene` (what is drawn), `cpu` (the reference, one path after
//! another), `compare` (when two images count as the same), `gpu` (the kernels of
//! `shaders/use_cases/path_tracer.wgsl` and the timestamps that time them), `image` (a
//! PNG writer for the result).

pub mod compare;
pub mod cpu;
pub mod gpu;
pub mod image;
pub mod scene;

// ANCHOR: settings
/// How a path may end before its last bounce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Termination {
    /// Only by leaving the scene or reaching a light: otherwise `max_bounces` bounces.
    FixedBounces,
    /// Also at random from the third bounce on, the more likely the dimmer the path has
    /// become; survivors are weighted up so that the expected image stays the same.
    RussianRoulette,
}

/// Which spheres a ray is tested against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Traversal {
    /// Every sphere of the scene, for every ray.
    EverySphere,
    /// First each group's bounding sphere; a group's members only if the ray can hit it.
    BoundingSpheres,
}

/// One image's worth of work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RenderSettings {
    pub width: u32,
    pub height: u32,
    pub samples_per_pixel: u32,
    /// At most [`cpu::MAX_BOUNCES_LIMIT`].
    pub max_bounces: u32,
    pub seed: u32,
    pub termination: Termination,
    pub traversal: Traversal,
}
// ANCHOR_END: settings

/// Settings the tracer cannot honour.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathTracerError {
    #[error("an image of {width} × {height} pixels is empty; both sides must be at least 1")]
    EmptyImage { width: u32, height: u32 },
    #[error("{samples} samples per pixel: at least one is needed")]
    NoSamples { samples: u32 },
    #[error(
        "{bounces} bounces asked for; the random streams hold numbers for at most {limit} \
         (and at least one is needed)"
    )]
    Bounces { bounces: u32, limit: u32 },
    #[error(
        "{width} × {height} pixels × {samples} samples need more random numbers per pixel \
         stream than a 32-bit counter holds; use fewer samples per frame"
    )]
    TooManySamples {
        width: u32,
        height: u32,
        samples: u32,
    },
    #[error("an image of {width} × {height} pixels needs three bytes per pixel, not {bytes} bytes")]
    ImageBytes {
        width: u32,
        height: u32,
        bytes: usize,
    },
}

impl RenderSettings {
    /// Checks the settings before any work starts.
    pub fn validate(&self) -> Result<(), PathTracerError> {
        if self.width == 0 || self.height == 0 {
            return Err(PathTracerError::EmptyImage {
                width: self.width,
                height: self.height,
            });
        }
        if self.samples_per_pixel == 0 {
            return Err(PathTracerError::NoSamples {
                samples: self.samples_per_pixel,
            });
        }
        if self.max_bounces == 0 || self.max_bounces > cpu::MAX_BOUNCES_LIMIT {
            return Err(PathTracerError::Bounces {
                bounces: self.max_bounces,
                limit: cpu::MAX_BOUNCES_LIMIT,
            });
        }
        let pixels = u64::from(self.width) * u64::from(self.height);
        let draws = u64::from(self.samples_per_pixel) * u64::from(cpu::DRAWS_PER_SAMPLE);
        if pixels > u64::from(u32::MAX) || draws > u64::from(u32::MAX) {
            return Err(PathTracerError::TooManySamples {
                width: self.width,
                height: self.height,
                samples: self.samples_per_pixel,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_settings_are_named() {
        let good = RenderSettings {
            width: 4,
            height: 3,
            samples_per_pixel: 1,
            max_bounces: 4,
            seed: 0,
            termination: Termination::FixedBounces,
            traversal: Traversal::EverySphere,
        };
        assert_eq!(good.validate(), Ok(()));
        let empty = RenderSettings { height: 0, ..good };
        assert!(empty.validate().unwrap_err().to_string().contains("4 × 0"));
        let none = RenderSettings {
            samples_per_pixel: 0,
            ..good
        };
        assert_eq!(
            none.validate(),
            Err(PathTracerError::NoSamples { samples: 0 })
        );
        let deep = RenderSettings {
            max_bounces: 17,
            ..good
        };
        assert!(
            deep.validate()
                .unwrap_err()
                .to_string()
                .contains("at most 16")
        );
        let many = RenderSettings {
            samples_per_pixel: u32::MAX / 10,
            ..good
        };
        assert!(matches!(
            many.validate(),
            Err(PathTracerError::TooManySamples { .. })
        ));
    }
}
