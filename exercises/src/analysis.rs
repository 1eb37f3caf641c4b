//! Static checks: mistakes that no input can reveal on a software driver.
//!
//! A software driver such as lavapipe runs the invocations of a workgroup in a fixed
//! order, one group of lanes after another, and rarely lets two workgroups interleave a
//! read-modify-write. A kernel with a race can therefore give the right answer on every
//! input there and a wrong one on a GPU. These checks read the kernel's code instead, as
//! naga parsed it, and name the line:
//!
//! - **Barriers in uniform control flow.** Every invocation of a workgroup must reach
//!   every `workgroupBarrier()`. A `return`, an `if` or a loop exit whose condition
//!   depends on the invocation's id (`local_invocation_id`, `local_invocation_index`,
//!   `global_invocation_id`, or a value computed from one) before a barrier breaks that.
//!   The dependence is followed through `let`s, variables, calls and loads.
//! - **A barrier between a write and a read of workgroup memory.** Along every path
//!   through the kernel (loops twice round, so that one iteration meets the next), a
//!   write to a `var<workgroup>` followed by a read of it, or a read followed by a write,
//!   with no barrier between them is a race. Three patterns are exempt because they are
//!   safe: both accesses use the same index computed from the invocation's id (each
//!   invocation touches its own element), the read and the write belong to one statement
//!   (`partial[i] = partial[i] + partial[i + stride]`), or both are atomic additions.
//!   Two writes are never reported: which invocation writes which element is not
//!   something the code's shape reveals.
//! - **Atomic updates.** A storage buffer that many workgroups update (histogram bins)
//!   must hold atomics and be updated with atomic additions; an update of memory at an
//!   index taken from the data (a value's bin) must be atomic.
//!
//! What these checks cannot do: prove that two different index expressions never name
//! the same element, see a race inside one statement, or follow pointers passed to
//! functions. The results on two schedules (see [`crate::instrument`]) cover part of
//! that; the rest is the student's reasoning.

use std::collections::{HashMap, HashSet};

use naga::{
    AddressSpace, Barrier, Binding, Block, BuiltIn, Expression, Function, GlobalVariable, Handle,
    Module, Span, Statement, TypeInner,
};

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

/// A value that differs between the invocations of a workgroup.
const INVOCATION: u8 = 1;
/// A value loaded from one of [`StaticRules::data_index_bindings`].
const DATA: u8 = 2;

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
    let mut pending = Vec::new();
    analysis.races_in_block(&context, &entry.function.body, &mut pending);
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum FunctionId {
    Entry,
    Helper(Handle<Function>),
}

/// The taint of every expression and local variable of one function, for one taint of
/// its parameters.
#[derive(Debug, Clone)]
struct Taint {
    expressions: Vec<u8>,
    returns: u8,
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

struct Analysis<'a> {
    module: &'a Module,
    source: &'a str,
    rules: &'a StaticRules,
    taints: HashMap<(FunctionId, Vec<u8>), Taint>,
    findings: Findings,
    /// Helper functions already walked for uniformity, with their parameters' taints.
    walked: HashSet<(FunctionId, Vec<u8>)>,
    /// Counts the walks of loop bodies, to tell one iteration from the next.
    pass: u32,
}

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

/// Early exits a block may take while only some invocations take them.
#[derive(Debug, Clone, Default)]
struct Exits {
    /// (line of the `return`, line of the condition that decides it)
    returns: Option<(u32, u32)>,
    /// The same for a `break` or `continue`.
    breaks: Option<(u32, u32)>,
}

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

    // ----- taint: which values depend on the invocation, which on the data -----

    fn taint(&mut self, id: FunctionId, function: &Function, parameters: &[u8]) -> Taint {
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
            self.store_taints(
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

    fn expression_taints(
        &mut self,
        function: &Function,
        parameters: &[u8],
        locals: &[u8],
        calls: &HashMap<Handle<Expression>, (Handle<Function>, Vec<Handle<Expression>>)>,
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

    /// Adds to `locals` the taint of every store into them, `control` being the taint of
    /// the conditions the store is under.
    fn store_taints(
        &self,
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
                    self.store_taints(function, accept, inner, expressions, locals, returns);
                    self.store_taints(function, reject, inner, expressions, locals, returns);
                    if exits_early(accept) || exits_early(reject) {
                        control = inner;
                    }
                }
                Statement::Switch { selector, cases } => {
                    let inner = control | expressions[selector.index()];
                    for case in cases {
                        self.store_taints(
                            function,
                            &case.body,
                            inner,
                            expressions,
                            locals,
                            returns,
                        );
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
                    self.store_taints(function, body, inner, expressions, locals, returns);
                    self.store_taints(function, continuing, inner, expressions, locals, returns);
                }
                Statement::Block(inner) => {
                    self.store_taints(function, inner, control, expressions, locals, returns);
                }
                Statement::Return { value } => {
                    *returns |= control | value.map_or(0, |value| expressions[value.index()]);
                }
                _ => {}
            }
        }
    }

    // ----- barriers in uniform control flow -----

    fn uniformity_of_function(&mut self, context: &Context<'a>) {
        let walked_key = (context.id, context.parameters.clone());
        if !self.walked.insert(walked_key) {
            return;
        }
        self.uniformity(context, &context.function.body, None, true);
    }

    fn invocation_dependent(&self, context: &Context, handle: Handle<Expression>) -> bool {
        context.taint.expressions[handle.index()] & INVOCATION != 0
    }

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
                    let id = FunctionId::Helper(*function);
                    if let Some(cause) = &cause
                        && self.has_barrier(&self.module.functions[*function].body)
                    {
                        let what = format!(
                            "the call of `{}`, which contains a workgroupBarrier(),",
                            self.function_name(id)
                        );
                        self.report_barrier(line, &what, cause);
                    }
                    let parameters: Vec<u8> = arguments
                        .iter()
                        .map(|argument| context.taint.expressions[argument.index()])
                        .collect();
                    let keys = arguments
                        .iter()
                        .map(|argument| self.key(context, *argument))
                        .collect();
                    let callee = self.context(id, self.function(id), parameters, keys);
                    self.uniformity_of_function(&callee);
                }
                Statement::If {
                    condition,
                    accept,
                    reject,
                } => {
                    let varying = self.invocation_dependent(context, *condition);
                    let condition_line = self.expression_line(context.function, *condition);
                    let inner = if varying {
                        cause.clone().or(Some(Cause::Branch {
                            condition: condition_line,
                        }))
                    } else {
                        cause.clone()
                    };
                    let accepted = self.uniformity(context, accept, inner.clone(), report);
                    let rejected = self.uniformity(context, reject, inner, report);
                    merge_exits(&mut exits, &mut cause, [accepted, rejected]);
                }
                Statement::Switch { selector, cases } => {
                    let varying = self.invocation_dependent(context, *selector);
                    let condition_line = self.expression_line(context.function, *selector);
                    let inner = if varying {
                        cause.clone().or(Some(Cause::Branch {
                            condition: condition_line,
                        }))
                    } else {
                        cause.clone()
                    };
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

    fn has_barrier(&self, block: &Block) -> bool {
        block.iter().any(|statement| match statement {
            Statement::ControlBarrier(_) | Statement::WorkGroupUniformLoad { .. } => true,
            Statement::Call { function, .. } => {
                self.has_barrier(&self.module.functions[*function].body)
            }
            Statement::Block(inner) => self.has_barrier(inner),
            Statement::If { accept, reject, .. } => {
                self.has_barrier(accept) || self.has_barrier(reject)
            }
            Statement::Switch { cases, .. } => {
                cases.iter().any(|case| self.has_barrier(&case.body))
            }
            Statement::Loop {
                body, continuing, ..
            } => self.has_barrier(body) || self.has_barrier(continuing),
            _ => false,
        })
    }

    // ----- races in workgroup memory -----

    fn races_in_block(&mut self, context: &Context<'a>, block: &Block, pending: &mut Vec<Access>) {
        self.races(context, block, pending, &[]);
    }

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
                        let access = Access {
                            variable,
                            kind: if atomic { Kind::AtomicRead } else { Kind::Read },
                            key: self.key(context, pointer),
                            own: index_taint(function, pointer, &context.taint.expressions)
                                & INVOCATION
                                != 0,
                            line: self.expression_line(function, handle),
                            load: Some((context.id, handle)),
                            pass: self.pass,
                            loops: loops.to_vec(),
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
                    let access = Access {
                        variable,
                        kind: if atomic {
                            Kind::AtomicWrite
                        } else {
                            Kind::Write
                        },
                        key: self.key(context, *pointer),
                        own: index_taint(function, *pointer, &context.taint.expressions)
                            & INVOCATION
                            != 0,
                        line,
                        load: None,
                        pass: self.pass,
                        loops: loops.to_vec(),
                    };
                    let feeding = feeding.into_iter().map(|load| (context.id, load)).collect();
                    self.record(access, pending, &feeding);
                }
                Statement::Atomic { pointer, .. } => {
                    let Some((variable, _)) = self.workgroup_root(function, *pointer) else {
                        continue;
                    };
                    let access = Access {
                        variable,
                        kind: Kind::AtomicUpdate,
                        key: self.key(context, *pointer),
                        own: index_taint(function, *pointer, &context.taint.expressions)
                            & INVOCATION
                            != 0,
                        line,
                        load: None,
                        pass: self.pass,
                        loops: loops.to_vec(),
                    };
                    self.record(access, pending, &HashSet::new());
                }
                Statement::ControlBarrier(barrier) => {
                    if barrier.contains(Barrier::WORK_GROUP) {
                        pending.clear();
                    }
                }
                Statement::WorkGroupUniformLoad { .. } => pending.clear(),
                Statement::Call {
                    function: callee,
                    arguments,
                    ..
                } => {
                    let id = FunctionId::Helper(*callee);
                    let parameters: Vec<u8> = arguments
                        .iter()
                        .map(|argument| context.taint.expressions[argument.index()])
                        .collect();
                    let keys = arguments
                        .iter()
                        .map(|argument| self.key(context, *argument))
                        .collect();
                    let callee_context = self.context(id, self.function(id), parameters, keys);
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
            let both_plain_writes = !earlier.kind.reads_only()
                && !access.kind.reads_only()
                && !(earlier.kind == Kind::AtomicWrite || access.kind == Kind::AtomicWrite);
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

    fn holds_atomics(&self, ty: Handle<naga::Type>) -> bool {
        match &self.module.types[ty].inner {
            TypeInner::Atomic(_) => true,
            TypeInner::Array { base, .. } => self.holds_atomics(*base),
            TypeInner::Struct { members, .. } => {
                members.iter().any(|member| self.holds_atomics(member.ty))
            }
            _ => false,
        }
    }

    /// An expression as text, with parameters replaced by their callers' keys, so that
    /// the same index in two places compares equal.
    fn key(&self, context: &Context, handle: Handle<Expression>) -> String {
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

    // ----- atomics -----

    fn atomic_rules(&mut self, entry: &Context<'a>) {
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
            let parameters: Vec<u8> = arguments
                .iter()
                .map(|argument| context.taint.expressions[argument.index()])
                .collect();
            let id = FunctionId::Helper(callee);
            let callee_context =
                self.context(id, &module.functions[callee], parameters, Vec::new());
            self.data_index_stores(&callee_context, visited, found);
        }
    }

    /// (line, pointer) of every `Store` in `functions` whose pointer `wanted` accepts.
    fn stores_into(
        &self,
        functions: &[&Function],
        wanted: impl Fn(u32, Handle<Expression>, &Function) -> bool,
    ) -> Vec<(u32, Handle<Expression>)> {
        fn walk(
            analysis: &Analysis,
            function: &Function,
            block: &Block,
            wanted: &dyn Fn(u32, Handle<Expression>, &Function) -> bool,
            found: &mut Vec<(u32, Handle<Expression>)>,
        ) {
            for (statement, span) in block.span_iter() {
                match statement {
                    Statement::Store { pointer, .. } => {
                        let line = analysis.line(*span);
                        if wanted(line, *pointer, function) {
                            found.push((line, *pointer));
                        }
                    }
                    Statement::Block(inner) => walk(analysis, function, inner, wanted, found),
                    Statement::If { accept, reject, .. } => {
                        walk(analysis, function, accept, wanted, found);
                        walk(analysis, function, reject, wanted, found);
                    }
                    Statement::Switch { cases, .. } => {
                        for case in cases {
                            walk(analysis, function, &case.body, wanted, found);
                        }
                    }
                    Statement::Loop {
                        body, continuing, ..
                    } => {
                        walk(analysis, function, body, wanted, found);
                        walk(analysis, function, continuing, wanted, found);
                    }
                    _ => {}
                }
            }
        }
        let mut found = Vec::new();
        for function in functions {
            walk(self, function, &function.body, &wanted, &mut found);
        }
        found.sort_by_key(|(line, _)| *line);
        found
    }

    fn count(&mut self, entry: &Function) {
        fn barriers(analysis: &Analysis, block: &Block) -> usize {
            block
                .iter()
                .map(|statement| match statement {
                    Statement::ControlBarrier(_) | Statement::WorkGroupUniformLoad { .. } => 1,
                    Statement::Call { function, .. } => {
                        barriers(analysis, &analysis.module.functions[*function].body)
                    }
                    Statement::Block(inner) => barriers(analysis, inner),
                    Statement::If { accept, reject, .. } => {
                        barriers(analysis, accept) + barriers(analysis, reject)
                    }
                    Statement::Switch { cases, .. } => cases
                        .iter()
                        .map(|case| barriers(analysis, &case.body))
                        .sum(),
                    Statement::Loop {
                        body, continuing, ..
                    } => barriers(analysis, body) + barriers(analysis, continuing),
                    _ => 0,
                })
                .sum()
        }
        self.findings.barrier_count = barriers(self, &entry.body);
        self.findings.workgroup_variables = self
            .module
            .global_variables
            .iter()
            .filter(|(_, variable)| variable.space == AddressSpace::WorkGroup)
            .count();
    }
}

impl Cause {
    fn condition_line(&self) -> u32 {
        match self {
            Cause::Return { condition, .. } | Cause::Branch { condition } => *condition,
            Cause::Loop { exit, .. } => *exit,
        }
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

/// Every expression an expression reads directly.
fn operands(expression: &Expression) -> Vec<Handle<Expression>> {
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

/// The taint of the indices along a pointer's access chain.
fn index_taint(function: &Function, pointer: Handle<Expression>, taints: &[u8]) -> u8 {
    match &function.expressions[pointer] {
        Expression::Access { base, index } => {
            taints[index.index()] | index_taint(function, *base, taints)
        }
        Expression::AccessIndex { base, .. } => index_taint(function, *base, taints),
        _ => 0,
    }
}

fn global_root(function: &Function, pointer: Handle<Expression>) -> Option<Handle<GlobalVariable>> {
    match &function.expressions[pointer] {
        Expression::Access { base, .. } | Expression::AccessIndex { base, .. } => {
            global_root(function, *base)
        }
        Expression::GlobalVariable(global) => Some(*global),
        _ => None,
    }
}

fn local_root(
    function: &Function,
    pointer: Handle<Expression>,
) -> Option<Handle<naga::LocalVariable>> {
    match &function.expressions[pointer] {
        Expression::Access { base, .. } | Expression::AccessIndex { base, .. } => {
            local_root(function, *base)
        }
        Expression::LocalVariable(variable) => Some(*variable),
        _ => None,
    }
}

/// The loads an expression's value depends on, through everything but variables.
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
            Statement::Switch { selector, cases } => {
                if cases.iter().any(|case| exits_early(&case.body)) {
                    taint |= taints[selector.index()];
                }
            }
            Statement::Block(inner) => taint |= loop_exit_taint(inner, taints),
            _ => {}
        }
    }
    taint
}

/// Every call in a block, at any depth: the function and the arguments.
fn every_call(block: &Block) -> Vec<(Handle<Function>, Vec<Handle<Expression>>)> {
    let mut calls = Vec::new();
    for statement in block.iter() {
        match statement {
            Statement::Call {
                function,
                arguments,
                ..
            } => calls.push((*function, arguments.clone())),
            Statement::Block(inner) => calls.extend(every_call(inner)),
            Statement::If { accept, reject, .. } => {
                calls.extend(every_call(accept));
                calls.extend(every_call(reject));
            }
            Statement::Switch { cases, .. } => {
                for case in cases {
                    calls.extend(every_call(&case.body));
                }
            }
            Statement::Loop {
                body, continuing, ..
            } => {
                calls.extend(every_call(body));
                calls.extend(every_call(continuing));
            }
            _ => {}
        }
    }
    calls
}

/// For every call with a result: the function and the arguments.
fn calls_by_result(
    block: &Block,
) -> HashMap<Handle<Expression>, (Handle<Function>, Vec<Handle<Expression>>)> {
    let mut calls = HashMap::new();
    fn walk(
        block: &Block,
        calls: &mut HashMap<Handle<Expression>, (Handle<Function>, Vec<Handle<Expression>>)>,
    ) {
        for statement in block.iter() {
            match statement {
                Statement::Call {
                    function,
                    arguments,
                    result: Some(result),
                } => {
                    calls.insert(*result, (*function, arguments.clone()));
                }
                Statement::Block(inner) => walk(inner, calls),
                Statement::If { accept, reject, .. } => {
                    walk(accept, calls);
                    walk(reject, calls);
                }
                Statement::Switch { cases, .. } => {
                    for case in cases {
                        walk(&case.body, calls);
                    }
                }
                Statement::Loop {
                    body, continuing, ..
                } => {
                    walk(body, calls);
                    walk(continuing, calls);
                }
                _ => {}
            }
        }
    }
    walk(block, &mut calls);
    calls
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULES: StaticRules = StaticRules {
        atomic_bindings: &["bins"],
        data_index_bindings: &["values"],
    };

    fn findings(body: &str) -> Findings {
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

    /// The line of `main`'s body on which a test's body starts.
    const BODY: u32 = 17;

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
