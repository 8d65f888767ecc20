//! Lowering of the instructions that stay in the thread: branches, register arithmetic,
//! `setp`, `mapa` and `createpolicy`.

use super::operands::{describe, InstrLowerer, Quals};
use crate::diag::{Diagnostic, Spanned};
use crate::litmus::ast::{self, Operand};
use crate::program::types::Kind;
use crate::program::*;

impl InstrLowerer<'_, '_> {
    pub(super) fn cond_branch(&mut self, head: &str, rest: &[Spanned<String>]) -> Result<Op, Diagnostic> {
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

    pub(super) fn jump(&mut self, rest: &[Spanned<String>]) -> Result<Op, Diagnostic> {
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

    pub(super) fn local(&mut self, head: &str, rest: &[Spanned<String>]) -> Result<Op, Diagnostic> {
        let mut q = Quals::new(rest);
        // `.pred` (and, or, xor, mov of predicates): predicates are the untyped 0 and 1.
        if matches!(head, "mov" | "and" | "or" | "xor") {
            q.take(&["pred"]);
        }
        let typed = self.register_type(&mut q)?;
        let ty = typed.map(|(t, _)| t);
        let mode = q.take(&["lo", "wide", "hi"]);
        // `min.relu`/`max.relu` (PTX ISA §9.7.1.12-13): `.s32` (and `.s16x2`, not modelled).
        let relu = if matches!(head, "min" | "max") { q.take(&["relu"]) } else { None };
        q.finish(
            head,
            if head == "mul" { "a type (.u32, .s32, .b64, ...) and .lo, .hi or .wide" } else { "a type (.u32, .s32, .b64, ...)" },
        )?;
        let op = match (head, mode) {
            ("mul", None | Some(("lo", _))) => LocalOp::Mul,
            ("mul", Some(("hi", _))) => LocalOp::MulHi,
            ("mul", Some((_, span))) => {
                self.integer_type(typed, span, &[16, 32], "mul.wide")?;
                LocalOp::MulWide
            }
            (_, Some((w, span))) => {
                return Err(Diagnostic::error(span, format!("`{head}` has no `.{w}` form"))
                    .with_note(".lo, .hi and .wide are modes of mul (and mad)"))
            }
            ("mov", _) => LocalOp::Mov,
            ("add", _) => LocalOp::Add,
            ("sub", _) => LocalOp::Sub,
            ("div", _) => LocalOp::Div,
            ("rem", _) => LocalOp::Rem,
            ("and", _) => LocalOp::And,
            ("or", _) => LocalOp::Or,
            ("xor", _) => LocalOp::Xor,
            ("shl", _) => LocalOp::Shl,
            ("shr", _) => LocalOp::Shr,
            ("min", _) => LocalOp::Min,
            _ => LocalOp::Max,
        };
        let op = match (relu, typed) {
            (None, _) => op,
            (Some(_), Some((t, _))) if t == Ty::parse("s32").unwrap_or(Ty::U32) => LocalOp::Relu { max: head == "max" },
            (Some((_, span)), _) => {
                return Err(Diagnostic::error(
                    span,
                    format!("`{head}.relu` is defined for `.s32` (and `.s16x2`, which ptxmm does not model)"),
                ))
            }
        };
        if op == LocalOp::MulHi {
            if let Some((_, span)) = mode {
                self.integer_type(typed, span, &[16, 32, 64], "mul.hi")?;
            }
        }
        if head == "mov" {
            let ops = self.operands(2, "destination, value")?;
            let a = self.typed_value(&ops[1], ty)?;
            let dst = self.dest_reg(&ops[0])?;
            self.regs.set_type(dst, ty);
            return Ok(Op::Local { dst, op: LocalOp::Mov, ty, a, b: Value::Const(0), c: None });
        }
        let ops = self.operands(3, "destination, value, value")?;
        let a = self.typed_value(&ops[1], ty)?;
        let b = self.typed_value(&ops[2], if matches!(head, "shl" | "shr") { None } else { ty })?;
        let dst = self.dest_reg(&ops[0])?;
        self.regs.set_type(dst, if op == LocalOp::MulWide { ty.map(Ty::wide) } else { ty });
        Ok(Op::Local { dst, op, ty, a, b, c: None })
    }

    /// The integer type an instruction form requires (`mul.wide`: 16 or 32 bits), or an error at
    /// the type (or at the form's qualifier `span` when the instruction names none).
    fn integer_type(&self, typed: Option<(Ty, Span)>, span: Span, widths: &[u32], form: &str) -> Result<Ty, Diagnostic> {
        let names: Vec<String> = widths.iter().flat_map(|w| [format!(".u{w}"), format!(".s{w}")]).collect();
        match typed {
            Some((t, _)) if matches!(t.kind, Kind::U | Kind::S) && widths.contains(&t.bits) => Ok(t),
            Some((t, tspan)) => {
                Err(Diagnostic::expected(tspan, format!("a type of `{form}`: {}", names.join(" ")), format!("`.{}`", t.name())))
            }
            None => Err(Diagnostic::error(span, format!("`{form}` needs a type: {}", names.join(" ")))),
        }
    }

    /// `mad.lo|wide.<type> d, a, b, c` (PTX ISA, integer `mad`): `.lo` is `a * b + c` at the
    /// type's width; `.wide` adds `c` (at twice the width) to the whole product of the 16- or
    /// 32-bit `a` and `b`.
    pub(super) fn mad(&mut self, rest: &[Spanned<String>]) -> Result<Op, Diagnostic> {
        let mut q = Quals::new(rest);
        let typed = self.register_type(&mut q)?;
        let mode = q.take(&["lo", "wide", "hi"]);
        q.finish("mad", ".lo or .wide, and an integer type (.u32, .s32, .u64, ...)")?;
        let (op, ty) = match mode {
            Some(("lo", span)) => (LocalOp::Mad, self.integer_type(typed, span, &[16, 32, 64], "mad.lo")?),
            Some(("wide", span)) => (LocalOp::MadWide, self.integer_type(typed, span, &[16, 32], "mad.wide")?),
            Some((w, span)) => {
                return Err(Diagnostic::error(span, format!("`mad.{w}` is not supported by this version of ptxmm"))
                    .with_note("accepted: mad.lo and mad.wide on integer types"))
            }
            None => {
                return Err(Diagnostic::error(self.instr.opcode_span(), "integer `mad` needs a mode: `.lo` or `.wide`")
                    .with_note("floating-point mad is not modelled; accepted: mad.lo.<type>, mad.wide.<type> (16- or 32-bit)"))
            }
        };
        let ops = self.operands(4, "destination, a, b, c")?;
        let a = self.typed_value(&ops[1], Some(ty))?;
        let b = self.typed_value(&ops[2], Some(ty))?;
        let wide = if op == LocalOp::MadWide { ty.wide() } else { ty };
        let c = self.typed_value(&ops[3], Some(wide))?;
        let dst = self.dest_reg(&ops[0])?;
        self.regs.set_type(dst, Some(wide));
        Ok(Op::Local { dst, op, ty: Some(ty), a, b, c: Some(c) })
    }

    /// `selp.<type> d, a, b, p` (PTX ISA, `selp`): `a` when the predicate `p` is non-zero (true),
    /// else `b`. A data operation: `p` is not a branch.
    pub(super) fn selp(&mut self, rest: &[Spanned<String>]) -> Result<Op, Diagnostic> {
        let mut q = Quals::new(rest);
        let typed = self.register_type(&mut q)?;
        q.finish("selp", "a type (.b32, .u32, .s64, .f32, ...)")?;
        let Some((ty, _)) = typed else {
            return Err(Diagnostic::error(
                self.instr.opcode_span(),
                "`selp` needs a type (.b16 .b32 .b64 .u16 .u32 .u64 .s16 .s32 .s64 .f32 .f64)",
            ));
        };
        let ops = self.operands(4, "destination, a, b, predicate")?;
        let a = self.typed_value(&ops[1], Some(ty))?;
        let b = self.typed_value(&ops[2], Some(ty))?;
        let p = self.value(&ops[3])?;
        let dst = self.dest_reg(&ops[0])?;
        self.regs.set_type(dst, Some(ty));
        Ok(Op::Local { dst, op: LocalOp::Selp, ty: Some(ty), a, b, c: Some(p) })
    }

    /// `cvt.<dtype>.<atype> d, a` between integer types (PTX ISA, `cvt`): the source read at
    /// `atype` (its low bits), zero- or sign-extended (by `atype`'s signedness) or truncated to
    /// `dtype`. Rounding and saturation (`.rni`, `.sat`, ...) and floating-point types are not
    /// modelled.
    pub(super) fn cvt(&mut self, rest: &[Spanned<String>]) -> Result<Op, Diagnostic> {
        let mut q = Quals::new(rest);
        let ints = ["u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64"];
        let (Some((d, _)), Some((a, _))) = (q.take(&ints), q.take(&ints)) else {
            let stray = q.parts.iter().enumerate().find(|(i, _)| !q.used[*i]).map(|(_, p)| p);
            let (span, found) = match stray {
                Some(p) => (p.span, format!("`.{}`", p.node)),
                None => (self.instr.opcode_span(), "none".to_string()),
            };
            return Err(Diagnostic::expected(
                span,
                "`cvt.<dtype>.<atype>` with two integer types (.u8 .u16 .u32 .u64 .s8 .s16 .s32 .s64)",
                found,
            )
            .with_note("conversions from or to floating-point types, rounding and .sat are not modelled"));
        };
        q.finish("cvt", "two integer types: .u8 .u16 .u32 .u64 .s8 .s16 .s32 .s64")?;
        // Both are among the integer types taken above.
        let (dty, aty) = (Ty::parse(d).unwrap_or(Ty::U32), Ty::parse(a).unwrap_or(Ty::U32));
        let ops = self.operands(2, "destination, source")?;
        let v = self.typed_value(&ops[1], Some(aty))?;
        let dst = self.dest_reg(&ops[0])?;
        self.regs.set_type(dst, Some(dty));
        Ok(Op::Local { dst, op: LocalOp::Cvt(aty), ty: Some(dty), a: v, b: Value::Const(0), c: None })
    }

    /// `not.b16|b32|b64 d, a` (every bit inverted) and `not.pred` (logical negation), and
    /// `neg.s16|s32|s64 d, a` (`0 - a` at the width), from the PTX ISA's logic and integer
    /// instructions.
    pub(super) fn unary(&mut self, head: &str, rest: &[Spanned<String>]) -> Result<Op, Diagnostic> {
        let mut q = Quals::new(rest);
        let pred = head == "not" && q.take(&["pred"]).is_some();
        let typed = self.register_type(&mut q)?;
        let accepted = if head == "not" { ".pred .b16 .b32 .b64" } else { ".s16 .s32 .s64" };
        q.finish(head, accepted)?;
        let ty = match typed {
            Some((t, _)) if head == "not" && t.kind == Kind::B && t.bits >= 16 => Some(t),
            Some((t, _)) if head == "neg" && t.kind == Kind::S && t.bits >= 16 => Some(t),
            None if pred => None,
            Some((t, span)) => {
                return Err(Diagnostic::expected(span, format!("a type of `{head}`: {accepted}"), format!("`.{}`", t.name())))
            }
            None => return Err(Diagnostic::error(self.instr.opcode_span(), format!("`{head}` needs a type: {accepted}"))),
        };
        let ops = self.operands(2, "destination, source")?;
        let a = self.typed_value(&ops[1], ty)?;
        let dst = self.dest_reg(&ops[0])?;
        self.regs.set_type(dst, ty);
        Ok(match (head, ty) {
            ("not", None) => Op::Local { dst, op: LocalOp::Set(ast::CmpOp::Eq), ty: None, a, b: Value::Const(0), c: None },
            ("not", Some(t)) => Op::Local { dst, op: LocalOp::Xor, ty, a, b: Value::Const(t.norm(-1)), c: None },
            _ => Op::Local { dst, op: LocalOp::Sub, ty, a: Value::Const(0), b: a, c: None },
        })
    }

    /// `cvta.<space>.u32|u64 d, a` (a `<space>` address to a generic one) and
    /// `cvta.to.<space>.u32|u64 d, a` (generic to `<space>`), PTX ISA `cvta`: ptxmm's addresses
    /// name (space, CTA, offset) alike in every window (digest AMBIG-15), so the conversion keeps
    /// the value; an access through the result is checked against its state space as any other.
    pub(super) fn cvta(&mut self, rest: &[Spanned<String>]) -> Result<Op, Diagnostic> {
        let mut q = Quals::new(rest);
        q.take(&["to"]);
        let space = q.take(&["global", "shared", "shared::cta", "shared::cluster", "local", "const", "param", "param::entry"]);
        let size = q.take(&["u32", "u64"]);
        q.finish("cvta", "{.to}, a state space (.global, .shared, .shared::cta, .shared::cluster, .local), .u32 or .u64")?;
        let Some((space, sspan)) = space else {
            return Err(Diagnostic::error(
                self.instr.opcode_span(),
                "`cvta` needs a state space: .global, .shared{::cta|::cluster} or .local",
            ));
        };
        // Addresses are canonical (a variable's bytes have one address in every window), so a
        // conversion between the parameter window and the generic one is a move.
        if space == "const" {
            return Err(Diagnostic::error(sspan, format!("`cvta.{space}` is not supported by this version of ptxmm"))
                .with_note("ptxmm has no constant window; accepted: .global, .shared, .shared::cta, .shared::cluster, .local, .param"));
        }
        let Some((size, _)) = size else {
            return Err(Diagnostic::error(self.instr.opcode_span(), "`cvta` needs the address size `.u32` or `.u64`"));
        };
        let ty = Ty::parse(size);
        let ops = self.operands(2, "destination, address")?;
        let a = self.typed_value(&ops[1], ty)?;
        let dst = self.dest_reg(&ops[0])?;
        self.regs.set_type(dst, ty);
        Ok(Op::Local { dst, op: LocalOp::Mov, ty, a, b: Value::Const(0), c: None })
    }

    /// `mapa{.shared::cluster}.u32|u64 d, a, b` (PTX ISA, `mapa`; not in the seed): a is a shared
    /// variable (a name, `[s]`, `[s+4]` or `&s`) or a register holding a shared address (a
    /// generic one for the `.u64` form without `.shared::cluster`), b the target CTA's rank. With
    /// constants, `resolve_mapa` computes d once the threads are placed; with a register the run
    /// does ([`LocalOp::Mapa`]).
    pub(super) fn mapa(&mut self, rest: &[Spanned<String>]) -> Result<Op, Diagnostic> {
        let mut q = Quals::new(rest);
        q.take(&["shared::cluster"]);
        if q.take(&["u32", "u64"]).is_none() {
            return Err(Diagnostic::error(self.instr.opcode_span(), "`mapa` needs the type `.u32` or `.u64`"));
        }
        q.finish("mapa", ".shared::cluster, .u32|.u64")?;
        let ops = self.operands(3, "d, a, b")?;
        let addr = match &ops[1].node {
            Operand::Address(..) => match self.address(&ops[1])? {
                Address::Location(l) => Value::Const(self.l.address_of(l)),
                Address::Reg(r, 0) => Value::Reg(r),
                Address::Reg(..) | Address::Byte(..) => {
                    return Err(Diagnostic::expected(
                        ops[1].span,
                        "a shared variable or a register holding a shared address",
                        "an address with an offset",
                    )
                    .with_note("add the offset to the register first (`add.u32 r, r, 4`)"))
                }
            },
            Operand::Int(_) | Operand::Name(_) | Operand::PercentName(_) | Operand::AddressOf(_) => self.value(&ops[1])?,
            other => {
                return Err(Diagnostic::expected(ops[1].span, "a shared variable or a register holding a shared address", describe(other)))
            }
        };
        let rank = match &ops[2].node {
            Operand::Int(_) | Operand::Name(_) | Operand::PercentName(_) => self.value(&ops[2])?,
            other => return Err(Diagnostic::expected(ops[2].span, "a CTA rank (a constant or a register)", describe(other))),
        };
        let dst = self.dest_reg(&ops[0])?;
        let op = if matches!((addr, rank), (Value::Const(_), Value::Const(_))) { LocalOp::Mov } else { LocalOp::Mapa };
        Ok(Op::Local { dst, op, a: addr, b: rank, ty: None, c: None })
    }

    /// `createpolicy.fractional|range|cvt ...` (PTX ISA, `createpolicy`): the destination gets a cache
    /// policy, an opaque 64-bit value ptxmm writes as 0; a policy is a hint and has no memory
    /// effect, so the forms are checked and their other operands read only.
    pub(super) fn createpolicy(&mut self, rest: &[Spanned<String>]) -> Result<Op, Diagnostic> {
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
        Ok(Op::Local { dst, op: LocalOp::Mov, a: Value::Const(0), b: Value::Const(0), ty: None, c: None })
    }

    pub(super) fn setp(&mut self, rest: &[Spanned<String>]) -> Result<Op, Diagnostic> {
        let (cmp, ty, a, b) = self.setp_compare(rest)?;
        let dst = self.dest_reg(&self.instr.operands[0])?;
        // A predicate: 0 or 1, untyped.
        self.regs.set_type(dst, None);
        Ok(Op::Local { dst, op: LocalOp::Set(cmp), ty, a, b, c: None })
    }

    /// The comparison of `setp`, its type and its two sources (the destination left to the
    /// caller: one predicate, or a `p|q` pair).
    pub(super) fn setp_compare(&mut self, rest: &[Spanned<String>]) -> Result<(ast::CmpOp, Option<Ty>, Value, Value), Diagnostic> {
        let mut q = Quals::new(rest);
        let Some((c, _)) = q.take(&["eq", "ne", "lt", "le", "gt", "ge"]) else {
            return Err(Diagnostic::error(self.instr.opcode_span(), "`setp` needs a comparison (.eq .ne .lt .le .gt .ge)"));
        };
        let ty = self.register_type(&mut q)?.map(|(t, _)| t);
        q.finish("setp", "a comparison and a type")?;
        let ops = self.operands(3, "predicate, value, value")?;
        let a = self.typed_value(&ops[1], ty)?;
        let b = self.typed_value(&ops[2], ty)?;
        let cmp = match c {
            "eq" => ast::CmpOp::Eq,
            "ne" => ast::CmpOp::Ne,
            "lt" => ast::CmpOp::Lt,
            "le" => ast::CmpOp::Le,
            "gt" => ast::CmpOp::Gt,
            _ => ast::CmpOp::Ge,
        };
        Ok((cmp, ty, a, b))
    }
}
