//! One lane's `ldmatrix` / `stmatrix` (`program::matrix`): a weak access of the 16 bytes of the
//! lane's own row, four words, when the lane supplies a row address; nothing otherwise. What the
//! fragment registers hold is the placeholder of `program::matrix::ldmatrix_register` and
//! `stmatrix_register`.

use super::deps::DepMask;
use super::error::ExploreError;
use super::event::{Role, TraceOp};
use super::state::{data_val, Cx, State};
use super::values::{typed, RegVal};
use crate::program::matrix::{ldmatrix_register, stmatrix_register, MatrixAccess, ROW_BYTES};
use crate::program::Ty;

impl Cx<'_> {
    /// The runs after one lane's matrix access: one per combination of the values its reads into
    /// registers that decide something may return (as for a vector load).
    pub(super) fn matrix(&self, st: State, m: &MatrixAccess, pc: usize, line: usize) -> Result<Vec<State>, ExploreError> {
        let Some(row) = &m.row else { return Ok(vec![st]) };
        let words = (ROW_BYTES / 4) as usize;
        let mut states = vec![st];
        // "The matrix addresses must be naturally aligned accordingly": a row not 16-byte
        // aligned is undefined.
        if let Some(reason) = self.misaligned_row(&states[0], row) {
            let mut e = states[0].event(TraceOp::Marker, pc);
            e.ub = Some(reason);
            states[0].events.push(e);
        }
        for k in 0..words {
            let mut next = Vec::new();
            for mut s in states {
                let acc = self.access(&s, row, 4 * k as i64, 4, m.space, line)?;
                if self.elided[acc.loc] {
                    next.push(s);
                    continue;
                }
                if m.store {
                    let (v, d) = match m.srcs.get(stmatrix_register(k, m.srcs.len())) {
                        Some(value) => data_val(&s, value),
                        None => (RegVal::Known(0), DepMask::none()),
                    };
                    self.push_write(&mut s, acc, v, d, pc, Role::Thread, None);
                    next.push(s);
                    continue;
                }
                let Some(dst) = ldmatrix_register(k, m.dsts.len()).map(|r| m.dsts[r]) else {
                    // A word of the row no register receives: still read.
                    let mut e = s.access_event(TraceOp::Read, pc, &acc, Role::Thread, None);
                    e.symbolic = true;
                    s.events.push(e);
                    next.push(s);
                    continue;
                };
                if !self.control.contains(&dst) {
                    self.symbolic_read(&mut s, acc, pc, dst);
                    let (v, d) = s.regs[dst].clone();
                    s.regs[dst] = (typed(Some(Ty::U32), v), d);
                    next.push(s);
                    continue;
                }
                for (mut s, v) in self.branch_read(s, acc, pc, Role::Thread, None) {
                    let idx = s.events.len() - 1;
                    s.regs[dst] = (RegVal::Known(Ty::U32.norm(v)), DepMask::single(idx));
                    next.push(s);
                }
            }
            states = next;
        }
        Ok(states)
    }

    /// Why a row address is undefined: not 16-byte aligned in its variable, or a variable
    /// aligned to less.
    fn misaligned_row(&self, st: &State, row: &crate::program::Address) -> Option<String> {
        let (addr, _) = self.address_value(st, row);
        let (var, off) = self.program.decode_address(addr)?;
        let v = &self.program.variables[var];
        (off % ROW_BYTES != 0 || v.align < ROW_BYTES).then(|| {
            format!(
                "ldmatrix/stmatrix: the row address `{}+{off}` is not 16-byte aligned (PTX ISA, ldmatrix/stmatrix: \"The matrix addresses must be naturally aligned\")",
                v.name
            )
        })
    }
}
