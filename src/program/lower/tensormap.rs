//! Lowering of the tensormap proxy's instructions (PTX ISA, `tensormap.replace`,
//! `tensormap.cp_fenceproxy`, and `fence.proxy.tensormap::generic` of §9.7.13.4): the device-side
//! modification of a tensor map and the fences that make it visible to tensor copies.

use super::operands::{describe, InstrLowerer, Quals};
use crate::diag::{Diagnostic, Spanned};
use crate::litmus::ast::Operand;
use crate::program::tensor::MapField;
use crate::program::*;

impl InstrLowerer<'_, '_> {
    /// `tensormap.replace...` and `tensormap.cp_fenceproxy...`.
    pub(super) fn tensormap(&mut self, rest: &[Spanned<String>]) -> Result<Op, Diagnostic> {
        let whole = self.instr.opcode_span();
        match rest.first().map(|p| p.node.as_str()) {
            Some("replace") => self.tensormap_replace(&rest[1..]),
            Some("cp_fenceproxy") => self.tensormap_copy(&rest[1..]),
            _ => Err(Diagnostic::error(whole, format!("unsupported instruction `{}`", self.mnemonic()))
                .with_note("the tensormap instructions are `tensormap.replace` and `tensormap.cp_fenceproxy`")),
        }
    }

    fn tensormap_replace(&mut self, rest: &[Spanned<String>]) -> Result<Op, Diagnostic> {
        let whole = self.instr.opcode_span();
        let mut q = Quals::new(rest);
        if q.take(&["tile"]).is_none() {
            return Err(Diagnostic::error(whole, "`tensormap.replace` needs the mode `.tile`"));
        }
        let names: Vec<&str> = MapField::NAMES.iter().map(|(n, _)| *n).collect();
        let Some((name, field_span)) = q.take(&names) else {
            let all: Vec<String> = names.iter().map(|n| format!(".{n}")).collect();
            return Err(Diagnostic::error(whole, format!("`tensormap.replace.tile` needs a field: {}", all.join(" "))));
        };
        let field = MapField::parse(name).expect("a field name");
        let space = match q.take(&["global", "shared::cta", "shared"]) {
            Some(("global", _)) => AccessSpace::Global,
            Some(_) => AccessSpace::SharedCta,
            None => AccessSpace::Generic,
        };
        if q.take(&["b1024"]).is_none() {
            return Err(Diagnostic::error(whole, "`tensormap.replace` needs `.b1024` (the size of the tensor-map object)"));
        }
        let ty = q.take(&["b32", "b64"]);
        q.finish("tensormap.replace", ".tile, a field, .global or .shared::cta, .b1024, .b32 or .b64")?;
        let bits = match ty {
            Some(("b64", _)) => 64,
            Some(_) => 32,
            None => return Err(Diagnostic::error(whole, "`tensormap.replace` needs the type of the new value: .b32 or .b64")),
        };
        if bits != field.bits() {
            return Err(Diagnostic::expected(field_span, format!("`.b{}` with `.{name}`", field.bits()), format!("`.b{bits}`")));
        }
        let (addr_op, ord_op, value_op) = if field.has_ordinal() {
            let ops = self.operands(3, "[addr], ord, new_val")?;
            (&ops[0], Some(&ops[1]), &ops[2])
        } else {
            let ops = self.operands(2, "[addr], new_val")?;
            (&ops[0], None, &ops[1])
        };
        if !matches!(addr_op.node, Operand::Address(..)) {
            return Err(Diagnostic::expected(addr_op.span, "the tensor-map object's address `[addr]`", describe(&addr_op.node)));
        }
        let ord = match ord_op.map(|o| &o.node) {
            None => 0,
            Some(Operand::Int(k)) if (0..field.ordinals()).contains(k) => *k,
            Some(other) => {
                return Err(Diagnostic::expected(
                    ord_op.expect("an ordinal").span,
                    format!("a constant ordinal 0..{} (the dimension)", field.ordinals() - 1),
                    describe(other),
                ))
            }
        };
        let addr = self.address(addr_op)?;
        let ty = Ty { kind: types::Kind::B, bits };
        let value = self.typed_value(value_op, Some(ty))?;
        Ok(Op::TensormapReplace { addr, space, field, ord, value })
    }

    fn tensormap_copy(&mut self, rest: &[Spanned<String>]) -> Result<Op, Diagnostic> {
        let whole = self.instr.opcode_span();
        let mut q = Quals::new(rest);
        let form = [q.take(&["global"]), q.take(&["shared::cta"]), q.take(&["tensormap::generic"]), q.take(&["release"])];
        let scope = self.scope(&mut q, true, "tensormap.cp_fenceproxy")?;
        let sync = q.take(&["sync"]);
        let aligned = q.take(&["aligned"]);
        q.finish("tensormap.cp_fenceproxy", ".global.shared::cta.tensormap::generic.release, a scope, .sync.aligned")?;
        let (Some(scope), true, Some(_), Some(_)) = (scope, form.iter().all(Option::is_some), sync, aligned) else {
            return Err(Diagnostic::error(
                whole,
                "the form is `tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.SCOPE.sync.aligned [dst], [src], 128`",
            ));
        };
        let ops = self.operands(3, "[dst], [src], 128")?;
        for o in &ops[..2] {
            if !matches!(o.node, Operand::Address(..)) {
                return Err(Diagnostic::expected(o.span, "an address `[a]`", describe(&o.node)));
            }
        }
        if ops[2].node != Operand::Int(128) {
            return Err(Diagnostic::expected(
                ops[2].span,
                "the size 128 (PTX ISA: the size of the tensor-map object)",
                describe(&ops[2].node),
            ));
        }
        let dst = self.address(&ops[0])?;
        let src = self.address(&ops[1])?;
        Ok(Op::TensormapCopy { dst, src, scope })
    }

    /// `fence.proxy.tensormap::generic.release.SCOPE` / `.acquire.SCOPE [addr], 128`.
    pub(super) fn tensormap_fence(&mut self, rest: &[Spanned<String>]) -> Result<Op, Diagnostic> {
        let whole = self.instr.opcode_span();
        let mut q = Quals::new(rest);
        let sem = q.take(&["release", "acquire"]);
        let scope = self.scope(&mut q, true, "fence.proxy.tensormap::generic")?;
        q.finish("fence.proxy.tensormap::generic", ".release or .acquire, then a scope")?;
        let (Some((sem, _)), Some(scope)) = (sem, scope) else {
            return Err(Diagnostic::error(whole, "the forms are `fence.proxy.tensormap::generic.release.SCOPE` and `fence.proxy.tensormap::generic.acquire.SCOPE [addr], 128`"));
        };
        if sem == "release" {
            self.operands(0, "no operands (the release half names no object)")?;
            return Ok(Op::TensormapFence { acquire: None, scope });
        }
        let ops = self.operands(2, "[addr], 128")?;
        if !matches!(ops[0].node, Operand::Address(..)) {
            return Err(Diagnostic::expected(ops[0].span, "the tensor map's address `[addr]`", describe(&ops[0].node)));
        }
        if ops[1].node != Operand::Int(128) {
            return Err(Diagnostic::expected(
                ops[1].span,
                "the size 128 (PTX ISA §9.7.13.4: the size of the tensor-map object)",
                describe(&ops[1].node),
            ));
        }
        let addr = self.address(&ops[0])?;
        Ok(Op::TensormapFence { acquire: Some(addr), scope })
    }
}
