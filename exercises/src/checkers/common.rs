//! What the WGSL checkers share: loading the kernel, sizing the dispatch, and the
//! requirement that an exercise about workgroup memory uses it.

use std::path::Path;

use galaxy::gpu::GpuContext;

use crate::error::CheckError;
use crate::kernel_run::{BufferData, CompiledKernel, PreparedKernel, compile};
use crate::report::{PartReport, Verdict};
use crate::shader::{AnalysedShader, BindingSpec};

/// The process-wide GPU context, or the error that says what to install.
pub fn context() -> Result<&'static GpuContext, CheckError> {
    Ok(GpuContext::shared()?)
}

/// A student's kernel, parsed, validated and compiled.
pub struct KernelUnderTest {
    pub shader: AnalysedShader,
    pub kernel: CompiledKernel,
}

impl KernelUnderTest {
    pub fn load(
        context: &GpuContext,
        path: &Path,
        bindings: &[BindingSpec],
    ) -> Result<KernelUnderTest, CheckError> {
        let shader = AnalysedShader::load(path, bindings)?;
        let kernel = compile(context, &shader, bindings)?;
        Ok(KernelUnderTest { shader, kernel })
    }

    /// Binds `data`, dispatches `grid` workgroups once, and reads the outputs back.
    pub fn run(
        &self,
        context: &GpuContext,
        data: &[BufferData],
        grid: [u32; 3],
    ) -> Result<Vec<Vec<u8>>, CheckError> {
        PreparedKernel::new(context, &self.kernel, data, grid)?.run(context)
    }

    /// The workgroup size of a kernel over a one-dimensional array: `@workgroup_size(N)`.
    pub fn one_dimensional_workgroup(&self) -> Result<u32, CheckError> {
        match self.shader.workgroup_size {
            [size, 1, 1] => Ok(size),
            [x, y, z] => Err(CheckError::Bindings {
                path: self.shader.path.clone(),
                message: format!(
                    "this exercise dispatches workgroups along x only, so its kernel needs a \
                     one-dimensional workgroup, @workgroup_size(N); this one is ({x}, {y}, {z})"
                ),
            }),
        }
    }

    /// How many output columns and rows one workgroup covers: the shader's
    /// `const BLOCK_COLUMNS` and `const BLOCK_ROWS` if it declares them (a kernel that
    /// computes several outputs per invocation), else its workgroup size in x and y.
    pub fn output_block(&self) -> (u32, u32) {
        let [x, y, _] = self.shader.workgroup_size;
        (
            self.shader
                .constant_u32("BLOCK_COLUMNS")
                .unwrap_or(x)
                .max(1),
            self.shader.constant_u32("BLOCK_ROWS").unwrap_or(y).max(1),
        )
    }

    /// The grid for a `rows × columns` output, one block per workgroup.
    pub fn grid_over(&self, rows: usize, columns: usize) -> [u32; 3] {
        let (block_columns, block_rows) = self.output_block();
        [
            crate::kernel_run::workgroups_for(columns, block_columns),
            crate::kernel_run::workgroups_for(rows, block_rows),
            1,
        ]
    }
}

/// Loads the submission's kernel, or a failed part named `part` that says why not.
pub fn load_or_fail(
    path: Option<&Path>,
    bindings: &[BindingSpec],
    part: &str,
) -> Result<(&'static GpuContext, KernelUnderTest), PartReport> {
    let path = path.expect("a WGSL exercise always has a WGSL file");
    let context = context().map_err(|error| PartReport::failed_before_running(part, error))?;
    let kernel = KernelUnderTest::load(context, path, bindings)
        .map_err(|error| PartReport::failed_before_running(part, error))?;
    Ok((context, kernel))
}

/// The part of an exercise about workgroup memory: the results alone cannot show that
/// a kernel shares data through workgroup memory, so the checker looks at the shader.
pub fn workgroup_memory_part(kernel: &KernelUnderTest, what_for: &str) -> PartReport {
    let mut part = PartReport::new("uses workgroup memory");
    let memory = kernel.shader.uses_workgroup_memory();
    let barrier = kernel.shader.uses_workgroup_barrier();
    let verdict = match (memory, barrier) {
        (true, true) => Verdict::Pass("a var<workgroup> and workgroupBarrier()".to_string()),
        (false, _) => Verdict::Unmet(format!(
            "the kernel never touches a var<workgroup>; this exercise is about {what_for}"
        )),
        (true, false) => Verdict::Unmet(
            "the kernel uses workgroup memory but never calls workgroupBarrier(): without one, \
             an invocation can read a value before its neighbour has written it"
                .to_string(),
        ),
    };
    part.push("shader", verdict);
    part
}
