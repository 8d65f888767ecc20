//! The events of a tile-mode tensor copy (`cp.async.bulk.tensor`, `cp.reduce.async.bulk.tensor`;
//! `program::tensor`): like a bulk copy's, but the global side is a box of the tensor map, and
//! the copy first reads the tensor map itself.

use super::deps::DepMask;
use super::error::{bad_address, unknown_value, ExploreError};
use super::event::{AsyncKind, AsyncOp, Role, TraceOp};
use super::state::{val, Access, Cx, State};
use super::values::{RegVal, SymExpr};
use crate::program::tensor::TensorMap;
use crate::program::{AccessSpace, AsyncCopy, CopyKind, MapOperand, Space, Swizzle, TensorCopy, VariableKind};

impl Cx<'_> {
    /// A tensor copy's async agent: a read of the tensor map's word, then per element of the box
    /// (in shared-memory order) the source read and the destination write (or reduction).
    /// Out-of-bounds elements are not read from global memory: a load writes zeros for them, a
    /// store or reduction skips them. The completion (complete-tx of the whole box's bytes, or
    /// the bulk async-group) is a bulk copy's. `unknown_coords`: a coordinate is this unknown
    /// value (`Cx::unknown_global_address`): the shared side is the same box (every byte of it
    /// is written or read whatever the corner), the global side has no events, and a load
    /// writes the unknown value.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn tensor_copy(
        &self,
        st: State,
        copy: &AsyncCopy,
        t: &TensorCopy,
        unknown_coords: Option<i64>,
        pc: usize,
        line: usize,
    ) -> Result<Vec<State>, ExploreError> {
        let map = self.resolve_map(&st, t, pc, line)?;
        let map = map.as_ref();
        let kind = match copy.kind {
            CopyKind::Reduce(op, _) => CopyKind::Reduce(
                op,
                map.reduction_type().ok_or_else(|| {
                    self.limit_at(
                    pc,
                    line,
                    format!(
                        "the tensor reduction's map `{}` has `{}` elements: tensor reductions are modelled on 32-bit integer elements (u32, s32, b32)",
                        map.name, map.elem_type
                    ),
                    )
                })?,
            ),
            k => k,
        };
        let size = map.box_bytes();
        let mut coord_deps = DepMask::none();
        let corner: Vec<i64> = t
            .coords
            .iter()
            .map(|c| {
                let (v, d) = val(&st, c);
                coord_deps = coord_deps.union(&d);
                if unknown_coords.is_some() {
                    0
                } else {
                    v
                }
            })
            .collect();
        let words = map.box_words(&corner).map_err(|why| self.limit_at(pc, line, format!("tensor map `{}`: {why}", map.name)))?;
        let store = copy.dst_space == AccessSpace::Global;
        let (shared_op, shared_space) = if store { (&copy.src, copy.src_space) } else { (&copy.dst, copy.dst_space) };
        let (shared_addr, shared_deps) = self.address_value(&st, shared_op);
        // The shared-memory box: inside its variable and 16-byte aligned (§9.7.9.25: bulk copies).
        let Some((var, off)) = self.program.decode_address(shared_addr) else {
            return Err(bad_address(self.program, self.thread, line, shared_addr));
        };
        let v = &self.program.variables[var];
        let mut ub = if v.kind == VariableKind::Mbarrier {
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
        // A swizzled box stays inside the span-aligned rows it covers; the chunks it exchanges
        // must be inside the variable too.
        if ub.is_none() && map.swizzle != Swizzle::None {
            let last = words.iter().map(|w| map.swizzle.apply(off + w.packed)).max().unwrap_or(off);
            if last + 4 > v.size {
                ub = Some(format!(
                    "U6: the tensor copy's swizzled box at `{}+{off}` reaches byte {last} of `{}` ({} bytes)",
                    v.name, v.name, v.size
                ));
            }
        }
        let dests = if store { vec![(shared_addr, None)] } else { self.copy_destinations(&st, copy, shared_addr, &mut ub) };
        let mut s = st;
        if let Some(reason) = ub {
            let mut e = s.event(TraceOp::Marker, pc);
            e.ub = Some(reason);
            s.events.push(e);
            return Ok(vec![s]);
        }
        let agent = s.ops.len();
        s.ops.push(AsyncOp { instr: pc, kind: AsyncKind::Copy(kind), events: Vec::new(), tracked: Vec::new(), group: None });
        // "Optionally, reading from the tensormap" (§9.7.9.25): a source read of the map's word
        // (a map in the read-only parameter space cannot change: nothing to read).
        if self.program.variables[map.variable].space != Space::Param {
            let map_addr = self.program.address(map.variable, map.offset);
            let loc = self.program.location_at(map_addr).ok_or_else(|| bad_address(self.program, self.thread, line, map_addr))?;
            let tmap = Access { loc, range: (map.offset, map.offset + 4), deps: DepMask::none(), ub: None };
            self.note_kept(loc);
            let mut e = s.access_event(TraceOp::Read, pc, &tmap, Role::Source, Some(agent));
            e.symbolic = true;
            e.tensormap = true;
            s.events.push(e);
        }
        let base = self.program.address(map.base, 0);
        let element_words = (map.elem / 4).max(1);
        for w in &words {
            // Each element of the tensor is its own footprint in global memory (a word of
            // elements smaller than a word).
            let global = match w.global {
                Some(_) if unknown_coords.is_some() => None,
                Some(o) => {
                    let a = base + o;
                    let loc = self.program.location_at(a).ok_or_else(|| bad_address(self.program, self.thread, line, a))?;
                    let first = o - o.rem_euclid(4 * element_words);
                    let acc = Access {
                        loc,
                        range: (first, first + 4 * element_words),
                        deps: coord_deps.clone(),
                        ub: self.space_violation(map.base, AccessSpace::Global),
                    };
                    self.note(&acc, AccessSpace::Global);
                    Some(acc)
                }
                None => None,
            };
            // Where the word lands in the box at `d` (a destination decodes: copy_destinations).
            let swizzled = |d: i64| {
                let (_, doff) = self.program.decode_address(d).unwrap_or((var, off));
                d - doff + map.swizzle.apply(doff + w.packed)
            };
            // An elided word has no event; an elided source feeds only words whose value is moot.
            if store {
                let shared = self.access_at(swizzled(shared_addr), shared_addr, size, shared_deps.clone(), shared_space, line)?;
                let (value, dep) = if self.elided[shared.loc] {
                    (RegVal::Known(0), DepMask::none())
                } else {
                    let i = s.events.len();
                    let mut e = s.access_event(TraceOp::Read, pc, &shared, Role::Source, Some(agent));
                    e.symbolic = true;
                    s.events.push(e);
                    (RegVal::Open(SymExpr::Read(i)), DepMask::single(i))
                };
                if let Some(dst) = &global {
                    self.note_flow(shared.loc, dst.loc);
                }
                let Some(dst) = global.filter(|d| !self.elided[d.loc]) else { continue };
                self.push_copy_write(&mut s, kind, dst, value, dep, pc, agent);
                continue;
            }
            let (value, dep) = match &global {
                Some(src) if self.elided[src.loc] => (RegVal::Known(0), DepMask::none()),
                Some(src) => {
                    let i = s.events.len();
                    let mut e = s.access_event(TraceOp::Read, pc, src, Role::Source, Some(agent));
                    e.symbolic = true;
                    s.events.push(e);
                    (RegVal::Open(SymExpr::Read(i)), DepMask::single(i))
                }
                // Out of bounds: zeros, nothing read (tile mode, zero fill).
                None => (RegVal::Known(unknown_coords.unwrap_or(0)), DepMask::none()),
            };
            for &(d, _) in &dests {
                let shared = self.access_at(swizzled(d), d, size, shared_deps.clone(), shared_space, line)?;
                if let Some(src) = &global {
                    self.note_flow(src.loc, shared.loc);
                }
                if self.elided[shared.loc] {
                    continue;
                }
                self.push_copy_write(&mut s, kind, shared, value.clone(), dep.clone(), pc, agent);
            }
        }
        let finish: Vec<(i64, Option<i64>)> = if store { vec![(base, None)] } else { dests };
        self.finish_copy(s, copy, agent, &finish, size, pc, line)
    }

    /// The tensor map a copy uses: the one it names, or the one at the address its operand holds.
    fn resolve_map(&self, st: &State, t: &TensorCopy, pc: usize, line: usize) -> Result<std::borrow::Cow<'_, TensorMap>, ExploreError> {
        let addr_value = match &t.map {
            MapOperand::Named(i) => return Ok(std::borrow::Cow::Borrowed(&self.program.tensor_maps[*i])),
            MapOperand::At(v) => *v,
        };
        let addr = val(st, &addr_value).0;
        let instr = &self.thread.code[pc];
        if crate::program::unknown::is_unknown(addr) {
            let reg = match addr_value {
                crate::program::Value::Reg(r) => self.thread.registers[r].clone(),
                _ => "the tensor map operand".into(),
            };
            return Err(unknown_value(self.program, self.thread, instr, &reg, addr));
        }
        let Some((var, off)) = self.program.decode_address(addr) else {
            return Err(bad_address(self.program, self.thread, line, addr));
        };
        let found = self.program.tensor_maps.iter().position(|m| !m.named && m.variable == var && m.offset == off);
        let v = &self.program.variables[var];
        let built = match found {
            Some(_) => None,
            None => self.built_map(st, addr, pc, line)?,
        };
        if let Some(m) = built {
            if m.rank() != t.rank {
                return Err(self.limit_at(
                    pc,
                    line,
                    format!("a {}d tensor copy uses tensor map `{}` of {} dimension(s)", t.rank, m.name, m.rank()),
                ));
            }
            return Ok(std::borrow::Cow::Owned(m));
        }
        let Some(i) = found else {
            let at = crate::program::unknown::short_parameter(&v.name);
            return Err(self.limit_at(
                pc,
                line,
                format!(
                    "the tensor copy's map is at `{}+{off}`, which no tensor map describes; give it as cuTensorMapEncodeTiled was given it: `ptxmm kernel --tensor-map {at}+{off}=TYPE,DIMS,box=BOX[,stride=S][,swizzle=128B]` (e.g. `bf16,320x256,box=64x128,swizzle=128B`), or in a litmus test `m @ tensormap {{ at = {}+{off}; base = g; type = bf16; dims = {{...}}; box = {{...}}; }}`",
                    v.name, v.name
                ),
            ));
        };
        let m = &self.program.tensor_maps[i];
        if m.rank() != t.rank {
            return Err(self.limit_at(
                pc,
                line,
                format!("a {}d tensor copy uses tensor map `{}` of {} dimension(s)", t.rank, m.name, m.rank()),
            ));
        }
        Ok(std::borrow::Cow::Borrowed(m))
    }

    /// An instruction the model cannot run as given (a tensor map no one describes, a wgmma
    /// descriptor it does not read): an error at its line, as an unknown value's.
    pub(super) fn limit_at(&self, pc: usize, line: usize, detail: String) -> ExploreError {
        let instr = &self.thread.code[pc];
        ExploreError::Unknown { thread: self.thread.name(), line, col: self.program.source.line_col(instr.span.start).1, detail }
    }
}
