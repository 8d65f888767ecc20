//! Spin loops: which back edges close a side-effect-free loop (an await, whose failed
//! iterations are dropped).

use crate::program::{Address, Instr, MbOp, Op, Reg, Value};
use std::collections::BTreeSet;

/// For each instruction index, whether it is the back edge of a side-effect-free loop.
pub(super) fn spin_back_edges(code: &[Instr]) -> Vec<bool> {
    code.iter()
        .enumerate()
        .map(|(j, instr)| match instr.op {
            Op::Branch { target, .. } if target <= j => is_spin_body(&code[target..=j]),
            _ => false,
        })
        .collect()
}

/// A loop body is side-effect free when it writes no memory, crosses no barrier, and carries no
/// register value from one iteration to the next (so every iteration computes the same thing
/// from fresh reads).
fn is_spin_body(body: &[Instr]) -> bool {
    let mut written: BTreeSet<Reg> = BTreeSet::new();
    let mut read_before_write: BTreeSet<Reg> = BTreeSet::new();
    let use_value = |v: &Value, written: &BTreeSet<Reg>, rbw: &mut BTreeSet<Reg>| {
        if let Value::Reg(r) = v {
            if !written.contains(r) {
                rbw.insert(*r);
            }
        }
    };
    for instr in body {
        match &instr.op {
            Op::Store { .. }
            | Op::StoreVector { .. }
            | Op::Rmw { .. }
            | Op::Barrier { .. }
            | Op::ClusterBarrier { .. }
            | Op::AsyncCopy(_)
            | Op::Wgmma { .. }
            | Op::CommitGroup(_)
            | Op::WaitGroup { .. }
            | Op::CpAsyncArrive { .. } => return false,
            Op::Mbarrier { op: MbOp::Wait { operand, .. }, bar, dst, .. } => {
                if let Address::Reg(r, _) = bar {
                    use_value(&Value::Reg(*r), &written, &mut read_before_write);
                }
                use_value(operand, &written, &mut read_before_write);
                if let Some(d) = dst {
                    written.insert(*d);
                }
            }
            Op::Mbarrier { .. } => return false,
            Op::Load { dst, addr, .. } => {
                if let Address::Reg(r, _) = addr {
                    use_value(&Value::Reg(*r), &written, &mut read_before_write);
                }
                written.insert(*dst);
            }
            Op::LoadVector { dsts, addr, .. } => {
                if let Address::Reg(r, _) = addr {
                    use_value(&Value::Reg(*r), &written, &mut read_before_write);
                }
                written.extend(dsts.iter().copied());
            }
            Op::Local { dst, a, b, .. } => {
                use_value(a, &written, &mut read_before_write);
                use_value(b, &written, &mut read_before_write);
                written.insert(*dst);
            }
            Op::Branch { cond: Some((_, a, b)), .. } => {
                use_value(a, &written, &mut read_before_write);
                use_value(b, &written, &mut read_before_write);
            }
            Op::Branch { cond: None, .. } | Op::Fence { .. } | Op::ProxyFence { .. } | Op::AliasFence | Op::Prefetch | Op::WgmmaFence => {}
        }
    }
    read_before_write.is_disjoint(&written)
}
