//! Lowering of the warp-collective instructions the model gives a meaning lane by lane:
//! `ldmatrix` and `stmatrix` (`program::matrix`), `bar.warp.sync` (`Op::WarpBarrier`) and a
//! `shfl.sync.idx` whose source lane is the thread's own (a broadcast from lane 0 read by lane 0). Each
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

    /// `shfl.sync.idx.b32 d{|p}, a, b, c, membermask` with constant `b`, `c` and membermask
    /// (PTX ISA, `shfl.sync`): the source lane `j` from `b`, the clamp and the segment mask of
    /// `c`; where `j` is this thread's own lane, `d` is its own `a` and `p` says whether `j` was
    /// in range. Triton makes a value warp-uniform so (`shfl.sync.idx.b32 d, a, 0, 31, -1`), read
    /// by lane 0. Any other shuffle takes the values of other lanes: rejected (abstracted in a
    /// kernel) as [`InstrLowerer::warp_exchange`] says.
    pub(super) fn shuffle(&mut self, rest: &[Spanned<String>]) -> Result<Vec<Op>, Diagnostic> {
        let quals: Vec<&str> = rest.iter().map(|p| p.node.as_str()).collect();
        let lane = i64::from(self.warp.lane);
        let own = match (quals.as_slice(), self.instr.operands.as_slice()) {
            (["sync", "idx", "b32"], [dp, a, b, c, mask]) => match (&b.node, &c.node, &mask.node) {
                (Operand::Int(b), Operand::Int(c), Operand::Int(m)) if (m >> lane) & 1 == 1 => {
                    let segmask = (c >> 8) & 0x1f;
                    let max_lane = (lane & segmask) | (c & 0x1f & !segmask);
                    let j = (lane & segmask) | (b & 0x1f & !segmask);
                    let in_range = j <= max_lane;
                    (if in_range { j } else { lane } == lane).then_some((dp, a, in_range))
                }
                _ => None,
            },
            _ => None,
        };
        let Some((dp, a, in_range)) = own else {
            return match self.shuffle_at_run_time(&quals) {
                Some(ops) => ops,
                None => self.warp_exchange("shfl", rest).map(|op| vec![op]),
            };
        };
        let (d, p) = match &dp.node {
            Operand::Vector(items) if items.len() == 2 => (&items[0], Some(&items[1]).filter(|p| p.node != Operand::Sink)),
            _ => (dp, None),
        };
        if d.node == Operand::Sink {
            return self.warp_exchange("shfl", rest).map(|op| vec![op]);
        }
        let a = self.typed_value(a, Some(Ty::U32))?;
        let dst = self.dest_reg(d)?;
        let mut ops = vec![Op::Local { dst, op: LocalOp::Mov, ty: Some(Ty::U32), a, b: Value::Const(0), c: None }];
        if let Some(p) = p {
            let dst = self.dest_reg(p)?;
            ops.push(Op::Local { dst, op: LocalOp::Mov, ty: None, a: Value::Const(i64::from(in_range)), b: Value::Const(0), c: None });
        }
        Ok(ops)
    }

    /// `shfl.sync.idx.b32 d{|p}, a, b, c, membermask` whose lane `b`, clamp `c` or membermask
    /// is in a register: evaluated by the run (`LocalOp::ShuffleIdx`): `d` is the thread's own
    /// `a` where the source lane is its own, else unknown (another lane's register); `p` is
    /// exact. CUTLASS broadcasts the warp index so (`__shfl_sync(0xffffffff, threadIdx.x / 32,
    /// 0)` with the lane in a register). None where the form is another (`warp_exchange` says
    /// what it is), or a constant membermask leaves the lane out.
    fn shuffle_at_run_time(&mut self, quals: &[&str]) -> Option<Result<Vec<Op>, Diagnostic>> {
        let ([dp, a, b, c, mask], ["sync", "idx", "b32"]) = (self.instr.operands.as_slice(), quals) else { return None };
        let (dp, a, b, c, mask) = (dp.clone(), a.clone(), b.clone(), c.clone(), mask.clone());
        let lane = self.warp.lane;
        // With every operand constant, lowering decided the shuffle (`shuffle`).
        if [&b, &c, &mask].iter().all(|o| matches!(o.node, Operand::Int(_))) {
            return None;
        }
        if let Operand::Int(m) = mask.node {
            if (m >> lane) & 1 == 0 {
                return None;
            }
        }
        let (d, p) = match &dp.node {
            Operand::Vector(items) if items.len() == 2 => (items[0].clone(), Some(items[1].clone()).filter(|p| p.node != Operand::Sink)),
            _ => (dp.clone(), None),
        };
        if d.node == Operand::Sink {
            return None;
        }
        let (line, _) = self.l.source.line_col(self.span.start);
        let origin = self.l.unknown_origin(UnknownOrigin {
            line,
            span: self.span,
            what: self.l.source.slice(self.span).split_whitespace().collect::<Vec<_>>().join(" "),
            why: "a warp exchange with its lane in a register: evaluated where the source lane is the thread's own (a broadcast read by its source lane); from another lane, whose register a model of some lanes does not compute, the value is unknown".into(),
            kind: UnknownKind::Abstracted,
        });
        let lowered = (|| {
            let (a, b, c, mask) = (
                self.typed_value(&a, Some(Ty::U32))?,
                self.typed_value(&b, Some(Ty::U32))?,
                self.typed_value(&c, Some(Ty::U32))?,
                self.typed_value(&mask, Some(Ty::U32))?,
            );
            let mut ops = Vec::new();
            // The predicate first: `b` and `c` may be `d` itself.
            if let Some(p) = &p {
                let dst = self.dest_reg(p)?;
                ops.push(Op::Local { dst, op: LocalOp::ShufflePred { lane }, ty: None, a: b, b: c, c: None });
            }
            let dst = self.dest_reg(&d)?;
            ops.push(Op::Local { dst, op: LocalOp::ShuffleIdx { lane, origin }, ty: None, a, b, c: Some(c) });
            ops.push(Op::Local { dst, op: LocalOp::ShuffleMask { lane, origin }, ty: None, a: Value::Reg(dst), b: mask, c: None });
            Ok(ops)
        })();
        Some(lowered)
    }
}
