//! Races on workgroup memory: a write and a read of a `var<workgroup>` (in either
//! order) with no `workgroupBarrier()` between them.
//!
//! The walk keeps the list of accesses that no barrier has yet separated from the
//! statement it is on ("pending"); a barrier empties the list, and each new access is
//! checked against every pending one. Branches are walked with a copy each and joined;
//! a loop body is walked twice, so that the end of one iteration meets the start of the
//! next.

use std::collections::HashSet;

use naga::{AddressSpace, Barrier, Block, Expression, Function, GlobalVariable, Handle, Statement};

use super::taint::{INVOCATION, index_taint};
use super::walk::{global_root, operands};
use super::{Analysis, Context, Finding, FunctionId};

/// What kind of access a memory event is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Read,
    Write,
    AtomicRead,
    AtomicWrite,
    AtomicUpdate,
}

impl Kind {
    fn reads_only(self) -> bool {
        matches!(self, Kind::Read | Kind::AtomicRead)
    }

    /// A plain write or an atomic update: two of these are never reported, because
    /// which invocation writes which element is not something the code's shape reveals.
    /// An atomicStore is left out: meeting another write, it replaces what was written.
    fn is_write_other_than_atomic_store(self) -> bool {
        matches!(self, Kind::Write | Kind::AtomicUpdate)
    }
}

/// One access to workgroup memory that no barrier has separated from what follows.
#[derive(Debug, Clone)]
struct Access {
    variable: Handle<GlobalVariable>,
    kind: Kind,
    /// The index expressions, as text, to tell "the same element" apart.
    key: String,
    /// True when the index depends on the invocation's id.
    own: bool,
    line: u32,
    /// The load expression of a read, and the function it is in.
    load: Option<(FunctionId, Handle<Expression>)>,
    /// The walk of a loop body it happened in.
    pass: u32,
    /// The loops it is in, outermost first: the line of each and the walk of its body.
    loops: Vec<(u32, u32)>,
}

impl<'a> Analysis<'a> {
    /// Checks the function of `context`, the entry point, from its start.
    pub(super) fn races_of_function(&mut self, context: &Context<'a>) {
        let mut pending = Vec::new();
        self.races(context, &context.function.body, &mut pending, &[]);
    }

    /// The access of `kind` through `pointer` at `line`, inside `loops`.
    fn access(
        &self,
        context: &Context,
        variable: Handle<GlobalVariable>,
        kind: Kind,
        pointer: Handle<Expression>,
        line: u32,
        loops: &[(u32, u32)],
    ) -> Access {
        Access {
            variable,
            kind,
            key: self.key(context, pointer),
            own: index_taint(context.function, pointer, &context.taint.expressions) & INVOCATION
                != 0,
            line,
            load: None,
            pass: self.pass,
            loops: loops.to_vec(),
        }
    }

    /// Walks `block`, checking every access to workgroup memory against `pending` and
    /// adding it there; `loops` are the loops the block is in.
    fn races(
        &mut self,
        context: &Context<'a>,
        block: &Block,
        pending: &mut Vec<Access>,
        loops: &[(u32, u32)],
    ) {
        let function = context.function;
        for (statement, span) in block.span_iter() {
            let line = self.line(*span);
            match statement {
                Statement::Emit(range) => {
                    for handle in range.clone() {
                        let Expression::Load { pointer } = function.expressions[handle] else {
                            continue;
                        };
                        let Some((variable, atomic)) = self.workgroup_root(function, pointer)
                        else {
                            continue;
                        };
                        let kind = if atomic { Kind::AtomicRead } else { Kind::Read };
                        let line = self.expression_line(function, handle);
                        let access = Access {
                            load: Some((context.id, handle)),
                            ..self.access(context, variable, kind, pointer, line, loops)
                        };
                        self.record(access, pending, &HashSet::new());
                    }
                }
                Statement::Store { pointer, value } => {
                    let Some((variable, atomic)) = self.workgroup_root(function, *pointer) else {
                        continue;
                    };
                    let mut feeding = HashSet::new();
                    loads_feeding(function, *value, &mut feeding);
                    loads_feeding(function, *pointer, &mut feeding);
                    let kind = if atomic {
                        Kind::AtomicWrite
                    } else {
                        Kind::Write
                    };
                    let access = self.access(context, variable, kind, *pointer, line, loops);
                    let feeding = feeding.into_iter().map(|load| (context.id, load)).collect();
                    self.record(access, pending, &feeding);
                }
                Statement::Atomic { pointer, .. } => {
                    let Some((variable, _)) = self.workgroup_root(function, *pointer) else {
                        continue;
                    };
                    let kind = Kind::AtomicUpdate;
                    let access = self.access(context, variable, kind, *pointer, line, loops);
                    self.record(access, pending, &HashSet::new());
                }
                Statement::ControlBarrier(barrier) if barrier.contains(Barrier::WORK_GROUP) => {
                    pending.clear();
                }
                Statement::WorkGroupUniformLoad { .. } => pending.clear(),
                Statement::Call {
                    function: callee,
                    arguments,
                    ..
                } => {
                    let callee_context = self.callee_context(context, *callee, arguments);
                    let body = &callee_context.function.body;
                    self.races(&callee_context, body, pending, loops);
                }
                Statement::If { accept, reject, .. } => {
                    let mut rejected = pending.clone();
                    self.races(context, accept, pending, loops);
                    self.races(context, reject, &mut rejected, loops);
                    pending.extend(rejected);
                }
                Statement::Switch { cases, .. } => {
                    let before = pending.clone();
                    for case in cases {
                        let mut taken = before.clone();
                        self.races(context, &case.body, &mut taken, loops);
                        pending.extend(taken);
                    }
                }
                Statement::Loop {
                    body, continuing, ..
                } => {
                    // Twice round, so that the end of one iteration meets the start of
                    // the next; what follows the loop may come after either.
                    let before = pending.clone();
                    for _ in 0..2 {
                        self.pass += 1;
                        let mut inner = loops.to_vec();
                        inner.push((line, self.pass));
                        self.races(context, body, pending, &inner);
                        self.races(context, continuing, pending, &inner);
                    }
                    pending.extend(before);
                }
                Statement::Block(inner) => self.races(context, inner, pending, loops),
                _ => {}
            }
        }
        // Keep the list short: one entry per place, kind and pass is enough.
        let mut seen = HashSet::new();
        pending.retain(|access| {
            seen.insert((
                access.variable,
                access.line,
                access.kind as u8,
                access.key.clone(),
                access.pass,
            ))
        });
    }

    /// Checks `access` against every access no barrier separates it from, then adds it.
    fn record(
        &mut self,
        access: Access,
        pending: &mut Vec<Access>,
        feeding: &HashSet<(FunctionId, Handle<Expression>)>,
    ) {
        for earlier in pending.iter() {
            if earlier.variable != access.variable {
                continue;
            }
            let both_read = earlier.kind.reads_only() && access.kind.reads_only();
            let both_add = earlier.kind == Kind::AtomicUpdate && access.kind == Kind::AtomicUpdate;
            let both_plain_writes = earlier.kind.is_write_other_than_atomic_store()
                && access.kind.is_write_other_than_atomic_store();
            let own_element = access.own && earlier.key == access.key;
            let same_statement = earlier.pass == access.pass
                && earlier.load.is_some_and(|load| feeding.contains(&load));
            if both_read || both_add || both_plain_writes || own_element || same_statement {
                continue;
            }
            let name = self.module.global_variables[access.variable]
                .name
                .clone()
                .unwrap_or_else(|| "workgroup memory".to_string());
            // The outermost loop both are in whose iteration differs between them.
            let next_iteration = earlier
                .loops
                .iter()
                .zip(&access.loops)
                .take_while(|(outer, inner)| outer.0 == inner.0)
                .find(|(outer, inner)| outer.1 != inner.1)
                .map(|((loop_line, _), _)| {
                    format!(", in the next iteration of the loop of line {loop_line}")
                })
                .unwrap_or_default();
            let message = if earlier.kind.reads_only() {
                format!(
                    "line {}: `{name}` is written here{next_iteration}, but other invocations may \
                     not yet have done the read of line {} (there is no workgroupBarrier() \
                     between them): a fast invocation can overwrite a value that a slow one \
                     still needs. This is a race; put a workgroupBarrier() between the last \
                     read and the write.",
                    access.line, earlier.line
                )
            } else {
                format!(
                    "line {}: `{name}` is read here{next_iteration}, but there is no \
                     workgroupBarrier() between this read and the write of line {}: an \
                     invocation can read an element before the invocation that writes it has \
                     done so. This is a race; put a workgroupBarrier() between the write and \
                     the read.",
                    access.line, earlier.line
                )
            };
            self.findings.races.push(Finding {
                line: access.line,
                message,
            });
        }
        pending.push(access);
    }

    /// The workgroup variable a pointer points into, and whether the element is atomic.
    fn workgroup_root(
        &self,
        function: &Function,
        pointer: Handle<Expression>,
    ) -> Option<(Handle<GlobalVariable>, bool)> {
        let global = global_root(function, pointer)?;
        let variable = &self.module.global_variables[global];
        if variable.space != AddressSpace::WorkGroup {
            return None;
        }
        Some((global, self.holds_atomics(variable.ty)))
    }
}

/// The loads an expression's value depends on, through everything but variables: the
/// reads that belong to the same statement as a write of this value.
fn loads_feeding(
    function: &Function,
    handle: Handle<Expression>,
    found: &mut HashSet<Handle<Expression>>,
) {
    let expression = &function.expressions[handle];
    if matches!(expression, Expression::Load { .. }) && !found.insert(handle) {
        return;
    }
    for operand in operands(expression) {
        loads_feeding(function, operand, found);
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_kernel::findings;

    #[test]
    fn a_missing_barrier_is_a_race_in_either_direction() {
        // Read after write: the tree reads partial before the others have written it.
        let found = findings(
            "    partial[local] = f32(local);
    tree(local);",
        );
        assert!(
            found
                .races
                .iter()
                .any(|race| race.message.contains("is read here")),
            "{:?}",
            found.races
        );
        // Write after read, in the next iteration of a loop.
        let found = findings(
            "    var total = 0.0;
    for (var step = 0u; step < 4u; step = step + 1u) {
        partial[local] = f32(step);
        workgroupBarrier();
        total = total + partial[63u - local];
    }",
        );
        assert_eq!(found.races.len(), 1, "{:?}", found.races);
        let message = &found.races[0].message;
        assert!(
            message.contains("is written here, in the next iteration"),
            "{message}"
        );
        assert!(message.contains("race"), "{message}");
    }
}
