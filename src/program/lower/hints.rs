//! Lowering of the instructions with no effect the model can observe (`Op::NoEffect`), each
//! checked against its syntax first: `nanosleep`, `setmaxnreg`, `griddepcontrol`, `prefetch`,
//! `prefetchu`, `pmevent`; `trap` (the kernel aborts).

use super::operands::{describe, InstrLowerer, Quals};
use crate::diag::{Diagnostic, Spanned};
use crate::litmus::ast::Operand;
use crate::program::*;

impl InstrLowerer<'_, '_> {
    pub(super) fn no_effect(&mut self, head: &str, rest: &[Spanned<String>]) -> Result<Op, Diagnostic> {
        let mut q = Quals::new(rest);
        let effect = match head {
            // Miscellaneous Instructions: nanosleep ("t may be a register or an immediate value").
            "nanosleep" => {
                if q.take(&["u32"]).is_none() {
                    return Err(Diagnostic::error(self.instr.opcode_span(), "the form is `nanosleep.u32 t`"));
                }
                q.finish(head, ".u32")?;
                let ops = self.operands(1, "t")?;
                NoEffect::Sleep(self.typed_value(&ops[0], Some(Ty::U32))?)
            }
            // Miscellaneous Instructions: setmaxnreg: "imm-reg-count is an integer constant. The
            // value of imm-reg-count must be in the range 24 to 256 (both inclusive) and must be a
            // multiple of 8."
            "setmaxnreg" => {
                let action = q.take(&["inc", "dec"]);
                let (sync, aligned, u32_) = (q.take(&["sync"]), q.take(&["aligned"]), q.take(&["u32"]));
                q.finish(head, ".inc or .dec, .sync, .aligned, .u32")?;
                let (Some((action, _)), Some(_), Some(_), Some(_)) = (action, sync, aligned, u32_) else {
                    return Err(Diagnostic::error(
                        self.instr.opcode_span(),
                        "the form is `setmaxnreg.inc|dec.sync.aligned.u32 imm-reg-count`",
                    ));
                };
                let ops = self.operands(1, "imm-reg-count")?;
                let count = match ops[0].node {
                    Operand::Int(n) if (24..=256).contains(&n) && n % 8 == 0 => n,
                    ref other => {
                        return Err(Diagnostic::expected(
                            ops[0].span,
                            "an imm-reg-count constant in 24..256, a multiple of 8",
                            describe(other),
                        ))
                    }
                };
                NoEffect::SetMaxNReg { inc: action == "inc", count }
            }
            // §9.7.13.13: the dependent and prerequisite grids "as defined by the runtime"; a
            // test is one grid with neither, so `.wait` has nothing to wait for and
            // `.launch_dependents` nothing to launch.
            "griddepcontrol" => {
                let action = q.take(&["launch_dependents", "wait"]);
                q.finish(head, ".launch_dependents or .wait")?;
                let Some((action, _)) = action else {
                    return Err(Diagnostic::error(
                        self.instr.opcode_span(),
                        "the form is `griddepcontrol.launch_dependents` or `griddepcontrol.wait`",
                    ));
                };
                self.operands(0, "no operand")?;
                NoEffect::GridDepControl { wait: action == "wait" }
            }
            "prefetch" | "prefetchu" => self.prefetch(head, &mut q)?,
            // Miscellaneous Instructions: pmevent: "event index or mask specified by immediate
            // operand a": an index in 0..15, or a 16-bit mask with `.mask`.
            "pmevent" => {
                let mask = q.take(&["mask"]).is_some();
                q.finish(head, ".mask")?;
                let ops = self.operands(1, "a")?;
                let max = if mask { 0xFFFF } else { 15 };
                match ops[0].node {
                    Operand::Int(n) if (0..=max).contains(&n) => {}
                    ref other => {
                        let what = if mask { "a 16-bit event mask constant" } else { "an event index constant in 0..15" };
                        return Err(Diagnostic::expected(ops[0].span, what, describe(other)));
                    }
                }
                NoEffect::PmEvent
            }
            _ => return Err(Diagnostic::error(self.instr.opcode_span(), format!("`{head}` is not an instruction without effect"))),
        };
        Ok(Op::NoEffect(effect))
    }

    /// `prefetch{.global|.local}.L1|L2 [a]`, `prefetch.global.L2::evict_last|evict_normal [a]`,
    /// `prefetchu.L1 [a]` and `prefetch{.const|.param}.tensormap [a]` (Data Movement and
    /// Conversion Instructions: prefetch, prefetchu): a cache hint, whose operand must be an
    /// address (a variable, a register, or for `.param` a kernel parameter).
    fn prefetch(&mut self, head: &str, q: &mut Quals) -> Result<NoEffect, Diagnostic> {
        let form = if head == "prefetchu" {
            if q.take(&["L1"]).is_none() {
                return Err(Diagnostic::error(self.instr.opcode_span(), "the form is `prefetchu.L1 [a]`"));
            }
            q.finish(head, ".L1")?;
            "prefetchu.L1"
        } else if q.take(&["tensormap"]).is_some() {
            q.take(&["const", "param"]);
            q.finish(head, ".const or .param, then .tensormap")?;
            "tensormap"
        } else {
            let space = q.take(&["global", "local"]);
            let level = q.take(&["L1", "L2", "L2::evict_last", "L2::evict_normal"]);
            q.finish(head, "{.global|.local}, .L1 or .L2 (.L2::evict_last or .L2::evict_normal with .global), or .tensormap")?;
            match level {
                None => {
                    return Err(Diagnostic::error(
                        self.instr.opcode_span(),
                        "`prefetch` needs a cache level: .L1, .L2, .L2::evict_last or .L2::evict_normal",
                    ))
                }
                Some((l, span)) if l.starts_with("L2::") && space.map(|s| s.0) != Some("global") => {
                    return Err(Diagnostic::error(span, format!("`.{l}` exists only with `prefetch.global`")));
                }
                Some(_) => "data",
            }
        };
        let ops = self.operands(1, "[a]")?;
        let Operand::Address(inner, _) = &ops[0].node else {
            return Err(Diagnostic::expected(ops[0].span, "an address `[a]`", describe(&ops[0].node)));
        };
        // A kernel parameter of `prefetch.param.tensormap [p]` has no location: nothing to read.
        if let (Operand::Name(n), "tensormap") = (&inner.node, form) {
            if self.l.params.contains_key(n) {
                return Ok(NoEffect::Prefetch { addr: None });
            }
        }
        Ok(NoEffect::Prefetch { addr: Some(self.address(&ops[0])?) })
    }

    /// `trap` (Miscellaneous Instructions: trap): "Abort execution and generate an interrupt to
    /// the host CPU". The kernel fails: a run that reaches it has no final state.
    pub(super) fn trap(&mut self, rest: &[Spanned<String>]) -> Result<Op, Diagnostic> {
        Quals::new(rest).finish("trap", "none")?;
        self.operands(0, "no operand")?;
        Ok(Op::Trap)
    }
}
