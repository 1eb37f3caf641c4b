//! Reading the student's WGSL before it goes anywhere near the GPU.
//!
//! The checker parses and validates the shader with naga, the same front end wgpu uses,
//! so a typo comes back as a message with the file name, the line and a caret, not as a
//! wgpu panic. The parsed module also tells the checker what the student chose: the
//! workgroup size (which decides how many workgroups to dispatch), the bindings (which
//! must match what the exercise documents), and whether the kernel uses workgroup memory
//! and barriers (which the exercises about workgroup memory ask for).

use std::path::{Path, PathBuf};

use naga::{AddressSpace, Block, Expression, Literal, Module, ScalarKind, Statement, TypeInner};

use crate::error::CheckError;

/// Every exercise kernel is a compute entry point with this name.
pub const ENTRY_POINT: &str = "main";

/// How the checker binds one buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BindingKind {
    /// `var<storage, read>`: data the kernel reads.
    ReadOnlyStorage,
    /// `var<storage, read_write>`: where the kernel writes its result.
    ReadWriteStorage,
    /// `var<uniform>`: a small struct of sizes.
    Uniform,
}

/// The scalar type of a storage array's elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Element {
    F32,
    U32,
}

/// One binding an exercise documents: the checker puts this buffer at `@binding(binding)`
/// of `@group(0)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BindingSpec {
    pub binding: u32,
    pub name: &'static str,
    pub kind: BindingKind,
    /// The elements of a storage array; ignored for uniforms.
    pub element: Element,
}

impl BindingSpec {
    pub const fn read(binding: u32, name: &'static str, element: Element) -> BindingSpec {
        BindingSpec {
            binding,
            name,
            kind: BindingKind::ReadOnlyStorage,
            element,
        }
    }

    pub const fn read_write(binding: u32, name: &'static str, element: Element) -> BindingSpec {
        BindingSpec {
            binding,
            name,
            kind: BindingKind::ReadWriteStorage,
            element,
        }
    }

    pub const fn uniform(binding: u32, name: &'static str) -> BindingSpec {
        BindingSpec {
            binding,
            name,
            kind: BindingKind::Uniform,
            element: Element::U32,
        }
    }

    /// The declaration the exercise expects, as the student would write it.
    pub fn declaration(&self) -> String {
        let element = match self.element {
            Element::F32 => "f32",
            Element::U32 => "u32",
        };
        match self.kind {
            BindingKind::ReadOnlyStorage => {
                format!("var<storage, read> {}: array<{element}>", self.name)
            }
            BindingKind::ReadWriteStorage => {
                format!("var<storage, read_write> {}: array<{element}>", self.name)
            }
            BindingKind::Uniform => format!("var<uniform> {}: Dimensions", self.name),
        }
    }
}

/// A shader the checker has read, parsed and validated.
#[derive(Debug)]
pub struct AnalysedShader {
    pub path: PathBuf,
    pub source: String,
    pub module: Module,
    /// `@workgroup_size(x, y, z)` of the entry point.
    pub workgroup_size: [u32; 3],
}

impl AnalysedShader {
    /// Reads, parses and validates the shader at `path`, and checks its entry point and
    /// its bindings against `bindings`.
    pub fn load(path: &Path, bindings: &[BindingSpec]) -> Result<AnalysedShader, CheckError> {
        let source = std::fs::read_to_string(path).map_err(|source| CheckError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        AnalysedShader::from_source(path, source, bindings)
    }

    /// As [`AnalysedShader::load`], for source text already in memory; `path` names it in
    /// messages.
    pub fn from_source(
        path: &Path,
        source: String,
        bindings: &[BindingSpec],
    ) -> Result<AnalysedShader, CheckError> {
        let shown_path = crate::report::shown_path(path);
        let module =
            naga::front::wgsl::parse_str(&source).map_err(|error| CheckError::ShaderInvalid {
                message: error.emit_to_string_with_path(&source, &shown_path),
            })?;
        // Every capability: what the device really supports is checked when wgpu builds
        // the pipeline (a kernel may use subgroup operations where the adapter has them).
        naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::all(),
        )
        .validate(&module)
        .map_err(|error| CheckError::ShaderInvalid {
            message: error.emit_to_string_with_path(&source, &shown_path),
        })?;
        let workgroup_size = entry_point_workgroup_size(&module, path)?;
        check_bindings(&module, path, bindings)?;
        Ok(AnalysedShader {
            path: path.to_path_buf(),
            source,
            module,
            workgroup_size,
        })
    }

    /// The invocations of one workgroup.
    pub fn invocations_per_workgroup(&self) -> u32 {
        self.workgroup_size.iter().product()
    }

    /// The value of a module-scope `const NAME: u32 = …;` (or an integer literal), if the
    /// shader declares one.
    pub fn constant_u32(&self, name: &str) -> Option<u32> {
        self.module.constants.iter().find_map(|(_, constant)| {
            if constant.name.as_deref() != Some(name) {
                return None;
            }
            match self.module.global_expressions[constant.init] {
                Expression::Literal(Literal::U32(value)) => Some(value),
                Expression::Literal(Literal::I32(value)) => u32::try_from(value).ok(),
                Expression::Literal(Literal::AbstractInt(value)) => u32::try_from(value).ok(),
                _ => None,
            }
        })
    }

    /// True when the shader declares a `var<workgroup>` and some function reads or writes
    /// it.
    pub fn uses_workgroup_memory(&self) -> bool {
        let is_workgroup = |expression: &Expression| match expression {
            Expression::GlobalVariable(handle) => {
                self.module.global_variables[*handle].space == AddressSpace::WorkGroup
            }
            _ => false,
        };
        self.functions().any(|function| {
            function
                .expressions
                .iter()
                .any(|(_, expression)| is_workgroup(expression))
        })
    }

    /// True when some function calls `workgroupBarrier()` (or `workgroupUniformLoad`,
    /// which contains one).
    pub fn uses_workgroup_barrier(&self) -> bool {
        self.functions()
            .any(|function| block_has_workgroup_barrier(&function.body))
    }

    fn functions(&self) -> impl Iterator<Item = &naga::Function> {
        self.module
            .functions
            .iter()
            .map(|(_, function)| function)
            .chain(
                self.module
                    .entry_points
                    .iter()
                    .map(|entry_point| &entry_point.function),
            )
    }
}

fn entry_point_workgroup_size(module: &Module, path: &Path) -> Result<[u32; 3], CheckError> {
    let entry_point = module
        .entry_points
        .iter()
        .find(|entry_point| {
            entry_point.name == ENTRY_POINT && entry_point.stage == naga::ShaderStage::Compute
        })
        .ok_or_else(|| CheckError::MissingEntryPoint {
            path: path.to_path_buf(),
            found: module
                .entry_points
                .iter()
                .map(|entry_point| entry_point.name.clone())
                .collect(),
        })?;
    if entry_point.workgroup_size_overrides.is_some() {
        return Err(CheckError::Bindings {
            path: path.to_path_buf(),
            message: "the workgroup size must be known without pipeline overrides: write \
                      numbers or `const` values in @workgroup_size"
                .to_string(),
        });
    }
    Ok(entry_point.workgroup_size)
}

/// Every `@group(0) @binding(n)` the shader declares must be one the exercise documents,
/// with the same address space, access and element type. Documented bindings the shader
/// leaves out are fine (a starter may not read every input yet).
fn check_bindings(
    module: &Module,
    path: &Path,
    bindings: &[BindingSpec],
) -> Result<(), CheckError> {
    let problem = |message: String| CheckError::Bindings {
        path: path.to_path_buf(),
        message,
    };
    let documented = || {
        bindings
            .iter()
            .map(|spec| {
                format!(
                    "  @group(0) @binding({}) {}",
                    spec.binding,
                    spec.declaration()
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    for (_, variable) in module.global_variables.iter() {
        let Some(binding) = &variable.binding else {
            continue;
        };
        let name = variable.name.as_deref().unwrap_or("(unnamed)");
        let spec = bindings
            .iter()
            .find(|spec| binding.group == 0 && spec.binding == binding.binding)
            .ok_or_else(|| {
                problem(format!(
                    "`{name}` is declared at @group({}) @binding({}), which this exercise does \
                     not bind. It binds:\n{}",
                    binding.group,
                    binding.binding,
                    documented()
                ))
            })?;
        let space_matches = match (spec.kind, variable.space) {
            (BindingKind::Uniform, AddressSpace::Uniform) => true,
            (BindingKind::ReadOnlyStorage, AddressSpace::Storage { access }) => {
                !access.contains(naga::StorageAccess::STORE)
            }
            (BindingKind::ReadWriteStorage, AddressSpace::Storage { access }) => {
                access.contains(naga::StorageAccess::STORE)
            }
            _ => false,
        };
        if !space_matches {
            return Err(problem(format!(
                "@binding({}) `{name}` is declared as {}, but this exercise binds {} there:\n  {}",
                binding.binding,
                describe_space(variable.space),
                spec.name,
                spec.declaration()
            )));
        }
        if spec.kind != BindingKind::Uniform {
            let wanted = match spec.element {
                Element::F32 => ScalarKind::Float,
                Element::U32 => ScalarKind::Uint,
            };
            if element_scalar_kind(module, variable.ty) != Some(wanted) {
                return Err(problem(format!(
                    "@binding({}) `{name}` must be an array of {}:\n  {}",
                    binding.binding,
                    match spec.element {
                        Element::F32 => "f32 (or vectors of f32)",
                        Element::U32 => "u32 (or atomic<u32>)",
                    },
                    spec.declaration()
                )));
            }
        }
    }
    Ok(())
}

/// An address space as WGSL writes it.
fn describe_space(space: AddressSpace) -> String {
    match space {
        AddressSpace::Uniform => "var<uniform>".to_string(),
        AddressSpace::Storage { access } if access.contains(naga::StorageAccess::STORE) => {
            "var<storage, read_write>".to_string()
        }
        AddressSpace::Storage { .. } => "var<storage, read>".to_string(),
        other => format!("{other:?}"),
    }
}

/// The scalar kind of an array's elements: `f32`, `vec4<f32>` and `atomic<u32>` count as
/// their scalar.
fn element_scalar_kind(module: &Module, ty: naga::Handle<naga::Type>) -> Option<ScalarKind> {
    let TypeInner::Array { base, .. } = module.types[ty].inner else {
        return None;
    };
    match module.types[base].inner {
        TypeInner::Scalar(scalar) | TypeInner::Atomic(scalar) => Some(scalar.kind),
        TypeInner::Vector { scalar, .. } => Some(scalar.kind),
        _ => None,
    }
}

fn block_has_workgroup_barrier(block: &Block) -> bool {
    block.iter().any(|statement| match statement {
        Statement::ControlBarrier(barrier) | Statement::MemoryBarrier(barrier) => {
            barrier.contains(naga::Barrier::WORK_GROUP)
        }
        Statement::WorkGroupUniformLoad { .. } => true,
        Statement::Block(inner) => block_has_workgroup_barrier(inner),
        Statement::If { accept, reject, .. } => {
            block_has_workgroup_barrier(accept) || block_has_workgroup_barrier(reject)
        }
        Statement::Switch { cases, .. } => cases
            .iter()
            .any(|case| block_has_workgroup_barrier(&case.body)),
        Statement::Loop {
            body, continuing, ..
        } => block_has_workgroup_barrier(body) || block_has_workgroup_barrier(continuing),
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const BINDINGS: [BindingSpec; 3] = [
        BindingSpec::read(0, "input", Element::F32),
        BindingSpec::read_write(1, "output", Element::F32),
        BindingSpec::uniform(2, "dimensions"),
    ];

    fn analyse(source: &str) -> Result<AnalysedShader, CheckError> {
        AnalysedShader::from_source(Path::new("test.wgsl"), source.to_string(), &BINDINGS)
    }

    const GOOD: &str = "
        struct Dimensions { count: u32 }
        const BLOCK: u32 = 4u * 16u;
        @group(0) @binding(0) var<storage, read> input: array<f32>;
        @group(0) @binding(1) var<storage, read_write> output: array<f32>;
        @group(0) @binding(2) var<uniform> dimensions: Dimensions;
        var<workgroup> tile: array<f32, 64>;
        @compute @workgroup_size(64, 2)
        fn main(@builtin(local_invocation_index) local: u32) {
            tile[local % 64u] = input[local];
            workgroupBarrier();
            if (local < dimensions.count) { output[local] = tile[local % 64u]; }
        }";

    #[test]
    fn reads_the_workgroup_size_constants_and_workgroup_memory() {
        let shader = analyse(GOOD).unwrap();
        assert_eq!(shader.workgroup_size, [64, 2, 1]);
        assert_eq!(shader.invocations_per_workgroup(), 128);
        assert_eq!(shader.constant_u32("BLOCK"), Some(64));
        assert_eq!(shader.constant_u32("MISSING"), None);
        assert!(shader.uses_workgroup_memory());
        assert!(shader.uses_workgroup_barrier());
    }

    #[test]
    fn a_kernel_without_workgroup_memory_says_so() {
        let source = GOOD
            .replace("tile[local % 64u] = input[local];", "")
            .replace("workgroupBarrier();", "")
            .replace("tile[local % 64u];", "input[local];");
        let shader = analyse(&source).unwrap();
        assert!(!shader.uses_workgroup_memory());
        assert!(!shader.uses_workgroup_barrier());
    }

    #[test]
    fn a_syntax_error_names_the_file_and_line() {
        let error = analyse(&GOOD.replace("workgroupBarrier();", "workgroupBarrier()"))
            .unwrap_err()
            .to_string();
        assert!(error.contains("test.wgsl:"), "{error}");
    }

    #[test]
    fn a_wrong_binding_is_explained() {
        let error =
            analyse(&GOOD.replace("var<storage, read> input", "var<storage, read_write> input"))
                .unwrap_err()
                .to_string();
        assert!(
            error.contains("@binding(0) `input` is declared as var<storage, read_write>"),
            "{error}"
        );
        assert!(
            error.contains("var<storage, read> input: array<f32>"),
            "{error}"
        );

        let error = analyse(&GOOD.replace("@binding(2)", "@binding(5)"))
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("@binding(5), which this exercise does not bind"),
            "{error}"
        );

        let error = analyse(
            &GOOD
                .replace("input: array<f32>", "input: array<u32>")
                .replace("= input[local];", "= f32(input[local]);"),
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.contains("@binding(0) `input` must be an array of f32"),
            "{error}"
        );
    }

    #[test]
    fn the_entry_point_must_be_called_main() {
        let error = analyse(&GOOD.replace("fn main", "fn compute"))
            .unwrap_err()
            .to_string();
        assert!(error.contains("`main`"), "{error}");
        assert!(error.contains("compute"), "{error}");
    }
}
