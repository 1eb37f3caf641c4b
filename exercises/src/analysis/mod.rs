//! Static checks: mistakes that no input can reveal on a software driver.
//!
//! A software driver such as lavapipe runs the invocations of a workgroup in a fixed
//! order, one group of lanes after another, and rarely lets two workgroups interleave a
//! read-modify-write. A kernel with a race can therefore give the right answer on every
//! input there and a wrong one on a GPU. These checks read the kernel's code instead, as
//! naga parsed it, and name the line:
//!
//! - **Barriers in uniform control flow** (`uniformity.rs`). Every invocation of a
//!   workgroup must reach every `workgroupBarrier()`. A `return`, an `if` or a loop exit
//!   whose condition depends on the invocation's id (`local_invocation_id`,
//!   `local_invocation_index`, `global_invocation_id`, or a value computed from one)
//!   before a barrier breaks that. The dependence is followed through `let`s, variables,
//!   calls and loads.
//! - **A barrier between a write and a read of workgroup memory** (`races.rs`). Along
//!   every path through the kernel (loops twice round, so that one iteration meets the
//!   next), a write to a `var<workgroup>` followed by a read of it, or a read followed by
//!   a write, with no barrier between them is a race. Three patterns are exempt because
//!   they are safe: both accesses use the same index computed from the invocation's id
//!   (each invocation touches its own element), the read and the write belong to one
//!   statement (`partial[i] = partial[i] + partial[i + stride]`), or both are atomic
//!   additions. Two writes are never reported: which invocation writes which element is
//!   not something the code's shape reveals.
//! - **Atomic updates** (`atomics.rs`). A storage buffer that many workgroups update
//!   (histogram bins) must hold atomics and be updated with atomic additions; an update
//!   of memory at an index taken from the data (a value's bin) must be atomic.
//!
//! All three stand on two shared pieces: `walk.rs`, which reads naga's tree of
//! statements and expressions, and `taint.rs`, which works out which values differ
//! between invocations and which come from the data.
//!
//! What these checks cannot do: prove that two different index expressions never name
//! the same element, see a race inside one statement, or follow pointers passed to
//! functions. The results on two schedules (see [`crate::instrument`]) cover part of
//! that; the rest is the student's reasoning.

mod atomics;
mod races;
mod taint;
mod uniformity;
mod walk;

#[cfg(test)]
mod test_kernel;

use std::collections::{HashMap, HashSet};

use naga::{AddressSpace, Binding, BuiltIn, Expression, Function, Handle, Module, Span};

use taint::{INVOCATION, Taint};

/// What an exercise adds to the general checks.
#[derive(Debug, Clone, Copy, Default)]
pub struct StaticRules {
    /// Storage bindings that many workgroups update at the same elements.
    pub atomic_bindings: &'static [&'static str],
    /// Storage bindings whose values are indices into other memory (a histogram's
    /// values): an update at such an index must be atomic.
    pub data_index_bindings: &'static [&'static str],
}

/// One problem, with the line it is on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub line: u32,
    pub message: String,
}

/// Everything the checks found, by kind.
#[derive(Debug, Clone, Default)]
pub struct Findings {
    pub barriers: Vec<Finding>,
    pub races: Vec<Finding>,
    pub atomics: Vec<Finding>,
    /// The number of workgroup barriers in the kernel and of `var<workgroup>`s it uses,
    /// for the report of a kernel without problems.
    pub barrier_count: usize,
    pub workgroup_variables: usize,
}

/// Runs every check on the entry point `main` of `module`.
pub fn analyse(module: &Module, source: &str, rules: &StaticRules) -> Findings {
    let Some(entry) = module
        .entry_points
        .iter()
        .find(|entry| entry.name == "main")
    else {
        return Findings::default();
    };
    let mut analysis = Analysis {
        module,
        source,
        rules,
        taints: HashMap::new(),
        findings: Findings::default(),
        walked: HashSet::new(),
        pass: 0,
    };
    let parameters: Vec<u8> = entry
        .function
        .arguments
        .iter()
        .map(|argument| match argument.binding {
            Some(Binding::BuiltIn(
                BuiltIn::LocalInvocationId
                | BuiltIn::LocalInvocationIndex
                | BuiltIn::GlobalInvocationId
                | BuiltIn::SubgroupInvocationId,
            )) => INVOCATION,
            Some(_) => 0,
            // A struct of built-in values: assume it holds an invocation id.
            None => INVOCATION,
        })
        .collect();
    let keys: Vec<String> = entry
        .function
        .arguments
        .iter()
        .enumerate()
        .map(|(index, argument)| match argument.binding {
            Some(Binding::BuiltIn(builtin)) => format!("builtin:{builtin:?}"),
            _ => format!("argument{index}"),
        })
        .collect();
    let context = analysis.context(FunctionId::Entry, &entry.function, parameters, keys);
    analysis.uniformity_of_function(&context);
    analysis.races_of_function(&context);
    analysis.atomic_rules(&context);
    analysis.count(&entry.function);
    let mut findings = analysis.findings;
    for list in [
        &mut findings.barriers,
        &mut findings.races,
        &mut findings.atomics,
    ] {
        list.sort_by(|a, b| (a.line, &a.message).cmp(&(b.line, &b.message)));
        list.dedup();
    }
    findings
}

/// The entry point, or one of the helper functions it calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum FunctionId {
    Entry,
    Helper(Handle<Function>),
}

/// One function being walked: its code, its parameters' taints, and the keys that name
/// its parameters in index expressions.
struct Context<'a> {
    id: FunctionId,
    function: &'a Function,
    parameters: Vec<u8>,
    keys: Vec<String>,
    taint: Taint,
}

/// The state the checks share while they walk one module.
struct Analysis<'a> {
    module: &'a Module,
    source: &'a str,
    rules: &'a StaticRules,
    /// The taints of each function already worked out, for each taint of its parameters.
    taints: HashMap<(FunctionId, Vec<u8>), Taint>,
    findings: Findings,
    /// Helper functions already walked for uniformity, with their parameters' taints.
    walked: HashSet<(FunctionId, Vec<u8>)>,
    /// Counts the walks of loop bodies, to tell one iteration from the next.
    pass: u32,
}

impl<'a> Analysis<'a> {
    fn line(&self, span: Span) -> u32 {
        if span.is_defined() {
            span.location(self.source).line_number
        } else {
            0
        }
    }

    fn expression_line(&self, function: &Function, handle: Handle<Expression>) -> u32 {
        self.line(function.expressions.get_span(handle))
    }

    fn function(&self, id: FunctionId) -> &'a Function {
        match id {
            FunctionId::Entry => {
                &self
                    .module
                    .entry_points
                    .iter()
                    .find(|entry| entry.name == "main")
                    .expect("analyse checked that main exists")
                    .function
            }
            FunctionId::Helper(handle) => &self.module.functions[handle],
        }
    }

    fn function_name(&self, id: FunctionId) -> String {
        match id {
            FunctionId::Entry => "main".to_string(),
            FunctionId::Helper(handle) => self.module.functions[handle]
                .name
                .clone()
                .unwrap_or_else(|| "a function".to_string()),
        }
    }

    fn context(
        &mut self,
        id: FunctionId,
        function: &'a Function,
        parameters: Vec<u8>,
        keys: Vec<String>,
    ) -> Context<'a> {
        let taint = self.taint(id, function, &parameters);
        Context {
            id,
            function,
            parameters,
            keys,
            taint,
        }
    }

    /// The context of a helper function called from `caller` with `arguments`: its
    /// parameters carry the arguments' taints and are named by the arguments' keys, so
    /// that an index inside the helper compares equal to the same index outside it.
    fn callee_context(
        &mut self,
        caller: &Context,
        callee: Handle<Function>,
        arguments: &[Handle<Expression>],
    ) -> Context<'a> {
        let id = FunctionId::Helper(callee);
        let parameters: Vec<u8> = arguments
            .iter()
            .map(|argument| caller.taint.expressions[argument.index()])
            .collect();
        let keys = arguments
            .iter()
            .map(|argument| self.key(caller, *argument))
            .collect();
        self.context(id, self.function(id), parameters, keys)
    }

    /// Counts the barriers the entry point reaches and the workgroup variables, for the
    /// report of a kernel without problems.
    fn count(&mut self, entry: &Function) {
        self.findings.barrier_count = self.barriers_in(&entry.body);
        self.findings.workgroup_variables = self
            .module
            .global_variables
            .iter()
            .filter(|(_, variable)| variable.space == AddressSpace::WorkGroup)
            .count();
    }
}

#[cfg(test)]
mod tests {
    use super::test_kernel::findings;

    #[test]
    fn a_correct_tree_reduction_has_no_finding() {
        let found = findings(
            "    partial[local] = f32(local);
    workgroupBarrier();
    tree(local);
    let total = partial[0];
    workgroupBarrier();
    partial[local] = total;",
        );
        assert!(found.barriers.is_empty(), "{:?}", found.barriers);
        assert!(found.races.is_empty(), "{:?}", found.races);
        assert_eq!(found.barrier_count, 3);
    }
}
