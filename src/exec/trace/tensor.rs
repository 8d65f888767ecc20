//! The events of a tile-mode tensor copy (`cp.async.bulk.tensor`, `cp.reduce.async.bulk.tensor`;
//! `program::tensor`): like a bulk copy's, but the global side is a box of the tensor map, and
//! the copy first reads the tensor map itself.

use super::deps::DepMask;
use super::error::{bad_address, ExploreError};
use super::event::{AsyncKind, AsyncOp, Role, TraceOp};
use super::state::{val, Access, Cx, State};
use super::values::{RegVal, SymExpr};
use crate::program::{AccessSpace, AsyncCopy, Completion, TensorCopy, VariableKind};

impl Cx<'_> {
    /// A tensor copy's async agent: a read of the tensor map's word, then per element of the box
    /// (in shared-memory order) the source read and the destination write (or reduction).
    /// Out-of-bounds elements are not read from global memory: a load writes zeros for them, a
    /// store or reduction skips them. The completion (complete-tx of the whole box's bytes, or
    /// the bulk async-group) is a bulk copy's.
    pub(super) fn tensor_copy(
        &self,
        st: State,
        copy: &AsyncCopy,
        t: &TensorCopy,
        pc: usize,
        line: usize,
    ) -> Result<Vec<State>, ExploreError> {
        let map = &self.program.tensor_maps[t.map];
        let size = map.box_bytes();
        let mut coord_deps = DepMask::none();
        let corner: Vec<i64> = t
            .coords
            .iter()
            .map(|c| {
                let (v, d) = val(&st, c);
                coord_deps = coord_deps.union(&d);
                v
            })
            .collect();
        let store = copy.dst_space == AccessSpace::Global;
        let (shared_op, shared_space) = if store { (&copy.src, copy.src_space) } else { (&copy.dst, copy.dst_space) };
        let (shared_addr, shared_deps) = self.address_value(&st, shared_op);
        let bar_addr = match &copy.completion {
            Completion::Mbarrier(b) => Some(self.address_value(&st, b).0),
            Completion::Group(_) => None,
        };
        // The shared-memory box: inside its variable and 16-byte aligned (§9.7.9.25: bulk copies).
        let Some((var, off)) = self.program.decode_address(shared_addr) else {
            return Err(bad_address(self.program, self.thread.id, line, shared_addr));
        };
        let v = &self.program.variables[var];
        let ub = if v.kind == VariableKind::Mbarrier {
            Some(format!("the shared-memory box of the tensor copy is the mbarrier object `{}`", v.name))
        } else if off + size > v.size {
            Some(format!(
                "U6: the tensor copy's box of {size} bytes at `{}+{off}` runs past the end of `{}` ({} bytes)",
                v.name, v.name, v.size
            ))
        } else if off % 16 != 0 || v.align < 16 {
            Some(format!("U5/U6: the tensor copy's shared-memory box `{}+{off}` is not 16-byte aligned (PTX ISA §9.7.9.25)", v.name))
        } else {
            None
        };
        let mut s = st;
        if let Some(reason) = ub {
            let mut e = s.event(TraceOp::Marker, pc);
            e.ub = Some(reason);
            s.events.push(e);
            return Ok(vec![s]);
        }
        let agent = s.ops.len();
        s.ops.push(AsyncOp { instr: pc, kind: AsyncKind::Copy(copy.kind), events: Vec::new(), tracked: Vec::new(), group: None });
        // "Optionally, reading from the tensormap" (§9.7.9.25): a source read of the map's word.
        let tmap = Access { loc: self.program.variables[map.variable].first_location, range: (0, 4), deps: DepMask::none(), ub: None };
        let mut e = s.access_event(TraceOp::Read, pc, &tmap, Role::Source, Some(agent));
        e.symbolic = true;
        s.events.push(e);
        let base = self.program.address(map.base, 0);
        for (k, element) in map.box_elements(&corner).into_iter().enumerate() {
            for w in 0..map.elem / 4 {
                let byte = k as i64 * map.elem + 4 * w;
                let shared = self.access_at(shared_addr + byte, shared_addr, size, shared_deps.clone(), shared_space, line)?;
                // Each element of the tensor is its own footprint in global memory.
                let global = match element {
                    Some(o) => {
                        let a = base + o + 4 * w;
                        let loc = self.program.location_at(a).ok_or_else(|| bad_address(self.program, self.thread.id, line, a))?;
                        Some(Access {
                            loc,
                            range: (o, o + map.elem),
                            deps: coord_deps.clone(),
                            ub: self.space_violation(map.base, AccessSpace::Global),
                        })
                    }
                    None => None,
                };
                let (from, to) = if store { (Some(shared), global) } else { (global, Some(shared)) };
                let (value, dep) = match from {
                    Some(src) => {
                        let i = s.events.len();
                        let mut e = s.access_event(TraceOp::Read, pc, &src, Role::Source, Some(agent));
                        e.symbolic = true;
                        s.events.push(e);
                        (RegVal::Open(SymExpr::Read(i)), DepMask::single(i))
                    }
                    // Out of bounds: zeros, nothing read (tile mode, zero fill).
                    None => (RegVal::Known(0), DepMask::none()),
                };
                let Some(dst) = to else { continue };
                self.push_copy_write(&mut s, copy.kind, dst, value, dep, pc, agent);
            }
        }
        let dst_addr = if store { base } else { shared_addr };
        self.finish_copy(s, copy, agent, &[(dst_addr, bar_addr)], size, pc, line)
    }
}
