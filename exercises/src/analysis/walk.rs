//! Reading naga's tree: the statements of a block at any depth, the calls in it, the
//! variable a pointer points into, the operands of an expression, and an expression
//! written out as text. Every check walks the kernel with these.

use std::collections::HashMap;

use naga::{Block, Expression, Function, GlobalVariable, Handle, LocalVariable, Span, Statement};

use super::{Analysis, Context};

/// A call: the function called and the expressions passed to it.
pub(super) type Call = (Handle<Function>, Vec<Handle<Expression>>);

/// Calls `visit` on every statement of `block` at any depth, with its span, each
/// statement before the ones nested in it: the statements of branches, cases and loops
/// too, but not those of the functions it calls.
pub(super) fn visit_statements<'block>(
    block: &'block Block,
    visit: &mut impl FnMut(&'block Statement, &'block Span),
) {
    for (statement, span) in block.span_iter() {
        visit(statement, span);
        match statement {
            Statement::Block(inner) => visit_statements(inner, visit),
            Statement::If { accept, reject, .. } => {
                visit_statements(accept, visit);
                visit_statements(reject, visit);
            }
            Statement::Switch { cases, .. } => {
                for case in cases {
                    visit_statements(&case.body, visit);
                }
            }
            Statement::Loop {
                body, continuing, ..
            } => {
                visit_statements(body, visit);
                visit_statements(continuing, visit);
            }
            _ => {}
        }
    }
}

/// Every call in a block, at any depth, in the order they are written.
pub(super) fn every_call(block: &Block) -> Vec<Call> {
    let mut calls = Vec::new();
    visit_statements(block, &mut |statement, _| {
        if let Statement::Call {
            function,
            arguments,
            ..
        } = statement
        {
            calls.push((*function, arguments.clone()));
        }
    });
    calls
}

/// Every call with a result, by the expression that stands for the result: what a
/// `CallResult` expression depends on.
pub(super) fn calls_by_result(block: &Block) -> HashMap<Handle<Expression>, Call> {
    let mut calls = HashMap::new();
    visit_statements(block, &mut |statement, _| {
        if let Statement::Call {
            function,
            arguments,
            result: Some(result),
        } = statement
        {
            calls.insert(*result, (*function, arguments.clone()));
        }
    });
    calls
}

/// The expression at the root of a pointer's chain of accesses (`a[i].x` → `a`).
fn pointer_root(function: &Function, pointer: Handle<Expression>) -> &Expression {
    match &function.expressions[pointer] {
        Expression::Access { base, .. } | Expression::AccessIndex { base, .. } => {
            pointer_root(function, *base)
        }
        root => root,
    }
}

/// The global variable a pointer points into, if it points into one.
pub(super) fn global_root(
    function: &Function,
    pointer: Handle<Expression>,
) -> Option<Handle<GlobalVariable>> {
    match pointer_root(function, pointer) {
        Expression::GlobalVariable(global) => Some(*global),
        _ => None,
    }
}

/// The local variable a pointer points into, if it points into one.
pub(super) fn local_root(
    function: &Function,
    pointer: Handle<Expression>,
) -> Option<Handle<LocalVariable>> {
    match pointer_root(function, pointer) {
        Expression::LocalVariable(variable) => Some(*variable),
        _ => None,
    }
}

/// Every expression an expression reads directly.
pub(super) fn operands(expression: &Expression) -> Vec<Handle<Expression>> {
    let mut list = Vec::new();
    let mut add = |handle: &Handle<Expression>| list.push(*handle);
    match expression {
        Expression::Compose { components, .. } => components.iter().for_each(&mut add),
        Expression::Access { base, index } => {
            add(base);
            add(index);
        }
        Expression::AccessIndex { base, .. } => add(base),
        Expression::Splat { value, .. } => add(value),
        Expression::Swizzle { vector, .. } => add(vector),
        Expression::Load { pointer } => add(pointer),
        Expression::Unary { expr, .. } => add(expr),
        Expression::Binary { left, right, .. } => {
            add(left);
            add(right);
        }
        Expression::Select {
            condition,
            accept,
            reject,
        } => {
            add(condition);
            add(accept);
            add(reject);
        }
        Expression::Relational { argument, .. } => add(argument),
        Expression::Math {
            arg,
            arg1,
            arg2,
            arg3,
            ..
        } => {
            add(arg);
            arg1.iter().for_each(&mut add);
            arg2.iter().for_each(&mut add);
            arg3.iter().for_each(&mut add);
        }
        Expression::As { expr, .. } => add(expr),
        Expression::Derivative { expr, .. } => add(expr),
        Expression::ArrayLength(expr) => add(expr),
        _ => {}
    }
    list
}

impl Analysis<'_> {
    /// The barriers a block reaches, those inside the functions it calls counted once
    /// per call.
    pub(super) fn barriers_in(&self, block: &Block) -> usize {
        let mut count = 0;
        visit_statements(block, &mut |statement, _| match statement {
            Statement::ControlBarrier(_) | Statement::WorkGroupUniformLoad { .. } => count += 1,
            Statement::Call { function, .. } => {
                count += self.barriers_in(&self.module.functions[*function].body);
            }
            _ => {}
        });
        count
    }

    /// True when a value of type `ty` is, or contains, an atomic.
    pub(super) fn holds_atomics(&self, ty: Handle<naga::Type>) -> bool {
        match &self.module.types[ty].inner {
            naga::TypeInner::Atomic(_) => true,
            naga::TypeInner::Array { base, .. } => self.holds_atomics(*base),
            naga::TypeInner::Struct { members, .. } => {
                members.iter().any(|member| self.holds_atomics(member.ty))
            }
            _ => false,
        }
    }

    /// An expression as text, with parameters replaced by their callers' keys, so that
    /// the same index in two places compares equal.
    pub(super) fn key(&self, context: &Context, handle: Handle<Expression>) -> String {
        let function = context.function;
        let key = |handle: Handle<Expression>| self.key(context, handle);
        match &function.expressions[handle] {
            Expression::Literal(literal) => format!("{literal:?}"),
            Expression::Constant(constant) => self.module.constants[*constant]
                .name
                .clone()
                .unwrap_or_else(|| format!("constant{}", constant.index())),
            Expression::FunctionArgument(index) => context
                .keys
                .get(*index as usize)
                .cloned()
                .unwrap_or_default(),
            Expression::GlobalVariable(global) => self.module.global_variables[*global]
                .name
                .clone()
                .unwrap_or_default(),
            Expression::LocalVariable(variable) => format!(
                "{:?}:{}",
                context.id,
                function.local_variables[*variable]
                    .name
                    .clone()
                    .unwrap_or_default()
            ),
            Expression::Load { pointer } => format!("*{}", key(*pointer)),
            Expression::Access { base, index } => format!("{}[{}]", key(*base), key(*index)),
            Expression::AccessIndex { base, index } => format!("{}.{index}", key(*base)),
            Expression::Binary { op, left, right } => {
                format!("({} {op:?} {})", key(*left), key(*right))
            }
            Expression::Unary { op, expr } => format!("{op:?}({})", key(*expr)),
            Expression::As { expr, kind, .. } => format!("{kind:?}({})", key(*expr)),
            Expression::Math { fun, arg, arg1, .. } => format!(
                "{fun:?}({}, {})",
                key(*arg),
                arg1.map(key).unwrap_or_default()
            ),
            // Anything else stands for itself only.
            _ => format!("{:?}#{}", context.id, handle.index()),
        }
    }
}

#[cfg(test)]
mod tests {
    use naga::Statement;

    use super::{every_call, visit_statements};

    #[test]
    fn statements_are_visited_at_every_depth_but_not_inside_called_functions() {
        let source = "fn helper() { workgroupBarrier(); }
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) local: u32) {
    if (local < 8u) {
        for (var i = 0u; i < 4u; i = i + 1u) {
            workgroupBarrier();
            helper();
        }
    }
    helper();
}";
        let module = naga::front::wgsl::parse_str(source).expect("the test kernel parses");
        let main = &module.entry_points[0].function;
        let mut barriers = 0;
        visit_statements(&main.body, &mut |statement, _| {
            if matches!(statement, Statement::ControlBarrier(_)) {
                barriers += 1;
            }
        });
        assert_eq!(barriers, 1, "the helper's barrier belongs to the helper");
        assert_eq!(every_call(&main.body).len(), 2);
    }
}
