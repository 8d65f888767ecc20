//! `ld.param`: the value a kernel parameter is bound to in the init block, as a constant. Kernel
//! parameters are read-only for the whole grid (PTX ISA §5.1, Table 7: `.param` as input to a
//! kernel is RO and per-grid, "accessible only via the ld.param{::entry} instruction"), so the
//! load is a move of that value: no memory event, nothing another thread can change.

use super::operands::{describe, InstrLowerer, Quals};
use crate::diag::{Diagnostic, Spanned};
use crate::litmus::ast::Operand;
use crate::program::*;

/// The opcode parts that make an `ld` a parameter load.
pub(super) fn is_param_load(rest: &[Spanned<String>]) -> bool {
    rest.iter().any(|p| matches!(p.node.as_str(), "param" | "param::entry"))
}

impl InstrLowerer<'_, '_> {
    /// `ld.param{::entry}.TYPE d, [NAME]` or `[NAME+off]`: the bytes `off..off+size` of the
    /// parameter's value (little-endian), at the load's type.
    pub(super) fn param_load(&mut self, rest: &[Spanned<String>]) -> Result<Op, Diagnostic> {
        let mut q = Quals::new(rest);
        q.take(&["param", "param::entry"]);
        let ty = self.one_type(&mut q)?;
        q.finish("ld.param", ".param or .param::entry, and a type (.u32, .u64, ...)")?;
        let Some((ty, _)) = ty else {
            return Err(Diagnostic::error(self.instr.opcode_span(), "`ld.param` needs a type (.u32, .u64, .s32, ...)"));
        };
        let ops = self.operands(2, "destination register, [parameter]")?;
        let (name, offset) = match &ops[1].node {
            Operand::Address(inner, off) => match &inner.node {
                Operand::Name(n) => (n, *off),
                other => return Err(Diagnostic::expected(inner.span, "a kernel parameter", describe(other))),
            },
            other => return Err(Diagnostic::expected(ops[1].span, "a kernel parameter in brackets (`[p]`)", describe(other))),
        };
        let Some(param) = self.l.params.get(name).copied() else {
            return Err(Diagnostic::error(ops[1].span, format!("unknown kernel parameter `{name}`"))
                .with_note("bind it in the init block: `.param .u64 p = &g;` or `.param .u32 n = 5;`"));
        };
        let (size, bytes) = (i64::from(param.ty.bits / 8), i64::from(ty.bits / 8));
        if offset < 0 || offset % bytes != 0 || offset + bytes > size {
            return Err(Diagnostic::error(
                ops[1].span,
                format!("`ld.param.{}` at byte {offset} is not inside the {size}-byte parameter `{name}`", ty.name()),
            ));
        }
        let value = ty.norm(((param.value as u64) >> (8 * offset)) as i64);
        let dst = self.dest_reg(&ops[0])?;
        self.regs.set_type(dst, Some(ty));
        Ok(Op::Local { dst, op: LocalOp::Mov, ty: Some(ty), a: Value::Const(value), b: Value::Const(0), c: None })
    }
}
