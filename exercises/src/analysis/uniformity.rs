//! Barriers in uniform control flow: every invocation of a workgroup must reach every
//! `workgroupBarrier()`.
//!
//! The walk carries the reason, if any, why control flow is no longer uniform at the
//! statement it is on: a `return` that only some invocations took, an `if` whose
//! condition depends on the invocation's id, or a loop that invocations leave after
//! different numbers of iterations. A barrier met with such a reason is reported, with
//! the line of the condition that decides it.

use naga::{Barrier, Block, Expression, Handle, Statement};

use super::taint::INVOCATION;
use super::{Analysis, Context, Finding, FunctionId};

/// Why control flow is not uniform at some point.
#[derive(Debug, Clone)]
enum Cause {
    /// After a `return` that only some invocations take.
    Return { line: u32, condition: u32 },
    /// Inside an `if` (or `switch`) whose condition depends on the invocation.
    Branch { condition: u32 },
    /// Inside a loop that invocations leave after different numbers of iterations.
    Loop { line: u32, exit: u32 },
}

impl Cause {
    /// The line of the condition that only some invocations meet.
    fn condition_line(&self) -> u32 {
        match self {
            Cause::Return { condition, .. } | Cause::Branch { condition } => *condition,
            Cause::Loop { exit, .. } => *exit,
        }
    }
}

/// Early exits a block may take while only some invocations take them.
#[derive(Debug, Clone, Default)]
struct Exits {
    /// (line of the `return`, line of the condition that decides it)
    returns: Option<(u32, u32)>,
    /// The same for a `break` or `continue`.
    breaks: Option<(u32, u32)>,
}

impl<'a> Analysis<'a> {
    /// Walks a function once for each taint of its parameters it is called with.
    pub(super) fn uniformity_of_function(&mut self, context: &Context<'a>) {
        let walked_key = (context.id, context.parameters.clone());
        if !self.walked.insert(walked_key) {
            return;
        }
        self.uniformity(context, &context.function.body, None, true);
    }

    /// True when the value of `handle` differs between the invocations of a workgroup.
    fn invocation_dependent(&self, context: &Context, handle: Handle<Expression>) -> bool {
        context.taint.expressions[handle.index()] & INVOCATION != 0
    }

    /// The cause inside a branch on `condition`: the one outside it if there is one,
    /// else the condition itself when it depends on the invocation.
    fn branch_cause(
        &self,
        context: &Context,
        cause: &Option<Cause>,
        condition: Handle<Expression>,
    ) -> Option<Cause> {
        if cause.is_some() || !self.invocation_dependent(context, condition) {
            return cause.clone();
        }
        Some(Cause::Branch {
            condition: self.expression_line(context.function, condition),
        })
    }

    /// Walks `block` with `cause` the reason control flow is not uniform on entry, and
    /// returns the early exits only some invocations take. With `report` false it only
    /// looks: a loop is walked once that way to find its exits before it is walked for
    /// real.
    fn uniformity(
        &mut self,
        context: &Context<'a>,
        block: &Block,
        cause: Option<Cause>,
        report: bool,
    ) -> Exits {
        let mut cause = cause;
        let mut exits = Exits::default();
        for (statement, span) in block.span_iter() {
            let line = self.line(*span);
            match statement {
                Statement::ControlBarrier(barrier) => {
                    if let Some(cause) = &cause
                        && report
                    {
                        let what = barrier_name(*barrier);
                        self.report_barrier(line, what, cause);
                    }
                }
                Statement::WorkGroupUniformLoad { .. } => {
                    if let Some(cause) = &cause
                        && report
                    {
                        self.report_barrier(line, "workgroupUniformLoad()", cause);
                    }
                }
                Statement::Call {
                    function,
                    arguments,
                    ..
                } => {
                    if !report {
                        continue;
                    }
                    if let Some(cause) = &cause
                        && self.barriers_in(&self.module.functions[*function].body) > 0
                    {
                        let what = format!(
                            "the call of `{}`, which contains a workgroupBarrier(),",
                            self.function_name(FunctionId::Helper(*function))
                        );
                        self.report_barrier(line, &what, cause);
                    }
                    let callee = self.callee_context(context, *function, arguments);
                    self.uniformity_of_function(&callee);
                }
                Statement::If {
                    condition,
                    accept,
                    reject,
                } => {
                    let inner = self.branch_cause(context, &cause, *condition);
                    let accepted = self.uniformity(context, accept, inner.clone(), report);
                    let rejected = self.uniformity(context, reject, inner, report);
                    merge_exits(&mut exits, &mut cause, [accepted, rejected]);
                }
                Statement::Switch { selector, cases } => {
                    let inner = self.branch_cause(context, &cause, *selector);
                    let all: Vec<Exits> = cases
                        .iter()
                        .map(|case| self.uniformity(context, &case.body, inner.clone(), report))
                        .collect();
                    merge_exits(&mut exits, &mut cause, all);
                }
                Statement::Loop {
                    body,
                    continuing,
                    break_if,
                } => {
                    // A first look, without reporting, finds the exits only some
                    // invocations take; then the body is walked with that knowledge.
                    let first = self.uniformity(context, body, cause.clone(), false);
                    let mut exit = first.breaks.map(|(_, condition)| condition);
                    if let Some(condition) = break_if
                        && self.invocation_dependent(context, *condition)
                    {
                        exit = exit.or(Some(self.expression_line(context.function, *condition)));
                    }
                    let inner = match exit {
                        Some(exit) => cause.clone().or(Some(Cause::Loop { line, exit })),
                        None => cause.clone(),
                    };
                    let walked = self.uniformity(context, body, inner.clone(), report);
                    self.uniformity(context, continuing, inner, report);
                    if let Some(returned) = walked.returns {
                        exits.returns.get_or_insert(returned);
                        cause = cause.or(Some(Cause::Return {
                            line: returned.0,
                            condition: returned.1,
                        }));
                    }
                }
                Statement::Block(inner) => {
                    let walked = self.uniformity(context, inner, cause.clone(), report);
                    merge_exits(&mut exits, &mut cause, [walked]);
                }
                Statement::Return { .. } => {
                    if let Some(cause) = &cause {
                        exits.returns.get_or_insert((line, cause.condition_line()));
                    }
                }
                Statement::Break | Statement::Continue => {
                    if let Some(cause) = &cause {
                        exits.breaks.get_or_insert((line, cause.condition_line()));
                    }
                }
                _ => {}
            }
        }
        exits
    }

    fn report_barrier(&mut self, line: u32, what: &str, cause: &Cause) {
        let message = match cause {
            Cause::Return {
                line: returned,
                condition,
            } => format!(
                "line {line}: {what} comes after the `return` at line {returned}, which only \
                 some invocations take (its condition, line {condition}, depends on the \
                 invocation's id). The invocations that returned never reach the barrier: it is \
                 in non-uniform control flow, and the others may wait forever or read tiles \
                 that were never filled. Let every invocation reach every barrier, and guard \
                 the work (the loads, the store) instead of returning early."
            ),
            Cause::Branch { condition } => format!(
                "line {line}: {what} is inside an `if` whose condition (line {condition}) \
                 depends on the invocation's id. The invocations that skip the branch never \
                 reach the barrier: it is in non-uniform control flow. Move the barrier out of \
                 the `if`, so that every invocation reaches it."
            ),
            Cause::Loop {
                line: loop_line,
                exit,
            } => format!(
                "line {line}: {what} is inside the loop of line {loop_line}, which invocations \
                 leave after different numbers of iterations (its exit, line {exit}, depends \
                 on the invocation's id): the barrier is in non-uniform control flow. Give the \
                 loop the same number of iterations in every invocation, and guard the work \
                 inside it instead."
            ),
        };
        self.findings.barriers.push(Finding { line, message });
    }
}

/// After branches: an early exit in any of them that only some invocations take makes
/// what follows non-uniform.
fn merge_exits(
    exits: &mut Exits,
    cause: &mut Option<Cause>,
    branches: impl IntoIterator<Item = Exits>,
) {
    for branch in branches {
        if let Some(returned) = branch.returns {
            exits.returns.get_or_insert(returned);
            if cause.is_none() {
                *cause = Some(Cause::Return {
                    line: returned.0,
                    condition: returned.1,
                });
            }
        }
        if let Some(broke) = branch.breaks {
            exits.breaks.get_or_insert(broke);
        }
    }
}

fn barrier_name(barrier: Barrier) -> &'static str {
    if barrier.contains(Barrier::WORK_GROUP) {
        "workgroupBarrier()"
    } else if barrier.contains(Barrier::STORAGE) {
        "storageBarrier()"
    } else {
        "a barrier"
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_kernel::{BODY, findings};

    #[test]
    fn a_return_that_depends_on_the_invocation_before_a_barrier_is_named() {
        let found = findings(
            "    if (local >= 60u) {
        return;
    }
    workgroupBarrier();",
        );
        assert_eq!(found.barriers.len(), 1, "{:?}", found.barriers);
        let message = &found.barriers[0].message;
        assert!(
            message.starts_with(&format!("line {}:", BODY + 3)),
            "{message}"
        );
        assert!(
            message.contains(&format!("`return` at line {}", BODY + 1)),
            "{message}"
        );
        assert!(
            message.contains("depends on the invocation's id"),
            "{message}"
        );
        assert!(message.contains("non-uniform control flow"), "{message}");
    }

    #[test]
    fn a_return_that_is_the_same_for_the_whole_workgroup_is_fine() {
        let found = findings(
            "    if (workgroup.x >= 4u) {
        return;
    }
    workgroupBarrier();",
        );
        assert!(found.barriers.is_empty(), "{:?}", found.barriers);
    }

    #[test]
    fn a_barrier_in_a_branch_or_a_loop_of_varying_length_is_named() {
        let found = findings(
            "    let half = local / 2u;
    if (half < 16u) {
        workgroupBarrier();
    }
    for (var i = local; i < 64u; i = i + 8u) {
        tree(i);
    }",
        );
        assert_eq!(found.barriers.len(), 2, "{:?}", found.barriers);
        assert!(found.barriers[0].message.contains("inside an `if`"));
        assert!(found.barriers[1].message.contains("the call of `tree`"));
        assert!(found.barriers[1].message.contains("inside the loop"));
    }
}
