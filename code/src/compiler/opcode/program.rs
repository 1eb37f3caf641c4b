//! The instruction set: op codes, programs, and what makes a program well formed.
//!
//! A program describes a kernel in which every invocation owns one element of the output
//! (one `row`, one `column`) and keeps a running `value` for it in a register. Each op code
//! either *produces* a value (`Load`, `MatrixMultiply`) or *transforms* the value it finds
//! (`AddBias`, `Relu`, `RowSoftmax`). When the last op code has run, the value is the
//! output element.
//!
//! A `Program` is plain data, like a `Graph`: anyone can write one down, including a wrong
//! one. [`Program::validate`] finds what is wrong and says so with an [`OpCodeError`];
//! the code generator validates before it writes a line of WGSL.

use std::fmt;

use thiserror::Error;

// ANCHOR: slot
/// A binding of the kernel: an index into [`Program::bindings`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Slot(pub usize);
// ANCHOR_END: slot

impl fmt::Display for Slot {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "slot {}", self.0)
    }
}

// ANCHOR: binding
/// A tensor the kernel reads: a name for the generated WGSL and the tensor's shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding {
    /// Becomes part of the WGSL variable name, so it must be an identifier: an ASCII
    /// letter, then ASCII letters, digits or underscores.
    pub name: String,
    pub rows: usize,
    pub columns: usize,
}
// ANCHOR_END: binding

impl Binding {
    pub fn new(name: &str, (rows, columns): (usize, usize)) -> Binding {
        Binding {
            name: name.to_string(),
            rows,
            columns,
        }
    }

    pub fn shape(&self) -> (usize, usize) {
        (self.rows, self.columns)
    }
}

// ANCHOR: op_code
/// One instruction. It acts on the running `value` of the output element at
/// (`row`, `column`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OpCode {
    /// `value = source[row, column]`. The source has the output's shape.
    Load { source: Slot },
    /// `value = Σ_k input[row, k] · weights[k, column]`.
    MatrixMultiply { input: Slot, weights: Slot },
    /// `value = value + bias[0, column]`. The bias is one row, one value per column.
    AddBias { bias: Slot },
    /// `value = max(value, 0)`.
    Relu,
    /// Replaces every value of the row by `exp(value − max) / Σ exp(values − max)`. It
    /// needs the whole row, so it can only be the last op code.
    RowSoftmax,
}
// ANCHOR_END: op_code

impl OpCode {
    /// A short name for messages, labels and generated comments.
    pub fn name(&self) -> &'static str {
        match self {
            OpCode::Load { .. } => "load",
            OpCode::MatrixMultiply { .. } => "matrix_multiply",
            OpCode::AddBias { .. } => "add_bias",
            OpCode::Relu => "relu",
            OpCode::RowSoftmax => "row_softmax",
        }
    }

    /// Whether the op code starts from a running value rather than making a new one.
    pub fn needs_value(&self) -> bool {
        matches!(
            self,
            OpCode::AddBias { .. } | OpCode::Relu | OpCode::RowSoftmax
        )
    }

    /// The bindings the op code reads, each with the role it plays.
    pub fn slots(&self) -> Vec<(&'static str, Slot)> {
        match *self {
            OpCode::Load { source } => vec![("source", source)],
            OpCode::MatrixMultiply { input, weights } => {
                vec![("input", input), ("weights", weights)]
            }
            OpCode::AddBias { bias } => vec![("bias", bias)],
            OpCode::Relu | OpCode::RowSoftmax => Vec::new(),
        }
    }

    /// The same op code with every slot passed through `renumber` (used when fusing
    /// programs moves bindings around).
    pub fn with_slots(self, renumber: impl Fn(Slot) -> Slot) -> OpCode {
        match self {
            OpCode::Load { source } => OpCode::Load {
                source: renumber(source),
            },
            OpCode::MatrixMultiply { input, weights } => OpCode::MatrixMultiply {
                input: renumber(input),
                weights: renumber(weights),
            },
            OpCode::AddBias { bias } => OpCode::AddBias {
                bias: renumber(bias),
            },
            OpCode::Relu | OpCode::RowSoftmax => self,
        }
    }
}

impl fmt::Display for OpCode {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let arguments: Vec<String> = self
            .slots()
            .iter()
            .map(|(role, slot)| format!("{role}: {slot}"))
            .collect();
        write!(formatter, "{}({})", self.name(), arguments.join(", "))
    }
}

// ANCHOR: program
/// A kernel written as data: what it reads, what it does, what it produces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    pub bindings: Vec<Binding>,
    pub op_codes: Vec<OpCode>,
    pub output_shape: (usize, usize),
}
// ANCHOR_END: program

// ANCHOR: op_code_error
/// Why a program is malformed, or why the tensors handed to its kernel do not fit it.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum OpCodeError {
    // A malformed program.
    #[error("the program has no op codes, so it never produces a value")]
    Empty,
    #[error(
        "op code {position} ({op_code}) needs a running value, but no op code before it produced one"
    )]
    NoValueYet {
        position: usize,
        op_code: &'static str,
    },
    #[error(
        "op code {position} ({op_code}) reads {slot}, but the program has only {binding_count} bindings"
    )]
    UnknownSlot {
        position: usize,
        op_code: &'static str,
        slot: Slot,
        binding_count: usize,
    },
    #[error(
        "op code {position} ({op_code}) needs its {role} ({slot}) to be {}×{}, but it is {}×{}",
        expected.0, expected.1, found.0, found.1
    )]
    ShapeMismatch {
        position: usize,
        op_code: &'static str,
        role: &'static str,
        slot: Slot,
        expected: (usize, usize),
        found: (usize, usize),
    },
    #[error(
        "op code {position} is row_softmax, which needs the finished row: it must be the last op code, but {count} op codes follow"
    )]
    SoftmaxNotLast { position: usize, count: usize },
    #[error(
        "binding {slot} is named {name:?}; a name must be an ASCII letter followed by ASCII letters, digits or underscores"
    )]
    InvalidBindingName { slot: Slot, name: String },
    #[error(
        "binding {slot} ({name}) is read by no op code; a kernel cannot bind a buffer its shader never uses"
    )]
    UnusedBinding { slot: Slot, name: String },
    #[error(
        "{what} is {rows}×{columns}; a kernel needs at least one element and at most 2³² − 1 (its indices are u32)"
    )]
    ShapeOutOfRange {
        what: String,
        rows: usize,
        columns: usize,
    },
    // Programs that cannot be fused by appending (see `fuse_programs`).
    #[error("there are no programs to fuse")]
    NothingToFuse,
    #[error(
        "program {program} does not start by loading the previous program's result, so it cannot continue from the running value"
    )]
    FusionNeedsLoad { program: usize },
    #[error(
        "program {program} reads the previous program's result ({slot}) again after loading it; fused, that result is never written to memory"
    )]
    FusionReadsIntermediate { program: usize, slot: Slot },
    #[error(
        "program {program} loads a {}×{} tensor, but the program before it produces {}×{}",
        loads.0, loads.1, produces.0, produces.1
    )]
    FusionShape {
        program: usize,
        loads: (usize, usize),
        produces: (usize, usize),
    },
    // Tensors that do not fit a compiled kernel (see `crate::runner::opcode::bind_program`).
    #[error("the kernel has {expected} bindings, but {given} tensors were given")]
    ArgumentCount { expected: usize, given: usize },
    #[error(
        "the kernel's {argument} must be {}×{}, but the tensor given is {}×{}",
        expected.0, expected.1, given.0, given.1
    )]
    ArgumentShape {
        argument: String,
        expected: (usize, usize),
        given: (usize, usize),
    },
}
// ANCHOR_END: op_code_error

impl Program {
    /// The op-code names joined by `+`: a label for pipelines and messages.
    pub fn name(&self) -> String {
        let names: Vec<&str> = self.op_codes.iter().map(OpCode::name).collect();
        names.join("+")
    }

    /// Whether the program ends in `RowSoftmax`, so that its kernel must own whole rows.
    pub fn ends_in_row_softmax(&self) -> bool {
        self.op_codes.last() == Some(&OpCode::RowSoftmax)
    }

    // ANCHOR: validate
    /// Checks the program; see [`OpCodeError`] for every way it can be wrong.
    pub fn validate(&self) -> Result<(), OpCodeError> {
        if self.op_codes.is_empty() {
            return Err(OpCodeError::Empty);
        }
        check_shape("the output", self.output_shape)?;
        for (index, binding) in self.bindings.iter().enumerate() {
            if !is_identifier(&binding.name) {
                return Err(OpCodeError::InvalidBindingName {
                    slot: Slot(index),
                    name: binding.name.clone(),
                });
            }
            check_shape(
                &format!("binding {index} ({})", binding.name),
                binding.shape(),
            )?;
        }
        let mut has_value = false;
        for (position, op_code) in self.op_codes.iter().enumerate() {
            self.check_slots_exist(position, op_code)?;
            if op_code.needs_value() && !has_value {
                return Err(OpCodeError::NoValueYet {
                    position,
                    op_code: op_code.name(),
                });
            }
            self.check_shapes(position, op_code)?;
            if *op_code == OpCode::RowSoftmax && position + 1 < self.op_codes.len() {
                return Err(OpCodeError::SoftmaxNotLast {
                    position,
                    count: self.op_codes.len() - position - 1,
                });
            }
            has_value = true;
        }
        self.check_every_binding_is_read()
    }
    // ANCHOR_END: validate

    fn check_slots_exist(&self, position: usize, op_code: &OpCode) -> Result<(), OpCodeError> {
        for (_, slot) in op_code.slots() {
            if slot.0 >= self.bindings.len() {
                return Err(OpCodeError::UnknownSlot {
                    position,
                    op_code: op_code.name(),
                    slot,
                    binding_count: self.bindings.len(),
                });
            }
        }
        Ok(())
    }

    /// Every tensor an op code reads must line up with the output element it computes.
    fn check_shapes(&self, position: usize, op_code: &OpCode) -> Result<(), OpCodeError> {
        let (rows, columns) = self.output_shape;
        let shape_of = |slot: Slot| self.bindings[slot.0].shape();
        // (role, slot, expected shape), checked in order.
        let expectations: Vec<(&'static str, Slot, (usize, usize))> = match *op_code {
            OpCode::Load { source } => vec![("source", source, (rows, columns))],
            OpCode::AddBias { bias } => vec![("bias", bias, (1, columns))],
            OpCode::MatrixMultiply { input, weights } => {
                // The weights decide the inner size; the input must agree with it.
                let inner = shape_of(weights).0;
                vec![
                    ("weights", weights, (inner, columns)),
                    ("input", input, (rows, inner)),
                ]
            }
            OpCode::Relu | OpCode::RowSoftmax => Vec::new(),
        };
        for (role, slot, expected) in expectations {
            let found = shape_of(slot);
            if found != expected {
                return Err(OpCodeError::ShapeMismatch {
                    position,
                    op_code: op_code.name(),
                    role,
                    slot,
                    expected,
                    found,
                });
            }
        }
        Ok(())
    }

    fn check_every_binding_is_read(&self) -> Result<(), OpCodeError> {
        for (index, binding) in self.bindings.iter().enumerate() {
            let read = self
                .op_codes
                .iter()
                .any(|op_code| op_code.slots().iter().any(|(_, slot)| slot.0 == index));
            if !read {
                return Err(OpCodeError::UnusedBinding {
                    slot: Slot(index),
                    name: binding.name.clone(),
                });
            }
        }
        Ok(())
    }
}

impl fmt::Display for Program {
    /// A listing: the output, the bindings, then the op codes in order.
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (rows, columns) = self.output_shape;
        writeln!(formatter, "program {} → {rows}×{columns}", self.name())?;
        for (index, binding) in self.bindings.iter().enumerate() {
            let (rows, columns) = binding.shape();
            writeln!(
                formatter,
                "  slot {index}: {} {rows}×{columns}",
                binding.name
            )?;
        }
        for (position, op_code) in self.op_codes.iter().enumerate() {
            writeln!(formatter, "  {position}: {op_code}")?;
        }
        Ok(())
    }
}

fn is_identifier(name: &str) -> bool {
    let mut characters = name.chars();
    characters
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic())
        && characters.all(|character| character.is_ascii_alphanumeric() || character == '_')
}

/// A kernel indexes its tensors with u32 and cannot bind an empty buffer.
fn check_shape(what: &str, (rows, columns): (usize, usize)) -> Result<(), OpCodeError> {
    let elements = rows.saturating_mul(columns);
    if elements == 0 || elements as u64 > u64::from(u32::MAX) {
        return Err(OpCodeError::ShapeOutOfRange {
            what: what.to_string(),
            rows,
            columns,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn linear_relu() -> Program {
        Program {
            bindings: vec![
                Binding::new("input", (2, 3)),
                Binding::new("weights", (3, 4)),
                Binding::new("bias", (1, 4)),
            ],
            op_codes: vec![
                OpCode::MatrixMultiply {
                    input: Slot(0),
                    weights: Slot(1),
                },
                OpCode::AddBias { bias: Slot(2) },
                OpCode::Relu,
            ],
            output_shape: (2, 4),
        }
    }

    #[test]
    fn a_well_formed_program_validates() {
        assert_eq!(linear_relu().validate(), Ok(()));
    }

    #[test]
    fn a_value_must_exist_before_it_is_transformed() {
        let mut program = linear_relu();
        program.op_codes.rotate_left(2);
        assert_eq!(
            program.validate(),
            Err(OpCodeError::NoValueYet {
                position: 0,
                op_code: "relu"
            })
        );
    }

    #[test]
    fn the_weights_must_have_the_output_columns() {
        let mut program = linear_relu();
        program.bindings[1] = Binding::new("weights", (3, 5));
        assert!(matches!(
            program.validate(),
            Err(OpCodeError::ShapeMismatch {
                role: "weights",
                ..
            })
        ));
    }

    #[test]
    fn names_become_identifiers() {
        assert!(is_identifier("weights_2"));
        assert!(!is_identifier("2weights"));
        assert!(!is_identifier("_weights"));
        assert!(!is_identifier("we ights"));
        assert!(!is_identifier(""));
    }

    #[test]
    fn the_listing_names_every_op_code() {
        let listing = linear_relu().to_string();
        assert!(listing.contains("0: matrix_multiply(input: slot 0, weights: slot 1)"));
        assert!(listing.contains("2: relu()"));
    }
}
