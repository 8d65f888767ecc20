//! One lane's `ldmatrix` / `stmatrix` (`program::matrix`): a weak access of the 16 bytes of the
//! lane's own row, four words, when the lane supplies a row address; nothing otherwise. The
//! values are fragments of the other lanes' rows and registers, which a model of some lanes does
//! not compute: `ldmatrix`'s destinations (in every lane, with a row or not) and the words
//! `stmatrix` writes are the unknown value of the instruction's origin (`program::unknown`).

use super::deps::DepMask;
use super::error::ExploreError;
use super::event::{Role, TraceOp};
use super::state::{data_val, Cx, State};
use super::values::RegVal;
use crate::program::matrix::{MatrixAccess, ROW_BYTES};
use crate::program::unknown;

impl Cx<'_> {
    /// The run after one lane's matrix access (one: no value it reads decides anything).
    pub(super) fn matrix(&self, mut st: State, m: &MatrixAccess, pc: usize, line: usize) -> Result<State, ExploreError> {
        let value = unknown::encode(m.origin);
        // What the fragments depend on: the instruction's register operands (the registers
        // `stmatrix` writes from, the row address), as an abstracted instruction's destinations
        // depend on its sources. Not on the lane's own row read: its words go to other lanes.
        let mut deps = m.srcs.iter().fold(DepMask::none(), |d, s| d.union(&data_val(&st, s).1));
        if let Some(row) = &m.row {
            deps = deps.union(&self.address_value(&st, row).1);
            // "The matrix addresses must be naturally aligned accordingly": a row not 16-byte
            // aligned is undefined.
            if let Some(reason) = self.misaligned_row(&st, row) {
                let mut e = st.event(TraceOp::Marker, pc);
                e.ub = Some(reason);
                st.events.push(e);
            }
            for k in 0..ROW_BYTES / 4 {
                let acc = self.access(&st, row, 4 * k, 4, m.space, line)?;
                if self.elided[acc.loc] {
                    continue;
                }
                if m.store {
                    self.push_write(&mut st, acc, RegVal::Known(value), deps.clone(), pc, Role::Thread, None);
                } else {
                    // A read whose value no register of this lane receives: it reads whatever
                    // write rf gives it.
                    let mut e = st.access_event(TraceOp::Read, pc, &acc, Role::Thread, None);
                    e.symbolic = true;
                    st.events.push(e);
                }
            }
        }
        for &d in &m.dsts {
            st.regs[d] = (RegVal::Known(value), deps.clone());
        }
        Ok(st)
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
