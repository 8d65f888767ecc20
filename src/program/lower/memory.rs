//! Lowering of the memory accesses: `ld`, `st`, `atom` and `red` (with their texture, surface
//! and constant forms), their semantics, scopes, state spaces, types and vectors.

use super::operands::{describe, space_of, vector_len, InstrLowerer, Quals};
use crate::diag::{Diagnostic, Spanned};
use crate::litmus::ast::Operand;
use crate::program::*;

impl InstrLowerer<'_, '_> {
    fn proxy_of(head: &str) -> Proxy {
        match head {
            "tld" => Proxy::Texture,
            "suld" | "sust" | "suatom" | "sured" => Proxy::Surface,
            "cold" => Proxy::Constant,
            _ => Proxy::Generic,
        }
    }

    fn access_sem(&self, q: &mut Quals, allowed: &[&str], what: &str) -> Result<(Sem, Option<Scope>), Diagnostic> {
        const SEMANTICS: &[&str] = &["weak", "relaxed", "acquire", "release", "volatile", "acq_rel", "sc", "mmio"];
        let sem = match q.take(SEMANTICS) {
            // `st.relase.cta`: the typo, not the scope that then looks misplaced.
            None if q.misspelt(SEMANTICS).is_some() => {
                let (typo, word, span) = q.misspelt(SEMANTICS).expect("just found");
                return Err(Diagnostic::error(span, format!("unknown qualifier `.{typo}` (did you mean `.{word}`?)")).with_note(format!(
                    "the semantics of a {what}: {}",
                    allowed.iter().map(|a| format!(".{a}")).collect::<Vec<_>>().join(", ")
                )));
            }
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

    pub(super) fn load(&mut self, head: &str, rest: &[Spanned<String>]) -> Result<Op, Diagnostic> {
        let ops = self.operands(2, "destination register, address")?;
        // Dat3M's `ld rD, v` with a constant or register operand is a register move.
        if head == "ld" && rest.is_empty() {
            let is_value = match &ops[1].node {
                Operand::Int(_) | Operand::PercentName(_) => true,
                Operand::Name(n) => self.l.lookup(n).is_none(),
                _ => false,
            };
            if is_value {
                let a = self.value(&ops[1])?;
                let dst = self.dest_reg(&ops[0])?;
                self.regs.set_type(dst, None);
                return Ok(Op::Local { dst, op: LocalOp::Mov, ty: None, a, b: Value::Const(0), c: None });
            }
        }
        let mut q = Quals::new(rest);
        let nc = if head == "ld" { q.take(&["nc"]) } else { None };
        let (sem, scope) = self.access_sem(&mut q, &["weak", "relaxed", "acquire", "volatile"], "load")?;
        let space = space_of(&mut q);
        let vector = q.take(&["v2", "v4", "v8"]);
        let ty = if vector.is_some() { self.word_type(&mut q)? } else { self.access_type(&mut q)? };
        q.finish(
            head,
            ".weak/.relaxed/.acquire/.volatile, a scope, a state space (.global, .shared), .nc (with .global), a type (.u32, .b32, ...)",
        )?;
        if let Some((_, span)) = nc {
            // `ld.global{.cop}.nc...` (PTX ISA, `ld.global.nc`): a weak load of the global space only.
            if space != AccessSpace::Global || sem != Sem::Weak {
                return Err(Diagnostic::error(span, "`.nc` is a weak load of the global state space: `ld.global.nc.<type>`").with_note(
                    "accepted: ld.global{.weak}.nc{.L1::…}{.v2|.v4}.<type> d, [a]; no .relaxed/.acquire/.volatile and no scope",
                ));
            }
        }
        let nc = nc.is_some();
        let addr = self.address_of_size(&ops[1], ty.map_or(4, |t| i64::from(t.bits / 8)))?;
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
            for &dst in &dsts {
                self.regs.set_type(dst, ty);
            }
            return Ok(Op::LoadVector { dsts, ty, addr, sem, scope, space, nc });
        }
        let dst = self.dest_reg(&ops[0])?;
        self.regs.set_type(dst, ty);
        Ok(Op::Load { dst, ty, addr, sem, scope, proxy: Self::proxy_of(head), space, nc })
    }

    pub(super) fn store(&mut self, head: &str, rest: &[Spanned<String>]) -> Result<Op, Diagnostic> {
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
        let addr = self.address_of_size(&ops[0], ty.map_or(4, |t| i64::from(t.bits / 8)))?;
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

    pub(super) fn rmw(&mut self, head: &str, rest: &[Spanned<String>]) -> Result<Op, Diagnostic> {
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
            if t.bits < 32 {
                return Err(Diagnostic::error(
                    span,
                    format!("`{}` is a {}-bit atomic, which ptxmm does not model", self.mnemonic(), t.bits),
                )
                .with_note("atom and red are modelled on 4-byte words: use a 32-bit (.u32, .s32, .b32, .f32) or 64-bit (.u64, .s64, .b64, .f64) type"));
            }
            if matches!(op, RmwOp::Inc | RmwOp::Dec) && t != Ty::U32 {
                return Err(Diagnostic::error(span, format!("`.{opname}` is defined only for `.u32`, found `.{}`", t.name()))
                    .with_note("64-bit atom/red: .add .exch .cas .min .max .and .or .xor on .u64, .s64 or .b64 (PTX ISA, atom)"));
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
}
