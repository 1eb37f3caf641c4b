//! The kernel the unit tests of every check fill in: a histogram's bindings, two
//! workgroup arrays, and a correct tree reduction in a helper function, around a body
//! that each test writes.

use super::{Findings, StaticRules, analyse};

const RULES: StaticRules = StaticRules {
    atomic_bindings: &["bins"],
    data_index_bindings: &["values"],
};

/// The line of `main`'s body on which a test's body starts, for the tests that check
/// the line a message names.
pub(super) const BODY: u32 = 17;

/// Every finding in the kernel with `body` as `main`'s body.
pub(super) fn findings(body: &str) -> Findings {
    let source = format!(
        "@group(0) @binding(0) var<storage, read> values: array<u32>;
@group(0) @binding(1) var<storage, read_write> bins: array<atomic<u32>>;
@group(0) @binding(2) var<storage, read_write> plain: array<u32>;
var<workgroup> partial: array<f32, 64>;
var<workgroup> counts: array<u32, 64>;
fn tree(local: u32) {{
    for (var stride = 32u; stride > 0u; stride = stride / 2u) {{
        if (local < stride) {{
            partial[local] = partial[local] + partial[local + stride];
        }}
        workgroupBarrier();
    }}
}}
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) local: u32,
        @builtin(workgroup_id) workgroup: vec3u) {{
{body}
}}"
    );
    let module = naga::front::wgsl::parse_str(&source).unwrap_or_else(|error| {
        panic!("{}", error.emit_to_string(&source));
    });
    analyse(&module, &source, &RULES)
}
