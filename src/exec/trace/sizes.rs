//! Accesses that are not one whole word: 8- and 16-bit loads and stores (a part of one word)
//! and 64-bit atomics (one 8-byte access of two words, as 64-bit `ld`/`st`).
//!
//! A sub-word load reads its word and takes its bytes (little-endian: byte k of a word is bits
//! 8k..8k+8 of its 32-bit pattern). A sub-word store writes its bytes and leaves the word's other
//! bytes as they are: at word granularity that is a read of the word (tagged `MERGE` by the
//! structure: it is no read of the program) and the write of the merged word, an RMW pair that
//! the model keeps atomic (`ptx.cat`, `sub-word-merge`). Both carry the range of their own bytes,
//! so they overlap a 4-byte access of the word only partly (a concurrent one is a mixed-size
//! race) and the bytes of another sub-word access not at all.

use super::arith::join64;
use super::deps::DepMask;
use super::error::ExploreError;
use super::event::{Role, TraceOp};
use super::state::{data_val, Access, Cx, State};
use super::values::{typed, RegVal, SymExpr};
use crate::program::{AccessSpace, Address, LocalOp, Reg, RmwOp, Ty, Value};
use std::sync::Arc;

/// `v` as a shared subexpression.
fn shared(v: SymExpr) -> Arc<SymExpr> {
    Arc::new(v)
}

/// The bytes of a sub-word access, as a mask of the word's 32-bit pattern.
fn byte_mask(ty: Ty, byte: i64) -> i64 {
    ((1i64 << ty.bits) - 1) << (8 * byte)
}

impl Cx<'_> {
    /// The word type of the location an access reaches (`.u32` when no typed access names it).
    pub(super) fn word_type(&self, acc: &Access) -> Ty {
        self.program.physical[self.program.locations[acc.loc].physical].ty.unwrap_or(Ty::U32)
    }

    /// An 8- or 16-bit load: a read of its word whose bytes are taken at `ty`; open when the
    /// register decides nothing, else one run per value of the word.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn load_sub_word(
        &self,
        mut st: State,
        stack: &mut Vec<State>,
        dst: Reg,
        ty: Ty,
        addr: &Address,
        space: AccessSpace,
        pc: usize,
        line: usize,
    ) -> Result<Option<State>, ExploreError> {
        let (acc, byte) = self.sub_word_access(&st, addr, i64::from(ty.bits / 8), space, line)?;
        if !self.control.contains(&dst) {
            let idx = st.events.len();
            let mut e = st.access_event(TraceOp::Read, pc, &acc, Role::Thread, None);
            e.symbolic = true;
            st.events.push(e);
            let pattern = SymExpr::Local(LocalOp::And, shared(SymExpr::Read(idx)), shared(SymExpr::Const(0xFFFF_FFFF)));
            let bytes = SymExpr::Local(LocalOp::Shr, shared(pattern), shared(SymExpr::Const(8 * byte)));
            st.regs[dst] = (RegVal::Open(SymExpr::Norm(ty, shared(bytes))), DepMask::single(idx));
            st.pc += 1;
            return Ok(Some(st));
        }
        for (mut s, w) in self.branch_read(st, acc, pc, Role::Thread, None) {
            let idx = s.events.len() - 1;
            let bytes = if crate::program::unknown::is_unknown(w) { w } else { ty.norm((w & 0xFFFF_FFFF) >> (8 * byte)) };
            s.regs[dst] = (RegVal::Known(bytes), DepMask::single(idx));
            s.pc += 1;
            stack.push(s);
        }
        Ok(None)
    }

    /// An 8- or 16-bit store: the read of its word and the write of the word with its bytes
    /// replaced (an RMW pair), the word stored at its type.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn store_sub_word(
        &self,
        st: &mut State,
        ty: Ty,
        addr: &Address,
        value: &Value,
        space: AccessSpace,
        pc: usize,
        line: usize,
    ) -> Result<(), ExploreError> {
        let (acc, byte) = self.sub_word_access(st, addr, i64::from(ty.bits / 8), space, line)?;
        let (v, d) = data_val(st, value);
        let mask = byte_mask(ty, byte);
        let idx = st.events.len();
        let mut e = st.access_event(TraceOp::Read, pc, &acc, Role::Thread, None);
        e.symbolic = true;
        e.rmw_partner = Some(idx + 1);
        st.events.push(e);
        let keep = SymExpr::Local(LocalOp::And, shared(SymExpr::Read(idx)), shared(SymExpr::Const(0xFFFF_FFFF ^ mask)));
        let shifted = SymExpr::Local(LocalOp::Shl, shared(v.expr()), shared(SymExpr::Const(8 * byte)));
        let put = SymExpr::Local(LocalOp::And, shared(shifted), shared(SymExpr::Const(mask)));
        let merged = SymExpr::Local(LocalOp::Or, shared(keep), shared(put));
        let wty = self.word_type(&acc);
        self.push_write(st, acc, typed(Some(wty), RegVal::Open(merged)), d.union(&DepMask::single(idx)), pc, Role::Thread, None);
        st.events[idx + 1].rmw_partner = Some(idx);
        Ok(())
    }

    /// A 64-bit `atom`/`red`: one 8-byte access of two words (both carrying the whole range):
    /// the reads of the low and the high word, then their writes, each write the RMW partner of
    /// the read of its word; the new value is computed at the type from both old words. Open
    /// when the old value decides nothing, else one run per pair of old words.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn rmw_wide(
        &self,
        st: State,
        stack: &mut Vec<State>,
        dst: Option<Reg>,
        ty: Ty,
        addr: &Address,
        op: RmwOp,
        operands: &[Value],
        space: AccessSpace,
        pc: usize,
        line: usize,
    ) -> Result<Option<State>, ExploreError> {
        let accs = [self.access_word(&st, addr, 0, 8, space, line)?, self.access_word(&st, addr, 1, 8, space, line)?];
        let ops: Vec<(RegVal, DepMask)> = operands.iter().map(|o| data_val(&st, o)).collect();
        let data: DepMask = ops.iter().fold(DepMask::none(), |m, (_, d)| m.union(d));
        let idx = st.events.len();
        // The runs, each with the old value as an expression over its two reads.
        let mut runs: Vec<(State, RegVal)> = Vec::new();
        if dst.is_none_or(|d| !self.control.contains(&d)) {
            let mut st = st;
            for acc in &accs {
                let mut e = st.access_event(TraceOp::Read, pc, acc, Role::Thread, None);
                e.symbolic = true;
                st.events.push(e);
            }
            runs.push((st, RegVal::Open(SymExpr::Join(shared(SymExpr::Read(idx)), shared(SymExpr::Read(idx + 1))))));
        } else {
            for (s, lo) in self.branch_read(st, accs[0].clone(), pc, Role::Thread, None) {
                for (s2, hi) in self.branch_read(s, accs[1].clone(), pc, Role::Thread, None) {
                    runs.push((s2, RegVal::Known(join64(lo, hi))));
                }
            }
        }
        for (mut s, old) in runs {
            let new =
                match (&old, ops.iter().map(|(v, _)| if let RegVal::Known(x) = v { Some(*x) } else { None }).collect::<Option<Vec<i64>>>())
                {
                    (RegVal::Known(o), Some(args)) => RegVal::Known(ty.rmw(op, *o, &args)),
                    _ => RegVal::Open(SymExpr::TRmw(ty, op, shared(old.expr()), ops.iter().map(|(v, _)| v.expr()).collect())),
                };
            let deps = data.union(&DepMask::single(idx)).union(&DepMask::single(idx + 1));
            for (k, acc) in accs.iter().enumerate() {
                let part = match (&new, k) {
                    (RegVal::Known(x), 0) => RegVal::Known(*x),
                    (RegVal::Known(x), _) => RegVal::Known(super::arith::high_word(*x)),
                    (RegVal::Open(e), 0) => RegVal::Open(e.clone()),
                    (RegVal::Open(e), _) => RegVal::Open(SymExpr::High(shared(e.clone()))),
                };
                let wty = self.word_type(acc);
                self.push_write(&mut s, acc.clone(), typed(Some(wty), part), deps.clone(), pc, Role::Thread, None);
                s.events[idx + k].rmw_partner = Some(idx + 2 + k);
                s.events[idx + 2 + k].rmw_partner = Some(idx + k);
            }
            if let Some(d) = dst {
                s.regs[d] = (typed(Some(ty), old), deps_of_reads(idx));
            }
            s.pc += 1;
            stack.push(s);
        }
        Ok(None)
    }
}

/// The dependency on the two reads of a 64-bit access starting at event `idx`.
fn deps_of_reads(idx: usize) -> DepMask {
    DepMask::single(idx).union(&DepMask::single(idx + 1))
}
