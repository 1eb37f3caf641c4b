//! Code generation: a program becomes WGSL text.
//!
//! A shader is a string, so a compiler can write one. The generator fills one of two
//! templates with the program's bindings, its shapes and one snippet of WGSL per op code:
//!
//! - the *element* template: one invocation per output element, in 16 × 16 workgroups, as
//!   `shaders/linear.wgsl` does;
//! - the *row* template, for programs that end in `RowSoftmax`: one 256-invocation
//!   workgroup per row, as `shaders/softmax.wgsl` does, because normalising a row needs
//!   all of its values.
//!
//! The program knows every shape when it is compiled, so the shapes are written into
//! the shader as constants instead of being passed in a uniform buffer: the kernel is
//! specialised to its tensors, and the GPU's compiler sees loop bounds it can optimise.
//! The price is one shader per distinct shape.

use crate::compiler::opcode::{OpCode, OpCodeError, Program, Slot};

/// The edge of the square tile of output elements one element-kernel workgroup computes.
pub const ELEMENT_TILE: u32 = 16;
/// The invocations of one row-kernel workgroup.
pub const ROW_WORKGROUP_SIZE: u32 = 256;
/// The entry point of every generated kernel.
pub const ENTRY_POINT: &str = "main";

// ANCHOR: template
/// Which template a program's kernel is generated from; it also decides the dispatch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Template {
    /// One invocation per output element, 16 × 16 per workgroup, over (column, row).
    Elements,
    /// One workgroup of 256 invocations per output row.
    Rows,
}

impl Template {
    pub fn of(program: &Program) -> Template {
        if program.ends_in_row_softmax() {
            Template::Rows
        } else {
            Template::Elements
        }
    }
}
// ANCHOR_END: template

// ANCHOR: generate_wgsl
/// The WGSL of the program's kernel. Validates the program first, so a malformed program
/// is an error here and never a shader that fails to compile.
pub fn generate_wgsl(program: &Program) -> Result<String, OpCodeError> {
    program.validate()?;
    let (rows, columns) = program.output_shape;
    let template = Template::of(program);
    let (text, body_indent) = match template {
        Template::Elements => (ELEMENT_TEMPLATE, 4),
        Template::Rows => (ROW_TEMPLATE, 8),
    };
    Ok(text
        .replace("$LISTING", &comment(&program.to_string()))
        .replace("$ROWS", &format!("{rows}u"))
        .replace("$COLUMNS", &format!("{columns}u"))
        .replace("$BINDINGS", &bindings(program))
        .replace("$OP_CODES", &indent(&op_codes(program), body_indent))
        .replace(
            "$SOFTMAX_POSITION",
            &(program.op_codes.len() - 1).to_string(),
        ))
}
// ANCHOR_END: generate_wgsl

/// The WGSL variable of a binding: its name and slot, so that two bindings of the same
/// name stay apart and no name can collide with a WGSL keyword or a template variable.
pub fn binding_variable(program: &Program, slot: usize) -> String {
    format!("{}_{slot}", program.bindings[slot].name)
}

fn bindings(program: &Program) -> String {
    let mut text = String::new();
    for (slot, binding) in program.bindings.iter().enumerate() {
        text += &format!(
            "// Slot {slot}: {}, {}×{}.\n@group(0) @binding({slot}) var<storage, read> {}: array<f32>;\n",
            binding.name,
            binding.rows,
            binding.columns,
            binding_variable(program, slot),
        );
    }
    let (rows, columns) = program.output_shape;
    text += &format!(
        "// The result, {rows}×{columns}.\n@group(0) @binding({}) var<storage, read_write> output: array<f32>;",
        program.bindings.len()
    );
    text
}

// ANCHOR: op_code_snippets
/// One snippet of WGSL per op code, each under a comment naming the op code. The snippets
/// work on `value`, the output element at (`row`, `column`); both templates provide them.
fn op_codes(program: &Program) -> String {
    let variable = |slot: Slot| binding_variable(program, slot.0);
    let mut text = String::new();
    for (position, op_code) in program.op_codes.iter().enumerate() {
        let snippet = match *op_code {
            OpCode::Load { source } => {
                format!("value = {}[row * COLUMNS + column];\n", variable(source))
            }
            OpCode::MatrixMultiply { input, weights } => {
                let inner = program.bindings[input.0].columns;
                format!(
                    "value = 0.0;\n\
                     for (var k = 0u; k < {inner}u; k = k + 1u) {{\n    \
                         value = value + {}[row * {inner}u + k] * {}[k * COLUMNS + column];\n\
                     }}\n",
                    variable(input),
                    variable(weights),
                )
            }
            OpCode::AddBias { bias } => format!("value = value + {}[column];\n", variable(bias)),
            // `select` keeps NaN where `max(value, 0.0)` may drop it (WGSL leaves that open).
            OpCode::Relu => "value = select(value, 0.0, value < 0.0);\n".to_string(),
            // The row template is the softmax; it names this op code where the softmax
            // starts.
            OpCode::RowSoftmax => continue,
        };
        text += &format!("// Op code {position}: {op_code}\n{snippet}");
    }
    text.trim_end().to_string()
}
// ANCHOR_END: op_code_snippets

fn comment(text: &str) -> String {
    text.trim_end()
        .lines()
        .map(|line| format!("//   {line}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Indents every line but the first (the first replaces a placeholder that is indented
/// already).
fn indent(text: &str, spaces: usize) -> String {
    let prefix = " ".repeat(spaces);
    text.lines()
        .enumerate()
        .map(|(index, line)| {
            if index == 0 || line.is_empty() {
                line.to_string()
            } else {
                format!("{prefix}{line}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

// ANCHOR: element_template
const ELEMENT_TEMPLATE: &str = "\
// Generated by galaxy's op-code compiler from this program:
//
$LISTING
//
// One invocation computes one output element. Workgroups are 16 × 16 tiles of the
// output: `x` walks the columns, `y` (and `z`, when there are more row tiles than one
// dispatch dimension allows) walks the rows.

const ROWS: u32 = $ROWS;
const COLUMNS: u32 = $COLUMNS;

$BINDINGS

@compute @workgroup_size(16, 16, 1)
fn main(@builtin(global_invocation_id) global: vec3u,
        @builtin(local_invocation_id) local: vec3u,
        @builtin(workgroup_id) workgroup: vec3u,
        @builtin(num_workgroups) workgroup_count: vec3u) {
    let column = global.x;
    let row_tile = workgroup.z * workgroup_count.y + workgroup.y;
    let row = row_tile * 16u + local.y;
    // The grid is rounded up to whole workgroups: invocations outside the output do nothing.
    if (row >= ROWS || column >= COLUMNS) {
        return;
    }

    // The running value the op codes work on: in the end, this invocation's element.
    var value = 0.0;
    $OP_CODES

    output[row * COLUMNS + column] = value;
}
";
// ANCHOR_END: element_template

// ANCHOR: row_template
const ROW_TEMPLATE: &str = "\
// Generated by galaxy's op-code compiler from this program:
//
$LISTING
//
// The program ends in a row softmax, which needs every value of a row: one workgroup
// owns one row. Its 256 invocations compute their columns' values (a stride of 256
// apart) with the op codes and park them in `output`, then combine the row's maximum
// and sum of exponentials with tree reductions in workgroup memory, then normalise.

const ROWS: u32 = $ROWS;
const COLUMNS: u32 = $COLUMNS;
const WORKGROUP_SIZE: u32 = 256u;

$BINDINGS

// Shared by the invocations of one workgroup, and only by them.
var<workgroup> partial: array<f32, WORKGROUP_SIZE>;

// Halve the number of active invocations each step; partial[0] ends with the result.
// Every invocation reaches every barrier: the `if` is inside the loop, not around it.
fn reduce_maximum(local_index: u32) {
    for (var stride = WORKGROUP_SIZE / 2u; stride > 0u; stride = stride / 2u) {
        if (local_index < stride) {
            partial[local_index] = max(partial[local_index], partial[local_index + stride]);
        }
        workgroupBarrier();
    }
}

fn reduce_sum(local_index: u32) {
    for (var stride = WORKGROUP_SIZE / 2u; stride > 0u; stride = stride / 2u) {
        if (local_index < stride) {
            partial[local_index] = partial[local_index] + partial[local_index + stride];
        }
        workgroupBarrier();
    }
}

@compute @workgroup_size(256, 1, 1)
fn main(@builtin(workgroup_id) workgroup: vec3u,
        @builtin(num_workgroups) workgroup_count: vec3u,
        @builtin(local_invocation_index) local_index: u32) {
    // More than 65,535 rows spread over a 2D grid. The row is the same for the whole
    // workgroup, so the early return keeps the barriers below in uniform control flow.
    let row = workgroup.y * workgroup_count.x + workgroup.x;
    if (row >= ROWS) {
        return;
    }
    let start = row * COLUMNS;

    // 1. The values, by the op codes, and the row maximum. The lowest finite f32 stands
    //    in for −∞ for invocations that own no column of a short row.
    var local_maximum = -3.40282347e+38;
    for (var column = local_index; column < COLUMNS; column = column + WORKGROUP_SIZE) {
        // The running value the op codes work on, for the element at (row, column).
        var value = 0.0;
        $OP_CODES

        // Each invocation reads back only what it wrote itself, so no barrier is needed
        // between this write and the reads below.
        output[start + column] = value;
        local_maximum = max(local_maximum, value);
    }
    // Op code $SOFTMAX_POSITION: row_softmax()
    partial[local_index] = local_maximum;
    workgroupBarrier();
    reduce_maximum(local_index);
    let row_maximum = partial[0];
    // Everyone must have read partial[0] before it is overwritten below.
    workgroupBarrier();

    // 2. The sum of exponentials, shifted by the maximum so that no exp() overflows.
    var local_sum = 0.0;
    for (var column = local_index; column < COLUMNS; column = column + WORKGROUP_SIZE) {
        local_sum = local_sum + exp(output[start + column] - row_maximum);
    }
    partial[local_index] = local_sum;
    workgroupBarrier();
    reduce_sum(local_index);
    let row_sum = partial[0];

    // 3. Normalise.
    for (var column = local_index; column < COLUMNS; column = column + WORKGROUP_SIZE) {
        output[start + column] = exp(output[start + column] - row_maximum) / row_sum;
    }
}
";
// ANCHOR_END: row_template

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compiler::opcode::Binding;

    fn relu_program() -> Program {
        Program {
            bindings: vec![Binding::new("input", (3, 5))],
            op_codes: vec![OpCode::Load { source: Slot(0) }, OpCode::Relu],
            output_shape: (3, 5),
        }
    }

    #[test]
    fn every_op_code_leaves_a_comment() {
        let shader = generate_wgsl(&relu_program()).unwrap();
        assert!(shader.contains("    // Op code 0: load(source: slot 0)\n"));
        assert!(
            shader
                .contains("    // Op code 1: relu()\n    value = select(value, 0.0, value < 0.0);")
        );
        assert!(shader.contains("const ROWS: u32 = 3u;"));
        assert!(
            !shader.contains('$'),
            "every placeholder is filled:\n{shader}"
        );
    }

    #[test]
    fn a_softmax_at_the_end_picks_the_row_template() {
        let mut program = relu_program();
        program.op_codes.push(OpCode::RowSoftmax);
        assert_eq!(Template::of(&program), Template::Rows);
        let shader = generate_wgsl(&program).unwrap();
        assert!(shader.contains(
            "        // Op code 1: relu()\n        value = select(value, 0.0, value < 0.0);"
        ));
        assert!(shader.contains("// Op code 2: row_softmax()"));
        assert!(
            !shader.contains('$'),
            "every placeholder is filled:\n{shader}"
        );
    }

    #[test]
    fn a_malformed_program_generates_nothing() {
        let mut program = relu_program();
        program.op_codes.clear();
        assert_eq!(generate_wgsl(&program), Err(OpCodeError::Empty));
    }
}
