//! Taint: which values differ between the invocations of a workgroup, and which were
//! loaded from the data.
//!
//! A value is tainted when it is computed from a tainted value: the invocation's id
//! taints everything computed from it, through `let`s, variables (a store taints the
//! variable, and so does the condition the store is under), calls and loads. The
//! uniformity check asks whether a condition is tainted by the invocation; the race
//! check asks whether an index is; the atomics check asks whether an index came from
//! the data.

use std::collections::HashMap;

use naga::{Block, Expression, Function, Handle, Statement};

use super::walk::{Call, calls_by_result, local_root, operands};
use super::{Analysis, FunctionId};

/// A value that differs between the invocations of a workgroup.
pub(super) const INVOCATION: u8 = 1;
/// A value loaded from one of [`super::StaticRules::data_index_bindings`].
pub(super) const DATA: u8 = 2;

/// The taint of every expression of one function, and of what it returns, for one
/// taint of its parameters.
#[derive(Debug, Clone)]
pub(super) struct Taint {
    pub(super) expressions: Vec<u8>,
    pub(super) returns: u8,
}

impl Analysis<'_> {
    /// The taints of `function`'s expressions when its parameters carry `parameters`.
    /// A store into a variable can taint an expression that came before it (in the
    /// next iteration of a loop), so the taints are worked out again until the
    /// variables' taints stop changing.
    pub(super) fn taint(
        &mut self,
        id: FunctionId,
        function: &Function,
        parameters: &[u8],
    ) -> Taint {
        let cache_key = (id, parameters.to_vec());
        if let Some(taint) = self.taints.get(&cache_key) {
            return taint.clone();
        }
        let mut locals = vec![0u8; function.local_variables.len()];
        let calls = calls_by_result(&function.body);
        let taint = loop {
            let expressions = self.expression_taints(function, parameters, &locals, &calls);
            let mut next = locals.clone();
            for (handle, variable) in function.local_variables.iter() {
                if let Some(init) = variable.init {
                    next[handle.index()] |= expressions[init.index()];
                }
            }
            let mut returns = 0;
            store_taints(
                function,
                &function.body,
                0,
                &expressions,
                &mut next,
                &mut returns,
            );
            if next == locals {
                break Taint {
                    expressions,
                    returns,
                };
            }
            locals = next;
        };
        self.taints.insert(cache_key, taint.clone());
        taint
    }

    /// One round: the taint of every expression, given the taints of the variables.
    fn expression_taints(
        &mut self,
        function: &Function,
        parameters: &[u8],
        locals: &[u8],
        calls: &HashMap<Handle<Expression>, Call>,
    ) -> Vec<u8> {
        let mut taints = vec![0u8; function.expressions.len()];
        for (handle, expression) in function.expressions.iter() {
            let value = match expression {
                Expression::FunctionArgument(index) => {
                    parameters.get(*index as usize).copied().unwrap_or(0)
                }
                Expression::Load { pointer } => {
                    self.pointer_taint(function, *pointer, &taints, locals)
                }
                Expression::CallResult(_) => match calls.get(&handle) {
                    Some((callee, arguments)) => {
                        let arguments: Vec<u8> = arguments
                            .iter()
                            .map(|argument| taints[argument.index()])
                            .collect();
                        let module = self.module;
                        let callee_function = &module.functions[*callee];
                        self.taint(FunctionId::Helper(*callee), callee_function, &arguments)
                            .returns
                    }
                    None => INVOCATION,
                },
                Expression::AtomicResult { .. }
                | Expression::SubgroupBallotResult
                | Expression::SubgroupOperationResult { .. } => INVOCATION,
                Expression::WorkGroupUniformLoadResult { .. } | Expression::ArrayLength(_) => 0,
                other => operands(other)
                    .iter()
                    .fold(0, |taint, operand| taint | taints[operand.index()]),
            };
            taints[handle.index()] = value;
        }
        taints
    }

    /// The taint of what a pointer points at: its indices, its variable, and the data
    /// bindings.
    fn pointer_taint(
        &self,
        function: &Function,
        pointer: Handle<Expression>,
        taints: &[u8],
        locals: &[u8],
    ) -> u8 {
        match &function.expressions[pointer] {
            Expression::Access { base, index } => {
                taints[index.index()] | self.pointer_taint(function, *base, taints, locals)
            }
            Expression::AccessIndex { base, .. } => {
                self.pointer_taint(function, *base, taints, locals)
            }
            Expression::LocalVariable(variable) => locals[variable.index()],
            Expression::GlobalVariable(global) => {
                let name = self.module.global_variables[*global].name.as_deref();
                if name.is_some_and(|name| self.rules.data_index_bindings.contains(&name)) {
                    DATA
                } else {
                    0
                }
            }
            // A pointer passed as a parameter, or computed some other way.
            _ => taints[pointer.index()],
        }
    }
}

/// Adds to `locals` the taint of every store into them, `control` being the taint of
/// the conditions the store is under, and to `returns` the taint of what is returned.
fn store_taints(
    function: &Function,
    block: &Block,
    control: u8,
    expressions: &[u8],
    locals: &mut [u8],
    returns: &mut u8,
) {
    let mut control = control;
    for statement in block.iter() {
        match statement {
            Statement::Store { pointer, value } => {
                if let Some(variable) = local_root(function, *pointer) {
                    locals[variable.index()] |= expressions[value.index()]
                        | index_taint(function, *pointer, expressions)
                        | control;
                }
            }
            Statement::If {
                condition,
                accept,
                reject,
            } => {
                let inner = control | expressions[condition.index()];
                store_taints(function, accept, inner, expressions, locals, returns);
                store_taints(function, reject, inner, expressions, locals, returns);
                // After a branch that may leave early, the rest of the block runs
                // only for the invocations that did not leave.
                if exits_early(accept) || exits_early(reject) {
                    control = inner;
                }
            }
            Statement::Switch { selector, cases } => {
                let inner = control | expressions[selector.index()];
                for case in cases {
                    store_taints(function, &case.body, inner, expressions, locals, returns);
                }
                if cases.iter().any(|case| exits_early(&case.body)) {
                    control = inner;
                }
            }
            Statement::Loop {
                body,
                continuing,
                break_if,
            } => {
                let mut inner = control | loop_exit_taint(body, expressions);
                if let Some(condition) = break_if {
                    inner |= expressions[condition.index()];
                }
                store_taints(function, body, inner, expressions, locals, returns);
                store_taints(function, continuing, inner, expressions, locals, returns);
            }
            Statement::Block(inner) => {
                store_taints(function, inner, control, expressions, locals, returns);
            }
            Statement::Return { value } => {
                *returns |= control | value.map_or(0, |value| expressions[value.index()]);
            }
            _ => {}
        }
    }
}

/// The taint of the indices along a pointer's access chain.
pub(super) fn index_taint(function: &Function, pointer: Handle<Expression>, taints: &[u8]) -> u8 {
    match &function.expressions[pointer] {
        Expression::Access { base, index } => {
            taints[index.index()] | index_taint(function, *base, taints)
        }
        Expression::AccessIndex { base, .. } => index_taint(function, *base, taints),
        _ => 0,
    }
}

/// True when a block may leave its enclosing code early: a `return`, `break` or
/// `continue` at any depth (not counting those of inner loops for `break`).
fn exits_early(block: &Block) -> bool {
    block.iter().any(|statement| match statement {
        Statement::Return { .. } | Statement::Break | Statement::Continue | Statement::Kill => true,
        Statement::Block(inner) => exits_early(inner),
        Statement::If { accept, reject, .. } => exits_early(accept) || exits_early(reject),
        Statement::Switch { cases, .. } => cases.iter().any(|case| exits_early(&case.body)),
        Statement::Loop { body, .. } => returns_anywhere(body),
        _ => false,
    })
}

/// True when a block may `return` (or discard) at any depth.
fn returns_anywhere(block: &Block) -> bool {
    block.iter().any(|statement| match statement {
        Statement::Return { .. } | Statement::Kill => true,
        Statement::Block(inner) => returns_anywhere(inner),
        Statement::If { accept, reject, .. } => {
            returns_anywhere(accept) || returns_anywhere(reject)
        }
        Statement::Switch { cases, .. } => cases.iter().any(|case| returns_anywhere(&case.body)),
        Statement::Loop { body, .. } => returns_anywhere(body),
        _ => false,
    })
}

/// The taint of the conditions under which a loop body breaks out of its loop.
fn loop_exit_taint(block: &Block, taints: &[u8]) -> u8 {
    let mut taint = 0;
    for statement in block.iter() {
        match statement {
            Statement::If {
                condition,
                accept,
                reject,
            } => {
                if exits_early(accept) || exits_early(reject) {
                    taint |= taints[condition.index()];
                }
                taint |= loop_exit_taint(accept, taints) | loop_exit_taint(reject, taints);
            }
            Statement::Switch { selector, cases }
                if cases.iter().any(|case| exits_early(&case.body)) =>
            {
                taint |= taints[selector.index()];
            }
            Statement::Block(inner) => taint |= loop_exit_taint(inner, taints),
            _ => {}
        }
    }
    taint
}

#[cfg(test)]
mod tests {
    use super::super::test_kernel::findings;

    #[test]
    fn a_variable_set_under_a_condition_on_the_invocation_carries_it() {
        // `limit` is only ever given constants, but which one depends on the
        // invocation, so a branch on it is not uniform.
        let found = findings(
            "    var limit = 4u;
    if (local > 3u) {
        limit = 8u;
    }
    if (limit > 5u) {
        workgroupBarrier();
    }",
        );
        assert_eq!(found.barriers.len(), 1, "{:?}", found.barriers);
        assert!(found.barriers[0].message.contains("inside an `if`"));
    }

    #[test]
    fn a_value_computed_from_the_workgroup_id_alone_stays_uniform() {
        let found = findings(
            "    var limit = workgroup.x * 2u;
    if (limit > 5u) {
        workgroupBarrier();
    }",
        );
        assert!(found.barriers.is_empty(), "{:?}", found.barriers);
    }
}
