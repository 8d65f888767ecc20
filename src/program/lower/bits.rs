//! Lowering of the bit instructions to register arithmetic (`program::bits` has their
//! arithmetic): `bfe`, `bfi`, `brev`, `clz`, `popc`, `bfind`, `prmt`, `lop3`, `shf`, `bmsk`,
//! `szext`, `mul24`, `mad24`, `sad`, `cnot`, integer `abs`, and the `d|p` destination of
//! `setp`. Each form's qualifiers and types are those of its PTX ISA section; anything else is
//! an error at the qualifier.

use super::operands::{describe, InstrLowerer, Quals};
use crate::diag::{Diagnostic, Spanned};
use crate::litmus::ast::{self, Operand};
use crate::program::bits::bfi_field;
use crate::program::*;

/// The register that holds an intermediate value of an instruction lowered to two operations
/// (the field of a `bfi` with a position or length in a register, the `d` of `lop3.or _|p`):
/// a name no PTX register can have.
const HIDDEN: &str = "%ptxmm_tmp";

/// How many operations an instruction lowers to here (1 for every other instruction).
pub(super) fn width(i: &ast::Instruction) -> usize {
    let is_reg = |o: Option<&Spanned<Operand>>| !matches!(o.map(|o| &o.node), Some(Operand::Int(_)) | None);
    let pair = |o: Option<&Spanned<Operand>>| match o.map(|o| &o.node) {
        Some(Operand::Vector(v)) if v.len() == 2 => Some((v[0].node == Operand::Sink, v[1].node == Operand::Sink)),
        _ => None,
    };
    fn vector(o: Option<&Spanned<Operand>>) -> Option<&Vec<Spanned<Operand>>> {
        match o.map(|o| &o.node) {
            Some(Operand::Vector(v)) => Some(v),
            _ => None,
        }
    }
    match i.opcode[0].node.as_str() {
        // Unpacking: one extraction per destination that is not `_`.
        "mov" if vector(i.operands.first()).is_some() => {
            vector(i.operands.first()).map_or(1, |v| v.iter().filter(|o| o.node != Operand::Sink).count().max(1))
        }
        // Packing: each element inserted into a hidden register, then the move to `d`.
        "mov" if vector(i.operands.get(1)).is_some() => vector(i.operands.get(1)).map_or(1, |v| v.len() + 1),
        "bfi" if is_reg(i.operands.get(3)) || is_reg(i.operands.get(4)) => 2,
        // `d` (or the hidden register for `_`), then `p` unless it is `_`.
        "lop3" => match pair(i.operands.first()) {
            Some((_, false)) => 2,
            _ => 1,
        },
        // `p` (or the hidden register for `_`), then `q` unless it is `_`.
        "setp" => match pair(i.operands.first()) {
            Some((_, false)) => 2,
            _ => 1,
        },
        _ => 1,
    }
}

impl InstrLowerer<'_, '_> {
    /// `mov.b16|b32|b64 {a, b, ...}, x` (unpack: each element the next `bits/n` bits of x, low
    /// first) and `mov.b16|b32|b64 x, {a, b, ...}` (pack), PTX ISA §9.7.9.9 (`mov`, the vector
    /// forms of `.b16`, `.b32`, `.b64`): as `bfe` extractions and `bfi` insertions.
    pub(super) fn mov_vector(&mut self, rest: &[Spanned<String>]) -> Result<Vec<Op>, Diagnostic> {
        let mut q = Quals::new(rest);
        let ty = self.bit_type(&mut q, "mov", &["b16", "b32", "b64"])?;
        q.finish("mov", "a type .b16 .b32 .b64 (with a vector operand)")?;
        let ops = self.operands(2, "d, a (one of them a vector `{...}`)")?;
        // The arithmetic type: bfe/bfi work on 32 or 64 bits.
        let wide = if ty.bits == 64 { ty } else { Ty { kind: types::Kind::B, bits: 32 } };
        let unsigned = Ty { kind: types::Kind::U, bits: wide.bits };
        match (&ops[0].node, &ops[1].node) {
            (Operand::Vector(items), _) => {
                let n = items.len() as i64;
                if !matches!(n, 2 | 4) || (n == 4 && ty.bits < 32) {
                    return Err(Diagnostic::expected(ops[0].span, format!("2 or 4 elements of `.{}`", ty.name()), n));
                }
                let w = i64::from(ty.bits) / n;
                let src = self.typed_value(&ops[1], Some(ty))?;
                let mut out = Vec::new();
                for (k, item) in items.iter().enumerate() {
                    if item.node == Operand::Sink {
                        continue;
                    }
                    let dst = self.dest_reg(item)?;
                    self.regs.set_type(dst, Ty::parse(&format!("b{w}")));
                    out.push(Op::Local {
                        dst,
                        op: LocalOp::Bfe,
                        ty: Some(unsigned),
                        a: src,
                        b: Value::Const(k as i64 * w),
                        c: Some(Value::Const(w)),
                    });
                }
                if out.is_empty() {
                    return Err(Diagnostic::expected(ops[0].span, "at least one destination register", "only `_`"));
                }
                Ok(out)
            }
            (_, Operand::Vector(items)) => {
                let n = items.len() as i64;
                if !matches!(n, 2 | 4) || (n == 4 && ty.bits < 32) {
                    return Err(Diagnostic::expected(ops[1].span, format!("2 or 4 elements of `.{}`", ty.name()), n));
                }
                let w = i64::from(ty.bits) / n;
                let elem = Ty::parse(&format!("b{w}"));
                let tmp = self.regs.def(HIDDEN);
                self.regs.set_type(tmp, Some(wide));
                let mut out = Vec::new();
                for (k, item) in items.iter().enumerate() {
                    let v = self.typed_value(item, elem)?;
                    out.push(if k == 0 {
                        Op::Local { dst: tmp, op: LocalOp::Bfe, ty: Some(unsigned), a: v, b: Value::Const(0), c: Some(Value::Const(w)) }
                    } else {
                        let field = Value::Const(bfi_field(k as i64 * w, w));
                        Op::Local { dst: tmp, op: LocalOp::Bfi, ty: Some(wide), a: v, b: Value::Reg(tmp), c: Some(field) }
                    });
                }
                let dst = self.dest_reg(&ops[0])?;
                self.regs.set_type(dst, Some(ty));
                out.push(Op::Local { dst, op: LocalOp::Mov, ty: Some(ty), a: Value::Reg(tmp), b: Value::Const(0), c: None });
                Ok(out)
            }
            _ => unreachable!("the caller sees a vector operand"),
        }
    }

    /// The instruction's one type, which must be one of `allowed`, or an error naming them.
    fn bit_type(&self, q: &mut Quals, head: &str, allowed: &[&str]) -> Result<Ty, Diagnostic> {
        let names = allowed.iter().map(|a| format!(".{a}")).collect::<Vec<_>>().join(" ");
        match self.one_type(q)? {
            Some((t, span)) if !allowed.contains(&t.name().as_str()) => {
                Err(Diagnostic::expected(span, format!("a type of `{head}`: {names}"), format!("`.{}`", t.name())))
            }
            Some((t, _)) => Ok(t),
            None => Err(Diagnostic::error(self.instr.opcode_span(), format!("`{head}` needs a type: {names}"))),
        }
    }

    /// `op` on the sources of `ops[1..]`, each read at its type, into `ops[0]` (whose type
    /// becomes `dst_ty`).
    fn bit_op(&mut self, op: LocalOp, ty: Ty, ops: &[Spanned<Operand>], types: &[Ty], dst_ty: Ty) -> Result<Op, Diagnostic> {
        let mut values = Vec::new();
        for (o, t) in ops[1..].iter().zip(types) {
            values.push(self.typed_value(o, Some(*t))?);
        }
        let dst = self.dest_reg(&ops[0])?;
        self.regs.set_type(dst, Some(dst_ty));
        let at = |k: usize| values.get(k).copied().unwrap_or(Value::Const(0));
        Ok(Op::Local { dst, op, ty: Some(ty), a: at(0), b: at(1), c: values.get(2).copied() })
    }

    /// One of the instructions of this file (`setp` with a `p|q` destination included): its
    /// operations, in order ([`width`] of them).
    pub(super) fn bits(&mut self, head: &str, rest: &[Spanned<String>]) -> Result<Vec<Op>, Diagnostic> {
        let mut q = Quals::new(rest);
        let u32_ = Ty::U32;
        let b32 = Ty { kind: types::Kind::B, bits: 32 };
        let one = |op: Result<Op, Diagnostic>| op.map(|o| vec![o]);
        match head {
            // §9.7.1.19: "Operands b and c are type .u32".
            "bfe" => {
                let ty = self.bit_type(&mut q, head, &["u32", "u64", "s32", "s64"])?;
                q.finish(head, ".u32 .u64 .s32 .s64")?;
                let ops = self.operands(4, "d, a, b, c")?;
                one(self.bit_op(LocalOp::Bfe, ty, ops, &[ty, u32_, u32_], ty))
            }
            // §9.7.1.20: `bfi.type f, a, b, c, d`, c the position and d the length (.u32, 0..255).
            "bfi" => {
                let ty = self.bit_type(&mut q, head, &["b32", "b64"])?;
                q.finish(head, ".b32 .b64")?;
                let ops = self.operands(5, "f, a, b, c, d")?;
                let a = self.typed_value(&ops[1], Some(ty))?;
                let b = self.typed_value(&ops[2], Some(ty))?;
                let pos = self.typed_value(&ops[3], Some(u32_))?;
                let len = self.typed_value(&ops[4], Some(u32_))?;
                let mut out = Vec::new();
                let field = match (pos, len) {
                    (Value::Const(p), Value::Const(l)) => Value::Const(bfi_field(p, l)),
                    (pos, len) => {
                        let tmp = self.regs.def(HIDDEN);
                        self.regs.set_type(tmp, Some(u32_));
                        out.push(Op::Local { dst: tmp, op: LocalOp::BfiField, ty: Some(u32_), a: pos, b: len, c: None });
                        Value::Reg(tmp)
                    }
                };
                let dst = self.dest_reg(&ops[0])?;
                self.regs.set_type(dst, Some(ty));
                out.push(Op::Local { dst, op: LocalOp::Bfi, ty: Some(ty), a, b, c: Some(field) });
                Ok(out)
            }
            "brev" | "clz" | "popc" | "cnot" => {
                let allowed: &[&str] = if head == "cnot" { &["b16", "b32", "b64"] } else { &["b32", "b64"] };
                let ty = self.bit_type(&mut q, head, allowed)?;
                q.finish(head, &allowed.iter().map(|a| format!(".{a}")).collect::<Vec<_>>().join(" "))?;
                let ops = self.operands(2, "d, a")?;
                let (op, dst_ty) = match head {
                    "brev" => (LocalOp::Brev, ty),
                    "clz" => (LocalOp::Clz, u32_),
                    "popc" => (LocalOp::Popc, u32_),
                    _ => (LocalOp::Cnot, ty),
                };
                one(self.bit_op(op, ty, ops, &[ty], dst_ty))
            }
            // §9.7.1.16: "Operand a has the instruction type, and destination d has type .u32".
            "bfind" => {
                let shiftamt = q.take(&["shiftamt"]).is_some();
                let ty = self.bit_type(&mut q, head, &["u32", "u64", "s32", "s64"])?;
                q.finish(head, ".shiftamt, .u32 .u64 .s32 .s64")?;
                let ops = self.operands(2, "d, a")?;
                one(self.bit_op(LocalOp::Bfind { shiftamt }, ty, ops, &[ty], u32_))
            }
            "abs" => {
                let ty = self.integer_abs_type(&mut q)?;
                q.finish(head, ".s16 .s32 .s64")?;
                let ops = self.operands(2, "d, a")?;
                one(self.bit_op(LocalOp::Abs, ty, ops, &[ty], ty))
            }
            "prmt" => {
                let mode = q.take(&["f4e", "b4e", "rc8", "ecl", "ecr", "rc16"]).and_then(|(m, _)| PrmtMode::parse(m));
                let ty = self.bit_type(&mut q, head, &["b32"])?;
                q.finish(head, ".b32 and a mode .f4e .b4e .rc8 .ecl .ecr .rc16")?;
                let ops = self.operands(4, "d, a, b, c")?;
                one(self.bit_op(LocalOp::Prmt(mode.unwrap_or(PrmtMode::Generic)), ty, ops, &[b32, b32, b32], ty))
            }
            "lop3" => self.lop3(&mut q),
            "shf" => {
                let dir = q.take(&["l", "r"]);
                let mode = q.take(&["clamp", "wrap"]);
                let ty = self.bit_type(&mut q, head, &["b32"])?;
                q.finish(head, ".l or .r, .clamp or .wrap, .b32")?;
                let (Some((dir, _)), Some((mode, _))) = (dir, mode) else {
                    return Err(Diagnostic::error(
                        self.instr.opcode_span(),
                        "`shf` needs a direction and a mode: `shf.l|r.clamp|wrap.b32`",
                    ));
                };
                let ops = self.operands(4, "d, a, b, c")?;
                let op = LocalOp::Shf { left: dir == "l", clamp: mode == "clamp" };
                one(self.bit_op(op, ty, ops, &[b32, b32, u32_], ty))
            }
            "bmsk" | "szext" => {
                let mode = q.take(&["clamp", "wrap"]);
                let allowed: &[&str] = if head == "bmsk" { &["b32"] } else { &["u32", "s32"] };
                let ty = self.bit_type(&mut q, head, allowed)?;
                q.finish(head, &format!(".clamp or .wrap, {}", allowed.iter().map(|a| format!(".{a}")).collect::<Vec<_>>().join(" ")))?;
                let Some((mode, _)) = mode else {
                    return Err(Diagnostic::error(self.instr.opcode_span(), format!("`{head}` needs a mode: `.clamp` or `.wrap`")));
                };
                let clamp = mode == "clamp";
                let ops = self.operands(3, "d, a, b")?;
                let op = if head == "bmsk" { LocalOp::Bmsk { clamp } } else { LocalOp::Szext { clamp } };
                one(self.bit_op(op, ty, ops, &[ty, u32_], ty))
            }
            "mul24" | "mad24" => {
                let mode = q.take(&["lo", "hi"]);
                let sat = q.take(&["sat"]);
                let ty = self.bit_type(&mut q, head, &["u32", "s32"])?;
                q.finish(head, ".lo or .hi, .u32 .s32 (and .sat for mad24.hi.s32)")?;
                let Some((mode, _)) = mode else {
                    return Err(Diagnostic::error(self.instr.opcode_span(), format!("`{head}` needs a mode: `.lo` or `.hi`")));
                };
                let hi = mode == "hi";
                if let Some((_, span)) = sat {
                    if head == "mul24" || !hi || ty.kind != types::Kind::S {
                        return Err(Diagnostic::error(span, "`.sat` exists only in `mad24.hi.sat.s32`"));
                    }
                }
                if head == "mul24" {
                    let ops = self.operands(3, "d, a, b")?;
                    one(self.bit_op(LocalOp::Mul24 { hi }, ty, ops, &[ty, ty], ty))
                } else {
                    let ops = self.operands(4, "d, a, b, c")?;
                    one(self.bit_op(LocalOp::Mad24 { hi, sat: sat.is_some() }, ty, ops, &[ty, ty, ty], ty))
                }
            }
            "sad" => {
                let ty = self.bit_type(&mut q, head, &["u16", "u32", "u64", "s16", "s32", "s64"])?;
                q.finish(head, ".u16 .u32 .u64 .s16 .s32 .s64")?;
                let ops = self.operands(4, "d, a, b, c")?;
                one(self.bit_op(LocalOp::Sad, ty, ops, &[ty, ty, ty], ty))
            }
            "setp" => self.setp_pair(rest),
            _ => Err(Diagnostic::error(self.instr.opcode_span(), format!("`{head}` is not a bit instruction"))),
        }
    }

    /// The type of integer `abs` (§9.7.1.10: `.s16 .s32 .s64`); floating-point `abs` is not
    /// modelled.
    fn integer_abs_type(&self, q: &mut Quals) -> Result<Ty, Diagnostic> {
        match self.one_type(q)? {
            Some((t, span)) if t.is_float() => {
                Err(Diagnostic::error(span, format!("`abs.{}` is floating-point arithmetic, which ptxmm does not model", t.name()))
                    .with_note("integer abs is modelled: abs.s16, abs.s32, abs.s64"))
            }
            Some((t, span)) if t.kind != types::Kind::S || t.bits < 16 => {
                Err(Diagnostic::expected(span, "a type of `abs`: .s16 .s32 .s64", format!("`.{}`", t.name())))
            }
            Some((t, _)) => Ok(t),
            None => Err(Diagnostic::error(self.instr.opcode_span(), "`abs` needs a type: .s16 .s32 .s64")),
        }
    }

    /// `lop3.b32 d, a, b, c, immLut` and `lop3.BoolOp.b32 d|p, a, b, c, immLut, q` (Logic and
    /// Shift Instructions: lop3): "p = (d != 0) BoolOp q"; `_` may stand for `d` (or `p`).
    fn lop3(&mut self, q: &mut Quals) -> Result<Vec<Op>, Diagnostic> {
        let bool_op = q.take(&["or", "and"]);
        let ty = self.bit_type(q, "lop3", &["b32"])?;
        q.finish("lop3", ".or or .and (with a `d|p` destination), .b32")?;
        let n = if bool_op.is_some() { 6 } else { 5 };
        let shape = if bool_op.is_some() { "d|p, a, b, c, immLut, q" } else { "d, a, b, c, immLut" };
        let ops = self.operands(n, shape)?;
        let lut = match &ops[4].node {
            Operand::Int(v) if (0..=255).contains(v) => *v as u8,
            other => {
                return Err(Diagnostic::expected(ops[4].span, "an immLut constant in 0..255", describe(other))
                    .with_note("immLut is an integer constant: F(0xF0, 0xCC, 0xAA) for the logical operation F(a, b, c)"))
            }
        };
        let mut srcs = Vec::new();
        for o in &ops[1..4] {
            srcs.push(self.typed_value(o, Some(ty))?);
        }
        let op = LocalOp::Lop3(lut);
        let Some((bop, _)) = bool_op else {
            if let Operand::Vector(_) = &ops[0].node {
                return Err(Diagnostic::expected(
                    ops[0].span,
                    "a destination register (a `d|p` destination needs `.or` or `.and`)",
                    "`d|p`",
                ));
            }
            let dst = self.dest_reg(&ops[0])?;
            self.regs.set_type(dst, Some(ty));
            return Ok(vec![Op::Local { dst, op, ty: Some(ty), a: srcs[0], b: srcs[1], c: Some(srcs[2]) }]);
        };
        let Operand::Vector(pair) = &ops[0].node else {
            return Err(Diagnostic::expected(
                ops[0].span,
                "`d|p` (a destination, `|`, a predicate; `_` for either)",
                describe(&ops[0].node),
            ));
        };
        let [d, p] = pair.as_slice() else {
            return Err(Diagnostic::expected(ops[0].span, "`d|p` (two destinations)", format!("{} of them", pair.len())));
        };
        let pred = self.value(&ops[5])?;
        let dst = match &d.node {
            Operand::Sink => self.regs.def(HIDDEN),
            _ => self.dest_reg(d)?,
        };
        self.regs.set_type(dst, Some(ty));
        let mut out = vec![Op::Local { dst, op, ty: Some(ty), a: srcs[0], b: srcs[1], c: Some(srcs[2]) }];
        if p.node != Operand::Sink {
            let pdst = self.dest_reg(p)?;
            self.regs.set_type(pdst, None);
            out.push(Op::Local { dst: pdst, op: LocalOp::Lop3Pred { or: bop == "or" }, ty: None, a: Value::Reg(dst), b: pred, c: None });
        }
        Ok(out)
    }

    /// `setp.CmpOp.type p|q, a, b` (Comparison and Selection Instructions: setp): "p = (a < b);
    /// q = !(a < b)"; `_` may stand for either (a `p` of `_` is kept in a hidden register, which
    /// `q` is the negation of).
    fn setp_pair(&mut self, rest: &[Spanned<String>]) -> Result<Vec<Op>, Diagnostic> {
        let (cmp, ty, a, b) = self.setp_compare(rest)?;
        let first = &self.instr.operands[0];
        let Operand::Vector(pair) = &first.node else { unreachable!("bits() lowers setp only with a `p|q` destination") };
        let [p, q] = pair.as_slice() else {
            return Err(Diagnostic::expected(first.span, "`p|q` (two predicates)", format!("{} of them", pair.len())));
        };
        let p = match &p.node {
            Operand::Sink => self.regs.def(HIDDEN),
            _ => self.dest_reg(p)?,
        };
        self.regs.set_type(p, None);
        let mut out = vec![Op::Local { dst: p, op: LocalOp::Set(cmp), ty, a, b, c: None }];
        if q.node != Operand::Sink {
            let q = self.dest_reg(q)?;
            self.regs.set_type(q, None);
            out.push(Op::Local { dst: q, op: LocalOp::Set(ast::CmpOp::Eq), ty: None, a: Value::Reg(p), b: Value::Const(0), c: None });
        }
        Ok(out)
    }
}
