//! PTX declarations (PTX ISA §5.4) as variables: `.global` once, `.shared` once per CTA that runs
//! a thread of the test, `.local` once per thread that runs the declaring code; the names each
//! thread sees (its own CTA's or its own instance); kernel parameters (`.param`) as constants;
//! and which declared variables hold mbarrier objects (those whose addresses reach an
//! `mbarrier.*` address operand; in a kernel, an array that also holds data stays data words).
//!
//! Instances are named `s@cta1` (per CTA) and `buf@P0` (per thread) when there is more than one,
//! and by the plain name when there is one; conditions may use either spelling then.

use super::state::{Lowerer, VariableShape};
use crate::diag::{Diagnostic, Spanned};
use crate::litmus::ast::{self, DeclInit, DeclSpace, Declaration, InitItem, Operand, Statement};
use crate::program::unknown::{UnknownKind, UnknownOrigin};
use crate::program::*;
use std::collections::{BTreeSet, HashMap};

/// What the lowering of declarations needs to know about the whole test, computed before any
/// variable is made.
pub(super) struct DeclPlan<'t> {
    /// The placement of each thread, by index.
    pub(super) placements: Vec<Placement>,
    /// Each thread's name (`P1`, `P1.7` for a lane), as per-thread instances are suffixed.
    pub(super) ids: Vec<String>,
    /// The `.shared`/`.local` declarations of code blocks, each once (a kernel block's, or the
    /// same declaration repeated in per-thread blocks), with the threads whose code declares it.
    pub(super) block_decls: Vec<(&'t Declaration, Span, Vec<usize>)>,
    /// Declared variables used as mbarrier objects, with the span of one such use.
    pub(super) mbarriers: HashMap<String, Span>,
    /// In a kernel, the arrays that hold mbarrier objects and data (a `SharedStorage` struct),
    /// with the first mbarrier use and the first data use: they stay data words, and a word an
    /// mbarrier operation addresses is an mbarrier object (`exec::structure::mbarrier_words`).
    pub(super) mixed: HashMap<String, (Span, Span)>,
}

/// Largest shared-memory variable: a CTA's shared memory on sm_90 (227 KiB, 232,448 bytes).
pub(super) const MAX_SHARED_BYTES: i64 = 232_448;

/// Largest global or local variable a test declares: every word is an entry of the program's
/// tables (only the words a run touches become events).
pub(super) const MAX_GLOBAL_BYTES: i64 = 4 << 20;

/// The most bytes a variable of this space may have.
pub(super) fn max_bytes(shared: bool) -> i64 {
    if shared {
        MAX_SHARED_BYTES
    } else {
        MAX_GLOBAL_BYTES
    }
}

/// Largest kernel parameter block (PTX ISA: an entry's parameters take at most 32,764 bytes on
/// sm_70 and later with PTX 8.1).
const MAX_PARAM_BYTES: i64 = 32_764;

impl<'t> DeclPlan<'t> {
    pub(super) fn new(test: &'t ast::LitmusTest, source: &SourceFile, placements: Vec<Placement>) -> Result<Self, Diagnostic> {
        let ids = test.threads.iter().map(|h| h.name()).collect();
        let mut block_decls: Vec<(&Declaration, Span, Vec<usize>)> = Vec::new();
        for t in 0..test.threads.len() {
            for s in test.column(t) {
                let Statement::Decl(d) = &s.node else { continue };
                if d.space.node == DeclSpace::Reg {
                    continue;
                }
                match block_decls.iter_mut().find(|(e, _, _)| e.names[0].name.node == d.names[0].name.node) {
                    Some((e, _, threads)) if same_declaration(e, d) => threads.push(t),
                    Some((_, span, _)) => {
                        return Err(Diagnostic::error(s.span, format!("`{}` is declared twice, differently", d.names[0].name.node))
                            .with_note(format!("the other declaration is `{}`", source.slice(*span).trim())));
                    }
                    None => block_decls.push((d, s.span, vec![t])),
                }
            }
        }
        let Uses { mbarriers, data } = mbarrier_uses(test, &declared_names(test));
        let mixed = mbarriers.iter().filter_map(|(n, &mb)| data.get(n).map(|&d| (n.clone(), (mb, d)))).collect();
        Ok(DeclPlan { placements, ids, block_decls, mbarriers, mixed })
    }
}

/// Whether two declarations declare the same thing (spans aside): per-thread blocks repeat the
/// kernel's function-scope declarations.
fn same_declaration(a: &Declaration, b: &Declaration) -> bool {
    let names = |d: &Declaration| {
        d.names.iter().map(|n| (n.name.node.clone(), n.dims.iter().map(|d| d.node).collect::<Vec<_>>())).collect::<Vec<_>>()
    };
    a.space.node == b.space.node
        && a.align.as_ref().map(|x| x.node) == b.align.as_ref().map(|x| x.node)
        && a.ty.node == b.ty.node
        && names(a) == names(b)
}

/// The names of every PTX-declared variable (init block and code blocks).
fn declared_names(test: &ast::LitmusTest) -> BTreeSet<String> {
    let init = test.init.iter().filter_map(|i| match &i.node {
        InitItem::Declaration(d) => Some(d),
        _ => None,
    });
    let blocks = test.code.iter().flatten().filter_map(|s| match &s.node {
        Statement::Decl(d) => Some(d),
        _ => None,
    });
    init.chain(blocks)
        .filter(|d| matches!(d.space.node, DeclSpace::Shared | DeclSpace::Global | DeclSpace::Local))
        .flat_map(|d| d.names.iter().map(|n| n.name.node.clone()))
        .collect()
}

/// Instructions whose destination may hold an address computed from their other operands.
const ADDRESS_ARITHMETIC: &[&str] = &["mov", "add", "sub", "mad", "mul", "cvta", "cvt", "selp", "mapa", "and", "or", "xor", "min", "max"];

/// The declared variables whose address reaches an mbarrier operand: an address operand of
/// `mbarrier.*` or `cp.async.mbarrier.arrive`, or the mbarrier operand (last) of a copy with
/// `.mbarrier::complete_tx::bytes`. Registers are followed through the arithmetic that moves
/// addresses (`mov %r2, bar; add %r7, %r2, 8`), per thread and regardless of order, as nvcc's
/// code computes an array element's address (PTX ISA §9.7.13.15.1: an mbarrier object is 8 bytes
/// of shared memory; an array of them holds one per 8-byte slot).
fn mbarrier_uses(test: &ast::LitmusTest, declared: &BTreeSet<String>) -> Uses {
    let mut out = Uses::default();
    if declared.is_empty() {
        return out;
    }
    let columns = if test.form == ast::CodeForm::Kernel { 1 } else { test.threads.len() };
    for t in 0..columns {
        let instrs: Vec<&ast::Instruction> = test
            .column(t)
            .iter()
            .filter_map(|s| match &s.node {
                Statement::Instr(i) => Some(i),
                _ => None,
            })
            .collect();
        // The declared variables whose address each register may hold.
        let mut holds: HashMap<String, BTreeSet<String>> = HashMap::new();
        for item in &test.init {
            if let InitItem::RegisterAddress { thread, lane, reg, location } = &item.node {
                let ours =
                    test.form == ast::CodeForm::Kernel || test.threads.get(t).is_some_and(|h| h.id.node == thread.node && h.lane == *lane);
                if ours && declared.contains(&location.node) {
                    holds.entry(reg.node.clone()).or_default().insert(location.node.clone());
                }
            }
        }
        loop {
            let mut changed = false;
            for i in &instrs {
                if !ADDRESS_ARITHMETIC.contains(&i.opcode[0].node.as_str()) {
                    continue;
                }
                let Some(dst) = i.operands.first().and_then(|o| register_name(&o.node)) else { continue };
                let mut from = BTreeSet::new();
                for o in &i.operands[1..] {
                    from.extend(operand_names(&o.node, declared, &holds));
                }
                let entry = holds.entry(dst.to_string()).or_default();
                let before = entry.len();
                entry.extend(from);
                changed |= entry.len() != before;
            }
            if !changed {
                break;
            }
        }
        for i in &instrs {
            let mb = mbarrier_operands(i);
            for o in &mb {
                let Operand::Address(inner, _) = &o.node else { continue };
                for name in operand_names(&inner.node, declared, &holds) {
                    out.mbarriers.entry(name).or_insert(o.span);
                }
            }
            // In a kernel, the other memory operands: where the same array also holds data.
            if test.form == ast::CodeForm::Kernel {
                for o in i.operands.iter().filter(|o| !mb.iter().any(|m| std::ptr::eq(*m, *o))) {
                    let Operand::Address(inner, _) = &o.node else { continue };
                    for name in operand_names(&inner.node, declared, &holds) {
                        out.data.entry(name).or_insert(o.span);
                    }
                }
            }
        }
    }
    out
}

/// The declared variables used as mbarrier objects and (in a kernel) as data, each with its
/// first such use.
#[derive(Default)]
struct Uses {
    mbarriers: HashMap<String, Span>,
    data: HashMap<String, Span>,
}

/// A register written or read as a bare name: `%r1`, `r1`, `P_OUT`.
fn register_name(o: &Operand) -> Option<&str> {
    match o {
        Operand::Name(n) | Operand::PercentName(n) => Some(n),
        _ => None,
    }
}

/// The declared variables an operand may be the address of.
fn operand_names(o: &Operand, declared: &BTreeSet<String>, holds: &HashMap<String, BTreeSet<String>>) -> BTreeSet<String> {
    match o {
        Operand::Name(n) | Operand::AddressOf(n) if declared.contains(n) => [n.clone()].into_iter().collect(),
        Operand::Name(n) | Operand::PercentName(n) => holds.get(n.as_str()).cloned().unwrap_or_default(),
        _ => BTreeSet::new(),
    }
}

/// The operands of an instruction that address an mbarrier object.
fn mbarrier_operands(i: &ast::Instruction) -> Vec<&Spanned<Operand>> {
    let parts: Vec<&str> = i.opcode.iter().map(|p| p.node.as_str()).collect();
    let is_address = |o: &&Spanned<Operand>| matches!(o.node, Operand::Address(..));
    match parts.first().copied() {
        Some("mbarrier") => i.operands.iter().filter(is_address).collect(),
        Some("cp") if parts.contains(&"mbarrier") => i.operands.iter().filter(is_address).collect(),
        Some("cp") if parts.iter().any(|p| p.starts_with("mbarrier::complete_tx")) => {
            i.operands.iter().rev().find(|o| matches!(o.node, Operand::Address(..))).into_iter().collect()
        }
        _ => Vec::new(),
    }
}

impl Lowerer<'_> {
    /// The variables of one `.global`, `.shared` or `.local` declaration, with their instances:
    /// `running` are the threads whose code declares it (None: the init block, every thread).
    /// `.param` declarations are bound later ([`Lowerer::declare_params`]).
    pub(super) fn declare_ptx(&mut self, d: &Declaration, running: Option<&[usize]>, plan: &DeclPlan) -> Result<(), Diagnostic> {
        match d.space.node {
            DeclSpace::Reg => {
                return Err(Diagnostic::error(d.space.span, "registers are declared in code blocks, not in the init block")
                    .with_note("give a register its initial value with `P0:r0 = 1;`"))
            }
            DeclSpace::Param => return Ok(()),
            _ => {}
        }
        let Some(elem) = Ty::parse(&d.ty.node) else {
            return Err(Diagnostic::error(d.ty.span, format!("a `.{}` variable has no memory form", d.ty.node))
                .with_note("memory variables have a type such as .b8, .u32, .s64 or .f32"));
        };
        if let (true, Some(init)) = (d.names.len() > 1, &d.init) {
            return Err(Diagnostic::error(init.span, "an initialiser for a declaration of several names")
                .with_note("declare each initialised variable on its own"));
        }
        let all: Vec<usize> = (0..plan.ids.len()).collect();
        let running = running.unwrap_or(&all);
        for n in &d.names {
            self.declare_ptx_name(d, n, elem, running, plan)?;
        }
        Ok(())
    }

    fn declare_ptx_name(
        &mut self,
        d: &Declaration,
        n: &ast::DeclName,
        elem: Ty,
        running: &[usize],
        plan: &DeclPlan,
    ) -> Result<(), Diagnostic> {
        let name = &n.name;
        if let Some(range) = &n.range {
            return Err(Diagnostic::error(range.span, "a parameterized name (`%r<N>`) declares registers")
                .with_note("memory variables are arrays: `.shared .b32 buf[4];`"));
        }
        if name.node.starts_with('%') {
            return Err(Diagnostic::expected(
                name.span,
                "a variable name without `%` (`%` names are registers in ptxmm)",
                format!("`{}`", name.node),
            ));
        }
        if self.lookup(&name.node).is_some() || self.instances.contains_key(&name.node) || self.params.contains_key(&name.node) {
            return Err(Diagnostic::error(name.span, format!("location `{}` is declared twice", name.node)));
        }
        let elements = n.dims.iter().try_fold(1i64, |acc, dim| if dim.node > 0 { acc.checked_mul(dim.node) } else { None });
        let dims_span = n.dims.first().map_or(name.span, |first| first.span.to(n.dims.last().map_or(first.span, |l| l.span)));
        let Some(elements) = elements else {
            return Err(Diagnostic::expected(dims_span, "a positive number of elements", "none"));
        };
        let bytes = elements.saturating_mul(i64::from(elem.bits / 8));
        let most = max_bytes(d.space.node == DeclSpace::Shared);
        if bytes > most {
            let what =
                if d.space.node == DeclSpace::Shared { "a CTA's shared memory (sm_90: 227 KiB)" } else { "what ptxmm models per variable" };
            return Err(Diagnostic::error(dims_span, format!("`{}` is {bytes} bytes, more than {what}, {most} bytes", name.node))
                .with_note("declare the part of the array the test touches"));
        }
        let align = match &d.align {
            Some(a) if a.node <= 0 || a.node & (a.node - 1) != 0 => {
                return Err(Diagnostic::expected(a.span, "an alignment that is a power of two", a.node));
            }
            Some(a) => a.node,
            // Without `.align`, the alignment every access of the element type needs.
            None => i64::from(elem.bits / 8),
        };
        // An array that also holds data (a library's shared storage struct: tiles, then the
        // pipeline's mbarriers) stays data words; an mbarrier operation makes the word it
        // addresses an mbarrier object (`exec::structure::mbarrier_words`).
        let mbarrier_use = plan.mbarriers.get(&name.node).filter(|_| !plan.mixed.contains_key(&name.node));
        let (kind, size, values, ty) = match mbarrier_use {
            Some(&use_span) => {
                self.check_mbarrier_array(d, name, bytes, align, use_span)?;
                (VariableKind::Mbarrier, bytes, vec![0; (bytes / 8) as usize], None)
            }
            None => {
                let values = match &d.init {
                    None => Vec::new(),
                    Some(Spanned { node: DeclInit::Values(v), span }) => {
                        if v.len() as i64 > bytes / i64::from(elem.bits / 8) {
                            let expected = format!(
                                "at most {} element value(s) for the {bytes} bytes of `{}`",
                                bytes / i64::from(elem.bits / 8),
                                name.node
                            );
                            return Err(Diagnostic::expected(*span, expected, v.len()));
                        }
                        v.clone()
                    }
                    Some(Spanned { span, .. }) => {
                        return Err(Diagnostic::error(*span, "only a kernel parameter (`.param`) is bound to `&variable`")
                            .with_note("a word holding an address is declared `y = &x;`"))
                    }
                };
                let size = (bytes + 3) / 4 * 4;
                (VariableKind::Data, size, element_words(&values, elem, size), (elem.bits == 32).then(|| elem.with_bits(32)))
            }
        };
        // Owners: one global variable, one instance per CTA, or one per thread.
        let owners: Vec<(String, Space, Vec<usize>)> = match d.space.node {
            DeclSpace::Shared => {
                let ctas: BTreeSet<i64> = running.iter().map(|&t| plan.placements[t].cta).collect();
                ctas.into_iter()
                    .map(|cta| {
                        let sees = (0..plan.ids.len()).filter(|&t| plan.placements[t].cta == cta).collect();
                        (format!("cta{cta}"), Space::Shared { cta }, sees)
                    })
                    .collect()
            }
            DeclSpace::Local => running.iter().map(|&t| (plan.ids[t].clone(), Space::Global, vec![t])).collect(),
            _ => vec![(String::new(), Space::Global, Vec::new())],
        };
        let single = owners.len() == 1;
        let mut instances = Vec::new();
        for (suffix, space, sees) in owners {
            let instance = if single { name.node.clone() } else { format!("{}@{suffix}", name.node) };
            let v = self.push_variable(&instance, VariableShape { size, space, align, kind }, values.clone(), name.span)?;
            let first = self.variables[v].first_location;
            if let Some(ty) = ty {
                for l in first..self.locations.len() {
                    let p = self.locations[l].physical;
                    self.physical[p].ty = Some(ty);
                }
            }
            // The threads that see this instance name it by the declaration's name; its words
            // (`s+4`) resolve through that name (`Lowerer::lookup`).
            if instance != name.node {
                for &t in &sees {
                    self.views[t].push((name.node.clone(), first));
                }
            }
            instances.push((suffix, instance));
        }
        if d.space.node != DeclSpace::Global {
            self.instances.insert(name.node.clone(), instances);
        }
        Ok(())
    }

    /// A declared variable used as an array of mbarrier objects must be shared memory of whole,
    /// 8-byte aligned objects, without an initial value (PTX ISA §9.7.13.15.1).
    fn check_mbarrier_array(
        &self,
        d: &Declaration,
        name: &Spanned<String>,
        bytes: i64,
        align: i64,
        use_span: Span,
    ) -> Result<(), Diagnostic> {
        let (line, _) = self.source.line_col(use_span.start);
        let used = format!("`{}` is used as an mbarrier at line {line}", name.node);
        if d.space.node != DeclSpace::Shared {
            return Err(Diagnostic::error(name.span, format!("{used}, but mbarrier objects live in shared memory"))
                .with_note("declare it `.shared .align 8 .b64 NAME;` (an array: `.shared .align 8 .b8 NAME[16];`)"));
        }
        if bytes % 8 != 0 {
            return Err(Diagnostic::error(name.span, format!("{used}, but its {bytes} bytes are not whole 8-byte mbarrier objects")));
        }
        if align < 8 {
            return Err(Diagnostic::error(
                name.span,
                format!("{used}, but it is {align}-byte aligned: an mbarrier object must be 8-byte aligned"),
            )
            .with_note("PTX ISA §9.7.13.15.1; add `.align 8`"));
        }
        if let Some(init) = &d.init {
            return Err(Diagnostic::error(init.span, format!("{used}: an mbarrier takes no initial value"))
                .with_note("initialise it with `mbarrier.init`"));
        }
        Ok(())
    }

    /// The kernel parameters of the init block (PTX ISA §5.1, Table 7: read-only and per grid):
    /// `.param .u32 n = 5;`, `.param .u64 p = &g;`, an aggregate `.param .align 128 .b8 P[896];`,
    /// each a variable of the parameter space, then the fields given by offset
    /// (`.param .u32 P+16 = 128;`, `.param .u64 P+808 = &g;`). Bytes no value gives are unknown
    /// (`program::unknown`): a kernel that needs one known stops where it does, naming it.
    pub(super) fn declare_params(&mut self, init: &[Spanned<InitItem>]) -> Result<(), Diagnostic> {
        // Per parameter variable, each byte: given, or unknown.
        let mut bytes: Vec<(usize, Vec<Option<u8>>)> = Vec::new();
        for fields in [false, true] {
            for item in init {
                let InitItem::Declaration(d) = &item.node else { continue };
                if d.space.node != DeclSpace::Param {
                    continue;
                }
                let [n] = d.names.as_slice() else {
                    return Err(Diagnostic::error(item.span, "declare one kernel parameter per `.param`"));
                };
                if n.offset.is_some() != fields {
                    continue;
                }
                let ty = Ty::parse(&d.ty.node).ok_or_else(|| {
                    Diagnostic::expected(d.ty.span, "a parameter type (.u32, .u64, .s32, .b64, .b8, ...)", format!("`.{}`", d.ty.node))
                })?;
                let width = i64::from(ty.bits / 8);
                let value_bytes = |this: &Self, count: i64| -> Result<Vec<Option<u8>>, Diagnostic> {
                    let mut out = vec![None; count.max(0) as usize];
                    match &d.init {
                        None => {}
                        Some(Spanned { node: DeclInit::Values(v), span }) => {
                            if v.len() as i64 * width > count {
                                return Err(Diagnostic::expected(*span, format!("at most {} element value(s)", count / width), v.len()));
                            }
                            for (k, x) in v.iter().enumerate() {
                                let le = (ty.norm(*x) as u64).to_le_bytes();
                                for b in 0..width as usize {
                                    out[k * width as usize + b] = Some(le[b]);
                                }
                            }
                        }
                        Some(Spanned { node: DeclInit::AddressOf(x), span }) => {
                            if ty.bits < 32 {
                                return Err(Diagnostic::error(d.ty.span, "an address needs a 32- or 64-bit parameter (.u64)"));
                            }
                            if let Some(instances) = this.instances.get(x) {
                                let names: Vec<&str> = instances.iter().map(|(_, n)| n.as_str()).collect();
                                let what = format!("`{x}` is a `.shared` or `.local` variable (instances: {})", names.join(", "));
                                return Err(Diagnostic::error(*span, format!("{what}; a kernel parameter is one value for the grid"))
                                    .with_note("bind parameters to global variables"));
                            }
                            let loc = this.location(&Spanned::new(x.clone(), *span))?;
                            let le = (this.address_of(loc) as u64).to_le_bytes();
                            for b in 0..(width as usize).min(out.len()) {
                                out[b] = Some(le[b]);
                            }
                        }
                    }
                    Ok(out)
                };
                let name = &n.name;
                if !fields {
                    if self.lookup(&name.node).is_some() || self.instances.contains_key(&name.node) || self.params.contains_key(&name.node)
                    {
                        return Err(Diagnostic::error(name.span, format!("`{}` is declared twice", name.node)));
                    }
                    let elements = n.dims.iter().try_fold(1i64, |acc, dim| if dim.node > 0 { acc.checked_mul(dim.node) } else { None });
                    let Some(elements) = elements.filter(|&e| e.saturating_mul(width) <= MAX_PARAM_BYTES) else {
                        let span = n.dims.first().map_or(name.span, |d| d.span);
                        return Err(Diagnostic::expected(span, format!("a parameter of 1 to {MAX_PARAM_BYTES} bytes"), "another size"));
                    };
                    let size = elements * width;
                    let align = match &d.align {
                        Some(a) if a.node <= 0 || a.node & (a.node - 1) != 0 => {
                            return Err(Diagnostic::expected(a.span, "an alignment that is a power of two", a.node));
                        }
                        Some(a) => a.node,
                        None => width,
                    };
                    let given = value_bytes(self, size)?;
                    let shape = VariableShape { size: (size + 3) / 4 * 4, space: Space::Param, align, kind: VariableKind::Data };
                    let v = self.push_variable(&name.node, shape, vec![0; ((size + 3) / 4) as usize], name.span)?;
                    self.params.insert(name.node.clone(), v);
                    bytes.push((v, given));
                } else {
                    let offset = n.offset.as_ref().expect("a field has an offset");
                    let Some(&v) = self.params.get(&name.node) else {
                        return Err(Diagnostic::error(
                            name.span,
                            format!("`{}+{}`: no kernel parameter `{}` is declared", name.node, offset.node, name.node),
                        )
                        .with_note("declare the parameter first: `.param .align 8 .b8 NAME[64];`"));
                    };
                    // The declared bytes (the variable is rounded up to whole words).
                    let size = bytes.iter().find(|(w, _)| *w == v).map_or(self.variables[v].size, |(_, g)| g.len() as i64);
                    if offset.node < 0 || offset.node + width > size {
                        return Err(Diagnostic::error(
                            offset.span,
                            format!("a {width}-byte field at byte {} is outside the {size} bytes of `{}`", offset.node, name.node),
                        ));
                    }
                    if d.init.is_none() {
                        return Err(Diagnostic::error(item.span, "a field of a parameter needs a value (`= 5` or `= &g`)"));
                    }
                    let given = value_bytes(self, width)?;
                    let all = &mut bytes.iter_mut().find(|(w, _)| *w == v).expect("declared above").1;
                    for (k, b) in given.into_iter().enumerate() {
                        all[offset.node as usize + k] = b;
                    }
                }
            }
        }
        for (v, given) in bytes {
            let var = self.variables[v].clone();
            for w in 0..(var.size / 4) as usize {
                let word: Option<Vec<u8>> = (0..4).map(|b| given.get(4 * w + b).copied().unwrap_or(Some(0))).collect();
                let value = match word {
                    Some(b) => i64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
                    None => {
                        let (line, _) = self.source.line_col(var.span.start);
                        crate::program::unknown::encode(self.unknown_origin(UnknownOrigin {
                            line,
                            span: var.span,
                            what: format!("{}+{}", var.name, 4 * w),
                            why: "no value is given for these bytes of the kernel parameter".to_string(),
                            kind: UnknownKind::Parameter,
                        }))
                    }
                };
                let p = self.locations[var.first_location + w].physical;
                self.physical[p].init = value;
            }
        }
        Ok(())
    }

    /// Makes the names thread `t` sees for instanced declarations (its CTA's `.shared`, its own
    /// `.local`) resolve to those instances; returns what they shadowed, for [`Lowerer::leave_view`].
    pub(super) fn enter_view(&mut self, t: usize) -> Vec<(String, Option<usize>)> {
        let view = std::mem::take(&mut self.views[t]);
        let saved = view.iter().map(|(name, l)| (name.clone(), self.by_name.insert(name.clone(), *l))).collect();
        self.views[t] = view;
        saved
    }

    pub(super) fn leave_view(&mut self, saved: Vec<(String, Option<usize>)>) {
        for (name, previous) in saved.into_iter().rev() {
            match previous {
                Some(l) => self.by_name.insert(name, l),
                None => self.by_name.remove(&name),
            };
        }
    }
}

/// The name of a location in a condition, spelt as written: `s@cta1` and `s@cta1+4` name
/// instances; when a declaration has one instance, `s@cta0` is also its plain name `s`.
pub(super) fn canonical_location(instances: &HashMap<String, Vec<(String, String)>>, name: &str) -> Option<String> {
    let (base, rest) = name.split_once('@')?;
    let (suffix, offset) = match rest.split_once('+') {
        Some((s, o)) => (s, format!("+{o}")),
        None => (rest, String::new()),
    };
    let (_, instance) = instances.get(base)?.iter().find(|(s, _)| s == suffix)?;
    Some(format!("{instance}{offset}"))
}

/// The 4-byte words of a variable of `size` bytes whose elements of type `elem` start with
/// `values` (the rest are 0), little-endian (PTX ISA §5.4.4: initialisers give the elements in
/// order). A 32-bit element's word is its value at its type; other words are unsigned patterns.
fn element_words(values: &[i64], elem: Ty, size: i64) -> Vec<i64> {
    let width = (elem.bits / 8) as usize;
    let mut bytes = vec![0u8; size as usize];
    for (k, v) in values.iter().enumerate() {
        let le = (*v as u64).to_le_bytes();
        bytes[k * width..(k + 1) * width].copy_from_slice(&le[..width]);
    }
    bytes
        .chunks(4)
        .map(|w| {
            let word = i64::from(u32::from_le_bytes([w[0], w[1], w[2], w[3]]));
            if elem.bits == 32 {
                elem.with_bits(32).norm(word)
            } else {
                word
            }
        })
        .collect()
}
