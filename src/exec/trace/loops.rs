//! Spin and retry loops: which back edges close a side-effect-free loop (an await, whose failed
//! iterations are dropped), or a loop whose only effects are read-modify-writes (a retry loop,
//! whose failed attempts are dropped: see `Cx::branch`).

use crate::program::{Address, Instr, MbOp, NoEffect, Op, Reg, Value};
use std::collections::BTreeSet;

/// For each instruction index, whether it is the back edge of a side-effect-free loop.
pub(super) fn spin_back_edges(code: &[Instr]) -> Vec<bool> {
    back_edges_where(code, |body| is_spin_body(body, false))
}

/// For each instruction index, whether it is the back edge of a retry loop: a loop that is not
/// side-effect free, whose only effects are read-modify-writes and which carries no register
/// value from one iteration to the next (`L: atom.cas r, [x], 0, 1; bne r, 0, L`). An iteration
/// of it whose read-modify-writes all wrote back the value they read (a failed attempt) changed
/// nothing.
pub(super) fn retry_back_edges(code: &[Instr]) -> Vec<bool> {
    back_edges_where(code, |body| !is_spin_body(body, false) && is_spin_body(body, true))
}

fn back_edges_where(code: &[Instr], body_is: impl Fn(&[Instr]) -> bool) -> Vec<bool> {
    code.iter()
        .enumerate()
        .map(|(j, instr)| match instr.op {
            Op::Branch { target, .. } if target <= j => body_is(&code[target..=j]),
            _ => false,
        })
        .collect()
}

/// A loop body is side-effect free when it writes no memory, crosses no barrier, and carries no
/// register value from one iteration to the next (so every iteration computes the same thing
/// from fresh reads). With `rmw`, read-modify-writes are allowed too (at their own address,
/// computed afresh).
fn is_spin_body(body: &[Instr], rmw: bool) -> bool {
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
            Op::Rmw { dst, addr, operands, .. } if rmw => {
                if let Address::Reg(r, _) = addr {
                    use_value(&Value::Reg(*r), &written, &mut read_before_write);
                }
                for o in operands {
                    use_value(o, &written, &mut read_before_write);
                }
                written.extend(dst.iter().copied());
            }
            Op::Store { .. }
            | Op::StoreVector { .. }
            | Op::Rmw { .. }
            | Op::Barrier { .. }
            | Op::WarpBarrier { .. }
            // A warp exchange in a poll loop takes part in every iteration with the other lanes:
            // its failed iterations are not dropped.
            | Op::Exchange(_)
            | Op::Trap
            | Op::ClusterBarrier { .. }
            | Op::AsyncCopy(_)
            | Op::TensormapReplace { .. }
            | Op::TensormapCopy { .. }
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
            Op::LoadVector { dsts, addr, .. } | Op::ParamLoad { dsts, addr, .. } => {
                if let Address::Reg(r, _) = addr {
                    use_value(&Value::Reg(*r), &written, &mut read_before_write);
                }
                written.extend(dsts.iter().copied());
            }
            Op::Matrix(m) if m.store => return false,
            Op::Matrix(m) => {
                if let Some(Address::Reg(r, _)) = &m.row {
                    use_value(&Value::Reg(*r), &written, &mut read_before_write);
                }
                written.extend(m.dsts.iter().copied());
            }
            // A wait loop that sleeps between its polls (`nanosleep`) is still an await.
            Op::NoEffect(NoEffect::Sleep(t)) => use_value(t, &written, &mut read_before_write),
            Op::NoEffect(NoEffect::Prefetch { addr: Some(Address::Reg(r, _)) }) => {
                use_value(&Value::Reg(*r), &written, &mut read_before_write)
            }
            Op::NoEffect(_) => {}
            Op::Local { dst, a, b, c, .. } => {
                use_value(a, &written, &mut read_before_write);
                use_value(b, &written, &mut read_before_write);
                if let Some(c) = c {
                    use_value(c, &written, &mut read_before_write);
                }
                written.insert(*dst);
            }
            Op::Opaque { dsts, srcs, .. } => {
                for s in srcs {
                    use_value(s, &written, &mut read_before_write);
                }
                written.extend(dsts.iter().copied());
            }
            Op::Branch { cond: Some((_, a, b)), .. } => {
                use_value(a, &written, &mut read_before_write);
                use_value(b, &written, &mut read_before_write);
            }
            Op::Branch { cond: None, .. }
            | Op::Fence { .. }
            | Op::ProxyFence { .. }
            | Op::TensormapFence { .. }
            | Op::AliasFence
            | Op::Prefetch { .. }
            | Op::WgmmaFence => {}
        }
    }
    read_before_write.is_disjoint(&written)
}
