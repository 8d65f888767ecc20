//! Lowering of the warp-collective instructions the model gives a meaning lane by lane:
//! `ldmatrix` and `stmatrix` (`program::matrix`) and `bar.warp.sync` (`Op::WarpBarrier`). Each
//! needs the executing thread's lane: the threads of a CTA with tids 32w..32w+31 are warp w, a
//! thread's lane its tid mod 32 (`special::Warp`).

use super::operands::{describe, InstrLowerer, Quals};
use crate::diag::{Diagnostic, Spanned};
use crate::litmus::ast::Operand;
use crate::program::matrix::{supplies_row, MatrixAccess, MatrixShape};
use crate::program::unknown::{UnknownKind, UnknownOrigin};
use crate::program::*;

impl InstrLowerer<'_, '_> {
    /// `ldmatrix.sync.aligned.shape.num{.trans}{.ss}.type r, [p]` and
    /// `stmatrix.sync.aligned.shape.num{.trans}{.ss}.type [p], r` (qualifiers in any order, as
    /// CUTLASS writes `.x1.m8n8`), with the shapes and types of the PTX ISA: `.m8n8.b16`,
    /// `.m16n16.trans.b8` (`ldmatrix`, `.x1`/`.x2`), `.m8n16.b8x16.b6x16_p32|b4x16_p64`
    /// (`ldmatrix`), `.m16n8.trans.b8` (`stmatrix`).
    pub(super) fn matrix(&mut self, head: &str, rest: &[Spanned<String>]) -> Result<Op, Diagnostic> {
        let store = head == "stmatrix";
        let mut q = Quals::new(rest);
        let sync = q.take(&["sync"]);
        let aligned = q.take(&["aligned"]);
        let shape = q.take(&["m8n8", "m16n16", "m8n16", "m16n8"]);
        let num = q.take(&["x1", "x2", "x4"]);
        let trans = q.take(&["trans"]);
        // "If no state space is provided, generic addressing is used".
        let space = if q.take(&["shared", "shared::cta"]).is_some() { AccessSpace::SharedCta } else { AccessSpace::Generic };
        let ty = q.take(&["b16", "b8", "b8x16"]);
        let src_fmt = q.take(&["b6x16_p32", "b4x16_p64"]);
        q.finish(head, ".sync, .aligned, a shape (.m8n8 ...), .x1 .x2 .x4, .trans, .shared{::cta}, an element type (.b16 ...)")?;
        let whole = self.instr.opcode_span();
        let (Some(_), Some(_)) = (sync, aligned) else {
            return Err(Diagnostic::error(whole, format!("`{head}` needs `.sync.aligned`")));
        };
        let (Some((shape, shape_span)), Some((num, _))) = (shape, num) else {
            return Err(Diagnostic::error(whole, format!("`{head}` needs a shape (.m8n8 ...) and a count of matrices (.x1, .x2 or .x4)")));
        };
        let Some((ty, ty_span)) = ty else {
            return Err(Diagnostic::error(whole, format!("`{head}` needs an element type (.b16 for .m8n8)")));
        };
        let num = match num {
            "x1" => 1,
            "x2" => 2,
            _ => 4,
        };
        // The PTX ISA's forms: (instruction, shape) -> element type, `.trans`, counts.
        let shape = match (store, shape, ty, src_fmt.is_some()) {
            (_, "m8n8", "b16", false) => MatrixShape::M8n8,
            (false, "m16n16", "b8", false) | (false, "m16n16", "b8x16", true) => MatrixShape::M16n16,
            (false, "m8n16", "b8x16", true) => MatrixShape::M8n16,
            (true, "m16n8", "b8", false) => MatrixShape::M16n8,
            _ => {
                let forms =
                    if store { ".m8n8.b16, .m16n8.trans.b8" } else { ".m8n8.b16, .m16n16.trans.b8, .m8n16.b8x16.b6x16_p32|.b4x16_p64" };
                let found = format!("`.{shape}.{ty}{}`", src_fmt.map(|(f, _)| format!(".{f}")).unwrap_or_default());
                return Err(Diagnostic::expected(shape_span.to(ty_span), format!("a form of `{head}`: {forms}"), found));
            }
        };
        if matches!(shape, MatrixShape::M16n16 | MatrixShape::M16n8) && trans.is_none() {
            return Err(Diagnostic::error(shape_span, format!("`.{}` needs `.trans` (PTX ISA: \".trans is mandatory\")", shape.name())));
        }
        if shape == MatrixShape::M16n16 && num == 4 {
            return Err(Diagnostic::error(
                whole,
                "`.m16n16` takes `.x1` or `.x2` (PTX ISA: \"only .x1 and .x2 are valid values for .num\")",
            ));
        }
        let ops = self.operands(2, if store { "[p], r" } else { "r, [p]" })?;
        let (regs_op, addr_op) = if store { (&ops[1], &ops[0]) } else { (&ops[0], &ops[1]) };
        let n = shape.registers_per_matrix() * num as usize;
        let Operand::Vector(items) = &regs_op.node else {
            return Err(Diagnostic::expected(regs_op.span, format!("a vector of {n} 32-bit registers `{{...}}`"), describe(&regs_op.node)));
        };
        if items.len() != n {
            return Err(Diagnostic::expected(regs_op.span, format!("{n} register(s) for `.{}.x{num}`", shape.name()), items.len()));
        }
        if !matches!(&addr_op.node, Operand::Address(..)) {
            return Err(Diagnostic::expected(addr_op.span, "a shared-memory address `[p]`", describe(&addr_op.node)));
        }
        // Lanes that supply no row address for this .num: "the other lanes' addresses are not
        // used"; the operand is still read (it is an operand of the instruction).
        let address = self.address(addr_op)?;
        let row = supplies_row(shape, num, self.warp.lane).then_some(address);
        let (mut dsts, mut srcs) = (Vec::new(), Vec::new());
        for it in items {
            if store {
                srcs.push(self.typed_value(it, Some(Ty::U32))?);
            } else {
                let r = self.dest_reg(it)?;
                self.regs.set_type(r, Some(Ty { kind: types::Kind::B, bits: 32 }));
                dsts.push(r);
            }
        }
        // The registers exchange fragments with the other lanes' rows: unknown values, whose
        // origin is this instruction.
        let (line, _) = self.l.source.line_col(self.span.start);
        let why = if store {
            "stmatrix writes to each lane's row fragments of the registers of the other lanes of the warp, which a model of some lanes does not compute (the row's write itself is modelled)"
        } else {
            "ldmatrix gives each lane's registers fragments of the rows the other lanes of the warp address, which a model of some lanes does not compute (the row's read itself is modelled)"
        };
        let origin = self.l.unknown_origin(UnknownOrigin {
            line,
            span: self.span,
            what: self.l.source.slice(self.span).split_whitespace().collect::<Vec<_>>().join(" "),
            why: why.into(),
            kind: UnknownKind::Abstracted,
        });
        Ok(Op::Matrix(Box::new(MatrixAccess { store, shape, num, trans: trans.is_some(), row, space, dsts, srcs, origin })))
    }

    /// `bar.warp.sync membermask` (PTX ISA §9.7.13.2): a barrier of the lanes of this thread's
    /// warp that membermask selects (and the test occupies). "The behavior of bar.warp.sync is
    /// undefined if the executing thread is not in the membermask": an error for a constant
    /// membermask, undefined behaviour at run time for one in a register.
    pub(super) fn warp_barrier(&mut self) -> Result<Op, Diagnostic> {
        let ops = self.operands(1, "membermask")?;
        let mask = match &ops[0].node {
            Operand::Int(m) => {
                let m = *m as u32;
                if m & (1 << self.warp.lane) == 0 {
                    return Err(Diagnostic::error(
                        ops[0].span,
                        format!(
                            "membermask {m:#x} does not select this thread's lane {} (PTX ISA §9.7.13.2: \"The behavior of bar.warp.sync is undefined if the executing thread is not in the membermask\")",
                            self.warp.lane
                        ),
                    )
                    .with_note("a thread's lane is its tid mod 32 (`tid N` in its placement, or its position among its CTA's threads by id)"));
                }
                Value::Const(i64::from(m))
            }
            Operand::Name(_) | Operand::PercentName(_) => self.typed_value(&ops[0], Some(Ty::U32))?,
            other => return Err(Diagnostic::expected(ops[0].span, "a membermask (a constant or a register)", describe(other))),
        };
        // The warp of this thread in its CTA: its `%warpid` (tid / 32).
        let warp = self.l.specials.read("%warpid").ok().flatten().unwrap_or(0);
        Ok(Op::WarpBarrier { mask, warp, lane: self.warp.lane, lanes: self.warp.lanes })
    }
}
