//! `ld.param`: the bytes of a kernel parameter (PTX ISA §5.1, Table 7: `.param` as input to a
//! kernel is read-only and per grid, "accessible only via the ld.param{::entry} instruction"),
//! at a constant address (`[NAME+off]`: a constant of the program) or at one in a register
//! (`mov.b64 %rd1, NAME; ld.param.u32 %r1, [%rd1+640];`: read by the run). No memory event:
//! nothing another thread does can change a parameter.

use super::operands::{describe, vector_len, InstrLowerer, Quals};
use crate::diag::{Diagnostic, Spanned};
use crate::litmus::ast::Operand;
use crate::program::*;

/// The opcode parts that make an `ld` a parameter load.
pub(super) fn is_param_load(rest: &[Spanned<String>]) -> bool {
    rest.iter().any(|p| matches!(p.node.as_str(), "param" | "param::entry"))
}

impl InstrLowerer<'_, '_> {
    /// `ld.param{::entry}{.v2|.v4}.TYPE d, [a]`: each destination the `TYPE`-sized bytes at its
    /// offset (little-endian), known or unknown.
    pub(super) fn param_load(&mut self, rest: &[Spanned<String>]) -> Result<Op, Diagnostic> {
        let mut q = Quals::new(rest);
        q.take(&["param", "param::entry"]);
        let vector = q.take(&["v2", "v4"]);
        let ty = self.one_type(&mut q)?;
        q.finish("ld.param", ".param or .param::entry, .v2 or .v4, and a type (.u32, .u64, ...)")?;
        let Some((ty, _)) = ty else {
            return Err(Diagnostic::error(self.instr.opcode_span(), "`ld.param` needs a type (.u32, .u64, .s32, ...)"));
        };
        let ops = self.operands(2, "destination register, [parameter]")?;
        let count = match vector {
            Some((v, span)) => vector_len(v, span, "ld.param")?,
            None => 1,
        };
        let bytes = i64::from(ty.bits / 8).max(1);
        let dst_ops: Vec<&Spanned<Operand>> = match (&ops[0].node, count) {
            (Operand::Vector(items), n) if items.len() == n => items.iter().collect(),
            (_, 1) => vec![&ops[0]],
            (other, n) => return Err(Diagnostic::expected(ops[0].span, format!("a vector of {n} destination registers"), describe(other))),
        };
        let Operand::Address(inner, offset) = &ops[1].node else {
            return Err(Diagnostic::expected(ops[1].span, "a kernel parameter in brackets (`[p]`, `[%rd1+8]`)", describe(&ops[1].node)));
        };
        let addr = match &inner.node {
            Operand::Name(name) => {
                let Some(&v) = self.l.params.get(name) else {
                    return Err(Diagnostic::error(ops[1].span, format!("unknown kernel parameter `{name}`"))
                        .with_note("bind it in the init block: `.param .u64 p = &g;` or `.param .u32 n = 5;`"));
                };
                let size = self.l.variables[v].size;
                if *offset < 0 || offset + bytes * count as i64 > size {
                    return Err(Diagnostic::error(
                        ops[1].span,
                        format!("`ld.param.{}` at byte {offset} is not inside the {size}-byte parameter `{name}`", ty.name()),
                    ));
                }
                let word = self.l.variables[v].first_location + (offset / 4) as usize;
                if count == 1 {
                    // A constant of the program: the value (or unknown value) is known now.
                    let value = super::super::param_bytes(
                        &self.l.variables,
                        &self.l.locations,
                        &self.l.physical,
                        self.l.address_of(word) + offset % 4,
                        bytes,
                    )
                    .expect("checked inside the parameter");
                    let dst = self.dest_reg(dst_ops[0])?;
                    self.regs.set_type(dst, Some(ty));
                    return Ok(Op::Local {
                        dst,
                        op: LocalOp::Mov,
                        ty: Some(ty),
                        a: Value::Const(ty.norm(value)),
                        b: Value::Const(0),
                        c: None,
                    });
                }
                if offset % 4 == 0 {
                    Address::Location(word)
                } else {
                    Address::Byte(word, offset % 4)
                }
            }
            Operand::PercentName(_) => self.address_of_size(&ops[1], bytes)?,
            other => return Err(Diagnostic::expected(inner.span, "a kernel parameter or a register holding its address", describe(other))),
        };
        let dsts = dst_ops.into_iter().map(|o| self.dest_reg(o)).collect::<Result<Vec<_>, _>>()?;
        for &d in &dsts {
            self.regs.set_type(d, Some(ty));
        }
        Ok(Op::ParamLoad { dsts, ty, addr })
    }
}
