//! Lowering of the warp exchanges (`shfl.sync`, `vote.sync`, `match.sync`, `redux.sync`), each
//! form checked against the PTX ISA first (Data Movement and Conversion Instructions: shfl.sync,
//! and the deprecated shfl; Parallel Synchronization and Communication Instructions: vote.sync
//! and the deprecated vote, match.sync, activemask, redux.sync):
//!
//! - `shfl.sync.up|down|bfly|idx.b32 d{|p}, a, b, c, membermask`, `shfl.mode.b32 d{|p}, a, b, c`
//! - `vote.sync.all|any|uni.pred d, {!}a, membermask`, `vote.sync.ballot.b32 d, {!}a,
//!   membermask`, and `vote.mode.pred d, {!}a`, `vote.ballot.b32 d, {!}a`
//! - `match.any.sync.b32|b64 d, a, membermask`, `match.all.sync.b32|b64 d{|p}, a, membermask`
//! - `redux.sync.add|min|max.u32|s32 d, a, membermask`, `redux.sync.and|or|xor.b32 d, a,
//!   membermask`, `redux.sync.min|max{.abs}{.NaN}.f32 d, a, membermask`
//! - `activemask.b32 d`
//!
//! The `.sync` forms with integer operands become [`Op::Exchange`]: each lane's results are
//! computed from the operands of the lanes that take part (`exec::trace::exchange`). The
//! deprecated forms without a membermask (which lanes take part depends on how the warp
//! diverged), `activemask` (the same) and the `.f32` reductions are rejected with the reason in
//! a litmus test (abstracted in a kernel, `opaque.rs`).

use super::operands::{describe, InstrLowerer, Quals};
use crate::diag::{Diagnostic, Span, Spanned};
use crate::litmus::ast::Operand;
use crate::program::unknown::{UnknownKind, UnknownOrigin};
use crate::program::*;

impl InstrLowerer<'_, '_> {
    pub(super) fn warp_exchange(&mut self, head: &str, rest: &[Spanned<String>]) -> Result<Op, Diagnostic> {
        let mut q = Quals::new(rest);
        let whole = self.instr.opcode_span();
        let need = |found, what: &str| required(found, whole, head, what);
        // (operands, shape, whether the first may be `d|p`, the form where the model computes it)
        let (n, shape, pair, form) = match head {
            "shfl" => {
                let sync = q.take(&["sync"]).is_some();
                let mode = need(q.take(&["up", "down", "bfly", "idx"]), "a mode: .up .down .bfly .idx")?;
                need(q.take(&["b32"]), "the type .b32")?;
                q.finish(head, ".sync, .up .down .bfly .idx, .b32")?;
                let mode = match mode {
                    "up" => ShflMode::Up,
                    "down" => ShflMode::Down,
                    "bfly" => ShflMode::Bfly,
                    _ => ShflMode::Idx,
                };
                if sync {
                    (5, "d{|p}, a, b, c, membermask", true, Some(ExchangeForm::Shfl(mode)))
                } else {
                    (4, "d{|p}, a, b, c (the deprecated form without .sync)", true, None)
                }
            }
            "vote" => {
                let sync = q.take(&["sync"]).is_some();
                let mode = need(q.take(&["all", "any", "uni", "ballot"]), "a mode: .all .any .uni .ballot")?;
                let ty = if mode == "ballot" { "b32" } else { "pred" };
                need(q.take(&[ty]), &format!("the type .{ty} with .{mode}"))?;
                q.finish(head, ".sync, .all .any .uni (with .pred) or .ballot (with .b32)")?;
                let mode = match mode {
                    "all" => VoteMode::All,
                    "any" => VoteMode::Any,
                    "uni" => VoteMode::Uni,
                    _ => VoteMode::Ballot,
                };
                if sync {
                    (3, "d, {!}a, membermask", false, Some(ExchangeForm::Vote(mode)))
                } else {
                    (2, "d, {!}a (the deprecated form without .sync)", false, None)
                }
            }
            "match" => {
                let mode = need(q.take(&["any", "all"]), "a mode: .any .all")?;
                need(q.take(&["sync"]), ".sync")?;
                let wide = need(q.take(&["b32", "b64"]), "a type: .b32 .b64")? == "b64";
                q.finish(head, ".any .all, .sync, .b32 .b64")?;
                if mode == "all" {
                    (3, "d{|p}, a, membermask", true, Some(ExchangeForm::MatchAll { wide }))
                } else {
                    (3, "d, a, membermask", false, Some(ExchangeForm::MatchAny { wide }))
                }
            }
            "redux" => {
                need(q.take(&["sync"]), ".sync")?;
                let op = need(q.take(&["add", "min", "max", "and", "or", "xor"]), "an operation: .add .min .max .and .or .xor")?;
                let abs = q.take(&["abs"]);
                let nan = q.take(&["NaN"]);
                let types: &[&str] = match op {
                    "and" | "or" | "xor" => &["b32"],
                    "add" => &["u32", "s32"],
                    _ => &["u32", "s32", "f32"],
                };
                let ty = need(
                    q.take(types),
                    &format!("a type of `.{op}`: {}", types.iter().map(|t| format!(".{t}")).collect::<Vec<_>>().join(" ")),
                )?;
                q.finish(head, ".sync, an operation, .abs and .NaN (with .min/.max.f32), a type")?;
                if let Some((name, span)) = abs.or(nan).filter(|_| ty != "f32") {
                    return Err(Diagnostic::error(span, format!("`.{name}` exists only in `redux.sync.min|max.f32`")));
                }
                let signed = ty == "s32";
                let op = match op {
                    "add" => Some(ReduxOp::Add),
                    "min" if ty != "f32" => Some(ReduxOp::Min { signed }),
                    "max" if ty != "f32" => Some(ReduxOp::Max { signed }),
                    "and" => Some(ReduxOp::And),
                    "or" => Some(ReduxOp::Or),
                    "xor" => Some(ReduxOp::Xor),
                    _ => None,
                };
                (3, "d, a, membermask", false, op.map(ExchangeForm::Redux))
            }
            _ => {
                need(q.take(&["b32"]), "the type .b32")?;
                q.finish(head, ".b32")?;
                (1, "d", false, None)
            }
        };
        let ops = self.operands(n, shape)?;
        if let Operand::Vector(items) = &ops[0].node {
            if !pair || items.len() != 2 {
                return Err(Diagnostic::expected(
                    ops[0].span,
                    format!("a destination register of `{}`", self.mnemonic()),
                    describe(&ops[0].node),
                ));
            }
        }
        let Some(form) = form else {
            let why = if head == "redux" {
                "a floating-point reduction, which the model does not compute"
            } else {
                "which lanes take part depends on how the warp diverged, which the model does not follow"
            };
            return Err(Diagnostic::error(whole, format!("`{}` is not modelled: {why}", self.mnemonic())).with_note(
                "write the `.sync` form with a membermask; in a kernel (`ptxmm kernel`, or a test written as one kernel block) it is abstracted: its result is unknown",
            ));
        };
        self.exchange(form, ops)
    }

    /// The [`Op::Exchange`] of a checked `.sync` form.
    fn exchange(&mut self, form: ExchangeForm, ops: &[Spanned<Operand>]) -> Result<Op, Diagnostic> {
        let (d, p) = match &ops[0].node {
            Operand::Vector(items) => (&items[0], Some(&items[1])),
            _ => (&ops[0], None),
        };
        let reg = |me: &mut Self, o: &Spanned<Operand>| -> Result<Option<Reg>, Diagnostic> {
            if o.node == Operand::Sink {
                Ok(None)
            } else {
                me.dest_reg(o).map(Some)
            }
        };
        let (d, p) = (reg(self, d)?, p.map(|p| reg(self, p)).transpose()?.flatten());
        let wide = matches!(form, ExchangeForm::MatchAny { wide: true } | ExchangeForm::MatchAll { wide: true });
        let ty = match form {
            ExchangeForm::Vote(_) => None,
            ExchangeForm::Redux(ReduxOp::Min { signed: true } | ReduxOp::Max { signed: true }) => Ty::parse("s32"),
            _ if wide => Ty::parse("b64"),
            _ => Some(Ty::U32),
        };
        let (a, negate) = match &ops[1].node {
            Operand::Negated(inner) if matches!(form, ExchangeForm::Vote(_)) => (self.typed_value(inner, ty)?, true),
            _ => (self.typed_value(&ops[1], ty)?, false),
        };
        let (b, c) = if let ExchangeForm::Shfl(_) = form {
            (self.typed_value(&ops[2], Some(Ty::U32))?, self.typed_value(&ops[3], Some(Ty::U32))?)
        } else {
            (Value::Const(0), Value::Const(0))
        };
        let mask_op = ops.last().expect("a membermask");
        let mask = match &mask_op.node {
            Operand::Int(m) => {
                let m = *m as u32;
                if m & (1 << self.warp.lane) == 0 {
                    return Err(Diagnostic::error(
                        mask_op.span,
                        format!(
                            "membermask {m:#x} does not select this thread's lane {} (PTX ISA: \"The behavior of {} is undefined if the executing thread is not in the membermask\")",
                            self.warp.lane,
                            self.instr.opcode[0].node
                        ),
                    )
                    .with_note("a thread's lane is its tid mod 32 (`tid N` in its placement, or its position among its CTA's threads by id)"));
                }
                Value::Const(i64::from(m))
            }
            _ => self.typed_value(mask_op, Some(Ty::U32))?,
        };
        let (line, _) = self.l.source.line_col(self.span.start);
        let what = self.l.source.slice(self.span).split_whitespace().collect::<Vec<_>>().join(" ");
        let origin = |me: &mut Self, why: &str, kind| {
            me.l.unknown_origin(UnknownOrigin { line, span: me.span, what: what.clone(), why: why.to_string(), kind })
        };
        let warp = self.warp;
        // A lane of the launch the test leaves out makes the exchange's values from it unknown:
        // the instruction is then abstracted in part, and listed so.
        let unmodelled = if warp.launched & !warp.lanes != 0 {
            origin(
                self,
                "a warp exchange with lanes the check does not model (`--lanes`): what they give is unknown",
                UnknownKind::Abstracted,
            )
        } else {
            0
        };
        let absent = origin(
            self,
            "a shuffle from a lane that does not take part (outside the membermask, or exited): the PTX ISA leaves the value undefined",
            UnknownKind::Undefined,
        );
        let warp_id = self.l.specials.read("%warpid").ok().flatten().unwrap_or(0);
        Ok(Op::Exchange(Box::new(WarpExchange {
            form,
            d,
            p,
            a,
            negate,
            b,
            c,
            mask,
            warp: warp_id,
            lane: warp.lane,
            lanes: warp.lanes,
            launched: warp.launched,
            unmodelled,
            absent,
        })))
    }
}

/// A qualifier a form requires, or an error at the opcode naming what it needs.
fn required<'q>(found: Option<(&'q str, Span)>, whole: Span, head: &str, what: &str) -> Result<&'q str, Diagnostic> {
    match found {
        Some((name, _)) => Ok(name),
        None => Err(Diagnostic::error(whole, format!("`{head}` needs {what}"))),
    }
}
