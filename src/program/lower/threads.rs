//! Lowering of each thread: its placement, labels, guards and warp lanes (`elect.sync`), the
//! dispatch of each instruction to its lowering, and the `mapa` addresses, resolved once every
//! thread is placed.

use super::labels::Labels;
use super::operands::{describe, InstrLowerer, Quals};
use super::params::is_param_load;
use super::special::Warp;
use super::state::{Lowerer, RegTable};
use crate::diag::{Diagnostic, Spanned};
use crate::litmus::ast::{self, Operand, Statement};
use crate::program::*;

const SUPPORTED: &str = "supported: ld, st, atom, red (and tld/suld/cold/sust/suatom/sured), fence.sc|acq_rel|acquire|release, \
membar, fence.proxy.<generic|surface|texture|constant|alias>, bar.cta.sync|arrive, bar.sync, barrier.sync, bra, goto, \
beq/bne/blt/bgt/ble/bge, ret, exit, trap, mov, add, sub, mul, mad, div, rem, and, or, xor, not, cnot, neg, abs, shl, shr, shf, min, max, \
setp, selp, cvt, cvta, bfe, bfi, brev, clz, popc, bfind, prmt, lop3, bmsk, szext, mul24, mad24, sad, mapa, elect.sync, bar.warp.sync, \
ldmatrix, stmatrix, createpolicy, prefetch, prefetchu, nanosleep, setmaxnreg, griddepcontrol, pmevent, cp.async*, cp.reduce.async.bulk*, \
mbarrier.*, barrier.cluster, wgmma";

impl Lowerer<'_> {
    pub(super) fn placement(&self, header: &ast::ThreadHeader) -> Result<Placement, Diagnostic> {
        let mut p = Placement { cta: 0, cluster: 0, gpu: 0 };
        let mut cluster = None;
        for (level, id) in &header.placement {
            match level.node.as_str() {
                "cta" => p.cta = id.node,
                "gpu" => p.gpu = id.node,
                "cluster" => cluster = Some(id.node),
                // Checked with the other threads' (`special::positions`).
                "tid" => {}
                other => {
                    return Err(Diagnostic::expected(
                        level.span,
                        "a placement level `cta`, `cluster`, `gpu`, `tid` or `warp`",
                        format!("`{other}`"),
                    ))
                }
            }
        }
        // Without an explicit cluster, each CTA is its own cluster: derive a cluster id that no
        // explicit id (they are non-negative) can collide with.
        p.cluster = cluster.unwrap_or(-1 - p.cta);
        Ok(p)
    }

    pub(super) fn lower_thread(&self, stmts: &[Spanned<Statement>], regs: &mut RegTable, warp: Warp) -> Result<Vec<Instr>, Diagnostic> {
        // Labels map to the index of the next instruction, in the `{ }` block that defines them.
        let statement_width = |s: &Spanned<Statement>| match &s.node {
            Statement::Instr(i) => width(i) + usize::from(guarded(i)),
            _ => 0,
        };
        let (labels, blocks) = Labels::new(stmts, &statement_width, &|span| self.source.line_col(span.start).0)?;
        let n: usize = stmts.iter().map(statement_width).sum();
        let mut code = Vec::new();
        for (s, &block) in stmts.iter().zip(&blocks) {
            match &s.node {
                Statement::Decl(d) if d.space.node == ast::DeclSpace::Reg => regs.declare(d)?,
                Statement::Open => regs.open_scope(),
                Statement::Close => regs.close_scope(),
                _ => {}
            }
            if let Statement::Instr(i) = &s.node {
                let (line, _) = self.source.line_col(s.span.start);
                // One space between words: nvcc aligns operands with tabs, which reports would
                // otherwise print verbatim.
                let text = self.source.slice(s.span).split_whitespace().collect::<Vec<_>>().join(" ");
                if let (true, Some((p, negated))) = (guarded(i), &i.guard) {
                    // `@p instr` is a branch over the instruction when p is zero (`@!p`: non-zero),
                    // as `@!p bra` is lowered (PTX ISA §9.7.1: a guarded instruction executes only
                    // when its predicate holds).
                    let r = regs.use_(&p.node, p.span);
                    let skip = if *negated { ast::CmpOp::Ne } else { ast::CmpOp::Eq };
                    let op = Op::Branch { cond: Some((skip, Value::Reg(r), Value::Const(0))), target: code.len() + 1 + width(i) };
                    code.push(Instr { op, span: s.span, text: text.clone(), line });
                }
                if matches!(i.opcode[0].node.as_str(), "ret" | "exit") {
                    let op = thread_end(i, regs, n)?;
                    code.push(Instr { op, span: s.span, text, line });
                    continue;
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
                let lowerer = InstrLowerer { l: self, regs, labels: &labels, block, warp, instr: i, span: s.span, policy: false };
                let ops = match lowerer.lower_ops() {
                    Ok(ops) => ops,
                    // Only a rejection of the instruction itself (its opcode or a qualifier), not
                    // of a bad operand (an undefined register), is the model not interpreting it.
                    Err(rejection) if self.abstracts && super::opaque::is_register_only(i) && i.opcode_span().contains(rejection.span) => {
                        let mut lowerer =
                            InstrLowerer { l: self, regs, labels: &labels, block, warp, instr: i, span: s.span, policy: false };
                        lowerer.opaque(&rejection, width(i))?
                    }
                    Err(e) => return Err(e),
                };
                if ops.len() != width(i) {
                    return Err(Diagnostic::error(
                        s.span,
                        format!("internal error: `{}` lowered to {} operations, {} expected", i.mnemonic(), ops.len(), width(i)),
                    ));
                }
                if i.opcode[0].node == "mapa" {
                    self.mapa_sites.borrow_mut().push((code.len(), s.span));
                }
                for op in ops {
                    code.push(Instr { op, span: s.span, text: text.clone(), line });
                }
            }
        }
        Ok(code)
    }

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
        // A membermask in a register: the run computes the leader from its value (that the
        // executing lane is in it is then not checked).
        let membermask = match &mask.node {
            Operand::Int(m) => {
                let m = *m as u32;
                if m & (1 << warp.lane) == 0 {
                    return Err(Diagnostic::error(
                        mask.span,
                        format!(
                            "membermask {m:#x} does not select this thread's lane {} (PTX ISA: the executing thread must be in membermask)",
                            warp.lane
                        ),
                    )
                    .with_note(
                        "a thread's lane is its tid mod 32 (`tid N` in its placement, or its position among its CTA's threads by id)",
                    ));
                }
                Value::Const(i64::from(m))
            }
            Operand::Name(n) | Operand::PercentName(n) => Value::Reg(regs.use_(n, mask.span)),
            other => return Err(Diagnostic::expected(mask.span, "a membermask (a constant or a register)", describe(other))),
        };
        let mut ops = Vec::new();
        for (k, o) in dests.iter().enumerate() {
            let name = match &o.node {
                Operand::Sink => continue,
                Operand::Name(n) | Operand::PercentName(n) => n,
                other => return Err(Diagnostic::expected(o.span, "a destination register or `_`", describe(other))),
            };
            let (op, a) = match membermask {
                Value::Reg(r) => (LocalOp::Elect { lanes: warp.lanes, lane: warp.lane, is_leader: k == 1 }, Value::Reg(r)),
                Value::Const(m) => (LocalOp::Mov, Value::Const(crate::program::types::elect(warp.lanes, warp.lane, k == 1, m))),
            };
            ops.push(Op::Local { dst: regs.def(name), op, a, b: Value::Const(0), ty: None, c: None });
        }
        if ops.is_empty() {
            // `elect.sync _|_, m`: nothing observable; a jump to the next instruction (the
            // caller sets the target).
            ops.push(Op::Branch { cond: None, target: 0 });
        }
        Ok(ops)
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

/// Whether an instruction has a guard that lowering turns into a branch around it (`bra`, `ret`
/// and `exit` take their guard as their condition).
fn guarded(i: &ast::Instruction) -> bool {
    i.guard.is_some() && !matches!(i.opcode[0].node.as_str(), "bra" | "ret" | "exit")
}

/// `ret` and `exit` (`ret.uni`): the thread ends, as a jump to the end of its code (`end`). A
/// kernel's `ret` returns from the kernel, which ends the thread (PTX ISA, `ret`, `exit`); a
/// guard (`@p ret;`) is the jump's condition.
fn thread_end(i: &ast::Instruction, regs: &mut RegTable, end: usize) -> Result<Op, Diagnostic> {
    let head = i.opcode[0].node.as_str();
    if let Some(q) = i.opcode[1..].iter().find(|q| !(head == "ret" && q.node == "uni")) {
        let accepted = if head == "ret" { "`.uni`" } else { "none" };
        return Err(Diagnostic::error(q.span, format!("unsupported qualifier `.{}` on `{head}`", q.node))
            .with_note(format!("accepted qualifiers: {accepted}")));
    }
    if let Some(o) = i.operands.first() {
        return Err(Diagnostic::expected(o.span, format!("no operand for `{head}` (a kernel returns nothing)"), describe(&o.node)));
    }
    let cond = i.guard.as_ref().map(|(p, negated)| {
        let r = regs.use_(&p.node, p.span);
        let cmp = if *negated { ast::CmpOp::Eq } else { ast::CmpOp::Ne };
        (cmp, Value::Reg(r), Value::Const(0))
    });
    Ok(Op::Branch { cond, target: end })
}

/// How many lowered instructions an instruction becomes (not counting a guard's branch).
fn width(i: &ast::Instruction) -> usize {
    match (i.opcode[0].node.as_str(), i.operands.first().map(|o| &o.node)) {
        ("elect", Some(Operand::Vector(v))) => v.iter().filter(|o| o.node != Operand::Sink).count().max(1),
        _ => super::bits::width(i),
    }
}

/// `mapa`: the address at the same CTA-relative offset in the shared memory of the CTA of the
/// given rank in the executing thread's cluster (`Program::cta_of_rank`, `same_offset_in_cta`).
/// Lowering left `mov d, <address>, <rank>`; this puts the mapped address in its place.
pub(super) fn resolve_mapa(program: &mut Program, sites: &[(usize, usize, Span)]) -> Result<(), Diagnostic> {
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

impl InstrLowerer<'_, '_> {
    /// The operations of one instruction ([`width`] of them): one, except for the bit
    /// instructions lowered to two (`bits::width`).
    fn lower_ops(mut self) -> Result<Vec<Op>, Diagnostic> {
        let head = self.instr.opcode[0].node.clone();
        let rest = self.instr.opcode[1..].to_vec();
        let pair = matches!(self.instr.operands.first().map(|o| &o.node), Some(Operand::Vector(_)));
        let vector_operand = self.instr.operands.iter().take(2).any(|o| matches!(o.node, Operand::Vector(_)));
        match head.as_str() {
            "mov" if vector_operand => self.mov_vector(&rest),
            "bfi" | "lop3" => self.bits(&head, &rest),
            "setp" if pair => self.bits(&head, &rest),
            _ => Ok(vec![self.lower()?]),
        }
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
            "ld" if is_param_load(rest) => self.param_load(rest),
            "ld" | "tld" | "suld" | "cold" => self.load(&head, rest),
            "st" | "red" if rest.first().is_some_and(|p| p.node == "async") => Err(Diagnostic::error(
                self.instr.opcode_span(),
                format!("`{}` is not supported by this version of ptxmm", self.mnemonic()),
            )
            .with_note("st.async and red.async (remote shared-memory stores with an mbarrier) are not modelled; see docs/async-model.md")),
            "st" | "sust" => self.store(&head, rest),
            "atom" | "suatom" | "red" | "sured" => self.rmw(&head, rest),
            "fence" => self.fence(rest),
            "tensormap" => self.tensormap(rest),
            "membar" => self.membar(rest),
            "bar" if rest.first().is_some_and(|p| p.node == "warp") => {
                let mut q = Quals::new(&rest[1..]);
                let sync = q.take(&["sync"]);
                q.finish("bar.warp", ".sync")?;
                if sync.is_none() {
                    return Err(Diagnostic::error(self.instr.opcode_span(), "the form is `bar.warp.sync membermask`"));
                }
                self.warp_barrier()
            }
            "bar" | "barrier" => self.barrier(&head, rest),
            "beq" | "bne" | "blt" | "bgt" | "ble" | "bge" => self.cond_branch(&head, rest),
            "goto" | "bra" => self.jump(rest),
            "mov" | "add" | "sub" | "mul" | "div" | "rem" | "and" | "or" | "xor" | "shl" | "shr" | "min" | "max" => self.local(&head, rest),
            "mad" => self.mad(rest),
            "selp" => self.selp(rest),
            "cvt" => self.cvt(rest),
            "cvta" => self.cvta(rest),
            "not" | "neg" => self.unary(&head, rest),
            "setp" => self.setp(rest),
            "bfe" | "brev" | "clz" | "popc" | "bfind" | "prmt" | "shf" | "bmsk" | "szext" | "mul24" | "mad24" | "sad" | "cnot" | "abs" => {
                let mut ops = self.bits(&head, rest)?;
                Ok(ops.remove(0))
            }
            "ldmatrix" | "stmatrix" => self.matrix(&head, rest),
            "nanosleep" | "setmaxnreg" | "griddepcontrol" | "prefetch" | "prefetchu" | "pmevent" => self.no_effect(&head, rest),
            "trap" => self.trap(rest),
            "shfl" | "vote" | "match" | "redux" | "activemask" => self.warp_exchange(&head, rest),
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
}
