//! The events of asynchronous operations: a non-tensor async copy (`cp.async`,
//! `cp.async.bulk`, `cp.reduce.async.bulk`) with its checks, its destination writes or
//! reductions and its completion, and `wgmma.mma_async`'s matrix reads.

use super::deps::DepMask;
use super::error::{bad_address, ExploreError};
use super::event::{AsyncKind, AsyncOp, Role, TraceOp};
use super::state::{val, Access, Cx, State};
use super::values::{RegVal, SymExpr};
use crate::program::mbarrier::MbUpdate;
use crate::program::{
    AccessSpace, Address, AsyncCopy, Completion, CopyKind, GroupKind, LocalOp, RedType, RmwOp, Space, Value, VariableKind,
};
use std::sync::Arc;

/// What the destination events of one copy share.
struct CopyTarget<'c> {
    copy: &'c AsyncCopy,
    /// The copy's size in bytes (every destination access spans it).
    size: i64,
    /// The dependencies of the destination address.
    dst_deps: DepMask,
    /// The copy's async op (index into `State::ops`).
    agent: usize,
    pc: usize,
    line: usize,
}

impl Cx<'_> {
    /// An asynchronous copy: its source reads and destination writes (or reductions) belong to a
    /// new async agent, followed by the complete-tx on the mbarrier when it has one. (A tensor
    /// copy is [`Cx::tensor_copy`].) `unknown_src`: the global source address is this unknown
    /// value (`Cx::unknown_global_address`): nothing is read and the destination gets it.
    pub(super) fn async_copy(
        &self,
        st: State,
        copy: &AsyncCopy,
        unknown_src: Option<i64>,
        pc: usize,
        line: usize,
    ) -> Result<Vec<State>, ExploreError> {
        let size = val(&st, &copy.size).0;
        let (dst_addr, dst_deps) = self.address_value(&st, &copy.dst);
        let (src_addr, src_deps) = self.address_value(&st, &copy.src);
        let bulk = copy.kind != CopyKind::CpAsync;
        // Static and value checks of §9.7.9.25: sizes, alignment, ranges (digest §13.1 U4-U7).
        let mut ub: Option<String> = None;
        if bulk && (size <= 0 || size % 16 != 0) {
            ub = Some(format!("U6: bulk copy size {size} is not a positive multiple of 16 (PTX ISA §9.7.9.25.4.1)"));
        }
        let dests = self.copy_destinations(&st, copy, dst_addr, &mut ub);
        for &(d, _) in &dests {
            if ub.is_none() {
                ub = self.check_copy_range(d, "destination", size, size, bulk, line)?;
            }
        }
        // From an unknown source every byte is unknown, read or zero-filled alike: src-size and
        // ignore-src decide nothing then (they may be unknown too).
        let src_size = copy.src_size.as_ref().filter(|_| unknown_src.is_none()).map(|v| val(&st, v).0).unwrap_or(size);
        let ignore = copy.ignore_src.as_ref().filter(|_| unknown_src.is_none()).map(|v| val(&st, v).0 != 0).unwrap_or(false);
        // Only the first src-size bytes of the source are read (§9.7.9.25.3.1: "the size of the
        // data in bytes to be copied from src"): a copy that reads none (src-size 0, ignore-src
        // set: Triton's masked-off loads) does not access its source, which may point anywhere.
        let read_bytes = if ignore { 0 } else { src_size.clamp(0, size) };
        if ub.is_none() && unknown_src.is_none() && read_bytes > 0 {
            ub = self.check_copy_range(src_addr, "source", read_bytes, size, bulk, line)?;
        }
        if ub.is_none() && src_size > size {
            ub = Some(format!("U4: src-size {src_size} is larger than cp-size {size} (PTX ISA §9.7.9.25.3.1)"));
        }
        if ub.is_none() && src_size < 0 {
            ub = Some(format!("U4: src-size {src_size} is negative (PTX ISA §9.7.9.25.3.1: src-size is a number of bytes)"));
        }
        if let Some(reason) = ub {
            // The copy is undefined as a whole: keep one marker event carrying the reason.
            let mut s = st;
            let mut e = s.event(TraceOp::Marker, pc);
            e.ub = Some(reason);
            s.events.push(e);
            return Ok(vec![s]);
        }
        let agent = st.ops.len();
        let mut st = st;
        st.ops.push(AsyncOp { instr: pc, kind: AsyncKind::Copy(copy.kind), events: Vec::new(), tracked: Vec::new(), group: None });
        let target = CopyTarget { copy, size, dst_deps, agent, pc, line };
        let words = (size / 4) as usize;
        let mut s = st;
        let mut pending: Vec<(RegVal, DepMask)> = Vec::new();
        for w in 0..words {
            let byte = 4 * w as i64;
            if let Some(u) = unknown_src {
                let value = (RegVal::Known(u), DepMask::none());
                for &(d_addr, _) in &dests {
                    self.copy_word(&mut s, &target, d_addr, byte, &value)?;
                }
                continue;
            }
            // Bytes past src-size are zero-filled, not read (§9.7.9.25.3.1). An elided source
            // word feeds only an elided or unobservable destination word: its value is moot. The
            // value read is left open: it only flows into the destination.
            let src = if byte < read_bytes {
                Some(self.access_at(src_addr + byte, src_addr, size, src_deps.clone(), copy.src_space, line)?)
            } else {
                None
            };
            let source = src.as_ref().map(|s| s.loc);
            let (value, dep) = if let Some(src) = src.filter(|s| !self.elided[s.loc]) {
                let i = s.events.len();
                let mut e = s.access_event(TraceOp::Read, pc, &src, Role::Source, Some(agent));
                e.symbolic = true;
                s.events.push(e);
                // Bytes of this word past src-size are zero-filled (little-endian words).
                let kept = (read_bytes - byte).clamp(0, 4);
                let read = SymExpr::Read(i);
                (RegVal::Open(if kept < 4 { SymExpr::Low(Arc::new(read), kept) } else { read }), DepMask::single(i))
            } else {
                (RegVal::Known(0), DepMask::none())
            };
            // An 8-byte reduction element spans two words: its reduction is made at its second word.
            let pair = matches!(copy.kind, CopyKind::Reduce(_, t) if t.bytes() == 8);
            pending.push((value, dep));
            if pair && w % 2 == 0 && w + 1 < words {
                continue;
            }
            let first = w + 1 - pending.len();
            let element = std::mem::take(&mut pending);
            for &(d_addr, _) in &dests {
                match copy.kind {
                    CopyKind::Reduce(op, ty) => self.reduce_element(&mut s, &target, op, ty, d_addr, first, &element)?,
                    _ => {
                        let dst = self.copy_word(&mut s, &target, d_addr, byte, &element[0])?;
                        if let Some(src) = source {
                            self.note_flow(src, dst);
                        }
                    }
                }
            }
        }
        self.finish_copy(s, copy, agent, &dests, size, pc, line)
    }

    /// `cp.async.bulk.prefetch`: no event, only the checks of §9.7.9.25.4.3 ("`size` must be a
    /// multiple of 16. If the value is not a multiple of 16, then the behavior is undefined.
    /// The address `srcMem` must be aligned to 16 bytes."), read as a bulk copy's (U6, U5/U6).
    /// An undefined prefetch leaves a marker carrying the reason, as an undefined copy does.
    pub(super) fn bulk_prefetch(&self, st: &mut State, src: &Address, size: &Value, pc: usize, line: usize) -> Result<(), ExploreError> {
        let size = val(st, size).0;
        let (src_addr, _) = self.address_value(st, src);
        let Some((var, off)) = self.program.decode_address(src_addr) else {
            return Err(bad_address(self.program, self.thread, line, src_addr));
        };
        let v = &self.program.variables[var];
        let ub = if size % 16 != 0 {
            Some(format!("U6: bulk prefetch size {size} is not a multiple of 16 (PTX ISA §9.7.9.25.4.3)"))
        } else if off % 16 != 0 || v.align < 16 {
            Some(format!("U5/U6: the prefetch source `{}+{off}` is not 16-byte aligned (PTX ISA §9.7.9.25.4.3)", v.name))
        } else {
            None
        };
        if let Some(reason) = ub {
            let mut e = st.event(TraceOp::Marker, pc);
            e.ub = Some(reason);
            st.events.push(e);
        }
        Ok(())
    }

    /// The words (address, footprint start, footprint size) a real wgmma matrix descriptor
    /// reads: its chunks in the one shared data variable of the thread's CTA that holds them all
    /// (a descriptor keeps 18 bits of the shared address: the offset, not the variable).
    fn descriptor_words(&self, desc: i64, rows: i64, mn_major: bool, pc: usize, line: usize) -> Result<Vec<(i64, i64, i64)>, ExploreError> {
        let limit = |detail: String| self.limit_at(pc, line, detail);
        if crate::program::unknown::is_unknown(desc) {
            return Err(super::error::unknown_value(self.program, self.thread, &self.thread.code[pc], "the matrix descriptor", desc));
        }
        let chunks = crate::program::matrix::descriptor_chunks(desc, rows, mn_major).map_err(&limit)?;
        let (lo, hi) = (chunks.iter().min().copied().unwrap_or(0), chunks.iter().max().copied().unwrap_or(0) + 16);
        let cta = self.thread.placement.cta;
        let holders: Vec<usize> = (0..self.program.variables.len())
            .filter(|&v| {
                let var = &self.program.variables[v];
                var.space == (Space::Shared { cta }) && var.kind == VariableKind::Data && hi <= var.size
            })
            .collect();
        let [var] = holders[..] else {
            let names: Vec<&str> = holders.iter().map(|&v| self.program.variables[v].name.as_str()).collect();
            return Err(limit(format!(
                "the wgmma matrix descriptor {desc:#x} reads shared bytes {lo}..{hi}, which {}",
                if names.is_empty() {
                    "no shared variable of the CTA holds".to_string()
                } else {
                    format!("several shared variables could hold ({}): a descriptor keeps the offset, not the variable", names.join(", "))
                }
            )));
        };
        let base = self.program.address(var, 0);
        Ok(chunks.iter().flat_map(|&c| (0..16).step_by(4).map(move |b| (base + c + b, base + lo, hi - lo))).collect())
    }

    /// Whether the copy's range at `addr` (its `what`) is undefined: past its variable, not
    /// aligned, or an mbarrier object.
    /// `extent` bytes from `addr` are accessed; `size` (the copy's) sets the alignment.
    fn check_copy_range(
        &self,
        addr: i64,
        what: &str,
        extent: i64,
        size: i64,
        bulk: bool,
        line: usize,
    ) -> Result<Option<String>, ExploreError> {
        let Some((var, off)) = self.program.decode_address(addr) else {
            return Err(bad_address(self.program, self.thread, line, addr));
        };
        let v = &self.program.variables[var];
        let align = if bulk { 16 } else { size };
        if v.kind == VariableKind::Mbarrier {
            return Ok(Some(format!("the {what} of the copy is the mbarrier object `{}`", v.name)));
        }
        if off + extent > v.size {
            return Ok(Some(format!(
                "U6: the {what} range [{off}, {}) runs past the end of `{}` ({} bytes)",
                off + extent,
                v.name,
                v.size
            )));
        }
        if off % align != 0 || v.align < align {
            return Ok(Some(format!("U5/U6: the {what} `{}+{off}` is not {align}-byte aligned (PTX ISA §9.7.9.25)", v.name)));
        }
        Ok(None)
    }

    /// Destinations (with their mbarrier): one, or for .multicast::cluster the same
    /// CTA-relative offsets in each CTA whose cluster rank is set in ctaMask (§9.7.9.25.4.1).
    /// A ctaMask that selects nothing usable sets `ub`.
    pub(super) fn copy_destinations(
        &self,
        st: &State,
        copy: &AsyncCopy,
        dst_addr: i64,
        ub: &mut Option<String>,
    ) -> Vec<(i64, Option<i64>)> {
        let bar_addr = match &copy.completion {
            Completion::Mbarrier(b) => Some(self.address_value(st, b).0),
            Completion::Group(_) => None,
        };
        let mut dests: Vec<(i64, Option<i64>)> = vec![(dst_addr, bar_addr)];
        if let Some(mask) = &copy.multicast {
            let mask = val(st, mask).0;
            dests.clear();
            for rank in 0..16 {
                if mask & (1 << rank) == 0 {
                    continue;
                }
                let here = self.thread.placement.cluster;
                let mapped = self.program.cta_of_rank(here, rank).and_then(|cta| {
                    let d = self.program.same_offset_in_cta(dst_addr, cta)?;
                    // A copy completing on an mbarrier needs one in every destination CTA.
                    let b = match bar_addr {
                        Some(b) => Some(self.program.same_offset_in_cta(b, cta)?),
                        None => None,
                    };
                    Some((d, b))
                });
                match mapped {
                    Some(d) => dests.push(d),
                    None => {
                        *ub = Some(format!(
                            "multicast ctaMask {mask:#x} selects cluster rank {rank}, which has no shared variable at the destination's (or mbarrier's) CTA-relative offset"
                        ))
                    }
                }
            }
            if dests.is_empty() && ub.is_none() {
                *ub = Some("multicast ctaMask selects no CTA".to_string());
            }
        }
        dests
    }

    /// One element of a reduction at destination `d_addr`: its words from word `first` on.
    /// Each element is an atomic read-modify-write in the async proxy (§9.7.9.25.4.2): one RMW
    /// per word (digest §14.3); an 8-byte element is one RMW per word whose written value is
    /// computed from both old words and both source words (docs/async-model.md §2.2).
    #[allow(clippy::too_many_arguments)]
    fn reduce_element(
        &self,
        s: &mut State,
        target: &CopyTarget,
        op: RmwOp,
        ty: RedType,
        d_addr: i64,
        first: usize,
        element: &[(RegVal, DepMask)],
    ) -> Result<(), ExploreError> {
        let CopyTarget { copy, size, agent, pc, line, .. } = *target;
        let mut accs = Vec::new();
        for k in 0..element.len() {
            let b = 4 * (first + k) as i64;
            let dst = self.access_at(d_addr + b, d_addr, size, target.dst_deps.clone(), copy.dst_space, line)?;
            accs.push(Access { range: (dst.range.0 + b, dst.range.0 + b + 4), ..dst });
        }
        let idx = s.events.len();
        for acc in &accs {
            let mut e = s.access_event(TraceOp::Read, pc, acc, Role::Destination, Some(agent));
            e.symbolic = true;
            e.rmw_partner = Some(s.events.len() + accs.len());
            s.events.push(e);
        }
        let olds: Vec<SymExpr> = (0..accs.len()).map(|k| SymExpr::Read(idx + k)).collect();
        let srcs: Vec<SymExpr> = element.iter().map(|(v, _)| v.expr()).collect();
        let mut deps = element.iter().fold(DepMask::none(), |d, (_, e)| d.union(e));
        for k in 0..accs.len() {
            deps = deps.union(&DepMask::single(idx + k));
        }
        for (k, acc) in accs.into_iter().enumerate() {
            let new = SymExpr::Reduce(op, ty, self.f32_subnormals, k, olds.clone(), srcs.clone());
            self.push_write(s, acc, RegVal::Open(new), deps.clone(), pc, Role::Destination, Some(agent));
            let wi = s.events.len() - 1;
            s.events[wi].rmw_partner = Some(wi - element.len());
        }
        Ok(())
    }

    /// The destination word at `byte` of a plain copy to `d_addr` (returned): a write of the source word
    /// `(value, dep)`, or under `.cp_mask` the merge of the selected bytes.
    fn copy_word(
        &self,
        s: &mut State,
        target: &CopyTarget,
        d_addr: i64,
        byte: i64,
        (value, dep): &(RegVal, DepMask),
    ) -> Result<usize, ExploreError> {
        let CopyTarget { copy, size, agent, pc, line, .. } = *target;
        let dst = self.access_at(d_addr + byte, d_addr, size, target.dst_deps.clone(), copy.dst_space, line)?;
        let word = dst.loc;
        if self.elided[word] {
            return Ok(word);
        }
        // `.cp_mask`: the bytes of this word that byteMask selects (bit i: byte i of
        // each 16-byte chunk). A word it splits keeps its other bytes: the copy
        // reads it and writes the merge, atomically (an RMW pair), which is what
        // leaving those bytes untouched looks like at word granularity.
        let selected = copy.byte_mask.as_ref().map(|m| (val(s, m).0 >> (byte % 16)) & 0xF).unwrap_or(0xF);
        if selected == 0 {
            return Ok(word);
        }
        if selected == 0xF {
            self.push_write(s, dst, value.clone(), dep.clone(), pc, Role::Destination, Some(agent));
            return Ok(word);
        }
        let bytes: i64 = (0..4).filter(|b| selected & (1 << b) != 0).map(|b| 0xFF << (8 * b)).sum();
        let idx = s.events.len();
        let mut e = s.access_event(TraceOp::Read, pc, &dst, Role::Destination, Some(agent));
        e.symbolic = true;
        e.rmw_partner = Some(idx + 1);
        s.events.push(e);
        let keep = SymExpr::Local(LocalOp::And, Arc::new(SymExpr::Read(idx)), Arc::new(SymExpr::Const(0xFFFF_FFFF ^ bytes)));
        let put = SymExpr::Local(LocalOp::And, Arc::new(value.expr()), Arc::new(SymExpr::Const(bytes)));
        let new = SymExpr::Local(LocalOp::Or, Arc::new(keep), Arc::new(put));
        self.push_write(s, dst, RegVal::Open(new), dep.union(&DepMask::single(idx)), pc, Role::Destination, Some(agent));
        s.events[idx + 1].rmw_partner = Some(idx);
        Ok(word)
    }

    /// A copy's destination write of `value`, or for a reduction an atomic read-modify-write in
    /// the async proxy (§9.7.9.25.4.2): a symbolic read of the destination and the write of
    /// the operation on it.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn push_copy_write(&self, s: &mut State, kind: CopyKind, dst: Access, value: RegVal, dep: DepMask, pc: usize, agent: usize) {
        let CopyKind::Reduce(op, ty) = kind else {
            return self.push_write(s, dst, value, dep, pc, Role::Destination, Some(agent));
        };
        let idx = s.events.len();
        let mut e = s.access_event(TraceOp::Read, pc, &dst, Role::Destination, Some(agent));
        e.symbolic = true;
        e.rmw_partner = Some(idx + 1);
        s.events.push(e);
        // A 4-byte element (tensor reductions are on 32-bit integer elements only).
        let new = SymExpr::Reduce(op, ty, self.f32_subnormals, 0, vec![SymExpr::Read(idx)], vec![value.expr()]);
        self.push_write(s, dst, RegVal::Open(new), dep.union(&DepMask::single(idx)), pc, Role::Destination, Some(agent));
        s.events[idx + 1].rmw_partner = Some(idx);
    }

    /// The end of an asynchronous copy whose data events are in `s`: the op's event list, then
    /// its completion (the open async-group, or a complete-tx of `size` bytes on the mbarrier of
    /// each destination).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn finish_copy(
        &self,
        s: State,
        copy: &AsyncCopy,
        agent: usize,
        dests: &[(i64, Option<i64>)],
        size: i64,
        pc: usize,
        line: usize,
    ) -> Result<Vec<State>, ExploreError> {
        let mut out = Vec::new();
        {
            let mut s = s;
            let first = s.events.iter().position(|e| e.agent == Some(agent)).unwrap_or(s.events.len());
            s.ops[agent].events = (first..s.events.len()).collect();
            match copy.completion {
                Completion::Group(kind) => {
                    s.open[State::group_index(kind)].push(agent);
                    out.push(s);
                }
                Completion::Mbarrier(_) => {
                    // The complete-tx: an update of the mbarrier by the op's agent (§9.7.9.25.4.1),
                    // on the mbarrier of each destination's CTA (digest AMBIG-21).
                    let mut partial = vec![s];
                    for &(d_addr, b_addr) in dests {
                        let b_addr = b_addr.expect("an mbarrier completion has an mbarrier");
                        let bad = || bad_address(self.program, self.thread, line, b_addr);
                        let loc = self.program.location_at(b_addr).ok_or_else(bad)?;
                        // The object's bytes in its variable (an array of mbarriers holds several).
                        let off = self.program.locations[loc].offset;
                        let mut acc = Access { loc, range: (off, off + 8), deps: DepMask::none(), ub: None };
                        self.note_kept(loc);
                        let dst_var = self.program.decode_address(d_addr).map(|(v, _)| self.program.variables[v].space);
                        if Some(self.program.variable_of(loc).space) != dst_var {
                            acc.ub = Some("the mbarrier of a bulk copy must be in the same CTA as the destination (PTX ISA §9.7.9.25.4.1)");
                        }
                        let mut after = Vec::new();
                        for s in partial {
                            for (mut s2, _) in
                                self.mb_update(s, acc.clone(), MbUpdate::CompleteTx { bytes: size }, pc, Role::Signal, Some(agent), false)
                            {
                                let n = s2.events.len();
                                s2.ops[agent].events.extend([n - 2, n - 1]);
                                after.push(s2);
                            }
                        }
                        partial = after;
                    }
                    out.extend(partial);
                }
            }
        }
        Ok(out)
    }

    /// `wgmma.mma_async`: an async agent reads each matrix in the async proxy; the op joins the
    /// open wgmma-group. A descriptor register holding a variable's address (litmus tests) reads
    /// from it to the end of its variable; a real matrix descriptor reads the chunks it names
    /// (`matrix::descriptor_chunks`) in the one shared variable of the CTA that holds them.
    pub(super) fn wgmma(&self, st: State, matrices: &[(&Address, i64, bool)], pc: usize, line: usize) -> Result<Vec<State>, ExploreError> {
        let agent = st.ops.len();
        let mut st = st;
        st.ops.push(AsyncOp { instr: pc, kind: AsyncKind::Copy(CopyKind::Wgmma), events: Vec::new(), tracked: Vec::new(), group: None });
        let mut states = vec![st];
        for &(m, rows, mn_major) in matrices {
            let (addr, deps) = self.address_value(&states[0], m);
            let words: Vec<(i64, i64, i64)> = match self.program.decode_address(addr) {
                Some((var, off)) => {
                    let size = self.program.variables[var].size - off;
                    (0..size).step_by(4).map(|byte| (addr + byte, addr, size)).collect()
                }
                None => self.descriptor_words(addr, rows, mn_major, pc, line)?,
            };
            for (word, start, size) in words {
                let src = self.access_at(word, start, size, deps.clone(), AccessSpace::SharedCta, line)?;
                if self.elided[src.loc] {
                    continue;
                }
                let mut next = Vec::new();
                for s in states {
                    // The values read reach registers ptxmm does not model: one symbolic read.
                    let mut s = s;
                    let mut e = s.access_event(TraceOp::Read, pc, &src, Role::Source, Some(agent));
                    e.symbolic = true;
                    s.events.push(e);
                    next.push(s);
                }
                states = next;
            }
        }
        for s in &mut states {
            let first = s.events.iter().position(|e| e.agent == Some(agent)).unwrap_or(s.events.len());
            s.ops[agent].events = (first..s.events.len()).collect();
            s.open[State::group_index(GroupKind::Wgmma)].push(agent);
        }
        Ok(states)
    }
}
