//! Atomic updates: memory that many invocations update at the same elements must be
//! updated with atomic additions.
//!
//! Two rules, both from the exercise's [`StaticRules`](super::StaticRules): a binding
//! that many workgroups add to (histogram bins) must hold atomics and must never be
//! written with a plain or atomic store; and an update of shared memory at an index
//! taken from the data (a value's bin) must be atomic, wherever the entry point
//! reaches it.

use std::collections::HashSet;

use naga::{AddressSpace, Expression, Function, Handle, Statement};

use super::taint::{DATA, index_taint};
use super::walk::{every_call, global_root, visit_statements};
use super::{Analysis, Context, Finding, FunctionId};

impl<'a> Analysis<'a> {
    /// Applies both rules; `entry` is the entry point's context.
    pub(super) fn atomic_rules(&mut self, entry: &Context<'a>) {
        let module = self.module;
        let mut functions: Vec<&Function> = module.functions.iter().map(|(_, f)| f).collect();
        functions.extend(module.entry_points.iter().map(|entry| &entry.function));
        for (global, variable) in module.global_variables.iter() {
            let Some(name) = variable.name.as_deref() else {
                continue;
            };
            if !self.rules.atomic_bindings.contains(&name) {
                continue;
            }
            let stores = self.stores_into(&functions, |_, pointer, function| {
                global_root(function, pointer) == Some(global)
            });
            if !self.holds_atomics(variable.ty) {
                let (line, example) = match stores.first() {
                    Some(&(line, _)) => (line, format!(" (line {line})")),
                    None => (
                        self.line(module.global_variables.get_span(global)),
                        String::new(),
                    ),
                };
                self.findings.atomics.push(Finding {
                    line,
                    message: format!(
                        "`{name}` holds plain u32, but invocations of many workgroups add to the \
                         same elements at once: a read followed by a write{example} is not \
                         atomic, so when two of them update one element together, one of the \
                         additions is lost. A software driver almost never interleaves \
                         workgroups like that; a GPU does. Declare it `array<atomic<u32>>` and \
                         add with atomicAdd."
                    ),
                });
            } else {
                for (line, _) in stores {
                    self.findings.atomics.push(Finding {
                        line,
                        message: format!(
                            "line {line}: atomicStore replaces the value in `{name}` instead of \
                             adding to it: what other invocations added in the meantime is lost. \
                             The store is atomic, but the update (read, add, write) is not atomic \
                             as a whole; use atomicAdd."
                        ),
                    });
                }
            }
        }
        if self.rules.data_index_bindings.is_empty() {
            return;
        }
        // A plain store at an index taken from the data, into memory several invocations
        // share, anywhere the entry point reaches.
        let mut found = Vec::new();
        let mut visited = HashSet::new();
        self.data_index_stores(entry, &mut visited, &mut found);
        self.findings.atomics.extend(found);
    }

    /// The plain stores at an index taken from the data in `context`'s function and the
    /// functions it calls, with the taint their arguments carry.
    fn data_index_stores(
        &mut self,
        context: &Context<'a>,
        visited: &mut HashSet<(FunctionId, Vec<u8>)>,
        found: &mut Vec<Finding>,
    ) {
        if !visited.insert((context.id, context.parameters.clone())) {
            return;
        }
        let module = self.module;
        let function = context.function;
        let shared = |_: u32, pointer: Handle<Expression>, function: &Function| {
            global_root(function, pointer).is_some_and(|global| {
                match module.global_variables[global].space {
                    AddressSpace::WorkGroup => true,
                    AddressSpace::Storage { access } => access.contains(naga::StorageAccess::STORE),
                    _ => false,
                }
            })
        };
        for (line, pointer) in self.stores_into(&[function], shared) {
            if index_taint(function, pointer, &context.taint.expressions) & DATA == 0 {
                continue;
            }
            let global = global_root(function, pointer).expect("filtered above");
            if self.holds_atomics(module.global_variables[global].ty) {
                continue;
            }
            let name = module.global_variables[global]
                .name
                .clone()
                .unwrap_or_default();
            found.push(Finding {
                line,
                message: format!(
                    "line {line}: `{name}` is updated with a plain read and write at an index \
                     taken from the data ({}): two invocations that count the same value at \
                     once both read the old count, and one increment is lost. The update is \
                     not atomic; declare `{name}` with atomic<u32> elements and use atomicAdd.",
                    self.rules.data_index_bindings.join(", ")
                ),
            });
        }
        for (callee, arguments) in every_call(&function.body) {
            let callee_context = self.callee_context(context, callee, &arguments);
            self.data_index_stores(&callee_context, visited, found);
        }
    }

    /// (line, pointer) of every `Store` in `functions` whose pointer `wanted` accepts,
    /// by line.
    fn stores_into(
        &self,
        functions: &[&Function],
        wanted: impl Fn(u32, Handle<Expression>, &Function) -> bool,
    ) -> Vec<(u32, Handle<Expression>)> {
        let mut found = Vec::new();
        for function in functions {
            visit_statements(&function.body, &mut |statement, span| {
                if let Statement::Store { pointer, .. } = statement {
                    let line = self.line(*span);
                    if wanted(line, *pointer, function) {
                        found.push((line, *pointer));
                    }
                }
            });
        }
        found.sort_by_key(|(line, _)| *line);
        found
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_kernel::findings;

    #[test]
    fn shared_counters_must_be_atomic_and_added_to() {
        let found = findings(
            "    atomicStore(&bins[local], 1u);
    counts[values[local]] = counts[values[local]] + 1u;
    plain[local] = 0u;",
        );
        let messages: Vec<&str> = found.atomics.iter().map(|f| f.message.as_str()).collect();
        assert_eq!(messages.len(), 2, "{messages:?}");
        assert!(messages[0].contains("atomicStore replaces the value in `bins`"));
        assert!(messages[1].contains("`counts` is updated with a plain read and write"));
        assert!(
            messages
                .iter()
                .all(|message| message.contains("not atomic"))
        );
    }
}
