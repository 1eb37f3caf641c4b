//! Laying out workgroups on the dispatch grid.
//!
//! A dispatch names how many workgroups to run along x, y and z, and each count is capped
//! by `max_compute_workgroups_per_dimension` (65,535 on most devices). A 1D problem that
//! needs more workgroups than that is spread over a 2D (or 3D) grid, and the shader turns
//! its (x, y) workgroup id back into one number.

use crate::gpu::GpuError;

// ANCHOR: workgroup_grid
/// How many workgroups to dispatch along each axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkgroupGrid {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

impl WorkgroupGrid {
    /// A grid of at least `workgroups` workgroups, numbered `y * x_count + x` in the shader.
    /// Uses one row while that fits, then as many rows of the widest size as needed.
    pub fn covering(
        workgroups: u64,
        limit_per_dimension: u32,
        operation: &'static str,
    ) -> Result<WorkgroupGrid, GpuError> {
        let limit = u64::from(limit_per_dimension);
        if workgroups <= limit {
            return Ok(WorkgroupGrid {
                x: workgroups.max(1) as u32,
                y: 1,
                z: 1,
            });
        }
        let rows = workgroups.div_ceil(limit);
        if rows > limit {
            return Err(GpuError::DispatchTooLarge {
                operation,
                workgroups,
                limit: limit_per_dimension,
            });
        }
        Ok(WorkgroupGrid {
            x: limit_per_dimension,
            y: rows as u32,
            z: 1,
        })
    }
}
// ANCHOR_END: workgroup_grid

/// The number of workgroups of `workgroup_size` invocations that cover `items`.
pub fn workgroups_for(items: usize, workgroup_size: u32) -> u64 {
    (items as u64).div_ceil(u64::from(workgroup_size))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_counts_use_one_row() {
        let grid = WorkgroupGrid::covering(10, 65_535, "test").unwrap();
        assert_eq!(grid, WorkgroupGrid { x: 10, y: 1, z: 1 });
    }

    #[test]
    fn large_counts_spill_into_y_and_cover_every_workgroup() {
        let grid = WorkgroupGrid::covering(65_536, 65_535, "test").unwrap();
        assert_eq!(
            grid,
            WorkgroupGrid {
                x: 65_535,
                y: 2,
                z: 1
            }
        );
        let grid = WorkgroupGrid::covering(999_997, 1000, "test").unwrap();
        assert!(u64::from(grid.x) * u64::from(grid.y) >= 999_997);
        assert!(grid.x <= 1000 && grid.y <= 1000);
    }

    #[test]
    fn impossible_counts_are_a_typed_error() {
        let error = WorkgroupGrid::covering(u64::from(u32::MAX) * 4, 65_535, "relu").unwrap_err();
        assert!(matches!(
            error,
            GpuError::DispatchTooLarge {
                operation: "relu",
                ..
            }
        ));
    }

    #[test]
    fn workgroups_round_up() {
        assert_eq!(workgroups_for(256, 256), 1);
        assert_eq!(workgroups_for(257, 256), 2);
        assert_eq!(workgroups_for(1, 256), 1);
    }
}
