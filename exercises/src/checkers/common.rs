//! What the checkers share: loading a kernel (as written, instrumented, and with its
//! invocations reversed), running one case and judging it, the static checks, the
//! requirement that an exercise about workgroup memory uses it, and the small helpers
//! and CPU references several exercises need. No checker imports another checker; what
//! two of them share lives here.

use std::path::Path;

use galaxy::gpu::GpuContext;
use galaxy::{Tensor2d, Tolerance};

use crate::analysis::{Finding, StaticRules, analyse};
use crate::error::CheckError;
use crate::instrument::{clamped_source, reversed_source};
use crate::kernel_run::{
    BufferData, CompiledKernel, GuardFill, PreparedKernel, ReadBack, compile, to_floats,
    workgroups_for,
};
use crate::report::{PartReport, Verdict};
use crate::shader::{AnalysedShader, BindingKind, BindingSpec};

/// The process-wide GPU context, or the error that says what to install.
pub fn context() -> Result<&'static GpuContext, CheckError> {
    Ok(GpuContext::shared()?)
}

/// A student's kernel, parsed, validated and compiled three times.
pub struct KernelUnderTest {
    pub shader: AnalysedShader,
    /// The kernel as the student wrote it: what is timed, and what the graph level runs.
    pub kernel: CompiledKernel,
    /// With every storage index clamped onto the guards (see [`crate::instrument`]): the
    /// kernel every case runs first.
    pub checked: CompiledKernel,
    /// Clamped too, with the invocations of each workgroup in reverse order; or why the
    /// kernel could not be rewritten that way.
    pub reversed: Result<CompiledKernel, String>,
    /// The exercise's bindings, to name an output in a message.
    pub bindings: Vec<BindingSpec>,
}

impl KernelUnderTest {
    pub fn load(
        context: &GpuContext,
        path: &Path,
        bindings: &[BindingSpec],
    ) -> Result<KernelUnderTest, CheckError> {
        KernelUnderTest::from_shader(context, AnalysedShader::load(path, bindings)?, bindings)
    }

    /// As [`KernelUnderTest::load`], for a shader already read and analysed.
    pub fn from_shader(
        context: &GpuContext,
        shader: AnalysedShader,
        bindings: &[BindingSpec],
    ) -> Result<KernelUnderTest, CheckError> {
        let kernel = compile(context, &shader, bindings)?;
        let path = shader.path.clone();
        let rewritten = |source: String| -> Result<CompiledKernel, String> {
            let rewritten = AnalysedShader::from_source(&path, source, bindings)
                .map_err(|error| format!("the checker's rewrite of the kernel failed: {error}"))?;
            compile(context, &rewritten, bindings).map_err(|error| error.to_string())
        };
        // The clamped kernel comes from a rewrite the student's kernel has passed
        // validation for; should it fail, the kernel as written still runs.
        let checked = rewritten(clamped_source(&shader)).unwrap_or_else(|_| kernel.clone());
        let reversed = reversed_source(&shader).and_then(rewritten);
        Ok(KernelUnderTest {
            shader,
            kernel,
            checked,
            reversed,
            bindings: bindings.to_vec(),
        })
    }

    /// Binds `data`, dispatches `grid` workgroups of the kernel as written once, and reads
    /// the outputs back.
    pub fn run(
        &self,
        context: &GpuContext,
        data: &[BufferData],
        grid: [u32; 3],
    ) -> Result<Vec<Vec<u8>>, CheckError> {
        PreparedKernel::new(context, &self.kernel, data, grid)?.run(context)
    }

    /// Runs one case of `part` with [`run_case`] and adds its verdict under
    /// `description`. The case is diagnosed only while the part has no failure yet: the
    /// first failure is the one whose details the report shows.
    pub fn check_case(
        &self,
        context: &GpuContext,
        part: &mut PartReport,
        description: impl Into<String>,
        data: &[BufferData],
        grid: [u32; 3],
        judge: impl Fn(&[Vec<u8>]) -> Verdict,
    ) {
        let verdict = run_case(context, self, data, grid, judge, no_failure_yet(part));
        part.push(description, verdict);
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
            workgroups_for(columns, block_columns),
            workgroups_for(rows, block_rows),
            1,
        ]
    }

    /// The names of the read-write bindings, in binding order: the outputs.
    fn output_names(&self) -> Vec<&'static str> {
        self.bindings
            .iter()
            .filter(|spec| spec.kind == BindingKind::ReadWriteStorage)
            .map(|spec| spec.name)
            .collect()
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

/// The cause added when the reversed order fails a case the natural order passed.
pub const REVERSED_ORDER_CAUSE: &str = "cause: with the invocations of each workgroup in \
     reverse order (invocation i doing the work of invocation n−1−i) this case fails, in the \
     natural order it passes: the result depends on which invocation runs first, a race \
     between invocations (a missing workgroupBarrier(), or an invocation reading what \
     another one writes)";

/// The cause added when a failing case gives another result when run again.
pub const CHANGING_RESULT_CAUSE: &str = "cause: run again on the same input, the kernel gives \
     a different result: a race between invocations or workgroups";

/// The cause added when a failing case changes with the guards' contents.
pub const OUT_OF_BOUNDS_CAUSE: &str = "cause: with zeros instead of NaN in the guard elements \
     around the inputs the result changes, so the kernel reads out of bounds (past the data \
     of an input, where another GPU may return any value of the buffer); check every index \
     against the sizes in `dimensions`";

/// Runs one case and judges its outputs with `judge`, which gets the data of every output
/// (as bytes, in binding order).
///
/// The case runs on the clamped kernel with NaN guards; an output guard it changes is a
/// write out of bounds. A case that passes runs again with the invocations reversed, and
/// must pass again. A case that fails is, when `diagnose` is true (the first failure of a
/// part, whose details the report shows), run again to find the cause: once more as it
/// was (a different result is a race) and once with zeros in the input guards (a
/// different result is a read out of bounds).
pub fn run_case(
    context: &GpuContext,
    kernel: &KernelUnderTest,
    data: &[BufferData],
    grid: [u32; 3],
    judge: impl Fn(&[Vec<u8>]) -> Verdict,
    diagnose: bool,
) -> Verdict {
    let run = |compiled: &CompiledKernel, fill: GuardFill| -> Result<Vec<ReadBack>, CheckError> {
        PreparedKernel::with_guards(context, compiled, data, grid, fill)?.run_guarded(context)
    };
    let data_of = |read_backs: &[ReadBack]| -> Vec<Vec<u8>> {
        read_backs.iter().map(|r| r.data.clone()).collect()
    };
    let first = match run(&kernel.checked, GuardFill::Poison) {
        Ok(first) => first,
        Err(error) => return Verdict::Error(error.to_string()),
    };
    if let Some(verdict) = written_out_of_bounds(kernel, &first, "") {
        return verdict;
    }
    let verdict = judge(&data_of(&first));
    if verdict.passed() {
        let Ok(reversed) = &kernel.reversed else {
            return verdict;
        };
        let second = match run(reversed, GuardFill::Poison) {
            Ok(second) => second,
            Err(error) => {
                return Verdict::Error(format!("with the invocations reversed: {error}"));
            }
        };
        let suffix = " (with the invocations of each workgroup in reverse order)";
        if let Some(verdict) = written_out_of_bounds(kernel, &second, suffix) {
            return verdict;
        }
        let reversed_verdict = judge(&data_of(&second));
        return if reversed_verdict.passed() {
            verdict
        } else {
            with_cause(reversed_verdict, REVERSED_ORDER_CAUSE)
        };
    }
    if !diagnose {
        return verdict;
    }
    if let Ok(again) = run(&kernel.checked, GuardFill::Poison)
        && data_of(&again) != data_of(&first)
    {
        return with_cause(verdict, CHANGING_RESULT_CAUSE);
    }
    if let Ok(zeros) = run(&kernel.checked, GuardFill::Zero)
        && data_of(&zeros) != data_of(&first)
    {
        return with_cause(verdict, OUT_OF_BOUNDS_CAUSE);
    }
    verdict
}

/// A failed verdict if the run changed a guard after an output.
fn written_out_of_bounds(
    kernel: &KernelUnderTest,
    read_backs: &[ReadBack],
    suffix: &str,
) -> Option<Verdict> {
    let names = kernel.output_names();
    read_backs.iter().enumerate().find_map(|(index, read_back)| {
        let changed = read_back.changed_guard?;
        let elements = read_back.data.len() / 4;
        let name = names.get(index).copied().unwrap_or("an output");
        Some(Verdict::Unmet(format!(
            "the kernel writes out of bounds{suffix}: element {} of `{name}`, past the end of its \
             {elements} elements of data, was overwritten (the checker keeps guard elements \
             after every output, and clamps an index past them onto the last one). Check the \
             index of every write against the sizes in `dimensions`; an index read from past the \
             end of an input (a guard value) lands there too.",
            elements + changed
        )))
    })
}

/// `verdict` with `cause` added.
pub fn with_cause(verdict: Verdict, cause: &str) -> Verdict {
    match verdict {
        Verdict::Mismatch(mut report) => {
            report.causes.push(cause.to_string());
            Verdict::Mismatch(report)
        }
        Verdict::Unmet(message) => Verdict::Unmet(format!("{message}; {cause}")),
        Verdict::Error(message) => Verdict::Error(format!("{message}; {cause}")),
        Verdict::Panicked(message) => Verdict::Panicked(format!("{message}; {cause}")),
        Verdict::Pass(detail) => Verdict::Pass(detail),
    }
}

/// The static checks of a kernel, as a part of its report: barriers in uniform control
/// flow, a barrier between every write and read of workgroup memory, and the exercise's
/// rules for atomics. See [`crate::analysis`].
pub fn static_part(kernel: &KernelUnderTest, rules: &StaticRules) -> PartReport {
    let findings = analyse(&kernel.shader.module, &kernel.shader.source, rules);
    let verdict = |found: &[Finding], fine: String| {
        if found.is_empty() {
            Verdict::Pass(fine)
        } else {
            // The first few say enough; the rest are usually the same cause elsewhere.
            let shown = 3;
            let mut lines: Vec<String> = found
                .iter()
                .take(shown)
                .map(|finding| finding.message.clone())
                .collect();
            if found.len() > shown {
                lines.push(format!("… and {} more like these", found.len() - shown));
            }
            Verdict::Unmet(lines.join("\n"))
        }
    };
    let mut part = PartReport::new("static checks");
    part.push(
        "barriers in uniform control flow",
        verdict(
            &findings.barriers,
            match findings.barrier_count {
                0 => "no barrier".to_string(),
                count => format!("{count} barrier(s), each reached by every invocation"),
            },
        ),
    );
    part.push(
        "a barrier between every write and read of workgroup memory",
        verdict(
            &findings.races,
            match findings.workgroup_variables {
                0 => "no var<workgroup>".to_string(),
                _ => {
                    "no write and read of one var<workgroup> without a barrier between".to_string()
                }
            },
        ),
    );
    if !rules.atomic_bindings.is_empty() || !rules.data_index_bindings.is_empty() {
        part.push(
            "atomic updates",
            verdict(
                &findings.atomics,
                "shared counters are atomic and updated with atomicAdd".to_string(),
            ),
        );
    }
    if let Some(line) = array_length_line(&kernel.shader) {
        part.push(
            "sizes from `dimensions`",
            Verdict::Unmet(format!(
                "line {line}: arrayLength() counts the whole binding, and the checker binds \
                 every buffer with guard elements after its data (as a graph runner may bind \
                 a buffer larger than the tensor in it): take the sizes from `dimensions`"
            )),
        );
    }
    if let Err(reason) = &kernel.reversed {
        part.push(
            "second schedule",
            Verdict::Pass(format!(
                "not available ({reason}): every case ran with one order of invocations only"
            )),
        );
    }
    part
}

/// The line of the first `arrayLength()` in the kernel, if it has one.
fn array_length_line(shader: &AnalysedShader) -> Option<u32> {
    let module = &shader.module;
    module
        .functions
        .iter()
        .map(|(_, function)| function)
        .chain(module.entry_points.iter().map(|entry| &entry.function))
        .flat_map(|function| {
            function
                .expressions
                .iter()
                .filter(|(_, expression)| matches!(expression, naga::Expression::ArrayLength(_)))
                .map(|(handle, _)| function.expressions.get_span(handle))
        })
        .filter(|span| span.is_defined())
        .map(|span| span.location(&shader.source).line_number)
        .min()
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

/// True while every case of `part` so far has passed: the next failure is the one whose
/// details the report shows, so it is the one worth diagnosing.
pub fn no_failure_yet(part: &PartReport) -> bool {
    part.cases.iter().all(|case| case.verdict.passed())
}

// ----- helpers and CPU references shared by several exercises -----

/// The first `length` values as a 1 × length tensor.
pub fn row_of(values: &[f32], length: usize) -> Tensor2d {
    Tensor2d::from_vec(1, length, values[..length].to_vec())
        .expect("the slice has exactly `length` values")
}

/// The first output a case read back (its first read-write binding), as a
/// `rows × columns` tensor of floats.
pub fn output_tensor(outputs: &[Vec<u8>], rows: usize, columns: usize) -> Tensor2d {
    tensor_of(&to_floats(&outputs[0]), rows, columns)
}

/// The first `rows × columns` values as a tensor.
pub fn tensor_of(values: &[f32], rows: usize, columns: usize) -> Tensor2d {
    Tensor2d::from_vec(rows, columns, values[..rows * columns].to_vec())
        .expect("the slice has exactly rows × columns values")
}

/// (rows, inner, columns) of the matrix products (matmul, linear-tiled): single
/// elements, single rows and columns, an exact tile, odd sizes, and sizes spanning many
/// workgroups with ragged edges.
pub const PRODUCT_CASES: [(usize, usize, usize); 8] = [
    (1, 1, 1),
    (1, 7, 3),
    (7, 1, 5),
    (16, 16, 16),
    (17, 33, 9),
    (33, 257, 65),
    (64, 100, 48),
    (129, 70, 200),
];

/// Sums of up to a few hundred products: the absolute part covers results near zero.
pub const PRODUCT_TOLERANCE: Tolerance = Tolerance::new(1e-4, 1e-4);

/// The CPU reference of a matrix product, accumulated in f64.
pub fn matrix_product(a: &Tensor2d, b: &Tensor2d) -> Tensor2d {
    let (rows, inner, columns) = (a.rows(), a.columns(), b.columns());
    let mut output = Tensor2d::zeros(rows, columns);
    for row in 0..rows {
        for column in 0..columns {
            let total: f64 = (0..inner)
                .map(|k| f64::from(a.get(row, k)) * f64::from(b.get(k, column)))
                .sum();
            output.set(row, column, total as f32);
        }
    }
    output
}
