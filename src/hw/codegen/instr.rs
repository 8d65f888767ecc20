//! One instruction's PTX lines, decided from its lowered operation (`program::Op`, found by the
//! statement's span): an operation whose text is already PTX is written as it stands, a Dat3M
//! spelling is rewritten from the lowered fields (compare-and-branch, untyped accesses and
//! arithmetic, `red.acquire`/`red.acq_rel`, `.sub` atomics, `bar.cta.sync`), and an operation
//! without a device form is rejected with the reason. The match over `Op` has no catch-all arm,
//! so an operation lowering learns does not compile here until it is emitted or rejected.
//!
//! The text still supplies what the operation does not carry: the spelling of types, cache
//! hints and state spaces, the operands in their address forms, and the label names.

use super::super::{reject, Rejection};
use super::layout::AddrForm;
use super::ops::{evaluated, has_64bit_type, is_type_part, is_untyped_register_op, lowered, space_tokens, Evaluated};
use super::regs::{operand_widths, writes_first_operand, RegKind, Width};
use super::thread::ThreadGen;
use crate::diag::Span;
use crate::litmus::ast::{CmpOp, Instruction, Operand};
use crate::program::types::Kind;
use crate::program::{CopyKind, GroupKind, LocalOp, MbOp, NoEffect, Op, Proxy, RmwOp, Sem, Ty, Value};

/// The named barrier the harness synchronises a CTA's test warps with after the test.
const HARNESS_BARRIER: i64 = 15;

/// Why warpgroup matrix operations have no device form in the harness.
const WGMMA: &str = "wgmma needs a whole warpgroup and matrix descriptors, while the harness runs one thread per warp";

/// Why `elect.sync` has no device form in the harness.
const ELECT: &str = "elect.sync needs the whole warp, while the harness runs lane 0 only";

/// Why the warp-collective instructions the model gives a meaning lane by lane have no device
/// form in the harness.
const WARP_COLLECTIVE: &str =
    "it is a collective of the lanes of one warp, while the harness runs each test thread as a warp of its own (lane 0 only)";

/// PTX's spelling of a comparison (`setp.<cmp>`).
fn ptx_cmp(cmp: CmpOp) -> &'static str {
    match cmp {
        CmpOp::Eq => "eq",
        CmpOp::Ne => "ne",
        CmpOp::Lt => "lt",
        CmpOp::Le => "le",
        CmpOp::Gt => "gt",
        CmpOp::Ge => "ge",
    }
}

/// Why an access through a proxy other than the generic one has no device form (None: it has
/// one). `what` names the access (`load`, `store`, `reduction`).
fn proxy_reason(proxy: Proxy, what: &str) -> Option<String> {
    match proxy {
        Proxy::Generic | Proxy::Async => None,
        Proxy::Surface => Some(format!("a surface {what} needs a CUDA array, which no generic address can alias")),
        Proxy::Texture => Some("texture proxy accesses aliasing generic memory are not generated".into()),
        Proxy::Constant => Some("constant-space aliases of writable memory do not exist on the device".into()),
    }
}

/// The name Dat3M's `fence.proxy.<kind>` gives a proxy that PTX has no fence kind for.
fn proxy_kind(proxy: Proxy) -> Option<&'static str> {
    match proxy {
        Proxy::Async => None,
        Proxy::Generic => Some("generic"),
        Proxy::Surface => Some("surface"),
        Proxy::Texture => Some("texture"),
        Proxy::Constant => Some("constant"),
    }
}

/// PTX's opcode of a register operation (`mul` keeps the low half, as the model does) and the
/// kind of its type (`s` signed, as the model's integers are; `b` for bit operations).
fn local_opcode(op: LocalOp) -> (String, &'static str) {
    let (name, kind) = match op {
        LocalOp::Mov => ("mov", "b"),
        LocalOp::Add => ("add", "s"),
        LocalOp::Sub => ("sub", "s"),
        LocalOp::Mul => ("mul.lo", "s"),
        LocalOp::Div => ("div", "s"),
        LocalOp::Rem => ("rem", "s"),
        LocalOp::And => ("and", "b"),
        LocalOp::Or => ("or", "b"),
        LocalOp::Xor => ("xor", "b"),
        LocalOp::Shl => ("shl", "b"),
        LocalOp::Shr => ("shr", "s"),
        LocalOp::Min => ("min", "s"),
        LocalOp::Max => ("max", "s"),
        LocalOp::Set(cmp) => return (format!("setp.{}", ptx_cmp(cmp)), "s"),
        // Lowering types these (or evaluates them: `mapa`, `elect.sync`), so they are written as
        // they stand; the names are for completeness.
        LocalOp::MulWide => ("mul.wide", "s"),
        LocalOp::MulHi => ("mul.hi", "s"),
        LocalOp::Mad => ("mad.lo", "s"),
        LocalOp::MadWide => ("mad.wide", "s"),
        LocalOp::Selp => ("selp", "b"),
        LocalOp::Cvt(_) => ("cvt", "s"),
        LocalOp::Mapa => ("mapa", "b"),
        LocalOp::Elect { .. } => ("elect.sync", "b"),
        LocalOp::Bfe => ("bfe", "s"),
        LocalOp::Bfi | LocalOp::BfiField => ("bfi", "b"),
        LocalOp::Brev => ("brev", "b"),
        LocalOp::Clz => ("clz", "b"),
        LocalOp::Popc => ("popc", "b"),
        LocalOp::Bfind { .. } => ("bfind", "s"),
        LocalOp::Prmt(_) => ("prmt", "b"),
        LocalOp::Lop3(_) | LocalOp::Lop3Pred { .. } => ("lop3", "b"),
        LocalOp::Shf { .. } => ("shf", "b"),
        LocalOp::Bmsk { .. } => ("bmsk", "b"),
        LocalOp::Szext { .. } => ("szext", "s"),
        LocalOp::Mul24 { .. } => ("mul24", "s"),
        LocalOp::Mad24 { .. } => ("mad24", "s"),
        LocalOp::Sad => ("sad", "s"),
        LocalOp::Cnot => ("cnot", "b"),
        LocalOp::Abs => ("abs", "s"),
        LocalOp::Relu { .. } => ("min.relu", "s"),
    };
    (name.to_string(), kind)
}

/// A PTX instruction to write: its opcode parts and operands, as written or as rewritten.
struct Emission {
    parts: Vec<String>,
    operands: Vec<(Operand, Span)>,
    /// Operands naming a variable stand for its address as a value (`mapa d, s, 1`, `mov r, x`),
    /// not for a memory operand `[s]`.
    address_values: bool,
}

impl Emission {
    fn as_written(ins: &Instruction) -> Emission {
        Emission {
            parts: ins.opcode.iter().map(|p| p.node.clone()).collect(),
            operands: ins.operands.iter().map(|o| (o.node.clone(), o.span)).collect(),
            address_values: false,
        }
    }

    fn has_type(&self) -> bool {
        self.parts.iter().any(|p| is_type_part(p))
    }
}

impl ThreadGen<'_> {
    /// The PTX lines of one instruction.
    pub(super) fn instruction(&mut self, ins: &Instruction, span: Span) -> Result<Vec<String>, Rejection> {
        let p = self.test.program;
        let mnemonic = ins.mnemonic();
        let guard = match &ins.guard {
            Some((g, neg)) => format!("@{}{} ", if *neg { "!" } else { "" }, Self::reg_name(&g.node)),
            None => String::new(),
        };
        let lowered = lowered(p, self.thread, ins, span);
        let Some(first) = lowered.ops.first() else {
            return Err(reject(p, span, format!("`{mnemonic}` has no lowered operation")));
        };
        let not_generated = |why: &str| Err(reject(p, span, format!("instruction `{mnemonic}` is not generated: {why}")));
        let written = Emission::as_written(ins);
        match &first.op {
            Op::Load { ty, proxy, .. } => match proxy_reason(*proxy, "load") {
                Some(why) => not_generated(&why),
                None => self.untyped_access(written, *ty, ins, &guard),
            },
            Op::Store { ty, proxy, .. } => match proxy_reason(*proxy, "store") {
                Some(why) => not_generated(&why),
                None => self.untyped_access(written, *ty, ins, &guard),
            },
            Op::LoadVector { .. } | Op::StoreVector { .. } => {
                let mut e = written;
                // Vector elements are 32-bit words, whatever type the text names (or none).
                if !e.has_type() {
                    e.parts.push("b32".into());
                }
                self.emit(e, &guard)
            }
            Op::Rmw { dst, ty, op, operands, sem, proxy, .. } => match proxy_reason(*proxy, "reduction") {
                Some(why) => not_generated(&why),
                None => self.rmw(
                    written,
                    Rmw { dst: dst.is_some(), ty: *ty, op: *op, value: operands.first().copied(), sem: *sem },
                    ins,
                    span,
                    &guard,
                ),
            },
            Op::AsyncCopy(copy)
                if copy.kind == CopyKind::Bulk && copy.tensor.is_none() && matches!(copy.size, Value::Const(size) if size % 16 != 0) =>
            {
                not_generated("ptxas refuses a constant bulk copy size that is not a multiple of 16 (the model: undefined)")
            }
            Op::AsyncCopy(copy) if matches!((copy.size, copy.src_size), (Value::Const(size), Some(Value::Const(src))) if src > size) => {
                not_generated("ptxas refuses a constant src-size larger than the cp-size (the model: undefined, U4)")
            }
            Op::AsyncCopy(copy) => {
                if copy.kind == CopyKind::Wgmma {
                    return not_generated(WGMMA);
                }
                if copy.byte_mask.is_some() && self.arch_major < 100 {
                    return Err(reject(
                        p,
                        span,
                        format!(
                            "instruction `{mnemonic}`: `.cp_mask` needs sm_100 or later (ptxas); the harness is generated for a lower architecture"
                        ),
                    ));
                }
                self.emit(written, &guard)
            }
            Op::CommitGroup(kind) | Op::WaitGroup { kind, .. } => match kind {
                GroupKind::Wgmma => not_generated(WGMMA),
                GroupKind::CpAsync | GroupKind::Bulk => self.emit(written, &guard),
            },
            Op::Wgmma { .. } | Op::WgmmaFence => not_generated(WGMMA),
            // ptxas refuses a constant bulk size that is not a multiple of 16 (undefined behaviour
            // in the model, §9.7.9.25.4.3): the program would not build.
            Op::Prefetch { bulk: Some((_, Value::Const(size))) } if size % 16 != 0 => {
                not_generated(&format!("ptxas refuses a bulk prefetch size of {size} bytes (not a multiple of 16; the model: undefined)"))
            }
            Op::Mbarrier { op: MbOp::Wait { parity: true, operand: Value::Const(parity) }, .. } if !matches!(parity, 0 | 1) => {
                not_generated(&format!("ptxas refuses a constant phase parity of {parity} (only 0 or 1; the model: undefined, M6)"))
            }
            Op::Prefetch { .. }
            | Op::CpAsyncArrive { .. }
            | Op::Mbarrier { .. }
            | Op::ClusterBarrier { .. }
            | Op::Fence { .. }
            | Op::AliasFence => self.emit(written, &guard),
            Op::ProxyFence { proxy, .. } => match proxy_kind(*proxy) {
                Some(kind) => not_generated(&format!("`.{kind}` is not a PTX proxy kind (Dat3M dialect)")),
                None => self.emit(written, &guard),
            },
            Op::Barrier { instance, id, count, arrive, .. } => self.barrier((*instance, *id, *count, *arrive), &guard, span, &mnemonic),
            Op::Matrix(_) | Op::WarpBarrier { .. } | Op::Exchange(_) => not_generated(WARP_COLLECTIVE),
            Op::TensormapReplace { .. } | Op::TensormapCopy { .. } | Op::TensormapFence { .. } => not_generated(
                "the tensormap proxy's instructions modify and fence tensor maps, and ptxmm keeps its own layout of a map's fields (NVIDIA's is opaque), so a harness cannot build one",
            ),
            Op::Trap => not_generated("trap aborts the whole launch, and with it every other test of the harness"),
            Op::NoEffect(NoEffect::SetMaxNReg { .. }) => {
                not_generated("setmaxnreg must be executed by every warp of a warpgroup, while the harness runs one thread per warp")
            }
            Op::NoEffect(NoEffect::Sleep(_) | NoEffect::GridDepControl { .. } | NoEffect::Prefetch { .. } | NoEffect::PmEvent) => {
                self.emit(written, &guard)
            }
            Op::Local { op, ty, .. } => match evaluated(ins) {
                Some(Evaluated::Elect) => not_generated(ELECT),
                Some(Evaluated::Mapa) => self.emit(Emission { address_values: true, ..written }, &guard),
                Some(Evaluated::CreatePolicy) => self.createpolicy(written, &guard),
                None if is_untyped_register_op(ins, *ty) => self.untyped_local(written, *op, ins, &guard),
                // A typed register operation, or one of predicates (`not.pred`), is PTX as written.
                None => self.emit(Emission { address_values: true, ..written }, &guard),
            },
            Op::ParamLoad { .. } => not_generated("it reads kernel parameter bytes through a register (a harness binds parameters as constants)"),
            Op::Opaque { .. } => {
                not_generated("ptxmm abstracted it (the model does not interpret it, so its results are unknown and no outcome that depends on them can be judged)")
            }
            Op::Branch { cond, .. } => match (evaluated(ins), cond) {
                (Some(Evaluated::Elect), _) => not_generated(ELECT),
                // `ret`/`exit` end the test's code, not the device thread: the harness still
                // records the registers and joins its barriers after HW_END.
                _ if matches!(ins.opcode[0].node.as_str(), "ret" | "exit") => Ok(vec![format!("{guard}bra HW_END;")]),
                // `@p bra L`: PTX's own conditional branch.
                (_, Some(_)) if ins.guard.is_some() && !lowered.guard_branch => self.jump(ins, span, &guard),
                (_, Some(c)) => self.compare_and_branch(*c, ins, span),
                (_, None) => self.jump(ins, span, &guard),
            },
        }
    }

    /// `ld`/`st` as written, with a type when the text names none (Dat3M's untyped accesses
    /// are 32-bit words on the device, 64-bit when the register is).
    fn untyped_access(&mut self, mut e: Emission, ty: Option<Ty>, ins: &Instruction, guard: &str) -> Result<Vec<String>, Rejection> {
        if ty.is_none() {
            let wide = ins.operands.first().is_some_and(|o| self.is_64(&o.node));
            e.parts.push(if wide { "b64" } else { "b32" }.into());
        }
        self.emit(e, guard)
    }

    /// `atom`/`red` as written, with Dat3M's spellings rewritten: a type where the text names
    /// none, `red.acquire`/`red.acq_rel` (PTX's `red` is .relaxed or .release) as the same
    /// `atom` with its result discarded, and `.sub v` as `.add -v`.
    fn rmw(&mut self, mut e: Emission, rmw: Rmw, ins: &Instruction, span: Span, guard: &str) -> Result<Vec<String>, Rejection> {
        let p = self.test.program;
        let mnemonic = ins.mnemonic();
        if matches!(rmw.op, RmwOp::Mul | RmwOp::Div) {
            return Err(reject(p, span, format!("instruction `{mnemonic}` is not generated: PTX has no atom or red of `.mul` or `.div`")));
        }
        if rmw.ty.is_none() {
            let kind = match rmw.op {
                RmwOp::Add | RmwOp::Inc | RmwOp::Dec | RmwOp::Sub => "u",
                RmwOp::Min | RmwOp::Max => "s",
                RmwOp::And | RmwOp::Or | RmwOp::Xor | RmwOp::Exch | RmwOp::Cas | RmwOp::Mul | RmwOp::Div => "b",
            };
            let wide = ins.operands.first().is_some_and(|o| self.is_64(&o.node));
            e.parts.push(format!("{kind}{}", if wide { 64 } else { 32 }));
        }
        if rmw.op == RmwOp::Sub {
            // The value operand follows the destination (atom) and the address.
            let at = usize::from(rmw.dst) + 1;
            match (rmw.value, e.operands.get_mut(at)) {
                (Some(Value::Const(_)), Some((Operand::Int(v), _))) => *v = v.wrapping_neg(),
                _ => return Err(reject(p, span, format!("`{mnemonic}` with a register operand is not generated (no PTX atom.sub)"))),
            }
            for part in e.parts.iter_mut().filter(|q| *q == "sub") {
                *part = "add".into();
            }
        }
        if !rmw.dst && matches!(rmw.sem, Sem::Acquire | Sem::AcqRel) {
            e.parts[0] = "atom".into();
            let sink = if has_64bit_type(&e.parts) { "hw_sink64" } else { "hw_sink32" };
            e.operands.insert(0, (Operand::Name(sink.into()), span));
        }
        self.emit(e, guard)
    }

    /// `createpolicy` as written; the fraction of `.fractional` is an f32, which PTX does not
    /// write as an integer literal.
    fn createpolicy(&mut self, mut e: Emission, guard: &str) -> Result<Vec<String>, Rejection> {
        if e.parts.iter().any(|p| p == "fractional") && e.operands.len() == 2 {
            if let Some((op, _)) = e.operands.last_mut() {
                if let Operand::Int(i) = *op {
                    *op = Operand::Name(format!("{i}.0"));
                }
            }
        }
        self.emit(e, guard)
    }

    /// Dat3M's untyped register operations (herd7's unbounded integers), written from the
    /// lowered operation with a 32-bit type, or a 64-bit one when the destination (for `setp`,
    /// a source) is a 64-bit register (a register that holds an address is: `regs`); `emit`
    /// converts sources of another width (32-bit ones zero-extended; a shift amount stays .u32).
    fn untyped_local(&mut self, mut e: Emission, op: LocalOp, ins: &Instruction, guard: &str) -> Result<Vec<String>, Rejection> {
        let is_64 = |k: usize| ins.operands.get(k).is_some_and(|o| self.is_64(&o.node));
        let wide = match op {
            LocalOp::Set(_) => is_64(1) || is_64(2),
            _ => is_64(0),
        };
        let (opcode, kind) = local_opcode(op);
        e.parts = opcode.split('.').map(String::from).collect();
        e.parts.push(format!("{kind}{}", if wide { 64 } else { 32 }));
        e.address_values = true;
        self.emit(e, guard)
    }

    /// An unconditional jump (`goto`, `bra`), or a `bra` whose guard is its condition.
    fn jump(&mut self, ins: &Instruction, span: Span, guard: &str) -> Result<Vec<String>, Rejection> {
        let label = self.label(ins, span)?;
        let uni = if ins.opcode.iter().any(|p| p.node == "uni") { ".uni" } else { "" };
        Ok(vec![format!("{guard}bra{uni} {label};")])
    }

    /// Dat3M's compare-and-branch (`beq`, `bne`, `blt`, `bgt`, `ble`, `bge` a, b, L): a signed
    /// comparison, as the model compares its integers, 64-bit when an operand is a 64-bit
    /// register (a 32-bit one zero-extended), into the harness's predicate, and a branch on it.
    fn compare_and_branch(&mut self, (cmp, a, b): (CmpOp, Value, Value), ins: &Instruction, span: Span) -> Result<Vec<String>, Rejection> {
        let mnemonic = ins.mnemonic();
        if ins.guard.is_some() {
            return Err(reject(
                self.program(),
                span,
                format!("a guarded `{mnemonic}` is not generated (the harness has one predicate for its comparison)"),
            ));
        }
        let label = self.label(ins, span)?;
        let wide = [a, b].iter().any(|v| matches!(v, Value::Reg(r) if self.regs.get(&self.register(*r)) == Some(&RegKind::B64)));
        let kind = if wide { RegKind::B64 } else { RegKind::B32 };
        let mut lines = Vec::new();
        let a = self.value(a, (ins, 0), kind, span, &mut lines)?;
        let b = self.value(b, (ins, 1), kind, span, &mut lines)?;
        lines.push(format!("setp.{}.s{} hw_p, {a}, {b};", ptx_cmp(cmp), kind.bits()));
        lines.push(format!("@hw_p bra {label};"));
        Ok(lines)
    }

    /// The PTX name of a register of this thread.
    fn register(&self, r: usize) -> String {
        Self::reg_name(&self.program().threads[self.thread].registers[r])
    }

    /// A lowered value as a PTX operand of `kind`'s width: a register (converted first where it
    /// has another width: `pre`), or an integer literal (operand `k` of the text shows whether a
    /// constant was written as one or is a variable's address).
    fn value(
        &mut self,
        v: Value,
        (ins, k): (&Instruction, usize),
        kind: RegKind,
        span: Span,
        pre: &mut Vec<String>,
    ) -> Result<String, Rejection> {
        match (v, ins.operands.get(k).map(|o| &o.node)) {
            (Value::Reg(r), _) => {
                let reg = self.register(r);
                Ok(self.read_as(&reg, kind, k + 1, pre))
            }
            (Value::Const(c), Some(Operand::Int(_))) => Ok(c.to_string()),
            (Value::Const(_), _) => Err(reject(
                self.program(),
                span,
                format!("`{}` compares the address of a variable, which is not generated", ins.mnemonic()),
            )),
        }
    }

    /// The label a branch names (its last operand).
    fn label(&self, ins: &Instruction, span: Span) -> Result<String, Rejection> {
        match ins.operands.last().map(|o| &o.node) {
            Some(Operand::Name(l)) => Ok(l.clone()),
            _ => Err(reject(self.program(), span, format!("`{}` names no label", ins.mnemonic()))),
        }
    }

    /// `bar.sync` / `barrier.sync` / Dat3M's `bar.cta.sync N[, id[, count]]`, from the lowered
    /// operation: every test thread is a warp, so thread counts become warp-sized (a count
    /// in a register is multiplied on the device), an absent count is the test's threads of
    /// this CTA, and the aligned `bar` form is used (each warp runs converged, lane 0 only).
    fn barrier(
        &mut self,
        (instance, id, count, arrive): (i64, Option<Value>, Option<Value>, bool),
        guard: &str,
        span: Span,
        mnemonic: &str,
    ) -> Result<Vec<String>, Rejection> {
        let p = self.test.program;
        let mut lines = Vec::new();
        let id = match id {
            Some(Value::Reg(r)) => {
                let reg = self.register(r);
                self.read_as(&reg, RegKind::B32, 1, &mut lines)
            }
            Some(Value::Const(c)) => c.to_string(),
            None => instance.to_string(),
        };
        if id == HARNESS_BARRIER.to_string() {
            return Err(reject(p, span, format!("`{mnemonic}` uses barrier {HARNESS_BARRIER}, which the harness keeps for itself")));
        }
        let count = match count {
            // A CTA has at most 1,024 threads: 32 test threads (warps) per barrier.
            Some(Value::Const(n)) if !(1..=32).contains(&n) => {
                return Err(reject(
                    p,
                    span,
                    format!(
                        "`{mnemonic}` counts {n} threads; the harness runs each test thread as a warp, so it would need {} hardware threads, and a barrier counts 32 to 1,024 (1 to 32 test threads)",
                        n.saturating_mul(32)
                    ),
                ))
            }
            Some(Value::Const(n)) => (32 * n).to_string(),
            Some(Value::Reg(r)) => {
                let reg = self.register(r);
                let count = self.read_as(&reg, RegKind::B32, 2, &mut lines);
                lines.push(format!("mul.lo.u32 hw_count, {count}, 32;"));
                "hw_count".to_string()
            }
            None => (32 * self.layout.warps[self.dense_cta].len()).to_string(),
        };
        lines.push(format!("{guard}bar.{} {id}, {count};", if arrive { "arrive" } else { "sync" }));
        Ok(lines)
    }

    /// The lines of an emission: its operands rendered (variables as addresses in the form of
    /// the opcode's state space at their position; registers whose declared width differs from
    /// the one the instruction's type gives their position through a converted scratch register,
    /// `regs`), then the instruction, then the conversion of such a destination.
    fn emit(&mut self, e: Emission, guard: &str) -> Result<Vec<String>, Rejection> {
        let spaces = space_tokens(&e.parts);
        let mut k = 0usize;
        let mut next_form = || {
            let f = spaces.get(k).or(spaces.first()).copied().unwrap_or(AddrForm::Generic);
            k += 1;
            f
        };
        let mut lines = Vec::new();
        let mut post = Vec::new();
        let mut texts = Vec::new();
        let narrow = e.parts.iter().any(|p| matches!(p.as_str(), "u32" | "b32" | "s32"));
        let widths = operand_widths(&e.parts, &e.operands.iter().map(|(o, _)| o).collect::<Vec<_>>());
        let writes = writes_first_operand(&e.parts);
        let signed = e.parts.iter().find(|p| is_type_part(p)).is_some_and(|p| p.starts_with('s'));
        // Immediate values of a floating-point type are bit patterns, as the model reads them
        // (PTX spells them `0f…`/`0d…`, PTX ISA 4.5.1); a size or count stays an integer.
        let values_typed =
            matches!(e.parts[0].as_str(), "atom" | "red" | "st" | "mov" | "add" | "sub" | "mul" | "div" | "min" | "max" | "setp" | "selp");
        let float = e.parts.iter().filter(|_| values_typed).find_map(|p| Ty::parse(p).filter(|t| t.kind == Kind::F && t.bits >= 32));
        for (i, (op, sp)) in e.operands.iter().enumerate() {
            let var_at = match op {
                Operand::Name(n) if !self.regs.contains_key(&Self::reg_name(n)) => self.variable(n).map(|v| (v, 0)),
                Operand::Address(inner, off) => match &inner.node {
                    Operand::Name(n) if !self.regs.contains_key(&Self::reg_name(n)) => self.variable(n).map(|v| (v, *off)),
                    _ => None,
                },
                _ => None,
            };
            if let (true, Some((var, off))) = (e.address_values, var_at) {
                self.reachable(var, *sp)?;
                let form = next_form();
                // `mov.u32 r, s` of the thread's own shared variable (what nvcc writes before
                // an mbarrier or a `mapa`): its 32-bit `.shared::cta` window address.
                let form = if spaces.is_empty() && matches!(op, Operand::Name(_)) && narrow && self.own_shared(var) {
                    AddrForm::SharedCta
                } else {
                    form
                };
                let k = self.operand_index(var, form);
                if off == 0 {
                    texts.push(format!("%{k}"));
                } else {
                    let wide = matches!(form, AddrForm::Generic | AddrForm::Global);
                    let (ty, tmp) = if wide { ("u64", "hw_a64") } else { ("u32", "hw_a32") };
                    lines.push(format!("add.{ty} {tmp}, %{k}, {off};"));
                    texts.push(tmp.to_string());
                }
                continue;
            }
            let register = match op {
                Operand::Name(n) | Operand::PercentName(n) => Some(Self::reg_name(n)).filter(|r| self.regs.contains_key(r)),
                _ => None,
            };
            // `lop3.or d|p, ...`, `setp... p|q, ...`: a destination and a predicate, spelt with `|`.
            if let (0, Operand::Vector(items), true) = (i, op, pair_destination(&e.parts)) {
                let mut names = Vec::new();
                for it in items {
                    names.push(self.operand(&it.node, &mut next_form, it.span)?);
                }
                texts.push(names.join("|"));
                continue;
            }
            let text = match (op, float, register, widths.get(i).copied().flatten()) {
                (_, _, Some(r), Some(Width::Exact(k))) if i == 0 && writes => self.write_as(&r, k, signed, guard, &mut post),
                (_, _, Some(r), Some(Width::Exact(k))) => self.read_as(&r, k, i, &mut lines),
                // A float literal is the bit pattern of the instruction's type: `0d…` for .f64.
                (Operand::Int(v), Some(t), ..) => t.format(*v),
                (Operand::Name(n), Some(t), None, _) if t.decimal_literal(n).is_some() => t.format(t.decimal_literal(n).unwrap_or(0)),
                _ => self.operand(op, &mut next_form, *sp)?,
            };
            texts.push(text);
        }
        let ops = if texts.is_empty() { String::new() } else { format!(" {}", texts.join(", ")) };
        lines.push(format!("{guard}{}{ops};", e.parts.join(".")));
        lines.extend(post);
        Ok(lines)
    }
}

/// Whether an instruction's first operand is a `d|p` pair (`lop3.or|and`, `setp`), not a vector.
pub(super) fn pair_destination(parts: &[String]) -> bool {
    match parts.first().map(String::as_str) {
        Some("setp") => true,
        Some("lop3") => parts.iter().any(|p| p == "or" || p == "and"),
        _ => false,
    }
}

/// The lowered fields of an `atom`/`red` that decide its device form.
struct Rmw {
    /// `atom` (a destination) rather than `red`.
    dst: bool,
    ty: Option<Ty>,
    op: RmwOp,
    /// The (first) value operand.
    value: Option<Value>,
    sem: Sem,
}
