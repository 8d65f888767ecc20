//! Lowering of the instructions that stay in the thread: branches, register arithmetic,
//! `setp`, `mapa` and `createpolicy`.

use super::operands::{describe, InstrLowerer, Quals};
use crate::diag::{Diagnostic, Spanned};
use crate::litmus::ast::{self, Operand};
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
        Ok(Op::Local { dst, op: LocalOp::Mov, a: Value::Const(0), b: Value::Const(0), ty: None })
    }

    pub(super) fn setp(&mut self, rest: &[Spanned<String>]) -> Result<Op, Diagnostic> {
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
