//! Control registers: the registers whose values decide something, so that reads into them
//! branch over their values while every other read stays open.

use crate::program::{Address, Completion, Instr, LocalOp, MbOp, Op, Reg, Value};
use std::collections::BTreeSet;

/// Registers whose values decide something: an address, a branch condition, an operand of an
/// mbarrier, barrier, wgmma or async-copy instruction, and, transitively, the operands of an
/// arithmetic instruction or RMW that writes such a register. Every other register only carries
/// data (into stores, other data registers, the final state), so reads into it stay open
/// instead of branching the trace over every value they might return.
pub(super) fn control_registers(code: &[Instr]) -> BTreeSet<Reg> {
    let mut values: Vec<Value> = Vec::new();
    for i in code {
        deciding_operands(&i.op, &mut values);
    }
    for i in code {
        if let Op::Exchange(x) = &i.op {
            values.push(x.a);
        }
    }
    let mut out = registers(&values);
    // An instruction that writes a control register needs its operands known.
    loop {
        let before = out.len();
        for i in code {
            let (dst, operands): (Option<Reg>, Vec<Value>) = match &i.op {
                Op::Local { dst, a, b, c, .. } => (Some(*dst), [*a, *b].into_iter().chain(*c).collect()),
                Op::Rmw { dst, operands, .. } => (*dst, operands.clone()),
                _ => continue,
            };
            if dst.is_some_and(|d| out.contains(&d)) {
                out.extend(registers(&operands));
            }
        }
        if out.len() == before {
            return out;
        }
    }
}

/// Registers whose value something needs: those an instruction reads (any operand, address or
/// condition) and those the final state shows (`shown`). A result written to no such register
/// (the state an `mbarrier.arrive` returns into a register nvcc writes and nothing reads) is
/// not enumerated.
pub(super) fn needed_registers(code: &[Instr], shown: impl IntoIterator<Item = Reg>) -> BTreeSet<Reg> {
    let mut values: Vec<Value> = Vec::new();
    for i in code {
        deciding_operands(&i.op, &mut values);
        data_operands(&i.op, &mut values);
    }
    let mut out = registers(&values);
    out.extend(shown);
    out
}

fn registers(values: &[Value]) -> BTreeSet<Reg> {
    values.iter().filter_map(|v| if let Value::Reg(r) = v { Some(*r) } else { None }).collect()
}

/// The operands whose values decide what an instruction does: addresses, branch conditions,
/// the operands of mbarrier, barrier, wgmma and async-copy instructions, and those `mapa` and
/// `elect.sync` compute from.
pub(super) fn deciding_operands(op: &Op, values: &mut Vec<Value>) {
    let addr = |a: &Address, values: &mut Vec<Value>| {
        if let Address::Reg(r, _) = a {
            values.push(Value::Reg(*r));
        }
    };
    match op {
        Op::Load { addr: a, .. }
        | Op::LoadVector { addr: a, .. }
        | Op::Store { addr: a, .. }
        | Op::StoreVector { addr: a, .. }
        | Op::Rmw { addr: a, .. }
        | Op::ParamLoad { addr: a, .. }
        | Op::CpAsyncArrive { bar: a, .. }
        | Op::TensormapReplace { addr: a, .. }
        | Op::TensormapFence { acquire: Some(a), .. } => addr(a, values),
        Op::TensormapCopy { dst, src, .. } => {
            addr(dst, values);
            addr(src, values);
        }
        Op::AsyncCopy(c) => {
            addr(&c.dst, values);
            addr(&c.src, values);
            values.push(c.size);
            values.extend(c.src_size.iter().chain(c.ignore_src.iter()).chain(c.multicast.iter()).copied());
            values.extend(c.tensor.iter().flat_map(|t| t.coords.iter()).copied());
            if let Completion::Mbarrier(b) = &c.completion {
                addr(b, values);
            }
        }
        Op::Prefetch { bulk: Some((src, size)) } => {
            addr(src, values);
            values.push(*size);
        }
        Op::Wgmma { a, b, .. } => {
            if let Some(a) = a {
                addr(a, values);
            }
            addr(b, values);
        }
        Op::Mbarrier { op, bar, .. } => {
            addr(bar, values);
            match op {
                MbOp::Init { count } => values.push(*count),
                MbOp::Arrive { count, expect_tx, .. } => values.extend(std::iter::once(*count).chain(*expect_tx)),
                MbOp::ExpectTx { bytes } | MbOp::CompleteTx { bytes } => values.push(*bytes),
                MbOp::Wait { operand, .. } => values.push(*operand),
                MbOp::Inval => {}
            }
        }
        Op::Barrier { id, count, .. } => values.extend(id.iter().chain(count.iter()).copied()),
        Op::WarpBarrier { mask, .. } => values.push(*mask),
        // The exchange's own lane, clamp and membermask decide which lanes it reads; its source
        // `a` only needs a value (`exchange_operands`), which may be unknown.
        Op::Exchange(x) => values.extend([x.b, x.c, x.mask]),
        Op::Matrix(m) => {
            if let Some(row) = &m.row {
                addr(row, values);
            }
        }
        Op::Branch { cond: Some((_, a, b)), .. } => values.extend([*a, *b]),
        // `mapa` of a register is computed by the run, from known values.
        Op::Local { op: LocalOp::Mapa | LocalOp::Elect { .. }, a, b, .. } => values.extend([*a, *b]),
        Op::Local { .. }
        | Op::Opaque { .. }
        | Op::Branch { cond: None, .. }
        | Op::Fence { .. }
        | Op::TensormapFence { acquire: None, .. }
        | Op::ProxyFence { .. }
        | Op::AliasFence
        | Op::Prefetch { bulk: None }
        | Op::CommitGroup(_)
        | Op::WaitGroup { .. }
        | Op::WgmmaFence
        | Op::NoEffect(_)
        | Op::Trap
        | Op::ClusterBarrier { .. } => {}
    }
}

/// The operands an instruction only carries as data: stored values, RMW operands, the operands
/// of register arithmetic, a copy's byte mask.
fn data_operands(op: &Op, values: &mut Vec<Value>) {
    match op {
        Op::Store { value, .. } => values.push(*value),
        Op::StoreVector { values: vs, .. } => values.extend(vs.iter().copied()),
        Op::Rmw { operands, .. } => values.extend(operands.iter().copied()),
        Op::Local { a, b, c, .. } => values.extend([*a, *b].into_iter().chain(*c)),
        Op::Opaque { srcs, .. } => values.extend(srcs.iter().copied()),
        Op::AsyncCopy(c) => values.extend(c.byte_mask.iter().copied()),
        Op::Matrix(m) => values.extend(m.srcs.iter().copied()),
        Op::Exchange(x) => values.push(x.a),
        Op::TensormapReplace { value, .. } => values.push(*value),
        _ => {}
    }
}
