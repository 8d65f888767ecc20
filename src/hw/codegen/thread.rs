//! One test thread's column as one inline-PTX block: its registers (declared at the widths
//! `regs` gives them, with the conversions of operands used at another width), the rendering of
//! operands (registers, literals, variables as addresses in the form each state space needs),
//! bounded spin loops, and the asm statement with its operands.

use super::super::{reject, HwTest, Rejection};
use super::layout::{address_expr, AddrForm, Layout};
use super::ops::{lowered, own_shared, reg_name, variable_of};
use super::regs::{register_kinds, scratch_name, RegKind};
use crate::diag::Span;
use crate::litmus::ast::{DeclInit, DeclSpace, InitItem, Instruction, Operand, Statement};
use crate::program::{CopyKind, Observable, Op, Program, Space, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// The per-thread emission state.
pub(super) struct ThreadGen<'a> {
    pub test: &'a HwTest<'a>,
    pub layout: &'a Layout,
    pub thread: usize,
    pub dense_cta: usize,
    /// `90` for sm_90a: features of later architectures are rejected.
    pub arch_major: u32,
    pub regs: BTreeMap<String, RegKind>,
    /// Scratch registers that operands used at another width than their register's go
    /// through (`regs`), declared after the prologue's.
    pub scratch: BTreeMap<String, RegKind>,
    /// Address operands of the asm block: (variable, form), in operand order after the outputs.
    pub addr_operands: Vec<(usize, AddrForm)>,
    pub first_input: usize,
}

impl ThreadGen<'_> {
    pub fn program(&self) -> &Program {
        self.test.program
    }

    /// The variable a name means in this thread's code ([`variable_of`]).
    pub fn variable(&self, name: &str) -> Option<usize> {
        variable_of(self.program(), self.thread, name)
    }

    /// Whether a variable is in the shared memory of this thread's CTA.
    pub fn own_shared(&self, var: usize) -> bool {
        own_shared(self.program(), self.thread, var)
    }

    /// A register's PTX name ([`reg_name`]).
    pub fn reg_name(name: &str) -> String {
        reg_name(name)
    }

    /// The asm operand holding a variable's address in a form; one operand per distinct
    /// address expression.
    pub fn operand_index(&mut self, var: usize, form: AddrForm) -> usize {
        let expr = address_expr(self.test, self.layout, self.dense_cta, var, form);
        let pos = match self.addr_operands.iter().position(|&(v, f)| address_expr(self.test, self.layout, self.dense_cta, v, f) == expr) {
            Some(i) => i,
            None => {
                self.addr_operands.push((var, form));
                self.addr_operands.len() - 1
            }
        };
        self.first_input + pos
    }

    /// Shared memory is addressable from the CTAs of its own cluster only.
    pub fn reachable(&self, var: usize, span: Span) -> Result<(), Rejection> {
        let p = self.program();
        if let Space::Shared { cta } = p.variables[var].space {
            let own = self.layout.ctas[self.dense_cta];
            if p.cluster_of_cta(cta) != p.cluster_of_cta(own) {
                return Err(reject(
                    p,
                    span,
                    format!(
                        "`{}` is shared memory of CTA {cta}, outside the cluster of CTA {own}: no address reaches it",
                        p.variables[var].name
                    ),
                ));
            }
        }
        Ok(())
    }

    fn address(&mut self, inner: &Operand, offset: i64, form: AddrForm, span: Span) -> Result<String, Rejection> {
        let base = match inner {
            Operand::Name(n) | Operand::PercentName(n) if self.regs.contains_key(&Self::reg_name(n)) => Self::reg_name(n),
            Operand::Name(n) => match self.variable(n) {
                Some(v) => {
                    self.reachable(v, span)?;
                    format!("%{}", self.operand_index(v, form))
                }
                None => return Err(reject(self.program(), span, format!("`{n}` is neither a register nor a variable"))),
            },
            other => return Err(reject(self.program(), span, format!("address operand {other:?} is not generated"))),
        };
        Ok(match offset {
            0 => format!("[{base}]"),
            o => format!("[{base}+{o}]"),
        })
    }

    pub fn operand(&mut self, op: &Operand, form: &mut impl FnMut() -> AddrForm, span: Span) -> Result<String, Rejection> {
        Ok(match op {
            Operand::Name(n) | Operand::PercentName(n) => {
                let r = Self::reg_name(n);
                if self.regs.contains_key(&r) {
                    r
                } else if let Some(v) = self.program().threads[self.thread].specials.get(n) {
                    // The value the model gave the special register: the harness's own thread
                    // and CTA numbers are not the test's placement.
                    v.to_string()
                } else if let Some(f) = n.contains('.').then(|| n.parse::<f32>().ok()).flatten() {
                    // A decimal float literal (`createpolicy.fractional … 0.25`): PTX spells
                    // f32 immediates as bit patterns.
                    format!("0f{:08X}", f.to_bits())
                } else if self.variable(n).is_some() {
                    // The Dat3M dialect names a location without brackets.
                    let f = form();
                    self.address(op, 0, f, span)?
                } else {
                    n.clone()
                }
            }
            Operand::Int(i) => i.to_string(),
            Operand::Address(inner, off) => {
                let f = form();
                self.address(&inner.node, *off, f, inner.span)?
            }
            Operand::Sink => "_".into(),
            Operand::Negated(inner) => format!("!{}", self.operand(&inner.node, form, inner.span)?),
            Operand::Vector(items) => {
                let mut out = Vec::new();
                for it in items {
                    out.push(self.operand(&it.node, form, it.span)?);
                }
                format!("{{{}}}", out.join(", "))
            }
            Operand::AddressOf(n) => match self.variable(n) {
                Some(v) => {
                    self.reachable(v, span)?;
                    format!("%{}", self.operand_index(v, AddrForm::Generic))
                }
                None => return Err(reject(self.program(), span, format!("`&{n}`: no such variable"))),
            },
            // `[tmap, {c0, ...}]`: the generic address of this instance's encoded map.
            Operand::TensorAddress(base, coords) => {
                let Operand::Name(n) = &base.node else {
                    return Err(reject(self.program(), base.span, "a tensor operand's map must be a tensor map's name"));
                };
                let Some(v) = self.variable(n).filter(|&v| self.program().is_tensor_map(v)) else {
                    return Err(reject(self.program(), base.span, format!("`{n}` is not a tensor map")));
                };
                // The map's operand consumes the opcode's state space of its position (the
                // mbarrier after it follows the destination's).
                let _ = form();
                let k = self.operand_index(v, AddrForm::Generic);
                let mut cs = Vec::new();
                for c in coords {
                    cs.push(self.operand(&c.node, form, c.span)?);
                }
                format!("[%{k}, {{{}}}]", cs.join(", "))
            }
        })
    }

    pub fn is_64(&self, op: &Operand) -> bool {
        match op {
            Operand::Name(n) | Operand::PercentName(n) => self.regs.get(&Self::reg_name(n)) == Some(&RegKind::B64),
            _ => false,
        }
    }
}

/// A C++ string literal line of an asm template.
fn asm_line(s: &str) -> String {
    let escaped = s.replace('\\', "\\\\").replace('"', "\\\"");
    format!("      \"{escaped}\\n\\t\"\n")
}

/// Labels that a later branch of the thread jumps back to: spin loops, bounded on the device.
fn backward_labels(p: &Program, thread: usize, code: &[crate::diag::Spanned<Statement>]) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut backward = BTreeSet::new();
    for st in code {
        match &st.node {
            Statement::Label(l) => {
                seen.insert(l.clone());
            }
            Statement::Decl(_) | Statement::Open | Statement::Close => {}
            Statement::Instr(ins) => {
                if !lowered(p, thread, ins, st.span).ops.iter().any(|i| matches!(i.op, Op::Branch { .. })) {
                    continue;
                }
                for o in &ins.operands {
                    if let Operand::Name(n) = &o.node {
                        if seen.contains(n) {
                            backward.insert(n.clone());
                        }
                    }
                }
            }
        }
    }
    backward
}

/// The last declaration of the harness's own scratch registers (`hw_w1`, `hw_w2`: 64-bit
/// conversions of an instruction's first two sources).
const HARNESS_SCRATCH_LAST: &str = ".reg .b64 hw_w1, hw_w2;";

/// The asm template's prologue: register declarations, the harness's scratch registers, and
/// the initial register values.
fn prologue(gen: &mut ThreadGen) -> Vec<String> {
    let p = gen.test.program;
    let th = &p.threads[gen.thread];
    let mut body = Vec::new();
    for (r, kind) in &gen.regs {
        body.push(kind.declaration(r));
    }
    body.push(".reg .pred hw_p;".into());
    body.push(".reg .b32 hw_spin;".into());
    body.push(".reg .b32 hw_count;".into());
    body.push(".reg .b32 hw_sink32;".into());
    body.push(".reg .b64 hw_sink64;".into());
    body.push(".reg .b32 hw_a32;".into());
    body.push(".reg .b64 hw_a64;".into());
    body.push(HARNESS_SCRATCH_LAST.into());
    body.push("mov.b32 hw_spin, 0;".into());
    body.push("mov.b32 %1, 0;".into());
    for (i, r) in th.registers.iter().enumerate() {
        let name = ThreadGen::reg_name(r);
        match gen.regs.get(&name) {
            Some(RegKind::Pred) => body.push(format!("setp.ne.u32 {name}, {}, 0;", th.reg_init[i] as u32)),
            Some(RegKind::B64) => body.push(format!("mov.b64 {name}, {};", th.reg_init[i])),
            Some(RegKind::B16 | RegKind::S16) => body.push(format!("mov.b16 {name}, {};", th.reg_init[i] as u16)),
            _ => body.push(format!("mov.b32 {name}, {};", th.reg_init[i] as u32)),
        }
    }
    // Registers initialised with an address (`P0:r1 = &x;`).
    let test = gen.test;
    for item in &test.ast.init {
        if let InitItem::RegisterAddress { thread: t, lane, reg, location } = &item.node {
            if t.node == th.id && *lane == th.lane {
                let Some(v) = gen.variable(&location.node) else { continue };
                let k = gen.operand_index(v, AddrForm::Generic);
                body.push(format!("mov.b64 {}, %{k};", ThreadGen::reg_name(&reg.node)));
            }
        }
    }
    body
}

pub(super) fn thread_function(
    test: &HwTest,
    layout: &Layout,
    thread: usize,
    obs: &[Observable],
    arch_major: u32,
) -> Result<String, Rejection> {
    let p = test.program;
    let th = &p.threads[thread];
    let dense_cta = layout.dense_cta(th.placement.cta);
    let regs = register_kinds(test, thread)?;
    let outputs: Vec<(usize, usize)> = obs
        .iter()
        .enumerate()
        .filter_map(|(k, o)| matches!(o, Observable::Register(t, _) if *t == thread).then_some(k))
        .map(|k| (k, k))
        .collect();
    let mut gen = ThreadGen {
        test,
        layout,
        thread,
        dense_cta,
        arch_major,
        regs,
        scratch: BTreeMap::new(),
        addr_operands: Vec::new(),
        first_input: outputs.len() + 3,
    };
    let code = test.ast.column(thread).to_vec();
    let backward = backward_labels(p, thread, &code);
    let mut body = prologue(&mut gen);
    let mut depth = 0usize;
    for st in &code {
        match &st.node {
            Statement::Label(l) => {
                body.push(format!("{l}:"));
                if backward.contains(l) {
                    body.push("add.u32 hw_spin, hw_spin, 1;".into());
                    body.push("setp.gt.u32 hw_p, hw_spin, %2;".into());
                    body.push("@hw_p bra HW_HANG;".into());
                }
            }
            Statement::Instr(ins) => match block_instruction(&mut gen, ins, st.span) {
                Some(lines) => body.extend(lines?),
                None => body.extend(gen.instruction(ins, st.span)?),
            },
            // A nested scope's registers are its own (they shadow the prologue's); the top
            // scope's are declared by the prologue, at the widths the declarations give;
            // variables are placed by the layout.
            Statement::Decl(d) if depth > 0 && d.space.node == DeclSpace::Reg => {
                let names: Vec<String> = d
                    .names
                    .iter()
                    .map(|n| match &n.range {
                        Some(count) => format!("{}<{}>", ThreadGen::reg_name(&n.name.node), count.node),
                        None => ThreadGen::reg_name(&n.name.node),
                    })
                    .collect();
                body.push(format!(".reg .{} {};", d.ty.node, names.join(", ")));
            }
            Statement::Decl(_) => {}
            Statement::Open => {
                depth += 1;
                body.push("{".into());
            }
            Statement::Close => {
                depth = depth.saturating_sub(1);
                body.push("}".into());
            }
        }
    }
    // The scratch registers the conversions used, after the harness's own.
    let at = body.iter().position(|l| l == HARNESS_SCRATCH_LAST).map_or(0, |i| i + 1);
    body.splice(at..at, gen.scratch.iter().map(|(r, k)| k.declaration(r)));
    body.push("bra.uni HW_END;".into());
    body.push("HW_HANG:".into());
    body.push("mov.b32 %1, 1;".into());
    body.push("HW_END:".into());
    // The thread's `cp.async` copies still in flight land before the CTA's shared observables
    // are read (the model's final state has every copy complete; the H200 read a copy's
    // destination before it landed). Bulk copies have no such wait: `check_test`.
    if th.code.iter().any(|i| matches!(&i.op, Op::AsyncCopy(c) if c.kind == CopyKind::CpAsync)) {
        body.push("cp.async.wait_all;".into());
    }
    for (slot, k) in &outputs {
        let Observable::Register(_, r) = obs[*k] else { continue };
        let name = ThreadGen::reg_name(&th.registers[r]);
        let idx = outputs.iter().position(|(s, _)| s == slot).unwrap_or(0) + 3;
        body.push(match gen.regs.get(&name) {
            Some(RegKind::Pred) => format!("selp.u64 %{idx}, 1, 0, {name};"),
            Some(RegKind::B64) => format!("mov.b64 %{idx}, {name};"),
            Some(RegKind::B16) => format!("cvt.u64.u16 %{idx}, {name};"),
            Some(RegKind::S16) => format!("cvt.s64.s16 %{idx}, {name};"),
            _ => format!("cvt.u64.u32 %{idx}, {name};"),
        });
    }
    let mut out = String::new();
    let _ = writeln!(out, "// {} @ cta {}, cluster {}, gpu {}", th.name(), th.placement.cta, th.placement.cluster, th.placement.gpu);
    let _ = writeln!(out, "__device__ __noinline__ void thread_{}(unsigned char* gbase, unsigned char* smem, unsigned long long* res, unsigned* hang, unsigned bound) {{", th.ident());
    for (k, _) in &outputs {
        let _ = writeln!(out, "  unsigned long long out{k};");
    }
    let _ = writeln!(out, "  unsigned hung;");
    let _ = writeln!(out, "  asm volatile(\"{{\\n\\t\"");
    // Renumber: the template was written with %1 = hang, %2 = bound, %(k+2)... for outputs, and
    // inputs from first_input; the real order is outputs, hang, bound, addresses.
    let n_out = outputs.len();
    let text = body.join("\n");
    let text = renumber(&text, n_out, gen.first_input);
    for line in text.lines() {
        let indent = if line.ends_with(':') { "" } else { "  " };
        out.push_str(&asm_line(&format!("{indent}{line}")));
    }
    out.push_str("      \"}\"\n");
    let mut outs: Vec<String> = outputs.iter().map(|(k, _)| format!("\"=l\"(out{k})")).collect();
    outs.push("\"=r\"(hung)".into());
    let mut ins = vec!["\"r\"(bound)".to_string()];
    for &(v, form) in &gen.addr_operands {
        let (expr, c) = address_expr(test, layout, dense_cta, v, form);
        ins.push(format!("\"{c}\"({expr})"));
    }
    let _ = writeln!(out, "      : {}", outs.join(", "));
    let _ = writeln!(out, "      : {}", ins.join(", "));
    let _ = writeln!(out, "      : \"memory\");");
    for (k, _) in &outputs {
        let _ = writeln!(out, "  res[{k}] = out{k};");
    }
    let _ = writeln!(out, "  if (hung) atomicOr(hang, 1u << {thread});");
    let _ = writeln!(out, "}}");
    Ok(out)
}

/// `ld.param` reads a kernel parameter of the test, which the harness's function does not have:
/// it becomes the bound value, or the address where the harness placed the bound variable.
fn block_instruction(gen: &mut ThreadGen, ins: &Instruction, span: Span) -> Option<Result<Vec<String>, Rejection>> {
    let p = gen.test.program;
    let guard = match &ins.guard {
        Some((g, neg)) => format!("@{}{} ", if *neg { "!" } else { "" }, ThreadGen::reg_name(&g.node)),
        None => String::new(),
    };
    let parts: Vec<&str> = ins.opcode.iter().map(|o| o.node.as_str()).collect();
    if parts[0] != "ld" || !parts.iter().any(|q| matches!(*q, "param" | "param::entry")) {
        return None;
    }
    let (Some(dst), Some(src)) = (ins.operands.first(), ins.operands.get(1)) else { return None };
    let Operand::Address(inner, 0) = &src.node else {
        return Some(Err(reject(p, src.span, "`ld.param` at an offset is not generated")));
    };
    let Operand::Name(name) = &inner.node else { return None };
    let d = ThreadGen::reg_name(match &dst.node {
        Operand::Name(n) | Operand::PercentName(n) => n,
        _ => return None,
    });
    let wide = gen.regs.get(&d) == Some(&RegKind::B64);
    let bound = gen.test.ast.init.iter().find_map(|item| match &item.node {
        InitItem::Declaration(decl) if decl.space.node == DeclSpace::Param && decl.names.first().is_some_and(|n| &n.name.node == name) => {
            decl.init.as_ref().map(|i| i.node.clone())
        }
        _ => None,
    });
    Some(match bound {
        Some(DeclInit::AddressOf(var)) => match gen.variable(&var) {
            Some(v) if wide => {
                let k = gen.operand_index(v, AddrForm::Generic);
                Ok(vec![format!("{guard}mov.b64 {d}, %{k};")])
            }
            _ => {
                Err(reject(p, span, format!("`ld.param` of the address of `{var}` into a register narrower than 64 bits is not generated")))
            }
        },
        // The value lowering gave the load (its bytes at the load's type).
        _ => match lowered(p, gen.thread, ins, span).ops.first().map(|i| &i.op) {
            Some(Op::Local { a: Value::Const(v), .. }) if wide => Ok(vec![format!("{guard}mov.b64 {d}, {v};")]),
            Some(Op::Local { a: Value::Const(v), .. }) => Ok(vec![format!("{guard}mov.b32 {d}, {};", *v as u32)]),
            _ => Err(reject(p, span, "this `ld.param` is not generated")),
        },
    })
}

/// Map template operand numbers (1 = hang, 2 = bound, 3.. = outputs, first_input.. = addresses)
/// to asm order (outputs, hang, bound, addresses).
fn renumber(text: &str, n_out: usize, first_input: usize) -> String {
    let mut out = String::new();
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let digits: String = text[i + 1..].chars().take_while(char::is_ascii_digit).collect();
        if digits.is_empty() {
            out.push_str("%%");
            continue;
        }
        for _ in 0..digits.len() {
            chars.next();
        }
        let n: usize = digits.parse().unwrap_or(0);
        let mapped = match n {
            1 => n_out,
            2 => n_out + 1,
            n if n < first_input => n - 3,
            n => n_out + 2 + (n - first_input),
        };
        let _ = write!(out, "%{mapped}");
    }
    out
}

/// Operands used at another width than their register's declaration (`regs`).
impl ThreadGen<'_> {
    /// A scratch register of `kind` for operand `pos`, declared on first use.
    fn scratch(&mut self, kind: RegKind, pos: usize) -> String {
        let name = scratch_name(kind.bits(), pos);
        if !(kind == RegKind::B64 && (1..=2).contains(&pos)) {
            self.scratch.insert(name.clone(), kind);
        }
        name
    }

    /// The text that reads register `reg` at `want`'s width as operand `pos`: the register
    /// itself when its declaration has that width, else a scratch register converted into
    /// (`pre` gets the conversion): truncated when narrower, extended when wider (a 16-bit
    /// register that signed types write sign-extended, as the model holds it; others
    /// zero-extended, as 32-bit values and Dat3M's non-negative integers are).
    pub(super) fn read_as(&mut self, reg: &str, want: RegKind, pos: usize, pre: &mut Vec<String>) -> String {
        let Some(&have) = self.regs.get(reg) else { return reg.to_string() };
        if have == RegKind::Pred || want == RegKind::Pred || have.bits() == want.bits() {
            return reg.to_string();
        }
        let tmp = self.scratch(want, pos);
        let (to, from) = (want.bits(), have.bits());
        let sign = if have == RegKind::S16 && to > from { "s" } else { "u" };
        pre.push(format!("cvt.{sign}{to}.{sign}{from} {tmp}, {reg};"));
        tmp
    }

    /// The text that writes register `reg` at `want`'s width as operand `pos`: the register
    /// itself when its declaration has that width, else a scratch register whose value `post`
    /// converts into the register (guarded as the instruction is): sign-extended when the
    /// instruction's type is signed, zero-extended otherwise, truncated when narrower.
    pub(super) fn write_as(&mut self, reg: &str, want: RegKind, signed: bool, guard: &str, post: &mut Vec<String>) -> String {
        let Some(&have) = self.regs.get(reg) else { return reg.to_string() };
        if have == RegKind::Pred || want == RegKind::Pred || have.bits() == want.bits() {
            return reg.to_string();
        }
        let tmp = self.scratch(want, 0);
        let (to, from) = (have.bits(), want.bits());
        let sign = if signed && to > from { "s" } else { "u" };
        post.push(format!("{guard}cvt.{sign}{to}.{sign}{from} {reg}, {tmp};"));
        tmp
    }
}
