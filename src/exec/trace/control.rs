//! Control registers: the registers whose values decide something, so that reads into them
//! branch over their values while every other read stays open.

use crate::program::{Address, Completion, Instr, MbOp, Op, Reg, Value};
use std::collections::BTreeSet;

/// Registers whose values decide something: an address, a branch condition, an operand of an
/// mbarrier, barrier, wgmma or async-copy instruction, and, transitively, the operands of an
/// arithmetic instruction or RMW that writes such a register. Every other register only carries
/// data (into stores, other data registers, the final state), so reads into it stay open
/// instead of branching the trace over every value they might return.
pub(super) fn control_registers(code: &[Instr]) -> BTreeSet<Reg> {
    let mut regs: Vec<Value> = Vec::new();
    let addr = |a: &Address, regs: &mut Vec<Value>| {
        if let Address::Reg(r, _) = a {
            regs.push(Value::Reg(*r));
        }
    };
    for i in code {
        match &i.op {
            Op::Load { addr: a, .. } | Op::LoadVector { addr: a, .. } | Op::Store { addr: a, .. } | Op::StoreVector { addr: a, .. } => {
                addr(a, &mut regs)
            }
            Op::Rmw { addr: a, .. } => addr(a, &mut regs),
            Op::AsyncCopy(c) => {
                addr(&c.dst, &mut regs);
                addr(&c.src, &mut regs);
                regs.push(c.size);
                regs.extend(c.src_size.iter().chain(c.ignore_src.iter()).chain(c.multicast.iter()).copied());
                regs.extend(c.tensor.iter().flat_map(|t| t.coords.iter()).copied());
                if let Completion::Mbarrier(b) = &c.completion {
                    addr(b, &mut regs);
                }
            }
            Op::CpAsyncArrive { bar, .. } => addr(bar, &mut regs),
            Op::Prefetch { bulk: Some((src, size)) } => {
                addr(src, &mut regs);
                regs.push(*size);
            }
            Op::Wgmma { a, b } => {
                addr(a, &mut regs);
                addr(b, &mut regs);
            }
            Op::Mbarrier { op, bar, .. } => {
                addr(bar, &mut regs);
                match op {
                    MbOp::Init { count } => regs.push(*count),
                    MbOp::Arrive { count, expect_tx, .. } => {
                        regs.push(*count);
                        regs.extend(expect_tx.iter().copied());
                    }
                    MbOp::ExpectTx { bytes } | MbOp::CompleteTx { bytes } => regs.push(*bytes),
                    MbOp::Wait { operand, .. } => regs.push(*operand),
                    MbOp::Inval => {}
                }
            }
            Op::Barrier { id, count, .. } => regs.extend(id.iter().chain(count.iter()).copied()),
            Op::Branch { cond: Some((_, a, b)), .. } => regs.extend([*a, *b]),
            Op::Local { .. }
            | Op::Branch { cond: None, .. }
            | Op::Fence { .. }
            | Op::ProxyFence { .. }
            | Op::AliasFence
            | Op::Prefetch { bulk: None }
            | Op::CommitGroup(_)
            | Op::WaitGroup { .. }
            | Op::WgmmaFence
            | Op::ClusterBarrier { .. } => {}
        }
    }
    let mut out: BTreeSet<Reg> = regs.iter().filter_map(|v| if let Value::Reg(r) = v { Some(*r) } else { None }).collect();
    // An instruction that writes a control register needs its operands known.
    loop {
        let before = out.len();
        for i in code {
            let (dst, operands): (Option<Reg>, Vec<Value>) = match &i.op {
                Op::Local { dst, a, b, .. } => (Some(*dst), vec![*a, *b]),
                Op::Rmw { dst, operands, .. } => (*dst, operands.clone()),
                _ => continue,
            };
            if dst.is_some_and(|d| out.contains(&d)) {
                out.extend(operands.iter().filter_map(|v| if let Value::Reg(r) = v { Some(*r) } else { None }));
            }
        }
        if out.len() == before {
            return out;
        }
    }
}
