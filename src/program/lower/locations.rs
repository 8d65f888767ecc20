//! Variables and locations: the declarations of the init block, the locations herd7 and Dat3M
//! declare implicitly, and the type of each word (from its first typed access).

use super::declarations::DeclPlan;
use super::state::{is_register_shaped, Lowerer, VariableShape};
use crate::diag::{Diagnostic, Spanned};
use crate::litmus::ast::{self, CondValue, InitItem, Operand, Statement};
use crate::program::*;

impl Lowerer<'_> {
    /// A scalar word variable (the Dat3M kind of location).
    pub(super) fn new_location(&mut self, name: &Spanned<String>, physical: usize, generic: Option<usize>) -> Result<usize, Diagnostic> {
        if self.lookup(&name.node).is_some() || self.instances.contains_key(&name.node) {
            return Err(Diagnostic::error(name.span, format!("location `{}` is declared twice", name.node)));
        }
        let idx = self.locations.len();
        let variable = self.variables.len();
        let base = self.next_base();
        self.variables.push(Variable {
            name: name.node.clone(),
            size: 4,
            space: Space::Global,
            align: 4,
            kind: VariableKind::Data,
            first_location: idx,
            base,
            span: name.span,
        });
        self.locations.push(Location { variable, offset: 0, physical, generic: generic.unwrap_or(idx), span: name.span });
        self.by_name.insert(name.node.clone(), idx);
        Ok(idx)
    }

    /// A declared variable: one location per 4-byte word (`s`, `s+4`, ...), or one location for
    /// an mbarrier.
    fn declare_variable(&mut self, d: &ast::VariableDecl) -> Result<(), Diagnostic> {
        let name = &d.name;
        if self.lookup(&name.node).is_some() || self.instances.contains_key(&name.node) {
            return Err(Diagnostic::error(name.span, format!("location `{}` is declared twice", name.node)));
        }
        let space = match &d.shared_cta {
            Some(c) => Space::Shared { cta: c.node },
            None => Space::Global,
        };
        let (kind, size) = match &d.mbarrier {
            Some(m) => {
                if let Some(sz) = &d.size {
                    if sz.node != 8 {
                        return Err(Diagnostic::error(sz.span, "an mbarrier object is 8 bytes (PTX ISA §9.7.13.15.1)"));
                    }
                }
                if space == Space::Global {
                    return Err(Diagnostic::error(m.span, "mbarrier objects live in shared memory")
                        .with_note("declare it as `bar @ shared cta 0 mbarrier(1)`"));
                }
                if let Some(init) = &d.init {
                    return Err(Diagnostic::error(init.span, "an mbarrier takes no initial value")
                        .with_note("write `mbarrier(count)` for an initialised mbarrier, `mbarrier` for an uninitialised one"));
                }
                if let Some(c) = m.node {
                    if !(1..(1 << 20)).contains(&c) {
                        return Err(Diagnostic::error(m.span, format!("mbarrier count {c} is outside [1, 2^20-1] (PTX ISA §9.7.13.15.9)")));
                    }
                }
                (VariableKind::Mbarrier, 8)
            }
            None => {
                let size = d.size.as_ref().map(|s| s.node).unwrap_or(4);
                let most = super::declarations::max_bytes(d.shared_cta.is_some());
                if size <= 0 || size % 4 != 0 || size > most {
                    let span = d.size.as_ref().map(|s| s.span).unwrap_or(name.span);
                    return Err(Diagnostic::expected(
                        span,
                        format!("a size in bytes that is a positive multiple of 4, at most {most}"),
                        size,
                    ));
                }
                (VariableKind::Data, size)
            }
        };
        let align = match &d.align {
            Some(a) => {
                if a.node <= 0 || a.node & (a.node - 1) != 0 {
                    return Err(Diagnostic::expected(a.span, "an alignment that is a power of two", a.node));
                }
                if kind == VariableKind::Mbarrier && a.node < 8 {
                    return Err(Diagnostic::error(a.span, "an mbarrier object must be 8-byte aligned (PTX ISA §9.7.13.15.1)"));
                }
                a.node
            }
            None if kind == VariableKind::Mbarrier => 8,
            None if d.size.is_some() => 16,
            None => 4,
        };
        let words = if kind == VariableKind::Mbarrier { 1 } else { (size / 4) as usize };
        let values: Vec<i64> = match (&d.init, kind) {
            (_, VariableKind::Mbarrier) => {
                vec![d.mbarrier.as_ref().and_then(|m| m.node).map(crate::program::mbarrier::MbState::initialised).unwrap_or(0)]
            }
            (None, _) => vec![0; words],
            (Some(v), _) if d.init_repeats => vec![v.node[0]; words],
            (Some(v), _) => {
                if v.node.len() != words {
                    return Err(Diagnostic::expected(
                        v.span,
                        format!("{words} word value(s) for the {size} bytes of `{}`", name.node),
                        v.node.len(),
                    ));
                }
                v.node.clone()
            }
        };
        self.push_variable(&name.node, VariableShape { size, space, align, kind }, values, name.span)?;
        Ok(())
    }

    /// A variable and its locations: one per 4-byte word (`s`, `s+4`, ...), or one per 8-byte
    /// mbarrier object (`bar`, `bar+8`, ...), with initial values `values` (one per location).
    /// Only the variable's name goes in `by_name`; its words resolve through it
    /// ([`Lowerer::lookup`]). Returns the variable's index.
    pub(super) fn push_variable(&mut self, name: &str, shape: VariableShape, values: Vec<i64>, span: Span) -> Result<usize, Diagnostic> {
        let VariableShape { size, space, align, kind } = shape;
        let words = (self.locations.len() + values.len()) as u64;
        if words > self.max_words {
            let mib = words.saturating_mul(BYTES_PER_WORD) >> 20;
            return Err(Diagnostic::error(
                span,
                format!(
                    "`{name}` brings the test's variables to {words} words, about {mib} MiB to model ({BYTES_PER_WORD} bytes a word), more than --max-memory allows"
                ),
            )
            .with_note("raise --max-memory, or model fewer CTAs (each has its own shared variables), or declare the part of an array the test touches"));
        }
        let variable = self.variables.len();
        let first = self.locations.len();
        let base = self.next_base();
        self.variables.push(Variable { name: name.to_string(), size, space, align, kind, first_location: first, base, span });
        let stride = if kind == VariableKind::Mbarrier { 8 } else { 4 };
        for (w, value) in values.into_iter().enumerate() {
            let p = self.new_physical(value);
            let idx = self.locations.len();
            self.locations.push(Location { variable, offset: (w * stride) as i64, physical: p, generic: idx, span });
            if w == 0 {
                self.by_name.insert(name.to_string(), idx);
            }
        }
        Ok(variable)
    }

    /// The base address of the next variable.
    fn next_base(&self) -> i64 {
        next_base(self.variables.last().map(|v| (v.base, v.size)))
    }

    /// A physical location whose first location is the one its caller declares next.
    pub(super) fn new_physical(&mut self, init: i64) -> usize {
        self.physical.push(PhysicalLocation { first: self.locations.len(), init, ty: None });
        self.physical.len() - 1
    }

    pub(super) fn declare_locations(&mut self, init: &[Spanned<InitItem>], plan: &DeclPlan) -> Result<(), Diagnostic> {
        // Plain locations first, so that later items may copy or alias them in any order; then
        // the function-scope declarations of code blocks.
        for item in init {
            match &item.node {
                InitItem::Location { name, value } => {
                    let p = self.new_physical(value.node);
                    self.new_location(name, p, None)?;
                }
                InitItem::Variable(d) => self.declare_variable(d)?,
                InitItem::Declaration(d) => self.declare_ptx(d, None, plan)?,
                _ => {}
            }
        }
        for (d, _, threads) in &plan.block_decls {
            self.declare_ptx(d, Some(threads), plan)?;
        }
        // `y = x` copies, `y @ proxy aliases x` aliases; resolve in order, retrying items that
        // refer to names declared later.
        let mut pending: Vec<&Spanned<InitItem>> =
            init.iter().filter(|i| matches!(i.node, InitItem::LocationFromLocation { .. } | InitItem::Alias { .. })).collect();
        while !pending.is_empty() {
            let before = pending.len();
            let mut rest = Vec::new();
            for item in pending {
                let target = match &item.node {
                    InitItem::LocationFromLocation { source, .. } => source,
                    InitItem::Alias { target, .. } => target,
                    _ => unreachable!("filtered above"),
                };
                let Some(t) = self.lookup(&target.node) else {
                    rest.push(item);
                    continue;
                };
                match &item.node {
                    InitItem::LocationFromLocation { name, address_of, .. } => {
                        // `y = x` copies x's initial value (Dat3M); `y = &x` stores x's address.
                        let value = if *address_of { self.address_of(t) } else { self.physical[self.locations[t].physical].init };
                        let p = self.new_physical(value);
                        self.new_location(name, p, None)?;
                    }
                    InitItem::Alias { name, proxy, target: _ } => {
                        let phys = self.locations[t].physical;
                        let generic = match proxy.node.as_str() {
                            // A generic synonym is a second generic address: same physical location, different virtual one.
                            "generic" => None,
                            // A non-generic alias (surface/texture/constant) has the target as its generic address.
                            "surface" | "texture" | "constant" => Some(self.locations[t].generic),
                            other => {
                                return Err(Diagnostic::expected(
                                    proxy.span,
                                    "one of `generic`, `surface`, `texture`, `constant`",
                                    format!("`{other}`"),
                                ));
                            }
                        };
                        self.new_location(name, phys, generic)?;
                    }
                    _ => unreachable!(),
                }
            }
            if rest.len() == before {
                let item = rest[0];
                let (name, target) = match &item.node {
                    InitItem::LocationFromLocation { name, source, .. } => (name, source),
                    InitItem::Alias { name, target, .. } => (name, target),
                    _ => unreachable!(),
                };
                return Err(Diagnostic::error(target.span, format!("`{}` refers to unknown location `{}`", name.node, target.node))
                    .with_note("declare the target location in the init block, e.g. `x=0;`"));
            }
            pending = rest;
        }
        Ok(())
    }

    /// herd7 and Dat3M give a location the init block does not declare the initial value 0: a
    /// name used as an address (of a load, store, atom/red or `[name]`), by a register's initial
    /// address, or by the condition or `locations`, that is neither declared nor a register of
    /// its thread, becomes a global 4-byte word initialised to 0, declared where first used.
    pub(super) fn declare_implicit(&mut self, test: &ast::LitmusTest) {
        let mut wanted: Vec<Spanned<String>> = Vec::new();
        // Each thread's register names, for a condition that names one without its thread.
        let mut thread_registers: Vec<(String, Vec<String>)> = Vec::new();
        for item in &test.init {
            if let InitItem::RegisterAddress { location, .. } = &item.node {
                wanted.push(location.clone());
            }
        }
        for t in 0..test.threads.len() {
            let stmts = test.column(t);
            // Names a thread writes, initialises or declares (`.reg`) are its registers.
            let id = test.threads.get(t).map(|h| (h.id.node, h.lane));
            let mut registers: Vec<&str> = test
                .init
                .iter()
                .filter_map(|i| match &i.node {
                    InitItem::Register { thread, lane, reg, .. } | InitItem::RegisterAddress { thread, lane, reg, .. }
                        if Some((thread.node, *lane)) == id =>
                    {
                        Some(reg.node.as_str())
                    }
                    _ => None,
                })
                .collect();
            for s in stmts {
                if let Statement::Decl(d) = &s.node {
                    registers.extend(d.names.iter().filter(|_| d.space.node == ast::DeclSpace::Reg).map(|n| n.name.node.as_str()));
                }
            }
            let instrs = || {
                stmts.iter().filter_map(|s| match &s.node {
                    Statement::Instr(i) => Some(i),
                    _ => None,
                })
            };
            for i in instrs().filter(|i| !matches!(i.opcode[0].node.as_str(), "st" | "sust" | "red" | "sured")) {
                if let Some(Operand::Name(n)) = i.operands.first().map(|o| &o.node) {
                    registers.push(n.as_str());
                }
            }
            thread_registers
                .push((test.threads.get(t).map_or(format!("P{t}"), |h| h.name()), registers.iter().map(|r| r.to_string()).collect()));
            for i in instrs() {
                let head = i.opcode[0].node.as_str();
                // Dat3M's bare `ld r, v` is a move of a value, not a load.
                let position = match head {
                    "ld" | "tld" | "suld" | "cold" if i.opcode.len() > 1 => Some(1),
                    "atom" | "suatom" => Some(1),
                    "st" | "sust" | "red" | "sured" => Some(0),
                    _ => None,
                };
                for (k, o) in i.operands.iter().enumerate() {
                    let name = match &o.node {
                        Operand::Address(inner, _) => match &inner.node {
                            Operand::Name(n) => Some(n),
                            _ => None,
                        },
                        Operand::Name(n) if Some(k) == position => Some(n),
                        _ => None,
                    };
                    if let Some(n) = name {
                        let span = match &o.node {
                            Operand::Address(inner, _) => inner.span,
                            _ => o.span,
                        };
                        if !is_register_shaped(n) && !registers.contains(&n.as_str()) {
                            wanted.push(Spanned { node: n.clone(), span });
                        }
                    }
                }
            }
        }
        fn cond_names(p: &Spanned<ast::Prop>, out: &mut Vec<Spanned<String>>) {
            match &p.node {
                ast::Prop::True | ast::Prop::False => {}
                ast::Prop::Not(q) => cond_names(q, out),
                ast::Prop::And(a, b) | ast::Prop::Or(a, b) => {
                    cond_names(a, out);
                    cond_names(b, out);
                }
                ast::Prop::Cmp(a, _, b) => {
                    for v in [a, b] {
                        if let CondValue::Location(n) = &v.node {
                            out.push(Spanned { node: n.clone(), span: v.span });
                        }
                    }
                }
            }
        }
        let from_code = wanted.len();
        if let Some(c) = &test.condition {
            cond_names(&c.prop, &mut wanted);
        }
        if let Some(f) = &test.filter {
            cond_names(f, &mut wanted);
        }
        for v in &test.locations {
            if let CondValue::Location(n) = &v.node {
                wanted.push(Spanned { node: n.clone(), span: v.span });
            }
        }
        // A kernel's memory is what it declares and binds: a condition naming anything else is
        // a misspelling, not a fresh zero-filled location that trivially keeps its value.
        // (Reported after the threads, so that an error in the code comes first.)
        if self.abstracts {
            for name in &wanted[from_code..] {
                let known = |n: &str| self.lookup(n).is_some() || self.instances.contains_key(n) || self.params.contains_key(n);
                let plain = name.node.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                if plain && !known(&name.node) && !wanted[..from_code].iter().any(|w| w.node == name.node) && self.condition_error.is_none()
                {
                    self.condition_error = Some(self.unknown_condition_name(name));
                }
            }
        }
        // A litmus condition may name a location no thread accesses (herd7 makes it a fresh word
        // that keeps its 0: a warning says so), but one that is a thread's register is a slip
        // (`r0` for `P0:r0`): the verdict would be about a word no thread can change.
        if !self.abstracts && self.condition_error.is_none() {
            for name in &wanted[from_code..] {
                let plain = name.node.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                let known =
                    self.lookup(&name.node).is_some() || self.instances.contains_key(&name.node) || self.params.contains_key(&name.node);
                if !plain || known || wanted[..from_code].iter().any(|w| w.node == name.node) {
                    continue;
                }
                let owners: Vec<String> = thread_registers
                    .iter()
                    .filter(|(_, regs)| regs.contains(&name.node))
                    .map(|(id, _)| format!("`{id}:{}`", name.node))
                    .collect();
                if owners.is_empty() {
                    // herd7's meaning, kept (tests rely on it), with a word that it is one.
                    self.warnings.push(
                        Diagnostic::warning(
                            name.span,
                            format!(
                                "the condition names `{}`, which no thread accesses and the init block does not declare: it is a fresh location that keeps its initial value 0",
                                name.node
                            ),
                        )
                        .with_note(format!("declare it in the init block (`{} = 0;`) to say it is meant", name.node)),
                    );
                    continue;
                }
                self.condition_error = Some(
                    Diagnostic::error(name.span, format!("the condition names `{}`, which is a register, not a location", name.node))
                        .with_note(format!("a register in a condition names its thread: did you mean {}?", owners.join(" or "))),
                );
                break;
            }
        }
        for name in wanted {
            // `s+4` names a word of a declared variable: never implicit.
            let plain = name.node.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && name.node.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
            let declared =
                self.lookup(&name.node).is_some() || self.instances.contains_key(&name.node) || self.params.contains_key(&name.node);
            if plain && !declared {
                let p = self.new_physical(0);
                // Cannot fail: the name is not declared.
                let _ = self.new_location(&name, p, None);
            }
        }
    }

    /// A kernel condition's name that is no variable, parameter or word of the kernel, with the
    /// names it may mean.
    fn unknown_condition_name(&self, name: &Spanned<String>) -> Diagnostic {
        let mut names: Vec<&str> = self.by_name.keys().chain(self.instances.keys()).chain(self.params.keys()).map(String::as_str).collect();
        names.extend(self.params.keys().map(|n| crate::program::unknown::short_parameter(n)));
        let close = |n: &&str| crate::diag::edit_distance(&name.node, n) <= 2.max(name.node.len() / 4);
        let mut near: Vec<&str> = names.iter().copied().filter(close).collect();
        near.sort_unstable();
        near.dedup();
        near.truncate(4);
        let d = Diagnostic::error(
            name.span,
            format!("the condition names `{}`, which is no variable, parameter or register of the kernel", name.node),
        );
        match near.as_slice() {
            [] => d.with_note("name a parameter (`param_0`, or a word of it: `param_0+8`), a variable the kernel declares, or a thread's register (`P0:%r1`)"),
            _ => d.with_note(format!("did you mean {}?", near.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(" or "))),
        }
    }
}

/// Give each word the type of the first typed access that names it statically, and store its
/// initial value at that type.
pub(super) fn type_words(program: &mut Program) {
    for t in &program.threads {
        for i in &t.code {
            let (ty, addr) = match &i.op {
                Op::Load { ty: Some(ty), addr, .. } | Op::Store { ty: Some(ty), addr, .. } | Op::Rmw { ty: Some(ty), addr, .. } => {
                    (*ty, addr)
                }
                _ => continue,
            };
            let Address::Location(l) = addr else { continue };
            let word = ty.with_bits(32);
            let words = if ty.bits == 64 { 2 } else { 1 };
            for k in 0..words {
                let Some(loc) = program.locations.get(l + k) else { continue };
                if loc.variable != program.locations[*l].variable || program.variables[loc.variable].kind == VariableKind::Mbarrier {
                    continue;
                }
                let p = &mut program.physical[loc.physical];
                if p.ty.is_none() {
                    p.ty = Some(word);
                    p.init = word.norm(p.init);
                }
            }
        }
    }
}
