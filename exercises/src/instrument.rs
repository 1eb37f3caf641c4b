//! Two rewrites of a student's kernel that make mistakes visible on a forgiving driver.
//!
//! Both edit the WGSL text at places naga's parse points to, and insert no line breaks,
//! so every line number the student sees still refers to their own file. The edited
//! kernel is only run to judge results; timings always use the student's own text.
//!
//! - **Reads and writes out of bounds land on a guard.** Every index into a storage
//!   array, `input[i]`, becomes `input[checker_clamped_index(u32(i), arrayLength(&input))]`,
//!   which clamps it to the last element. That is what wgpu itself does on Metal and on
//!   Vulkan drivers without `robustBufferAccess2` (naga's `Restrict` bounds-check policy,
//!   in wgpu-hal's `metal/device.rs` and `vulkan/adapter.rs`); lavapipe has that feature and
//!   returns zero, which is often exactly what a correct kernel would have loaded, so the
//!   mistake would pass. The last element of every binding is a guard (see
//!   [`crate::kernel_run::BufferData`]): NaN for a float input, a sentinel for an integer
//!   input, and a checked guard for an output. A negative index written as `u32(i)` wraps
//!   to a huge one and is clamped the same way. In-bounds indices are unchanged.
//! - **The invocations of a workgroup in reverse order.** A second copy of the kernel
//!   renames its `local_invocation_id`, `local_invocation_index` and
//!   `global_invocation_id` parameters and recomputes them so that invocation `i` of a
//!   workgroup of `n` plays the part of invocation `n − 1 − i`. A software driver runs a
//!   workgroup's invocations in a fixed order between barriers; reversing the roles makes
//!   the work that ran first run last. A race between invocations that happens to give
//!   the right answer in one order rarely does in both.

use naga::{AddressSpace, ArraySize, BuiltIn, Expression, TypeInner};

use crate::shader::{AnalysedShader, ENTRY_POINT};

/// The helper function the clamping rewrite calls; appended after the student's code.
const CLAMP_FUNCTION: &str = "\n\n// Added by the checker: an index past the end reads (or writes) the last element.\n\
fn checker_clamped_index(index: u32, length: u32) -> u32 {\n    return min(index, length - 1u);\n}\n";

/// The kernel's text with every storage-array index clamped.
pub fn clamped_source(shader: &AnalysedShader) -> String {
    let mut edits = Vec::new();
    clamp_edits(shader, &mut edits);
    let mut source = apply(&shader.source, edits);
    source.push_str(CLAMP_FUNCTION);
    source
}

/// The kernel's text with every storage-array index clamped and the invocations of each
/// workgroup reversed, or why they cannot be reversed.
pub fn reversed_source(shader: &AnalysedShader) -> Result<String, String> {
    let mut edits = Vec::new();
    clamp_edits(shader, &mut edits);
    reverse_edits(shader, &mut edits)?;
    let mut source = apply(&shader.source, edits);
    source.push_str(CLAMP_FUNCTION);
    Ok(source)
}

/// Replace `length` bytes at `at` with `text` (an insertion when `length` is 0).
struct Edit {
    at: usize,
    length: usize,
    text: String,
}

/// Applies edits from the last to the first, so that earlier offsets stay valid. Two
/// insertions at one place keep the order they were made in.
fn apply(source: &str, mut edits: Vec<Edit>) -> String {
    edits.sort_by_key(|edit| edit.at);
    let mut text = source.to_string();
    for edit in edits.iter().rev() {
        text.replace_range(edit.at..edit.at + edit.length, &edit.text);
    }
    text
}

/// Edits that clamp every `name[index]` whose `name` is a storage buffer's runtime-sized
/// array.
fn clamp_edits(shader: &AnalysedShader, edits: &mut Vec<Edit>) {
    let module = &shader.module;
    let functions = module
        .functions
        .iter()
        .map(|(_, function)| function)
        .chain(module.entry_points.iter().map(|entry| &entry.function));
    let mut seen = std::collections::HashSet::new();
    for function in functions {
        for (handle, expression) in function.expressions.iter() {
            let Expression::Access { base, .. } = *expression else {
                continue;
            };
            let Expression::GlobalVariable(global) = function.expressions[base] else {
                continue;
            };
            let variable = &module.global_variables[global];
            let is_storage = matches!(variable.space, AddressSpace::Storage { .. });
            let is_runtime_array = matches!(
                module.types[variable.ty].inner,
                TypeInner::Array {
                    size: ArraySize::Dynamic,
                    ..
                }
            );
            let Some(name) = variable.name.as_deref() else {
                continue;
            };
            if !is_storage || !is_runtime_array {
                continue;
            }
            let span = function.expressions.get_span(handle);
            let Some(range) = span.to_range() else {
                continue;
            };
            let Some((open, close)) = index_brackets(&shader.source, range) else {
                continue;
            };
            if !seen.insert(open) {
                continue;
            }
            edits.push(Edit {
                at: open + 1,
                length: 0,
                text: "checker_clamped_index(u32(".to_string(),
            });
            edits.push(Edit {
                at: close,
                length: 0,
                text: format!("), arrayLength(&{name}))"),
            });
        }
    }
}

/// In the text of an index expression `base[index]`, the offsets of its last `[` pair:
/// the `]` it ends with and the `[` that matches it.
fn index_brackets(source: &str, range: std::ops::Range<usize>) -> Option<(usize, usize)> {
    let text = source.get(range.clone())?;
    let trimmed = text.trim_end();
    if !trimmed.ends_with(']') {
        return None;
    }
    let close = range.start + trimmed.len() - 1;
    let bytes = source.as_bytes();
    let mut depth = 0usize;
    let mut position = close;
    loop {
        match bytes[position] {
            b']' => depth += 1,
            b'[' => {
                depth -= 1;
                if depth == 0 {
                    return Some((position, close));
                }
            }
            _ => {}
        }
        if position == range.start {
            return None;
        }
        position -= 1;
    }
}

/// Edits that rename the entry point's invocation-id parameters and recompute them in
/// reverse order at the start of its body.
fn reverse_edits(shader: &AnalysedShader, edits: &mut Vec<Edit>) -> Result<(), String> {
    let module = &shader.module;
    let entry = module
        .entry_points
        .iter()
        .find(|entry| entry.name == ENTRY_POINT)
        .ok_or("no entry point `main`")?;
    let [x, y, z] = shader.workgroup_size;
    let size = format!("vec3<u32>({x}u, {y}u, {z}u)");
    let last = format!("vec3<u32>({}u, {}u, {}u)", x - 1, y - 1, z - 1);
    let mut renames: Vec<(String, String)> = Vec::new();
    for argument in &entry.function.arguments {
        let name = argument.name.clone().unwrap_or_default();
        let recomputed = match argument.binding {
            Some(naga::Binding::BuiltIn(BuiltIn::LocalInvocationIndex)) => {
                format!("{}u - {name}_in_order", x * y * z - 1)
            }
            Some(naga::Binding::BuiltIn(BuiltIn::LocalInvocationId)) => {
                format!("{last} - {name}_in_order")
            }
            Some(naga::Binding::BuiltIn(BuiltIn::GlobalInvocationId)) => format!(
                "{name}_in_order - {name}_in_order % {size} + ({last} - {name}_in_order % {size})"
            ),
            Some(_) => continue,
            None => {
                return Err(format!(
                    "the entry point takes its built-in values in a struct (`{name}`), which the \
                     checker does not rewrite"
                ));
            }
        };
        renames.push((name, recomputed));
    }
    if renames.is_empty() {
        return Ok(());
    }
    let masked = without_comments(&shader.source);
    let signature = find_entry_signature(&masked).ok_or("cannot find `fn main(` in the text")?;
    let parameters = &masked[signature.open + 1..signature.close];
    let mut lets = String::new();
    for (name, recomputed) in &renames {
        let at = find_parameter(parameters, name)
            .ok_or_else(|| format!("cannot find the parameter `{name}` of `fn main`"))?;
        edits.push(Edit {
            at: signature.open + 1 + at,
            length: name.len(),
            text: format!("{name}_in_order"),
        });
        lets.push_str(&format!(" let {name} = {recomputed};"));
    }
    edits.push(Edit {
        at: signature.body + 1,
        length: 0,
        text: lets,
    });
    Ok(())
}

/// Offsets in the text of `fn main`: its `(`, the matching `)`, and the `{` of its body.
struct Signature {
    open: usize,
    close: usize,
    body: usize,
}

fn find_entry_signature(masked: &str) -> Option<Signature> {
    let bytes = masked.as_bytes();
    let mut from = 0;
    while let Some(found) = masked[from..].find("fn") {
        let start = from + found;
        from = start + 2;
        let before_ok = start == 0 || !is_identifier_byte(bytes[start - 1]);
        let rest = &masked[start + 2..];
        let name_start = start + 2 + (rest.len() - rest.trim_start().len());
        if !before_ok || name_start == start + 2 {
            continue;
        }
        let name_end = name_start + ENTRY_POINT.len();
        if masked.get(name_start..name_end) != Some(ENTRY_POINT)
            || bytes
                .get(name_end)
                .is_some_and(|&byte| is_identifier_byte(byte))
        {
            continue;
        }
        let open = name_end + masked[name_end..].find('(')?;
        let mut depth = 0usize;
        let mut close = None;
        for (offset, &byte) in bytes[open..].iter().enumerate() {
            match byte {
                b'(' => depth += 1,
                b')' => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(open + offset);
                        break;
                    }
                }
                _ => {}
            }
        }
        let close = close?;
        let body = close + masked[close..].find('{')?;
        return Some(Signature { open, close, body });
    }
    None
}

/// The offset of the parameter `name` (the identifier followed by `:`) in a parameter
/// list.
fn find_parameter(parameters: &str, name: &str) -> Option<usize> {
    let bytes = parameters.as_bytes();
    let mut from = 0;
    while let Some(found) = parameters[from..].find(name) {
        let start = from + found;
        let end = start + name.len();
        from = end;
        let before_ok = start == 0 || !is_identifier_byte(bytes[start - 1]);
        let after_ok = bytes.get(end).is_none_or(|&byte| !is_identifier_byte(byte));
        if before_ok && after_ok && parameters[end..].trim_start().starts_with(':') {
            return Some(start);
        }
    }
    None
}

fn is_identifier_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_'
}

/// The text with every comment replaced by spaces (line breaks kept), same length.
fn without_comments(source: &str) -> String {
    let bytes = source.as_bytes();
    let mut masked = bytes.to_vec();
    let mut position = 0;
    let mut block_depth = 0usize;
    while position < bytes.len() {
        let pair = bytes.get(position..position + 2);
        if block_depth > 0 {
            if pair == Some(b"*/") {
                masked[position] = b' ';
                masked[position + 1] = b' ';
                block_depth -= 1;
                position += 2;
                continue;
            }
            if pair == Some(b"/*") {
                block_depth += 1;
            }
            if bytes[position] != b'\n' {
                masked[position] = b' ';
            }
            position += 1;
        } else if pair == Some(b"//") {
            while position < bytes.len() && bytes[position] != b'\n' {
                masked[position] = b' ';
                position += 1;
            }
        } else if pair == Some(b"/*") {
            block_depth = 1;
            masked[position] = b' ';
            masked[position + 1] = b' ';
            position += 2;
        } else {
            position += 1;
        }
    }
    // Only whole comments were blanked, and they end at ASCII bytes: still UTF-8.
    String::from_utf8(masked).unwrap_or_else(|_| source.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shader::{BindingSpec, Element};
    use std::path::Path;

    const BINDINGS: [BindingSpec; 3] = [
        BindingSpec::read(0, "input", Element::F32),
        BindingSpec::read_write(1, "output", Element::F32),
        BindingSpec::uniform(2, "dimensions"),
    ];

    const KERNEL: &str = "struct Dimensions { count: u32 }
@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read_write> output: array<f32>;
@group(0) @binding(2) var<uniform> dimensions: Dimensions;
var<workgroup> tile: array<f32, 64>;
// fn main(@builtin(local_invocation_index) local: u32) is in a comment
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) global: vec3u,
        @builtin(local_invocation_index) local: u32) {
    tile[local] = input[global.x + input_offset(global.x)];
    workgroupBarrier();
    output[global.x] = tile[63u - local];
}
fn input_offset(index: u32) -> u32 { return u32(input[index] > 0.0); }
";

    fn shader() -> AnalysedShader {
        AnalysedShader::from_source(Path::new("k.wgsl"), KERNEL.to_string(), &BINDINGS).unwrap()
    }

    #[test]
    fn every_storage_index_is_clamped_and_the_lines_stay() {
        let source = clamped_source(&shader());
        assert!(
            source.contains(
                "input[checker_clamped_index(u32(global.x + input_offset(global.x)), arrayLength(&input))]"
            ),
            "{source}"
        );
        assert!(
            source.contains("output[checker_clamped_index(u32(global.x), arrayLength(&output))]"),
            "{source}"
        );
        assert!(
            source.contains(
                "u32(input[checker_clamped_index(u32(index), arrayLength(&input))] > 0.0)"
            ),
            "{source}"
        );
        // Workgroup arrays have a fixed size: naga already keeps their indices in range.
        assert!(source.contains("tile[local] = "), "{source}");
        let line = |text: &str, needle: &str| text.lines().position(|line| line.contains(needle));
        assert_eq!(
            line(&source, "workgroupBarrier"),
            line(KERNEL, "workgroupBarrier")
        );
        AnalysedShader::from_source(Path::new("k.wgsl"), source, &BINDINGS).unwrap();
    }

    #[test]
    fn the_reversed_kernel_recomputes_the_ids_and_still_validates() {
        let source = reversed_source(&shader()).unwrap();
        assert!(
            source.contains("fn main(@builtin(global_invocation_id) global_in_order: vec3u"),
            "{source}"
        );
        assert!(
            source
                .contains("@builtin(local_invocation_index) local_in_order: u32) { let global = "),
            "{source}"
        );
        assert!(
            source.contains("let local = 63u - local_in_order;"),
            "{source}"
        );
        assert!(
            source.contains("// fn main(@builtin(local_invocation_index) local: u32)"),
            "the comment is left alone: {source}"
        );
        let line = |text: &str, needle: &str| text.lines().position(|line| line.contains(needle));
        assert_eq!(
            line(&source, "workgroupBarrier"),
            line(KERNEL, "workgroupBarrier")
        );
        AnalysedShader::from_source(Path::new("k.wgsl"), source, &BINDINGS).unwrap();
    }
}
