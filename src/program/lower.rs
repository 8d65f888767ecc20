//! Lowering: syntax tree → [`Program`], giving every instruction its PTX meaning.
//!
//! Every rejection names the instruction or qualifier with its span, says what is accepted, and
//! never guesses: an instruction or qualifier the model does not cover is an error, not a no-op.

use super::*;
use crate::diag::{Diagnostic, Spanned};
use crate::litmus::ast::{self, CondValue, InitItem, Operand, Statement};
use std::collections::HashMap;

#[path = "lower_async.rs"]
mod async_ops;
#[path = "lower_tensor.rs"]
mod tensor_ops;

/// Lower a parsed litmus test.
pub fn lower(test: &ast::LitmusTest, source: &SourceFile) -> Result<Program, Diagnostic> {
    Lowerer {
        source,
        variables: Vec::new(),
        locations: Vec::new(),
        physical: Vec::new(),
        by_name: HashMap::new(),
        tensor_maps: Vec::new(),
        mapa_sites: Default::default(),
    }
    .run(test)
}

struct Lowerer<'a> {
    source: &'a SourceFile,
    variables: Vec<Variable>,
    locations: Vec<Location>,
    physical: Vec<PhysicalLocation>,
    by_name: HashMap<String, usize>,
    tensor_maps: Vec<TensorMap>,
    /// `mapa` instructions of the thread being lowered (code index, span): their result needs
    /// the cluster ranks, known once every thread is placed (`resolve_mapa`).
    mapa_sites: std::cell::RefCell<Vec<(usize, Span)>>,
}

/// Per-thread register bookkeeping during lowering.
#[derive(Default)]
struct RegTable {
    names: Vec<String>,
    index: HashMap<String, Reg>,
    init: HashMap<Reg, i64>,
    written: Vec<bool>,
    /// First read of each register, to report reads of registers that are never defined.
    first_read: HashMap<Reg, Span>,
    /// The type of the last instruction (in program text) writing each register: how a
    /// condition compares it.
    types: HashMap<Reg, Option<Ty>>,
}

impl RegTable {
    fn get(&mut self, name: &str) -> Reg {
        if let Some(r) = self.index.get(name) {
            return *r;
        }
        let r = self.names.len();
        self.names.push(name.to_string());
        self.index.insert(name.to_string(), r);
        self.written.push(false);
        r
    }

    fn def(&mut self, name: &str) -> Reg {
        let r = self.get(name);
        self.written[r] = true;
        r
    }

    fn set_type(&mut self, r: Reg, ty: Option<Ty>) {
        self.types.insert(r, ty);
    }

    fn use_(&mut self, name: &str, span: Span) -> Reg {
        let r = self.get(name);
        self.first_read.entry(r).or_insert(span);
        r
    }
}

/// Register spellings that are registers regardless of context: Dat3M's `r<digits>` and PTX `%name`.
fn is_register_shaped(name: &str) -> bool {
    name.len() > 1 && name.starts_with('r') && name[1..].chars().all(|c| c.is_ascii_digit())
}

const SUPPORTED: &str = "supported: ld, st, atom, red (and tld/suld/cold/sust/suatom/sured), fence.sc|acq_rel|acquire|release, \
membar, fence.proxy.<generic|surface|texture|constant|alias>, bar.cta.sync|arrive, bar.sync, barrier.sync, bra, goto, \
beq/bne/blt/bgt/ble/bge, mov, add, sub, mul, div, rem, and, or, xor, shl, shr, min, max, setp";

impl<'a> Lowerer<'a> {
    fn run(mut self, test: &ast::LitmusTest) -> Result<Program, Diagnostic> {
        if !test.arch.node.eq_ignore_ascii_case("ptx") {
            return Err(Diagnostic::expected(test.arch.span, "the architecture `PTX`", format!("`{}`", test.arch.node)));
        }
        // Threads, indexed by their header id.
        let mut thread_index: HashMap<usize, usize> = HashMap::new();
        for (i, h) in test.threads.iter().enumerate() {
            if thread_index.insert(h.id.node, i).is_some() {
                return Err(Diagnostic::error(h.id.span, format!("thread P{} is declared twice", h.id.node)));
            }
        }
        let mut regs: Vec<RegTable> = test.threads.iter().map(|_| RegTable::default()).collect();

        // Locations first (aliases may refer to locations declared later), then registers.
        self.declare_locations(&test.init)?;
        self.declare_tensor_maps(&test.init)?;
        self.declare_implicit(test);
        for item in &test.init {
            match &item.node {
                InitItem::Register { thread, reg, value } => {
                    let t = self.thread_of(&thread_index, thread)?;
                    let r = regs[t].get(&reg.node);
                    regs[t].init.insert(r, value.node);
                }
                InitItem::RegisterAddress { thread, reg, location } => {
                    let t = self.thread_of(&thread_index, thread)?;
                    let loc = self.location(location)?;
                    let r = regs[t].get(&reg.node);
                    regs[t].init.insert(r, self.address_of(loc));
                }
                _ => {}
            }
        }

        let mut threads = Vec::new();
        // A CTA (ids are per GPU, as in Dat3M) belongs to one cluster (PTX ISA §2.2.2).
        let mut seen: Vec<(Placement, &ast::ThreadHeader)> = Vec::new();
        for header in &test.threads {
            let p = self.placement(header)?;
            for (q, other) in &seen {
                if p.cta == q.cta && p.gpu == q.gpu && p.cluster != q.cluster {
                    return Err(Diagnostic::error(
                        header.span,
                        format!(
                            "P{} is in CTA {} of GPU {} like P{}, but in another cluster: a CTA belongs to one cluster",
                            header.id.node, p.cta, p.gpu, other.id.node
                        ),
                    )
                    .with_note(format!("P{} is `{}`", other.id.node, self.source.slice(other.span).trim()))
                    .with_note("give every thread of a CTA the same `cluster` (or none)"));
                }
            }
            seen.push((p, header));
        }
        let mut mapa = Vec::new();
        for (i, header) in test.threads.iter().enumerate() {
            let placement = self.placement(header)?;
            // Lanes (for `elect.sync`): the threads of a CTA, by id, in warps of 32 consecutive ones.
            let mut mates: Vec<usize> = test
                .threads
                .iter()
                .filter(|h| self.placement(h).is_ok_and(|q| q.cta == placement.cta && q.gpu == placement.gpu))
                .map(|h| h.id.node)
                .collect();
            mates.sort_unstable();
            let pos = mates.iter().position(|&m| m == header.id.node).unwrap_or(0);
            let in_warp = mates.iter().enumerate().filter(|(k, _)| k / 32 == pos / 32).fold(0u32, |acc, (k, _)| acc | 1 << (k % 32));
            let warp = Warp { lane: (pos % 32) as u32, lanes: in_warp };
            let code = self.lower_thread(&test.code[i], &mut regs[i], warp)?;
            mapa.extend(self.mapa_sites.borrow_mut().drain(..).map(|(k, span)| (i, k, span)));
            let table = &regs[i];
            for (r, span) in &table.first_read {
                if !table.written[*r] && !table.init.contains_key(r) {
                    return Err(Diagnostic::error(
                        *span,
                        format!("undefined register `{}` in thread P{}", table.names[*r], header.id.node),
                    )
                    .with_note(format!(
                        "initialise it in the init block (`P{}:{}=0;`) or write it before reading it",
                        header.id.node, table.names[*r]
                    )));
                }
            }
            let reg_init = (0..table.names.len()).map(|r| *table.init.get(&r).unwrap_or(&0)).collect();
            threads.push(Thread { id: header.id.node, placement, code, registers: table.names.clone(), reg_init, span: header.span });
        }

        let mut program = Program {
            name: test.name.node.clone(),
            source: self.source.clone(),
            variables: self.variables,
            locations: self.locations,
            physical: self.physical,
            threads,
            condition: Condition { quantifier: ast::Quantifier::Exists, prop: Prop::True, text: "true".into() },
            filter: None,
            extra_observables: Vec::new(),
            tensor_maps: self.tensor_maps,
        };
        resolve_mapa(&mut program, &mapa)?;
        type_words(&mut program);
        let reg_types: Vec<HashMap<Reg, Option<Ty>>> = regs.iter().map(|t| t.types.clone()).collect();
        let resolver = CondResolver { program: &program, thread_index: &thread_index, source: self.source, reg_types: &reg_types };
        let condition = match &test.condition {
            Some(c) => Condition { quantifier: c.quantifier.node, prop: resolver.prop(&c.prop)?, text: format_prop(&c.prop.node) },
            None => Condition { quantifier: ast::Quantifier::Exists, prop: Prop::True, text: "true".into() },
        };
        let filter = test.filter.as_ref().map(|f| resolver.prop(f)).transpose()?;
        let mut extra = Vec::new();
        for v in &test.locations {
            if let CondTerm::Obs(o) = resolver.value(v)? {
                extra.push(o);
            }
        }
        program.condition = condition;
        program.filter = filter;
        program.extra_observables = extra;
        Ok(program)
    }

    fn thread_of(&self, index: &HashMap<usize, usize>, t: &Spanned<usize>) -> Result<usize, Diagnostic> {
        index.get(&t.node).copied().ok_or_else(|| {
            Diagnostic::error(t.span, format!("unknown thread P{}", t.node))
                .with_note("threads are declared in the header row, e.g. `P0@cta 0,gpu 0`")
        })
    }

    fn location(&self, name: &Spanned<String>) -> Result<usize, Diagnostic> {
        self.by_name.get(&name.node).copied().ok_or_else(|| {
            Diagnostic::error(name.span, format!("unknown location `{}`", name.node)).with_note("declare it in the init block, e.g. `x=0;`")
        })
    }

    fn address_of(&self, loc: usize) -> i64 {
        address(self.locations[loc].variable, self.locations[loc].offset)
    }

    /// A scalar word variable (the Dat3M kind of location).
    fn new_location(&mut self, name: &Spanned<String>, physical: usize, generic: Option<usize>) -> Result<usize, Diagnostic> {
        if self.by_name.contains_key(&name.node) {
            return Err(Diagnostic::error(name.span, format!("location `{}` is declared twice", name.node)));
        }
        let idx = self.locations.len();
        let variable = self.variables.len();
        self.variables.push(Variable {
            name: name.node.clone(),
            size: 4,
            space: Space::Global,
            align: 4,
            kind: VariableKind::Data,
            first_location: idx,
            span: name.span,
        });
        self.locations.push(Location {
            name: name.node.clone(),
            variable,
            offset: 0,
            physical,
            generic: generic.unwrap_or(idx),
            span: name.span,
        });
        self.by_name.insert(name.node.clone(), idx);
        Ok(idx)
    }

    /// A declared variable: one location per 4-byte word (`s`, `s+4`, ...), or one location for
    /// an mbarrier.
    fn declare_variable(&mut self, d: &ast::VariableDecl) -> Result<(), Diagnostic> {
        let name = &d.name;
        if self.by_name.contains_key(&name.node) {
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
                    if c > crate::program::mbarrier::MAX_COUNT {
                        return Err(Diagnostic::error(
                            m.span,
                            format!("mbarrier count {c} is larger than ptxmm tracks ({})", crate::program::mbarrier::MAX_COUNT),
                        )
                        .with_note("litmus tests need few arrivals; use a smaller count"));
                    }
                }
                (VariableKind::Mbarrier, 8)
            }
            None => {
                let size = d.size.as_ref().map(|s| s.node).unwrap_or(4);
                if size <= 0 || size % 4 != 0 || size > 4096 {
                    let span = d.size.as_ref().map(|s| s.span).unwrap_or(name.span);
                    return Err(Diagnostic::expected(span, "a size in bytes that is a positive multiple of 4, at most 4096", size));
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
        let variable = self.variables.len();
        let first = self.locations.len();
        self.variables.push(Variable { name: name.node.clone(), size, space, align, kind, first_location: first, span: name.span });
        for (w, value) in values.into_iter().enumerate() {
            let word_name = if w == 0 { name.node.clone() } else { format!("{}+{}", name.node, w * 4) };
            let p = self.new_physical(&word_name, value);
            let idx = self.locations.len();
            self.locations.push(Location {
                name: word_name.clone(),
                variable,
                offset: w as i64 * 4,
                physical: p,
                generic: idx,
                span: name.span,
            });
            self.by_name.insert(word_name, idx);
        }
        Ok(())
    }

    fn new_physical(&mut self, name: &str, init: i64) -> usize {
        self.physical.push(PhysicalLocation { name: name.to_string(), init, ty: None });
        self.physical.len() - 1
    }

    fn declare_locations(&mut self, init: &[Spanned<InitItem>]) -> Result<(), Diagnostic> {
        // Plain locations first, so that later items may copy or alias them in any order.
        for item in init {
            match &item.node {
                InitItem::Location { name, value } => {
                    let p = self.new_physical(&name.node, value.node);
                    self.new_location(name, p, None)?;
                }
                InitItem::Variable(d) => self.declare_variable(d)?,
                _ => {}
            }
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
                let Some(&t) = self.by_name.get(&target.node) else {
                    rest.push(item);
                    continue;
                };
                match &item.node {
                    InitItem::LocationFromLocation { name, address_of, .. } => {
                        // `y = x` copies x's initial value (Dat3M); `y = &x` stores x's address.
                        let value = if *address_of { self.address_of(t) } else { self.physical[self.locations[t].physical].init };
                        let p = self.new_physical(&name.node, value);
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
    fn declare_implicit(&mut self, test: &ast::LitmusTest) {
        let mut wanted: Vec<Spanned<String>> = Vec::new();
        for item in &test.init {
            if let InitItem::RegisterAddress { location, .. } = &item.node {
                wanted.push(location.clone());
            }
        }
        for (t, stmts) in test.code.iter().enumerate() {
            // Names a thread writes or initialises are its registers.
            let id = test.threads.get(t).map(|h| h.id.node);
            let mut registers: Vec<&str> = test
                .init
                .iter()
                .filter_map(|i| match &i.node {
                    InitItem::Register { thread, reg, .. } | InitItem::RegisterAddress { thread, reg, .. } if Some(thread.node) == id => {
                        Some(reg.node.as_str())
                    }
                    _ => None,
                })
                .collect();
            let instrs = || {
                stmts.iter().filter_map(|s| match &s.node {
                    Statement::Instr(i) => Some(i),
                    Statement::Label(_) => None,
                })
            };
            for i in instrs().filter(|i| !matches!(i.opcode[0].node.as_str(), "st" | "sust" | "red" | "sured")) {
                if let Some(Operand::Name(n)) = i.operands.first().map(|o| &o.node) {
                    registers.push(n.as_str());
                }
            }
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
        for name in wanted {
            // `s+4` names a word of a declared variable: never implicit.
            let plain = name.node.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && name.node.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
            if plain && !self.by_name.contains_key(&name.node) {
                let p = self.new_physical(&name.node, 0);
                // Cannot fail: the name is not declared.
                let _ = self.new_location(&name, p, None);
            }
        }
    }

    fn placement(&self, header: &ast::ThreadHeader) -> Result<Placement, Diagnostic> {
        let mut p = Placement { cta: 0, cluster: 0, gpu: 0 };
        let mut cluster = None;
        for (level, id) in &header.placement {
            match level.node.as_str() {
                "cta" => p.cta = id.node,
                "gpu" => p.gpu = id.node,
                "cluster" => cluster = Some(id.node),
                other => return Err(Diagnostic::expected(level.span, "a placement level `cta`, `cluster` or `gpu`", format!("`{other}`"))),
            }
        }
        // Without an explicit cluster, each CTA is its own cluster: derive a cluster id that no
        // explicit id (they are non-negative) can collide with.
        p.cluster = cluster.unwrap_or(-1 - p.cta);
        Ok(p)
    }

    fn lower_thread(&self, stmts: &[Spanned<Statement>], regs: &mut RegTable, warp: Warp) -> Result<Vec<Instr>, Diagnostic> {
        // Labels map to the index of the next instruction.
        let mut labels: HashMap<&str, usize> = HashMap::new();
        let mut n = 0;
        for s in stmts {
            match &s.node {
                Statement::Label(l) => {
                    if labels.insert(l.as_str(), n).is_some() {
                        return Err(Diagnostic::error(s.span, format!("label `{l}` is defined twice in this thread")));
                    }
                }
                Statement::Instr(i) => n += width(i) + usize::from(guarded(i)),
            }
        }
        let mut code = Vec::new();
        for s in stmts {
            if let Statement::Instr(i) = &s.node {
                let (line, _) = self.source.line_col(s.span.start);
                let text = self.source.slice(s.span).trim().to_string();
                if let (true, Some((p, negated))) = (guarded(i), &i.guard) {
                    // `@p instr` is a branch over the instruction when p is zero (`@!p`: non-zero),
                    // as `@!p bra` is lowered (PTX ISA §9.7.1: a guarded instruction executes only
                    // when its predicate holds).
                    let r = regs.use_(&p.node, p.span);
                    let skip = if *negated { ast::CmpOp::Ne } else { ast::CmpOp::Eq };
                    let op = Op::Branch { cond: Some((skip, Value::Reg(r), Value::Const(0))), target: code.len() + 1 + width(i) };
                    code.push(Instr { op, span: s.span, text: text.clone(), line });
                }
                if i.opcode[0].node == "elect" {
                    for mut op in self.elect(i, s.span, regs, warp)? {
                        if let Op::Branch { target, .. } = &mut op {
                            *target = code.len() + 1;
                        }
                        code.push(Instr { op, span: s.span, text: text.clone(), line });
                    }
                    continue;
                }
                let op = InstrLowerer { l: self, regs, labels: &labels, instr: i, span: s.span, policy: false }.lower()?;
                if i.opcode[0].node == "mapa" {
                    self.mapa_sites.borrow_mut().push((code.len(), s.span));
                }
                code.push(Instr { op, span: s.span, text, line });
            }
        }
        Ok(code)
    }
}

/// A cache qualifier of `ld`, `st`, `atom` or `red` (the PTX ISA sections of those instructions):
/// `.L1::evict_*`, `.L1::no_allocate`, `.L2::evict_*`, `.L2::cache_hint` and the prefetch sizes
/// `.L2::64B|128B|256B`; none has a memory effect.
fn is_cache_hint(q: &str) -> bool {
    matches!(
        q,
        "L1::evict_normal"
            | "L1::evict_unchanged"
            | "L1::evict_first"
            | "L1::evict_last"
            | "L1::no_allocate"
            | "L2::evict_normal"
            | "L2::evict_first"
            | "L2::evict_last"
            | "L2::evict_unchanged"
            | "L2::cache_hint"
            | "L2::64B"
            | "L2::128B"
            | "L2::256B"
    )
}

/// Whether an instruction has a guard that lowering turns into a branch around it (`bra` takes
/// its guard as its condition).
fn guarded(i: &ast::Instruction) -> bool {
    i.guard.is_some() && i.opcode[0].node != "bra"
}

/// Where a thread sits in its warp: ptxmm has no warps of its own, so the threads of one CTA,
/// ordered by id, form warps of 32 consecutive threads (lane = position mod 32). `lanes` has a
/// bit for each lane of this thread's warp that some thread of the test occupies.
#[derive(Clone, Copy, Debug)]
struct Warp {
    lane: u32,
    lanes: u32,
}

/// How many lowered instructions an instruction becomes (not counting a guard's branch).
fn width(i: &ast::Instruction) -> usize {
    match (i.opcode[0].node.as_str(), i.operands.first().map(|o| &o.node)) {
        ("elect", Some(Operand::Vector(v))) => v.iter().filter(|o| o.node != Operand::Sink).count().max(1),
        _ => 1,
    }
}

impl Lowerer<'_> {
    /// `elect.sync d|p, membermask` (PTX ISA, `elect.sync`; the section is not in the seed): the
    /// leader is the lowest lane of this thread's warp that membermask selects and a thread of the
    /// test occupies; `d` gets its lane id, `p` is 1 in the leader only. membermask must be a
    /// constant that selects this thread's own lane.
    fn elect(&self, i: &ast::Instruction, span: Span, regs: &mut RegTable, warp: Warp) -> Result<Vec<Op>, Diagnostic> {
        let parts: Vec<&str> = i.opcode.iter().map(|p| p.node.as_str()).collect();
        if parts != ["elect", "sync"] {
            return Err(Diagnostic::expected(i.opcode_span(), "`elect.sync`", format!("`{}`", i.mnemonic())));
        }
        let [dp, mask] = i.operands.as_slice() else {
            return Err(Diagnostic::expected(span, "2 operands for `elect.sync` (d|p, membermask)", i.operands.len()));
        };
        let Operand::Vector(dests) = &dp.node else {
            return Err(Diagnostic::expected(dp.span, "`d|p` (a destination, `|`, a predicate; `_` for either)", describe(&dp.node)));
        };
        let Operand::Int(m) = mask.node else {
            return Err(Diagnostic::expected(mask.span, "a constant membermask", describe(&mask.node)));
        };
        let m = m as u32;
        if m & (1 << warp.lane) == 0 {
            return Err(Diagnostic::error(
                mask.span,
                format!(
                    "membermask {m:#x} does not select this thread's lane {} (PTX ISA: the executing thread must be in membermask)",
                    warp.lane
                ),
            )
            .with_note("ptxmm's lanes: the threads of one CTA, ordered by id, in warps of 32 consecutive threads"));
        }
        let leader = (m & warp.lanes).trailing_zeros() as i64;
        let mut ops = Vec::new();
        for (k, o) in dests.iter().enumerate() {
            let name = match &o.node {
                Operand::Sink => continue,
                Operand::Name(n) | Operand::PercentName(n) => n,
                other => return Err(Diagnostic::expected(o.span, "a destination register or `_`", describe(other))),
            };
            let value = if k == 0 { leader } else { i64::from(leader == i64::from(warp.lane)) };
            ops.push(Op::Local { dst: regs.def(name), op: LocalOp::Mov, a: Value::Const(value), b: Value::Const(0), ty: None });
        }
        if ops.is_empty() {
            // `elect.sync _|_, m`: nothing observable; a jump to the next instruction (the
            // caller sets the target).
            ops.push(Op::Branch { cond: None, target: 0 });
        }
        Ok(ops)
    }
}

/// `mapa`: the address at the same CTA-relative offset in the shared memory of the CTA of the
/// given rank in the executing thread's cluster (`Program::cta_of_rank`, `same_offset_in_cta`).
/// Lowering left `mov d, <address>, <rank>`; this puts the mapped address in its place.
fn resolve_mapa(program: &mut Program, sites: &[(usize, usize, Span)]) -> Result<(), Diagnostic> {
    for &(t, k, span) in sites {
        let Op::Local { a: Value::Const(addr), b: Value::Const(rank), .. } = program.threads[t].code[k].op else { continue };
        let cluster = program.threads[t].placement.cluster;
        let Some(cta) = program.cta_of_rank(cluster, rank) else {
            return Err(Diagnostic::error(span, format!("`mapa`: the cluster of P{} has no CTA of rank {rank}", program.threads[t].id))
                .with_note("a cluster's CTAs are those of its threads and shared variables, ranked by CTA id"));
        };
        let Some(mapped) = program.same_offset_in_cta(addr, cta) else {
            return Err(Diagnostic::error(
                span,
                format!("`mapa`: CTA {cta} (rank {rank}) has no shared variable at the CTA-relative offset of this address"),
            )
            .with_note(
                "mapa maps a shared-memory address; declare the variable in every CTA (`s[16] @ shared cta N;`) in the same order",
            ));
        };
        if let Op::Local { a, b, .. } = &mut program.threads[t].code[k].op {
            *a = Value::Const(mapped);
            *b = Value::Const(0);
        }
    }
    Ok(())
}

/// Qualifier parsing helpers over the opcode parts after the mnemonic.
struct Quals<'q> {
    parts: &'q [Spanned<String>],
    used: Vec<bool>,
}

impl<'q> Quals<'q> {
    fn new(parts: &'q [Spanned<String>]) -> Self {
        Quals { parts, used: vec![false; parts.len()] }
    }

    /// Take the first unused qualifier that is in `set`.
    fn take(&mut self, set: &[&str]) -> Option<(&'q str, Span)> {
        for (i, p) in self.parts.iter().enumerate() {
            if !self.used[i] && set.contains(&p.node.as_str()) {
                self.used[i] = true;
                return Some((p.node.as_str(), p.span));
            }
        }
        None
    }

    fn take_all(&mut self, set: &[&str]) {
        while self.take(set).is_some() {}
    }

    /// Error on the first qualifier nobody consumed.
    fn finish(&self, mnemonic: &str, accepted: &str) -> Result<(), Diagnostic> {
        for (i, p) in self.parts.iter().enumerate() {
            if !self.used[i] {
                return Err(Diagnostic::error(p.span, format!("unsupported qualifier `.{}` on `{mnemonic}`", p.node))
                    .with_note(format!("accepted qualifiers: {accepted}")));
            }
        }
        Ok(())
    }
}

const TYPES: &[&str] = &["b8", "b16", "b32", "b64", "u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64", "f16", "bf16", "f32", "f64"];
const SPACES: &[&str] = &["global", "shared", "shared::cta", "shared::cluster", "generic"];

struct InstrLowerer<'l, 'a> {
    l: &'l Lowerer<'a>,
    regs: &'l mut RegTable,
    labels: &'l HashMap<&'l str, usize>,
    instr: &'l ast::Instruction,
    span: Span,
    /// `.L2::cache_hint` on ld/st/atom/red: the last operand is the cache policy, a hint that
    /// `operands` leaves out.
    policy: bool,
}

impl<'l> InstrLowerer<'l, '_> {
    fn mnemonic(&self) -> String {
        self.instr.mnemonic()
    }

    /// Element types: vector accesses are split into 32-bit elements, whatever their type.
    fn word_type(&self, q: &mut Quals) -> Result<(), Diagnostic> {
        q.take_all(TYPES);
        Ok(())
    }

    /// The instruction's type (`.u32`, `.s64`, `.f32`, ...), None when it names none (Dat3M's
    /// untyped spelling). A second type is an error.
    fn one_type(&self, q: &mut Quals) -> Result<Option<(Ty, Span)>, Diagnostic> {
        let Some((t, span)) = q.take(TYPES) else { return Ok(None) };
        if let Some((u, span2)) = q.take(TYPES) {
            return Err(Diagnostic::error(span2, format!("`{}` has two types, `.{t}` and `.{u}`", self.mnemonic()))
                .with_note("name one type: .u32, .s32, .b64, .f32, ..."));
        }
        Ok(Ty::parse(t).map(|ty| (ty, span)))
    }

    /// The type of a memory access: 32 or 64 bits (locations are 4-byte words; a 64-bit access
    /// is two of them), or none.
    fn access_type(&self, q: &mut Quals) -> Result<Option<Ty>, Diagnostic> {
        let Some((ty, span)) = self.one_type(q)? else { return Ok(None) };
        if ty.bits < 32 {
            return Err(Diagnostic::error(span, format!("`{}` is a {}-bit access, which ptxmm does not model", self.mnemonic(), ty.bits))
                .with_note("locations are 4-byte words: use a 32-bit (.u32, .s32, .b32, .f32) or 64-bit type"));
        }
        Ok(Some(ty))
    }

    fn operands(&self, n: usize, shape: &str) -> Result<&'l [Spanned<Operand>], Diagnostic> {
        let ops: &'l [Spanned<Operand>] = &self.instr.operands;
        let ops = if self.policy { &ops[..ops.len().saturating_sub(1)] } else { ops };
        if ops.len() != n {
            let span = if ops.len() > n { ops[n].span } else { self.span };
            return Err(Diagnostic::expected(
                span,
                format!("{n} operand(s) for `{}` ({shape})", self.mnemonic()),
                format!("{}", ops.len()),
            ));
        }
        Ok(ops)
    }

    fn dest_reg(&mut self, op: &Spanned<Operand>) -> Result<Reg, Diagnostic> {
        match &op.node {
            Operand::Name(n) if !self.l.by_name.contains_key(n) || is_register_shaped(n) => Ok(self.regs.def(n)),
            Operand::PercentName(n) => Ok(self.regs.def(n)),
            other => Err(Diagnostic::expected(op.span, "a destination register", describe(other))),
        }
    }

    fn value(&mut self, op: &Spanned<Operand>) -> Result<Value, Diagnostic> {
        match &op.node {
            Operand::Int(v) => Ok(Value::Const(*v)),
            Operand::PercentName(n) => Ok(Value::Reg(self.regs.use_(n, op.span))),
            Operand::Name(n) if is_register_shaped(n) || self.regs.index.contains_key(n) => Ok(Value::Reg(self.regs.use_(n, op.span))),
            Operand::Name(n) | Operand::AddressOf(n) if self.l.by_name.contains_key(n) => {
                Ok(Value::Const(self.l.address_of(self.l.by_name[n])))
            }
            Operand::Name(n) => Err(Diagnostic::error(op.span, format!("undefined register `{n}`"))
                .with_note("registers are `r<N>` or `%name`, or names initialised in the init block")),
            other => Err(Diagnostic::expected(op.span, "a register or an integer constant", describe(other))),
        }
    }

    /// An operand of a typed instruction: constants are normalized to the type.
    fn typed_value(&mut self, op: &Spanned<Operand>, ty: Option<Ty>) -> Result<Value, Diagnostic> {
        // A decimal float (`1.5`) for a float-typed instruction: its bit pattern.
        if let (Operand::Name(n), Some(t)) = (&op.node, ty) {
            if let Some(bits) = t.decimal_literal(n) {
                return Ok(Value::Const(bits));
            }
        }
        Ok(match (self.value(op)?, ty) {
            (Value::Const(c), Some(t)) => Value::Const(t.norm(c)),
            (v, _) => v,
        })
    }

    fn address(&mut self, op: &Spanned<Operand>) -> Result<Address, Diagnostic> {
        let (inner, offset) = match &op.node {
            Operand::Address(inner, off) => (inner.as_ref(), *off),
            _ => (op, 0),
        };
        match &inner.node {
            Operand::Name(n) if self.l.by_name.contains_key(n) => {
                let loc = self.l.by_name[n];
                if offset == 0 {
                    return Ok(Address::Location(loc));
                }
                let l = &self.l.locations[loc];
                let var = &self.l.variables[l.variable];
                let byte = l.offset + offset;
                if byte < 0 || byte >= var.size || byte % 4 != 0 || var.kind == VariableKind::Mbarrier {
                    return Err(Diagnostic::error(
                        op.span,
                        format!("`{n}{offset:+}` is not a word of `{}` ({} bytes)", var.name, var.size),
                    )
                    .with_note("offsets are byte offsets of 4-byte words inside the variable: 0, 4, 8, ..."));
                }
                Ok(Address::Location(var.first_location + (byte / 4) as usize))
            }
            Operand::Name(n) if is_register_shaped(n) || self.regs.index.contains_key(n) => {
                Ok(Address::Reg(self.regs.use_(n, inner.span), offset))
            }
            Operand::PercentName(n) => Ok(Address::Reg(self.regs.use_(n, inner.span), offset)),
            Operand::Name(n) => {
                Err(Diagnostic::error(inner.span, format!("unknown location `{n}`")).with_note("declare it in the init block, e.g. `x=0;`"))
            }
            other => Err(Diagnostic::expected(inner.span, "a location or an address register", describe(other))),
        }
    }

    fn label(&self, op: &Spanned<Operand>) -> Result<usize, Diagnostic> {
        match &op.node {
            Operand::Name(n) => self
                .labels
                .get(n.as_str())
                .copied()
                .ok_or_else(|| Diagnostic::error(op.span, format!("unknown label `{n}` in this thread"))),
            other => Err(Diagnostic::expected(op.span, "a label", describe(other))),
        }
    }

    fn scope(&self, q: &mut Quals, required: bool, what: &str) -> Result<Option<Scope>, Diagnostic> {
        if let Some((s, _)) = q.take(&["cta", "gpu", "sys", "cluster", "gl"]) {
            return Ok(Some(match s {
                "cta" => Scope::Cta,
                "cluster" => Scope::Cluster,
                "gpu" | "gl" => Scope::Gpu,
                _ => Scope::Sys,
            }));
        }
        if required {
            // A leftover qualifier that is neither a state space nor a type is a misspelt scope.
            let stray = q
                .parts
                .iter()
                .enumerate()
                .find(|(i, p)| !q.used[*i] && !SPACES.contains(&p.node.as_str()) && !TYPES.contains(&p.node.as_str()));
            if let Some((_, p)) = stray {
                return Err(Diagnostic::expected(p.span, "a scope (.cta, .cluster, .gpu or .sys)", format!("`.{}`", p.node)));
            }
            return Err(Diagnostic::error(self.instr.opcode_span(), format!("{what} requires a scope"))
                .with_note("add one of .cta, .cluster, .gpu, .sys"));
        }
        Ok(None)
    }

    fn lower(mut self) -> Result<Op, Diagnostic> {
        let parts = &self.instr.opcode;
        let head = parts[0].node.clone();
        // Cache hints of ordinary accesses have no memory effect (PTX ISA, `ld`/`st`: a hint): they are
        // dropped here, and `.L2::cache_hint`'s cache-policy operand (last) is read and ignored.
        let unhinted: Vec<Spanned<String>>;
        let mut rest = &parts[1..];
        if matches!(head.as_str(), "ld" | "st" | "atom" | "red") {
            unhinted = rest.iter().filter(|p| !is_cache_hint(&p.node)).cloned().collect();
            if rest.iter().any(|p| p.node == "L2::cache_hint") {
                let Some(last) = self.instr.operands.last() else {
                    return Err(Diagnostic::error(self.span, "`.L2::cache_hint` needs a cache-policy operand, last"));
                };
                self.value(last)?;
                self.policy = true;
            }
            rest = &unhinted;
        }
        match head.as_str() {
            "createpolicy" => self.createpolicy(rest),
            "mapa" => self.mapa(rest),
            "ld" | "tld" | "suld" | "cold" => self.load(&head, rest),
            "st" | "red" if rest.first().is_some_and(|p| p.node == "async") => Err(Diagnostic::error(
                self.instr.opcode_span(),
                format!("`{}` is not supported by this version of ptxmm", self.mnemonic()),
            )
            .with_note("st.async and red.async (remote shared-memory stores with an mbarrier) are not modelled; see docs/async-model.md")),
            "st" | "sust" => self.store(&head, rest),
            "atom" | "suatom" | "red" | "sured" => self.rmw(&head, rest),
            "fence" => self.fence(rest),
            "membar" => self.membar(rest),
            "bar" | "barrier" => self.barrier(&head, rest),
            "beq" | "bne" | "blt" | "bgt" | "ble" | "bge" => self.cond_branch(&head, rest),
            "goto" | "bra" => self.jump(rest),
            "mov" | "add" | "sub" | "mul" | "div" | "rem" | "and" | "or" | "xor" | "shl" | "shr" | "min" | "max" => self.local(&head, rest),
            "setp" => self.setp(rest),
            "cp" => self.async_copy(rest),
            "mbarrier" => self.mbarrier(rest),
            "wgmma" => self.wgmma(rest),
            "tcgen05" | "cp.async.bulk.tensor" => Err(Diagnostic::error(
                self.instr.opcode_span(),
                format!("`{}` is not supported by this version of ptxmm", self.mnemonic()),
            )
            .with_note("ptxmm models cp.async, cp.async.bulk, cp.reduce.async.bulk, mbarrier and the shared-memory reads of wgmma; tcgen05 is out of scope (docs/async-model.md)")),
            _ => {
                Err(Diagnostic::error(self.instr.opcode_span(), format!("unsupported instruction `{}`", self.mnemonic()))
                    .with_note(SUPPORTED))
            }
        }
    }

    fn proxy_of(head: &str) -> Proxy {
        match head {
            "tld" => Proxy::Texture,
            "suld" | "sust" | "suatom" | "sured" => Proxy::Surface,
            "cold" => Proxy::Constant,
            _ => Proxy::Generic,
        }
    }

    fn access_sem(&self, q: &mut Quals, allowed: &[&str], what: &str) -> Result<(Sem, Option<Scope>), Diagnostic> {
        let sem = match q.take(&["weak", "relaxed", "acquire", "release", "volatile", "acq_rel", "sc", "mmio"]) {
            None => None,
            Some((s, span)) => {
                if !allowed.contains(&s) {
                    return Err(Diagnostic::error(span, format!("{what} does not support `.{s}`"))
                        .with_note(format!("accepted: {}", allowed.iter().map(|a| format!(".{a}")).collect::<Vec<_>>().join(", "))));
                }
                if s == "mmio" {
                    return Err(Diagnostic::error(span, "`.mmio` is not supported by this version of ptxmm"));
                }
                Some((s, span))
            }
        };
        match sem {
            None | Some(("weak", _)) => {
                if let Some((s, span)) = q.take(&["cta", "gpu", "sys", "cluster", "gl"]) {
                    return Err(Diagnostic::error(span, format!("a weak {what} takes no scope, found `.{s}`"))
                        .with_note("use .relaxed or a stronger semantics with a scope"));
                }
                Ok((Sem::Weak, None))
            }
            // `.volatile` is `.relaxed.sys` (PTX ISA §8.4.2).
            Some(("volatile", _)) => Ok((Sem::Relaxed, Some(Scope::Sys))),
            Some((s, _)) => {
                let sem = match s {
                    "relaxed" => Sem::Relaxed,
                    "acquire" => Sem::Acquire,
                    "release" => Sem::Release,
                    _ => Sem::AcqRel,
                };
                let scope = self.scope(q, true, &format!("a .{s} {what}"))?;
                Ok((sem, scope))
            }
        }
    }

    fn load(&mut self, head: &str, rest: &[Spanned<String>]) -> Result<Op, Diagnostic> {
        let ops = self.operands(2, "destination register, address")?;
        // Dat3M's `ld rD, v` with a constant or register operand is a register move.
        if head == "ld" && rest.is_empty() {
            let is_value = match &ops[1].node {
                Operand::Int(_) | Operand::PercentName(_) => true,
                Operand::Name(n) => !self.l.by_name.contains_key(n),
                _ => false,
            };
            if is_value {
                let a = self.value(&ops[1])?;
                let dst = self.dest_reg(&ops[0])?;
                self.regs.set_type(dst, None);
                return Ok(Op::Local { dst, op: LocalOp::Mov, ty: None, a, b: Value::Const(0) });
            }
        }
        let mut q = Quals::new(rest);
        let (sem, scope) = self.access_sem(&mut q, &["weak", "relaxed", "acquire", "volatile"], "load")?;
        let space = space_of(&mut q);
        let vector = q.take(&["v2", "v4", "v8"]);
        let ty = if vector.is_some() {
            self.word_type(&mut q)?;
            None
        } else {
            self.access_type(&mut q)?
        };
        q.finish(head, ".weak/.relaxed/.acquire/.volatile, a scope, a state space (.global, .shared), a type (.u32, .b32, ...)")?;
        let addr = self.address(&ops[1])?;
        if let Some((v, span)) = vector {
            let n = vector_len(v, span, head)?;
            let Operand::Vector(items) = &ops[0].node else {
                return Err(Diagnostic::expected(
                    ops[0].span,
                    format!("a vector of {n} destination registers `{{a, b, ...}}`"),
                    describe(&ops[0].node),
                ));
            };
            if items.len() != n {
                return Err(Diagnostic::expected(ops[0].span, format!("{n} registers for `.{v}`"), items.len()));
            }
            let dsts = items.iter().map(|o| self.dest_reg(o)).collect::<Result<Vec<_>, _>>()?;
            return Ok(Op::LoadVector { dsts, addr, sem, scope, space });
        }
        let dst = self.dest_reg(&ops[0])?;
        self.regs.set_type(dst, ty);
        Ok(Op::Load { dst, ty, addr, sem, scope, proxy: Self::proxy_of(head), space })
    }

    fn store(&mut self, head: &str, rest: &[Spanned<String>]) -> Result<Op, Diagnostic> {
        let ops = self.operands(2, "address, value")?;
        let mut q = Quals::new(rest);
        let (sem, scope) = self.access_sem(&mut q, &["weak", "relaxed", "release", "volatile"], "store")?;
        let space = space_of(&mut q);
        let vector = q.take(&["v2", "v4", "v8"]);
        let ty = if vector.is_some() {
            self.word_type(&mut q)?;
            None
        } else {
            self.access_type(&mut q)?
        };
        q.finish(head, ".weak/.relaxed/.release/.volatile, a scope, a state space (.global, .shared), a type (.u32, .b32, ...)")?;
        let addr = self.address(&ops[0])?;
        if let Some((v, span)) = vector {
            let n = vector_len(v, span, head)?;
            let Operand::Vector(items) = &ops[1].node else {
                return Err(Diagnostic::expected(ops[1].span, format!("a vector of {n} values `{{a, b, ...}}`"), describe(&ops[1].node)));
            };
            if items.len() != n {
                return Err(Diagnostic::expected(ops[1].span, format!("{n} values for `.{v}`"), items.len()));
            }
            let values = items.iter().map(|o| self.value(o)).collect::<Result<Vec<_>, _>>()?;
            return Ok(Op::StoreVector { addr, values, sem, scope, space });
        }
        let value = self.typed_value(&ops[1], ty)?;
        Ok(Op::Store { ty, addr, value, sem, scope, proxy: Self::proxy_of(head), space })
    }

    fn rmw(&mut self, head: &str, rest: &[Spanned<String>]) -> Result<Op, Diagnostic> {
        let is_red = head == "red" || head == "sured";
        let mut q = Quals::new(rest);
        let sem_allowed: &[&str] =
            if is_red { &["relaxed", "release", "acquire", "acq_rel"] } else { &["relaxed", "acquire", "release", "acq_rel"] };
        let sem = match q.take(&["relaxed", "acquire", "release", "acq_rel", "weak", "sc", "volatile"]) {
            None => Sem::Relaxed,
            Some((s, span)) if sem_allowed.contains(&s) => match s {
                "relaxed" => Sem::Relaxed,
                "acquire" => Sem::Acquire,
                "release" => Sem::Release,
                _ => {
                    let _ = span;
                    Sem::AcqRel
                }
            },
            Some((s, span)) => {
                return Err(Diagnostic::error(span, format!("`{head}` does not support `.{s}`"))
                    .with_note("accepted: .relaxed, .acquire, .release, .acq_rel"))
            }
        };
        // atom/red default to .gpu scope (PTX ISA §9.7.13.5).
        let scope = self.scope(&mut q, false, head)?.unwrap_or(Scope::Gpu);
        let space = space_of(&mut q);
        let ty = self.one_type(&mut q)?;
        let ops_names = ["add", "sub", "mul", "div", "and", "or", "xor", "min", "max", "inc", "dec", "exch", "cas"];
        let Some((opname, opspan)) = q.take(&ops_names) else {
            return Err(Diagnostic::error(self.instr.opcode_span(), format!("`{}` needs an operation", self.mnemonic()))
                .with_note("one of .add .sub .mul .div .and .or .xor .min .max .inc .dec .exch .cas"));
        };
        q.finish(head, ".relaxed/.acquire/.release/.acq_rel, a scope, a state space, a type, and one operation")?;
        // `opname` is one of the qualifiers taken above.
        let op = RmwOp::from_name(opname).unwrap_or(RmwOp::Cas);
        if is_red && matches!(op, RmwOp::Exch | RmwOp::Cas) {
            return Err(Diagnostic::error(opspan, format!("`red` has no `.{opname}` form"))
                .with_note("use `atom` for exchange and compare-and-swap"));
        }
        if let Some((t, span)) = ty {
            if t.bits != 32 {
                return Err(Diagnostic::error(
                    span,
                    format!("`{}` is a {}-bit atomic, which ptxmm does not model", self.mnemonic(), t.bits),
                )
                .with_note("atom and red are modelled on one 4-byte word: use .u32, .s32, .b32 or .f32 (64-bit ld/st are supported)"));
            }
            if matches!(op, RmwOp::Inc | RmwOp::Dec) && t != Ty::U32 {
                return Err(Diagnostic::error(span, format!("`.{opname}` is defined only for `.u32`, found `.{}`", t.name())));
            }
        }
        let ty = ty.map(|(t, _)| t);
        let n_values = if op == RmwOp::Cas { 2 } else { 1 };
        let proxy = Self::proxy_of(head);
        if is_red {
            let ops = self.operands(1 + n_values, "address, value")?;
            let addr = self.address(&ops[0])?;
            let operands = ops[1..].iter().map(|o| self.typed_value(o, ty)).collect::<Result<Vec<_>, _>>()?;
            Ok(Op::Rmw { dst: None, ty, addr, op, operands, sem, scope, proxy, space })
        } else {
            let ops = self.operands(
                2 + n_values,
                if op == RmwOp::Cas { "destination, address, compare, new" } else { "destination, address, value" },
            )?;
            let addr = self.address(&ops[1])?;
            let operands = ops[2..].iter().map(|o| self.typed_value(o, ty)).collect::<Result<Vec<_>, _>>()?;
            let dst = self.dest_reg(&ops[0])?;
            self.regs.set_type(dst, ty);
            Ok(Op::Rmw { dst: Some(dst), ty, addr, op, operands, sem, scope, proxy, space })
        }
    }

    fn fence(&mut self, rest: &[Spanned<String>]) -> Result<Op, Diagnostic> {
        self.operands(0, "no operands")?;
        if let Some(first) = rest.first() {
            if first.node == "proxy" {
                let Some(kind) = rest.get(1) else {
                    return Err(Diagnostic::error(first.span, "`fence.proxy` needs a proxy kind")
                        .with_note("one of .generic .surface .texture .constant .alias"));
                };
                if kind.node.starts_with("async::") || kind.node.starts_with("tensormap") {
                    return Err(Diagnostic::error(kind.span, format!("`fence.proxy.{}` is not supported by this version of ptxmm", kind.node))
                        .with_note("the uni-directional proxy fences and the tensormap proxy are not modelled; use the bi-directional `fence.proxy.async{.space}`"));
                }
                if kind.node == "async" {
                    // fence.proxy.async{.global|.shared::cta|.shared::cluster} (PTX ISA §9.7.13.4).
                    let space = match rest.get(2).map(|p| p.node.as_str()) {
                        None => None,
                        Some("global") => Some(AccessSpace::Global),
                        Some("shared::cta") | Some("shared") => Some(AccessSpace::SharedCta),
                        Some("shared::cluster") => Some(AccessSpace::SharedCluster),
                        Some(other) => {
                            return Err(Diagnostic::expected(
                                rest[2].span,
                                "a state space (.global, .shared::cta, .shared::cluster)",
                                format!("`.{other}`"),
                            ))
                        }
                    };
                    if let Some(extra) = rest.get(3) {
                        return Err(Diagnostic::error(
                            extra.span,
                            format!("unsupported qualifier `.{}` on `fence.proxy.async`", extra.node),
                        ));
                    }
                    return Ok(Op::ProxyFence { proxy: Proxy::Async, space });
                }
                if let Some(extra) = rest.get(2) {
                    return Err(Diagnostic::error(
                        extra.span,
                        format!("unsupported qualifier `.{}` on `fence.proxy.{}`", extra.node, kind.node),
                    ));
                }
                return match kind.node.as_str() {
                    "alias" => Ok(Op::AliasFence),
                    "generic" => Ok(Op::ProxyFence { proxy: Proxy::Generic, space: None }),
                    "surface" => Ok(Op::ProxyFence { proxy: Proxy::Surface, space: None }),
                    "texture" => Ok(Op::ProxyFence { proxy: Proxy::Texture, space: None }),
                    "constant" => Ok(Op::ProxyFence { proxy: Proxy::Constant, space: None }),
                    "tensormap" | "async::generic" | "async::global" | "async::shared::cta" | "async::shared::cluster" => {
                        Err(Diagnostic::error(kind.span, format!("`fence.proxy.{}` is not supported by this version of ptxmm", kind.node))
                            .with_note("use the bi-directional `fence.proxy.async{.space}`"))
                    }
                    other => Err(Diagnostic::expected(
                        kind.span,
                        "a proxy kind (generic, surface, texture, constant, alias)",
                        format!("`{other}`"),
                    )),
                };
            }
        }
        let mut q = Quals::new(rest);
        let mbarrier_init = q.take(&["mbarrier_init"]);
        let mut restrict = mbarrier_init.map(|_| FenceRestrict::MbarrierInit);
        match q.take(&["sync_restrict::shared::cta", "sync_restrict::shared::cluster"]) {
            Some(("sync_restrict::shared::cta", _)) => restrict = Some(FenceRestrict::SharedCta),
            Some(_) => restrict = Some(FenceRestrict::SharedCluster),
            None => {}
        }
        if let Some((w, span)) = q.take(&["op_restrict"]) {
            return Err(Diagnostic::error(span, format!("`fence.{w}` is not supported by this version of ptxmm")));
        }
        let kind = match q.take(&["sc", "acq_rel", "acquire", "release"]) {
            None => FenceKind::AcqRel,
            Some(("sc", _)) => FenceKind::Sc,
            Some(("acq_rel", _)) => FenceKind::AcqRel,
            Some(("acquire", _)) => FenceKind::Acquire,
            Some(_) => FenceKind::Release,
        };
        let scope = self.scope(&mut q, true, "a fence")?.unwrap_or(Scope::Sys);
        q.finish(
            "fence",
            ".sc/.acq_rel/.acquire/.release, .mbarrier_init, .sync_restrict::shared::cta|cluster, and a scope (.cta, .cluster, .gpu, .sys)",
        )?;
        if let Some((_, span)) = mbarrier_init {
            if kind != FenceKind::Release || scope != Scope::Cluster {
                return Err(Diagnostic::error(span, "the only form is `fence.mbarrier_init.release.cluster` (PTX ISA §9.7.13.4)"));
            }
        }
        Ok(Op::Fence { kind, scope, restrict })
    }

    fn membar(&mut self, rest: &[Spanned<String>]) -> Result<Op, Diagnostic> {
        self.operands(0, "no operands")?;
        if let Some(first) = rest.first() {
            if first.node == "proxy" {
                return Err(Diagnostic::error(first.span, "`membar.proxy` is not supported; use `fence.proxy.<kind>`"));
            }
        }
        let mut q = Quals::new(rest);
        // membar.{cta,gl,sys} is fence.sc.{cta,gpu,sys} on sm_70+ (PTX ISA §9.7.13.4).
        let scope = self.scope(&mut q, true, "membar")?.unwrap_or(Scope::Sys);
        q.finish("membar", ".cta, .gl or .sys")?;
        Ok(Op::Fence { kind: FenceKind::Sc, scope, restrict: None })
    }

    fn barrier(&mut self, head: &str, rest: &[Spanned<String>]) -> Result<Op, Diagnostic> {
        if head == "barrier" && rest.first().is_some_and(|p| p.node == "cluster") {
            return self.cluster_barrier(&rest[1..]);
        }
        let mut q = Quals::new(rest);
        let dat3m_spelling = head == "bar" && q.take(&["cta"]).is_some();
        if !dat3m_spelling {
            q.take(&["cta"]);
        }
        let Some((kind, _)) = q.take(&["sync", "arrive", "red"]) else {
            return Err(Diagnostic::error(self.instr.opcode_span(), format!("`{}` needs .sync or .arrive", self.mnemonic())));
        };
        if kind == "red" {
            return Err(Diagnostic::error(self.instr.opcode_span(), "`bar.red` is not supported by this version of ptxmm"));
        }
        q.take(&["aligned"]);
        q.finish(head, ".cta, .sync/.arrive, .aligned")?;
        let ops: &'l [Spanned<Operand>] = &self.instr.operands;
        if ops.is_empty() || ops.len() > 3 {
            return Err(Diagnostic::expected(
                if ops.len() > 3 { ops[3].span } else { self.span },
                "1 to 3 operands (barrier, [id, [count]])",
                ops.len(),
            ));
        }
        let arrive = kind == "arrive";
        if dat3m_spelling {
            // Dat3M: `bar.cta.sync N[, id[, count]]`, N a static instance id.
            let Operand::Int(instance) = ops[0].node else {
                return Err(Diagnostic::expected(ops[0].span, "a constant barrier instance id", describe(&ops[0].node)));
            };
            let id = ops.get(1).map(|o| self.value(o)).transpose()?;
            let count = ops.get(2).map(|o| self.value(o)).transpose()?;
            Ok(Op::Barrier { instance, id, count, arrive })
        } else {
            // PTX: `bar.sync a{, b}`, a the barrier resource, b the thread count.
            let a = self.value(&ops[0])?;
            if ops.len() > 2 {
                return Err(Diagnostic::expected(ops[2].span, "at most 2 operands for `bar.sync a{, b}`", ops.len()));
            }
            let count = ops.get(1).map(|o| self.value(o)).transpose()?;
            if arrive && count.is_none() {
                return Err(Diagnostic::error(self.span, "`bar.arrive` requires a thread count (PTX ISA §9.7.13.1)"));
            }
            let instance = match a {
                Value::Const(c) => c,
                Value::Reg(_) => -1,
            };
            Ok(Op::Barrier { instance, id: Some(a), count, arrive })
        }
    }

    fn cond_branch(&mut self, head: &str, rest: &[Spanned<String>]) -> Result<Op, Diagnostic> {
        if let Some(extra) = rest.first() {
            return Err(Diagnostic::error(extra.span, format!("`{head}` takes no qualifiers")));
        }
        let ops = self.operands(3, "value, value, label")?;
        let a = self.value(&ops[0])?;
        let b = self.value(&ops[1])?;
        let target = self.label(&ops[2])?;
        let cmp = match head {
            "beq" => ast::CmpOp::Eq,
            "bne" => ast::CmpOp::Ne,
            "blt" => ast::CmpOp::Lt,
            "bgt" => ast::CmpOp::Gt,
            "ble" => ast::CmpOp::Le,
            _ => ast::CmpOp::Ge,
        };
        Ok(Op::Branch { cond: Some((cmp, a, b)), target })
    }

    fn jump(&mut self, rest: &[Spanned<String>]) -> Result<Op, Diagnostic> {
        let mut q = Quals::new(rest);
        q.take(&["uni"]);
        q.finish("bra", ".uni")?;
        let ops = self.operands(1, "label")?;
        let target = self.label(&ops[0])?;
        let cond = match &self.instr.guard {
            None => None,
            Some((p, negated)) => {
                let r = self.regs.use_(&p.node, p.span);
                let cmp = if *negated { ast::CmpOp::Eq } else { ast::CmpOp::Ne };
                Some((cmp, Value::Reg(r), Value::Const(0)))
            }
        };
        Ok(Op::Branch { cond, target })
    }

    fn local(&mut self, head: &str, rest: &[Spanned<String>]) -> Result<Op, Diagnostic> {
        let mut q = Quals::new(rest);
        let ty = self.one_type(&mut q)?.map(|(t, _)| t);
        if let Some((w, span)) = q.take(&["lo", "wide", "hi"]) {
            if head != "mul" || w != "lo" {
                return Err(Diagnostic::error(span, format!("`{head}.{w}` is not supported by this version of ptxmm"))
                    .with_note("mul.lo keeps the low half of the product; .hi and .wide are not modelled"));
            }
        }
        q.finish(head, "a type (.u32, .s32, .b64, ...)")?;
        if head == "mov" {
            let ops = self.operands(2, "destination, value")?;
            let a = self.typed_value(&ops[1], ty)?;
            let dst = self.dest_reg(&ops[0])?;
            self.regs.set_type(dst, ty);
            return Ok(Op::Local { dst, op: LocalOp::Mov, ty, a, b: Value::Const(0) });
        }
        let ops = self.operands(3, "destination, value, value")?;
        let a = self.typed_value(&ops[1], ty)?;
        let b = self.typed_value(&ops[2], if matches!(head, "shl" | "shr") { None } else { ty })?;
        let dst = self.dest_reg(&ops[0])?;
        self.regs.set_type(dst, ty);
        let op = match head {
            "add" => LocalOp::Add,
            "sub" => LocalOp::Sub,
            "mul" => LocalOp::Mul,
            "div" => LocalOp::Div,
            "rem" => LocalOp::Rem,
            "and" => LocalOp::And,
            "or" => LocalOp::Or,
            "xor" => LocalOp::Xor,
            "shl" => LocalOp::Shl,
            "shr" => LocalOp::Shr,
            "min" => LocalOp::Min,
            _ => LocalOp::Max,
        };
        Ok(Op::Local { dst, op, ty, a, b })
    }

    /// `mapa{.shared::cluster}.u32|u64 d, a, b` (PTX ISA, `mapa`; not in the seed): a is a shared
    /// variable (a name, `[s]`, `[s+4]` or `&s`), b a constant cluster rank; `resolve_mapa`
    /// computes d once the threads are placed.
    fn mapa(&mut self, rest: &[Spanned<String>]) -> Result<Op, Diagnostic> {
        let mut q = Quals::new(rest);
        q.take(&["shared::cluster"]);
        if q.take(&["u32", "u64"]).is_none() {
            return Err(Diagnostic::error(self.instr.opcode_span(), "`mapa` needs the type `.u32` or `.u64`"));
        }
        q.finish("mapa", ".shared::cluster, .u32|.u64")?;
        let ops = self.operands(3, "d, a, b")?;
        let addr = match &ops[1].node {
            Operand::Address(..) => match self.address(&ops[1])? {
                Address::Location(l) => Some(self.l.address_of(l)),
                Address::Reg(..) => None,
            },
            _ => match self.value(&ops[1])? {
                Value::Const(c) => Some(c),
                Value::Reg(_) => None,
            },
        };
        let Some(addr) = addr else {
            return Err(Diagnostic::expected(
                ops[1].span,
                "a shared variable (ptxmm maps the address of a named variable)",
                describe(&ops[1].node),
            ));
        };
        let Operand::Int(rank) = ops[2].node else {
            return Err(Diagnostic::expected(ops[2].span, "a constant CTA rank", describe(&ops[2].node)));
        };
        let dst = self.dest_reg(&ops[0])?;
        Ok(Op::Local { dst, op: LocalOp::Mov, a: Value::Const(addr), b: Value::Const(rank), ty: None })
    }

    /// `createpolicy.fractional|range|cvt ...` (PTX ISA, `createpolicy`): the destination gets a cache
    /// policy, an opaque 64-bit value ptxmm writes as 0; a policy is a hint and has no memory
    /// effect, so the forms are checked and their other operands read only.
    fn createpolicy(&mut self, rest: &[Spanned<String>]) -> Result<Op, Diagnostic> {
        let mut q = Quals::new(rest);
        let primary = ["L2::evict_last", "L2::evict_normal", "L2::evict_first", "L2::evict_unchanged"];
        let (form, n_ops): (&str, &[usize]) = match q.take(&["fractional", "range", "cvt"]) {
            Some(("fractional", _)) => ("fractional", &[1, 2]),
            Some(("range", _)) => ("range", &[4]),
            Some((_, _)) => ("cvt", &[2]),
            None => {
                return Err(Diagnostic::error(self.instr.opcode_span(), "`createpolicy` needs .fractional, .range or .cvt")
                    .with_note("createpolicy.fractional.L2::evict_last.b64 policy, 0.5; createpolicy.range.L2::evict_last.b64 policy, [a], 64, 128; createpolicy.cvt.L2.b64 policy, prop"));
            }
        };
        if form == "cvt" {
            if q.take(&["L2"]).is_none() {
                return Err(Diagnostic::error(
                    self.instr.opcode_span(),
                    "the form is `createpolicy.cvt.L2.b64 cache-policy, access-property`",
                ));
            }
        } else {
            if form == "range" {
                q.take(&["global"]);
            }
            if q.take(&primary).is_none() {
                return Err(Diagnostic::error(self.instr.opcode_span(), format!("`createpolicy.{form}` needs a primary priority"))
                    .with_note(".L2::evict_last, .L2::evict_normal, .L2::evict_first or .L2::evict_unchanged"));
            }
            q.take(&["L2::evict_first", "L2::evict_unchanged"]);
        }
        if q.take(&["b64"]).is_none() {
            return Err(Diagnostic::error(self.instr.opcode_span(), "`createpolicy` needs the type `.b64`"));
        }
        q.finish(
            "createpolicy",
            ".fractional|.range{.global}|.cvt.L2, .L2::evict_last|normal|first|unchanged, a secondary .L2::evict_first|unchanged, .b64",
        )?;
        let ops: &[Spanned<Operand>] = &self.instr.operands;
        if !n_ops.contains(&ops.len()) {
            let shape = match form {
                "fractional" => "cache-policy{, fraction}",
                "range" => "cache-policy, [a], primary-size, total-size",
                _ => "cache-policy, access-property",
            };
            return Err(Diagnostic::expected(self.span, format!("{n_ops:?} operands for `createpolicy.{form}` ({shape})"), ops.len()));
        }
        for (k, o) in ops.iter().enumerate().skip(1) {
            match (&o.node, form, k) {
                // The fraction is a float literal in (0, 1].
                (_, "fractional", 1) => {}
                (_, "range", 1) => {
                    self.address(o)?;
                }
                _ => {
                    self.value(o)?;
                }
            }
        }
        let dst = self.dest_reg(&ops[0])?;
        Ok(Op::Local { dst, op: LocalOp::Mov, a: Value::Const(0), b: Value::Const(0), ty: None })
    }

    fn setp(&mut self, rest: &[Spanned<String>]) -> Result<Op, Diagnostic> {
        let mut q = Quals::new(rest);
        let Some((c, _)) = q.take(&["eq", "ne", "lt", "le", "gt", "ge"]) else {
            return Err(Diagnostic::error(self.instr.opcode_span(), "`setp` needs a comparison (.eq .ne .lt .le .gt .ge)"));
        };
        let ty = self.one_type(&mut q)?.map(|(t, _)| t);
        q.finish("setp", "a comparison and a type")?;
        let ops = self.operands(3, "predicate, value, value")?;
        let a = self.typed_value(&ops[1], ty)?;
        let b = self.typed_value(&ops[2], ty)?;
        let dst = self.dest_reg(&ops[0])?;
        // A predicate: 0 or 1, untyped.
        self.regs.set_type(dst, None);
        let cmp = match c {
            "eq" => ast::CmpOp::Eq,
            "ne" => ast::CmpOp::Ne,
            "lt" => ast::CmpOp::Lt,
            "le" => ast::CmpOp::Le,
            "gt" => ast::CmpOp::Gt,
            _ => ast::CmpOp::Ge,
        };
        Ok(Op::Local { dst, op: LocalOp::Set(cmp), ty, a, b })
    }
}

/// The state-space qualifier of an access (`.global`, `.shared{::cta}`, `.shared::cluster`), generic when absent.
fn space_of(q: &mut Quals) -> AccessSpace {
    let mut space = AccessSpace::Generic;
    while let Some((s, _)) = q.take(SPACES) {
        space = match s {
            "global" => AccessSpace::Global,
            "shared" | "shared::cta" => AccessSpace::SharedCta,
            "shared::cluster" => AccessSpace::SharedCluster,
            _ => AccessSpace::Generic,
        };
    }
    space
}

fn vector_len(v: &str, span: Span, head: &str) -> Result<usize, Diagnostic> {
    match v {
        "v2" => Ok(2),
        "v4" => Ok(4),
        _ => Err(Diagnostic::error(span, format!("`{head}.{v}` is not supported; use .v2 or .v4 of 32-bit elements"))),
    }
}

fn describe(op: &Operand) -> String {
    match op {
        Operand::Name(n) => format!("`{n}`"),
        Operand::PercentName(n) => format!("`{n}`"),
        Operand::Int(v) => format!("the constant `{v}`"),
        Operand::Address(..) => "an address `[...]`".into(),
        Operand::Sink => "`_`".into(),
        Operand::Vector(_) => "a vector `{...}`".into(),
        Operand::AddressOf(n) => format!("`&{n}`"),
        Operand::TensorAddress(..) => "a tensor operand `[tensorMap, {...}]`".into(),
    }
}

/// Give each word the type of the first typed access that names it statically, and store its
/// initial value at that type.
fn type_words(program: &mut Program) {
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

struct CondResolver<'p> {
    reg_types: &'p [HashMap<Reg, Option<Ty>>],
    program: &'p Program,
    thread_index: &'p HashMap<usize, usize>,
    source: &'p SourceFile,
}

impl CondResolver<'_> {
    fn prop(&self, p: &Spanned<ast::Prop>) -> Result<Prop, Diagnostic> {
        Ok(match &p.node {
            ast::Prop::True => Prop::True,
            ast::Prop::False => Prop::False,
            ast::Prop::Not(q) => Prop::Not(Box::new(self.prop(q)?)),
            ast::Prop::And(a, b) => Prop::And(Box::new(self.prop(a)?), Box::new(self.prop(b)?)),
            ast::Prop::Or(a, b) => Prop::Or(Box::new(self.prop(a)?), Box::new(self.prop(b)?)),
            ast::Prop::Cmp(a, op, b) => {
                let (a, b) = (self.value(a)?, self.value(b)?);
                // A constant compared with a typed value is read at that value's type.
                let typed = |c: &CondTerm, other: &CondTerm| match (c, self.type_of(other)) {
                    (CondTerm::Const(v), Some(t)) => CondTerm::Const(t.norm(*v)),
                    (c, _) => c.clone(),
                };
                Prop::Cmp(typed(&a, &b), *op, typed(&b, &a))
            }
        })
    }

    /// The type a condition compares an observable at.
    fn type_of(&self, t: &CondTerm) -> Option<Ty> {
        match t {
            CondTerm::Const(_) => None,
            CondTerm::Obs(Observable::Location(p)) => self.program.physical[*p].ty,
            CondTerm::Obs(Observable::Register(t, r)) => self.reg_types[*t].get(r).copied().flatten(),
        }
    }

    fn value(&self, v: &Spanned<CondValue>) -> Result<CondTerm, Diagnostic> {
        let _ = self.source;
        match &v.node {
            CondValue::Const(c) => Ok(CondTerm::Const(*c)),
            CondValue::Location(name) => {
                let Some(loc) = self.program.locations.iter().position(|l| &l.name == name) else {
                    return Err(Diagnostic::error(v.span, format!("unknown location `{name}` in the condition"))
                        .with_note("declare it in the init block"));
                };
                Ok(CondTerm::Obs(Observable::Location(self.program.locations[loc].physical)))
            }
            CondValue::Register { thread, reg } => {
                let Some(&t) = self.thread_index.get(thread) else {
                    return Err(Diagnostic::error(v.span, format!("unknown thread P{thread} in the condition")));
                };
                let th = &self.program.threads[t];
                let Some(r) = th.registers.iter().position(|n| n == reg) else {
                    return Err(Diagnostic::error(v.span, format!("unknown register `{reg}` of thread P{thread} in the condition"))
                        .with_note("the register is neither initialised nor written by that thread"));
                };
                Ok(CondTerm::Obs(Observable::Register(t, r)))
            }
        }
    }
}

/// Print a proposition the way herd7 prints conditions: `0:r0=1 /\ 1:r0=0`.
pub fn format_prop(p: &ast::Prop) -> String {
    fn val(v: &CondValue) -> String {
        match v {
            CondValue::Register { thread, reg } => format!("{thread}:{reg}"),
            CondValue::Location(l) => l.clone(),
            CondValue::Const(c) => c.to_string(),
        }
    }
    fn go(p: &ast::Prop, top: bool) -> String {
        let s = match p {
            ast::Prop::True => return "true".into(),
            ast::Prop::False => return "false".into(),
            ast::Prop::Not(q) => return format!("~{}", go(&q.node, false)),
            // Chains of one connective print flat, as herd7 does: `a /\\ b /\\ c`.
            ast::Prop::And(a, b) => {
                let side = |p: &ast::Prop| go(p, matches!(p, ast::Prop::And(..)));
                format!("{} /\\ {}", side(&a.node), side(&b.node))
            }
            ast::Prop::Or(a, b) => {
                let side = |p: &ast::Prop| go(p, matches!(p, ast::Prop::Or(..)));
                format!("{} \\/ {}", side(&a.node), side(&b.node))
            }
            ast::Prop::Cmp(a, op, b) => return format!("{}{}{}", val(&a.node), op.symbol(), val(&b.node)),
        };
        if top {
            s
        } else {
            format!("({s})")
        }
    }
    go(p, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lower_str(src: &str) -> Result<Program, String> {
        let file = SourceFile::new("t.litmus", src);
        let ast = crate::litmus::parse(&file).map_err(|d| d.one_line(&file))?;
        lower(&ast, &file).map_err(|d| d.one_line(&file))
    }

    #[test]
    fn qualifiers_become_semantics() {
        let p = lower_str(
            "PTX t\n{ x=0; y @ generic aliases x; s @ surface aliases x; }\n P0@cta 1,gpu 2 ;\n ld.volatile.global.u32 %r1, [x] ;\n atom.add r2, y, 1 ;\n membar.gl ;\n sust.weak s, 3 ;\nexists (P0:%r1 == 0)\n",
        )
        .unwrap();
        let t = &p.threads[0];
        assert_eq!(t.placement, Placement { cta: 1, cluster: -2, gpu: 2 });
        assert!(matches!(t.code[0].op, Op::Load { sem: Sem::Relaxed, scope: Some(Scope::Sys), proxy: Proxy::Generic, .. }));
        assert!(matches!(t.code[1].op, Op::Rmw { sem: Sem::Relaxed, scope: Scope::Gpu, op: RmwOp::Add, .. }));
        assert!(matches!(t.code[2].op, Op::Fence { kind: FenceKind::Sc, scope: Scope::Gpu, .. }));
        assert!(matches!(t.code[3].op, Op::Store { proxy: Proxy::Surface, .. }));
        // x and its aliases share a physical location; only the surface alias shares x's generic address.
        let (x, y, s) = (&p.locations[0], &p.locations[1], &p.locations[2]);
        assert_eq!(x.physical, y.physical);
        assert_eq!(x.physical, s.physical);
        assert_ne!(x.generic, y.generic);
        assert_eq!(x.generic, s.generic);
        assert_eq!(t.code[0].line, 4);
    }

    #[test]
    fn dat3m_ld_of_a_constant_is_a_move() {
        let p = lower_str("PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n ld r0, 5 ;\n st.weak x, r0 ;\nexists (x == 5)\n").unwrap();
        assert!(matches!(p.threads[0].code[0].op, Op::Local { op: LocalOp::Mov, a: Value::Const(5), .. }));
    }

    #[test]
    fn barriers_in_both_spellings() {
        let p =
            lower_str("PTX t\n{ }\n P0@cta 0,gpu 0 ;\n bar.cta.sync 1, 2, 64 ;\n bar.sync 3, 64 ;\n bar.cta.arrive 4 ;\nexists (0 == 0)\n")
                .unwrap();
        let c = &p.threads[0].code;
        assert!(matches!(c[0].op, Op::Barrier { instance: 1, id: Some(Value::Const(2)), count: Some(Value::Const(64)), arrive: false }));
        assert!(matches!(c[1].op, Op::Barrier { instance: 3, id: Some(Value::Const(3)), count: Some(Value::Const(64)), arrive: false }));
        assert!(matches!(c[2].op, Op::Barrier { instance: 4, id: None, count: None, arrive: true }));
    }

    #[test]
    fn rejections_name_the_problem() {
        let e = lower_str("PTX t\n{ x=0; }\n P0@cta 0,warp 0,gpu 0 ;\n st.weak x, 1 ;\nexists (x == 1)\n").unwrap_err();
        assert!(e.contains("t.litmus:3:11") && e.contains("`warp`"), "{e}");
        let e = lower_str("PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n red.relaxed.gpu.cas x, 1, 2 ;\nexists (x == 1)\n").unwrap_err();
        assert!(e.contains("`red` has no `.cas` form"), "{e}");
        let e = lower_str("PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n tcgen05.fence.sync.aligned ;\nexists (x == 1)\n").unwrap_err();
        assert!(e.contains("not supported"), "{e}");
    }
}
