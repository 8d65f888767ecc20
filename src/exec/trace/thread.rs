//! The per-thread interpreter: every run of one thread under fixed value domains, one
//! instruction at a time (`Cx::step`), forking the run where a read's value decides something.

use super::arith::{compare, join64, local3_result, rmw_result};
use super::control::{control_registers, needed_registers};
use super::deps::DepMask;
use super::error::{bad_address, ExploreError};
use super::event::{AsyncKind, AsyncOp, GroupWait, Role, Stuck, ThreadTraces, TraceOp};
use super::loops::{retry_back_edges, spin_back_edges};
use super::state::{data_val, val, Cx, State};
use super::values::{typed, Domains, RegVal, SymExpr};
use crate::config::Limits;
use crate::litmus::ast::CmpOp;
use crate::program::mbarrier::MbUpdate;
use crate::program::{
    unknown, AccessSpace, Address, CopyKind, GroupKind, LocalOp, MbOp, Op, Program, Reg, RmwOp, Sem, Thread, Ty, Value, VariableKind,
};
use std::collections::BTreeSet;
use std::sync::Arc;

/// What every thread's enumeration needs to know about the whole program, computed once.
#[derive(Clone)]
pub struct ProgramFacts {
    /// Words whose events would mirror those of a kept word (see
    /// [`redundant_words`](super::words::redundant_words), [`survey`](super::survey)).
    pub elided: Vec<bool>,
    /// The largest phase an arrive can return.
    pub max_phase: i64,
    /// Physical locations only increments write (see `counters`).
    pub counters: Vec<bool>,
    /// What `.f32` bulk reductions do with subnormals (a reading, not a fact of the program:
    /// set by the caller of [`super::explore_until`]).
    pub f32_subnormals: crate::exec::reduce::F32Subnormals,
    /// The lanes of the warps whose threads exchange (`exchange`).
    pub lanes: super::exchange::Lanes,
}

impl ProgramFacts {
    /// The facts of `program`, with the words `elided` ([`redundant_words`](super::words::redundant_words)
    /// or a [`survey`](super::survey)'s).
    pub fn of(program: &Program, elided: Vec<bool>) -> Self {
        ProgramFacts {
            elided,
            max_phase: max_phase(program),
            counters: super::counters::counters(program),
            f32_subnormals: Default::default(),
            lanes: super::exchange::Lanes::of(program),
        }
    }
}

/// The clock is read once in this many instructions stepped (a thread's runs can take minutes).
const STEPS_PER_CLOCK_READ: u32 = 256;

/// Enumerate the traces of one thread under fixed value domains, giving up with
/// [`ExploreError::Timeout`] at `deadline`.
#[allow(clippy::too_many_arguments)]
pub(super) fn thread_traces(
    program: &Program,
    facts: &ProgramFacts,
    t: usize,
    thread: &Thread,
    domains: &Domains,
    exchange_domains: &super::exchange::ExchangeDomains,
    limits: &Limits,
    liveness: bool,
    deadline: Option<crate::clock::Instant>,
    survey: Option<&super::survey::Survey>,
) -> Result<ThreadTraces, ExploreError> {
    let shown = crate::program::naming::observables(program).into_iter().filter_map(|o| {
        if let crate::program::Observable::Register(u, r) = o {
            (u == t).then_some(r)
        } else {
            None
        }
    });
    let spin = spin_back_edges(&thread.code);
    let retry = retry_back_edges(&thread.code);
    // Loop headers of spin and retry loops: where each iteration's events start.
    let spin_headers: BTreeSet<usize> = thread
        .code
        .iter()
        .enumerate()
        .filter_map(|(j, i)| match i.op {
            Op::Branch { target, .. } if spin[j] || retry[j] => Some(target),
            _ => None,
        })
        .collect();
    let mut out = ThreadTraces::default();
    let init = State::new(thread.reg_init.iter().map(|v| (RegVal::Known(*v), DepMask::none())).collect());
    let cx = Cx {
        program,
        t,
        thread,
        lanes: &facts.lanes,
        exchange_domains,
        domains,
        control: control_registers(&thread.code),
        needed: needed_registers(&thread.code, shown),
        elided: &facts.elided,
        max_phase: facts.max_phase,
        counters: &facts.counters,
        pruned: Default::default(),
        limits,
        f32_subnormals: facts.f32_subnormals,
        spin,
        retry,
        liveness,
        survey,
    };
    let mut stack = vec![init];
    // Instructions stepped since the clock was last read.
    let mut unclocked = 0u32;
    while let Some(mut st) = stack.pop() {
        loop {
            unclocked += 1;
            if unclocked == STEPS_PER_CLOCK_READ {
                unclocked = 0;
                if deadline.is_some_and(|d| crate::clock::Instant::now() >= d) {
                    return Err(ExploreError::Timeout { seconds: limits.timeout.map(|t| t.as_secs_f64()).unwrap_or(0.0) });
                }
            }
            if st.pc >= thread.code.len() {
                for (&back_edge, &n) in &st.most_back_edges {
                    let l = out.loops.entry(back_edge).or_default();
                    l.iterations = l.iterations.max(n);
                }
                let mut trace = st.finish(None);
                trace.counter_claims = cx.counter_claims(&trace.events);
                out.traces.push(trace);
                if out.traces.len() > limits.max_traces {
                    return Err(ExploreError::TooManyTraces { thread: thread.name(), limit: limits.max_traces });
                }
                break;
            }
            let before = st.events.len();
            if before + 2 > limits.max_trace_events {
                let at = format!("the run's arrival at line {} (`{}`)", thread.code[st.pc].line, short_text(&thread.code[st.pc].text));
                return Err(ExploreError::TraceTooLong { thread: thread.name(), limit: limits.max_trace_events, at });
            }
            let pc = st.pc;
            st.path.push(pc);
            if spin_headers.contains(&pc) {
                st.iteration_start.insert(pc, st.events.len());
            }
            let assumed = st.assumed.clone();
            if let Some(survey) = survey {
                survey.begin(pc);
            }
            match cx.step(st, &mut stack, &mut out).map_err(|e| on_assumed_path(e, program, thread, &assumed, &out))? {
                Some(next) if next.events.len() > limits.max_trace_events => {
                    // One instruction (a bulk or tensor copy: an event per word) can pass it alone.
                    let instr = &thread.code[pc];
                    let at =
                        format!("line {} (`{}`), which adds {} events", instr.line, short_text(&instr.text), next.events.len() - before);
                    return Err(ExploreError::TraceTooLong { thread: thread.name(), limit: limits.max_trace_events, at });
                }
                Some(next) => st = next,
                None => break,
            }
        }
    }
    let pruned = cx.pruned.into_inner();
    out.dropped_writes.extend(pruned.dropped_writes);
    out.dropped_max_writes = out.dropped_max_writes.max(pruned.dropped_max_writes);
    out.counter_pruned |= pruned.counter_pruned;
    for (l, s) in pruned.increments {
        let most = out.increments.entry(l).or_insert(s);
        *most = (*most).max(s);
    }
    let kept: Vec<Vec<super::event::TraceEvent>> = out.traces.iter().chain(&out.stuck).map(|t| t.events.clone()).collect();
    for events in &kept {
        out.record_increments(events);
    }
    out.exchange_ends = out.traces.iter().chain(&out.stuck).map(|t| t.exchanges.len()).collect();
    Ok(out)
}

/// Phases an arrive may return: at most one completion per mbarrier-updating instruction.
fn max_phase(program: &Program) -> i64 {
    let updates = program
        .threads
        .iter()
        .flat_map(|t| &t.code)
        .filter(|i| matches!(i.op, Op::Mbarrier { .. } | Op::CpAsyncArrive { .. } | Op::AsyncCopy(_)))
        .count() as i64;
    updates.min(crate::program::mbarrier::MAX_PHASE)
}

/// The run forked into `states`, each of which has run the instruction: they resume at the
/// next one, after the runs still to explore. The run itself goes on in none of them.
fn fork(stack: &mut Vec<State>, states: Vec<State>) -> Option<State> {
    for mut s in states {
        s.pc += 1;
        stack.push(s);
    }
    None
}

impl Cx<'_> {
    /// Run the instruction at `st.pc`: the state the run goes on in, or None when it forked
    /// (see [`fork`]) or ended without a trace of its own (a failed poll of an await loop, or a
    /// loop cut at the unroll bound). Runs that stop forever (liveness) and cut loops go to
    /// `out`.
    fn step(&self, mut st: State, stack: &mut Vec<State>, out: &mut ThreadTraces) -> Result<Option<State>, ExploreError> {
        let pc = st.pc;
        let instr = &self.thread.code[pc];
        let line = instr.line;
        let mut unknown_global = None;
        if !matches!(instr.op, Op::Branch { .. }) {
            unknown_global = self.unknown_global_address(&st, instr);
            match unknown_global {
                Some(u) => {
                    out.unchecked.entry(pc).or_insert(unknown::origin(u).unwrap_or(0));
                }
                None => self.check_known(&st, instr)?,
            }
        }
        if let Some(u) = unknown_global {
            match &instr.op {
                // The value read is unknown; no event: the access is reported as not checked.
                Op::Load { dst, addr, .. } => {
                    let deps = self.address_value(&st, addr).1;
                    st.regs[*dst] = (RegVal::Known(u), deps);
                    st.pc += 1;
                    return Ok(Some(st));
                }
                Op::LoadVector { dsts, addr, .. } => {
                    let deps = self.address_value(&st, addr).1;
                    for &d in dsts {
                        st.regs[d] = (RegVal::Known(u), deps.clone());
                    }
                    st.pc += 1;
                    return Ok(Some(st));
                }
                Op::Store { .. } | Op::StoreVector { .. } | Op::Prefetch { .. } => {
                    st.pc += 1;
                    return Ok(Some(st));
                }
                _ => {}
            }
        }
        // A generic load of a kernel parameter's bytes (after `cvta.param`) reads them as
        // `ld.param` does: no memory event.
        match &instr.op {
            Op::Load { dst, ty, addr, .. } if self.reads_param(&st, addr) => {
                self.param_load(&mut st, &[*dst], ty.unwrap_or(Ty::U32), addr, line)?;
                st.pc += 1;
                return Ok(Some(st));
            }
            Op::LoadVector { dsts, ty, addr, .. } if self.reads_param(&st, addr) => {
                self.param_load(&mut st, dsts, ty.unwrap_or(Ty::U32), addr, line)?;
                st.pc += 1;
                return Ok(Some(st));
            }
            _ => {}
        }
        match &instr.op {
            Op::Load { dst, ty: Some(ty), addr, space, .. } if ty.bits == 64 => {
                return Ok(fork(stack, self.load_wide(st, *dst, addr, *space, pc, line)?));
            }
            Op::Load { dst, ty: Some(ty), addr, space, .. } if ty.bits < 32 => {
                return self.load_sub_word(st, stack, *dst, *ty, addr, *space, pc, line);
            }
            Op::Store { ty: Some(ty), addr, value, space, .. } if ty.bits < 32 => {
                self.store_sub_word(&mut st, *ty, addr, value, *space, pc, line)?
            }
            Op::Rmw { dst, ty: Some(ty), addr, op, operands, space, .. } if ty.bits == 64 => {
                return self.rmw_wide(st, stack, *dst, *ty, addr, *op, operands, *space, pc, line);
            }
            Op::Load { dst, ty, addr, space, .. } => return self.load(st, stack, *dst, *ty, addr, *space, pc, line),
            Op::LoadVector { dsts, ty, addr, space, .. } => {
                return Ok(fork(stack, self.load_vector(st, dsts, *ty, addr, *space, pc, line)?))
            }
            Op::Store { ty: Some(ty), addr, value, space, .. } => self.store_typed(&mut st, *ty, addr, value, *space, pc, line)?,
            Op::Store { addr, value, space, .. } => {
                let acc = self.access(&st, addr, 0, 4, *space, line)?;
                let (v, d) = data_val(&st, value);
                self.push_write(&mut st, acc, v, d, pc, Role::Thread, None);
            }
            Op::StoreVector { addr, values, space, .. } => {
                for (k, value) in values.iter().enumerate() {
                    let acc = self.access(&st, addr, 4 * k as i64, 4, *space, line)?;
                    if self.elided[acc.loc] {
                        continue;
                    }
                    let (v, d) = data_val(&st, value);
                    self.push_write(&mut st, acc, v, d, pc, Role::Thread, None);
                }
            }
            Op::Rmw { dst, ty, addr, op, operands, space, .. } => {
                return self.rmw(st, stack, *dst, *ty, addr, *op, operands, *space, pc, line)
            }
            Op::Fence { .. } | Op::ProxyFence { .. } | Op::AliasFence | Op::WgmmaFence => {
                let e = st.event(TraceOp::Fence, pc);
                st.events.push(e);
            }
            Op::Prefetch { bulk: None } => {}
            Op::Prefetch { bulk: Some((src, size)) } => self.bulk_prefetch(&mut st, src, size, pc, line)?,
            Op::ClusterBarrier { arrive, .. } => {
                let e = st.event(TraceOp::ClusterBarrier { arrive: *arrive }, pc);
                st.events.push(e);
                if self.liveness && !*arrive {
                    let event = st.events.len() - 1;
                    out.stuck.push(st.clone().finish(Some(Stuck::Barrier { event })));
                }
            }
            Op::Barrier { instance, id, count, arrive, .. } => {
                let id = id.map(|v| val(&st, &v).0);
                let count = count.map(|v| val(&st, &v).0);
                let e = st.event(TraceOp::Barrier { instance: *instance, id, count, arrive: *arrive }, pc);
                st.events.push(e);
                // "bar.arrive does not cause any waiting by the executing threads" (PTX ISA
                // 9.7.13.1): only a waiting barrier may stop the run.
                if self.liveness && !*arrive {
                    // The run may also stop here forever, if this barrier never completes.
                    let event = st.events.len() - 1;
                    out.stuck.push(st.clone().finish(Some(Stuck::Barrier { event })));
                }
            }
            Op::WarpBarrier { mask, lane, .. } => {
                let mask = val(&st, mask).0 as u32;
                if mask & (1 << lane) == 0 {
                    // "The behavior of bar.warp.sync is undefined if the executing thread is not
                    // in the membermask" (PTX ISA §9.7.13.2).
                    let mut e = st.event(TraceOp::Marker, pc);
                    e.ub = Some(format!(
                        "bar.warp.sync: the membermask {mask:#x} does not include the executing lane {lane} (PTX ISA §9.7.13.2: undefined)"
                    ));
                    st.events.push(e);
                }
                let e = st.event(TraceOp::WarpBarrier { mask }, pc);
                st.events.push(e);
                if self.liveness {
                    let event = st.events.len() - 1;
                    out.stuck.push(st.clone().finish(Some(Stuck::Barrier { event })));
                }
            }
            Op::Matrix(m) => st = self.matrix(st, m, pc, line)?,
            Op::Exchange(x) => return Ok(self.exchange(st, stack, out, x, pc)),
            Op::TensormapReplace { addr, space, field, ord, value } => {
                self.tensormap_replace(&mut st, addr, *space, *field, *ord, value, pc, line)?
            }
            Op::TensormapCopy { dst, src, .. } => self.tensormap_copy(&mut st, dst, src, pc, line)?,
            Op::TensormapFence { acquire, .. } => self.tensormap_fence(&mut st, acquire.as_ref(), pc),
            Op::NoEffect(_) => {}
            Op::Trap => {
                let mut e = st.event(TraceOp::Marker, pc);
                e.ub = Some("trap: the kernel aborts (PTX ISA, `trap`: \"Abort execution and generate an interrupt to the host CPU\"); the launch fails and has no final state".into());
                st.events.push(e);
                return Ok(self.branch(st, stack, None, self.thread.code.len(), out));
            }
            Op::CommitGroup(kind) => st.commit(*kind),
            Op::WaitGroup { kind, n, read, all } => wait_group(&mut st, *kind, *n, *read, *all, pc),
            Op::Wgmma { a, b, n, trans } => {
                let matrices: Vec<(&Address, i64, bool)> = a.iter().map(|a| (a, 64, trans[0])).chain([(b, *n, trans[1])]).collect();
                return Ok(fork(stack, self.wgmma(st, &matrices, pc, line)?));
            }
            Op::AsyncCopy(copy) => {
                let states = match &copy.tensor {
                    Some(t) => self.tensor_copy(st, copy, t, unknown_global, pc, line)?,
                    None => self.async_copy(st, copy, unknown_global, pc, line)?,
                };
                return Ok(fork(stack, states));
            }
            Op::CpAsyncArrive { bar, space, noinc } => return Ok(fork(stack, self.cp_async_arrive(st, bar, *space, *noinc, pc, line)?)),
            Op::Mbarrier { op, bar, space, dst, .. } => return Ok(fork(stack, self.mbarrier(st, op, bar, *space, *dst, pc, line)?)),
            Op::Local { dst, op: LocalOp::Mapa, a, b, .. } => self.mapa(&mut st, *dst, a, b),
            Op::Local { dst, op, ty, a, b, c } => local(&mut st, *dst, *op, *ty, [a, b, c.as_ref().unwrap_or(&Value::Const(0))]),
            Op::ParamLoad { dsts, ty, addr } => self.param_load(&mut st, dsts, *ty, addr, line)?,
            Op::Opaque { dsts, srcs, origin } => {
                let deps = srcs.iter().fold(DepMask::none(), |m, s| m.union(&data_val(&st, s).1));
                // The first cause: an unknown source's origin, else the instruction's own.
                let first = srcs.iter().find_map(|s| match data_val(&st, s).0 {
                    RegVal::Known(x) if unknown::is_unknown(x) => Some(x),
                    _ => None,
                });
                let value = first.unwrap_or(unknown::encode(*origin));
                for &d in dsts {
                    st.regs[d] = (RegVal::Known(value), deps.clone());
                }
            }
            Op::Branch { cond, target } => return Ok(self.branch(st, stack, *cond, *target, out)),
        }
        st.pc += 1;
        Ok(Some(st))
    }

    /// A 64-bit load: one 8-byte access of two words, the low one at the lower address.
    fn load_wide(
        &self,
        st: State,
        dst: Reg,
        addr: &Address,
        space: AccessSpace,
        pc: usize,
        line: usize,
    ) -> Result<Vec<State>, ExploreError> {
        let mut states = vec![(st, Vec::new())];
        for k in 0..2 {
            let mut next = Vec::new();
            for (mut s, mut parts) in states {
                let acc = self.access_word(&s, addr, k, 8, space, line)?;
                if !self.control.contains(&dst) {
                    let idx = s.events.len();
                    let mut e = s.access_event(TraceOp::Read, pc, &acc, Role::Thread, None);
                    e.symbolic = true;
                    s.events.push(e);
                    parts.push((RegVal::Open(SymExpr::Read(idx)), idx));
                    next.push((s, parts));
                    continue;
                }
                for (s2, v) in self.branch_read(s, acc, pc, Role::Thread, None) {
                    let idx = s2.events.len() - 1;
                    let mut p2 = parts.clone();
                    p2.push((RegVal::Known(v), idx));
                    next.push((s2, p2));
                }
            }
            states = next;
        }
        let mut out = Vec::with_capacity(states.len());
        for (mut s, parts) in states {
            let deps = DepMask::single(parts[0].1).union(&DepMask::single(parts[1].1));
            let value = match (&parts[0].0, &parts[1].0) {
                (RegVal::Known(lo), RegVal::Known(hi)) => RegVal::Known(join64(*lo, *hi)),
                (lo, hi) => RegVal::Open(SymExpr::Join(Arc::new(lo.expr()), Arc::new(hi.expr()))),
            };
            s.regs[dst] = (value, deps);
            out.push(s);
        }
        Ok(out)
    }

    /// A load of one word: open when its register decides nothing, else one run per value.
    #[allow(clippy::too_many_arguments)]
    fn load(
        &self,
        mut st: State,
        stack: &mut Vec<State>,
        dst: Reg,
        ty: Option<Ty>,
        addr: &Address,
        space: AccessSpace,
        pc: usize,
        line: usize,
    ) -> Result<Option<State>, ExploreError> {
        let acc = self.access(&st, addr, 0, 4, space, line)?;
        let mb = self.program.variable_of(acc.loc).kind == VariableKind::Mbarrier;
        // An ordinary load of an mbarrier object reads whatever state the object's
        // history leaves (the search gives it every state as an option, and M2 when
        // the state is valid): open, whether or not its register decides anything.
        if mb || !self.control.contains(&dst) {
            self.symbolic_read(&mut st, acc, pc, dst);
            // An mbarrier object's state is not a typed word: its encoding stays whole.
            let (v, d) = st.regs[dst].clone();
            st.regs[dst] = (typed(if mb { None } else { ty }, v), d);
            st.pc += 1;
            return Ok(Some(st));
        }
        let mut out = Vec::new();
        for (s, v) in self.branch_read(st, acc, pc, Role::Thread, None) {
            let mut s = s;
            let idx = s.events.len() - 1;
            s.regs[dst] = (typed(ty, RegVal::Known(v)), DepMask::single(idx));
            out.push(s);
        }
        Ok(fork(stack, out))
    }

    /// A vector load: one read per element (a loaded word is never elided), each converted to the
    /// element type as a scalar load converts its word (PTX ISA §8.2.4).
    #[allow(clippy::too_many_arguments)]
    fn load_vector(
        &self,
        st: State,
        dsts: &[Reg],
        ty: Option<Ty>,
        addr: &Address,
        space: AccessSpace,
        pc: usize,
        line: usize,
    ) -> Result<Vec<State>, ExploreError> {
        let mut states = vec![st];
        for (k, dst) in dsts.iter().enumerate() {
            let mut next = Vec::new();
            for mut s in states {
                let acc = self.access(&s, addr, 4 * k as i64, 4, space, line)?;
                // An mbarrier object's state is not a typed word (as for scalar loads).
                let ty = if self.program.variable_of(acc.loc).kind == VariableKind::Mbarrier { None } else { ty };
                if !self.control.contains(dst) {
                    self.symbolic_read(&mut s, acc, pc, *dst);
                    let (v, d) = s.regs[*dst].clone();
                    s.regs[*dst] = (typed(ty, v), d);
                    next.push(s);
                    continue;
                }
                for (mut s, v) in self.branch_read(s, acc, pc, Role::Thread, None) {
                    let idx = s.events.len() - 1;
                    s.regs[*dst] = (typed(ty, RegVal::Known(v)), DepMask::single(idx));
                    next.push(s);
                }
            }
            states = next;
        }
        Ok(states)
    }

    /// A typed store: each word holds its 32-bit pattern at the word's type; a 64-bit store is
    /// one 8-byte access of two words, the low one at the lower address.
    #[allow(clippy::too_many_arguments)]
    fn store_typed(
        &self,
        st: &mut State,
        ty: Ty,
        addr: &Address,
        value: &Value,
        space: AccessSpace,
        pc: usize,
        line: usize,
    ) -> Result<(), ExploreError> {
        let (v, d) = data_val(st, &value.clone());
        let words = if ty.bits == 64 { 2 } else { 1 };
        for k in 0..words {
            let acc = self.access_word(st, addr, k, 4 * words, space, line)?;
            let wty = self.word_type(&acc);
            let part = match (&v, k) {
                (RegVal::Known(x), 0) => RegVal::Known(*x),
                (RegVal::Known(x), _) => RegVal::Known(super::arith::high_word(*x)),
                (RegVal::Open(e), 0) => RegVal::Open(e.clone()),
                (RegVal::Open(e), _) => RegVal::Open(SymExpr::High(Arc::new(e.clone()))),
            };
            self.push_write(st, acc, typed(Some(wty), part), d.clone(), pc, Role::Thread, None);
        }
        Ok(())
    }

    /// An RMW: a read and a write (an RMW pair). Open when the old value decides nothing, else
    /// one run per old value.
    #[allow(clippy::too_many_arguments)]
    fn rmw(
        &self,
        mut st: State,
        stack: &mut Vec<State>,
        dst: Option<Reg>,
        ty: Option<Ty>,
        addr: &Address,
        op: RmwOp,
        operands: &[Value],
        space: AccessSpace,
        pc: usize,
        line: usize,
    ) -> Result<Option<State>, ExploreError> {
        let acc = self.access(&st, addr, 0, 4, space, line)?;
        // A typed RMW computes at its type and stores at the word's type.
        let wty = ty.map(|_| self.word_type(&acc));
        let ops: Vec<(RegVal, DepMask)> = operands.iter().map(|o| data_val(&st, o)).collect();
        let data: DepMask = ops.iter().fold(DepMask::none(), |m, (_, d)| m.union(d));
        let known: Option<Vec<(i64, DepMask)>> =
            ops.iter().map(|(v, d)| if let RegVal::Known(x) = v { Some((*x, d.clone())) } else { None }).collect();
        // The old value decides nothing (no register, or one that only flows into
        // data): leave it open, and the written value with it.
        if dst.is_none_or(|d| !self.control.contains(&d)) {
            let idx = st.events.len();
            let mut e = st.access_event(TraceOp::Read, pc, &acc, Role::Thread, None);
            e.symbolic = true;
            e.rmw_partner = Some(idx + 1);
            st.events.push(e);
            let old = Arc::new(SymExpr::Read(idx));
            let args = ops.iter().map(|(v, _)| v.expr()).collect();
            let new = match ty {
                None => SymExpr::Rmw(op, old, args),
                Some(t) => SymExpr::TRmw(t, op, old, args),
            };
            self.push_write(&mut st, acc, typed(wty, RegVal::Open(new)), data.union(&DepMask::single(idx)), pc, Role::Thread, None);
            st.events[idx + 1].rmw_partner = Some(idx);
            if let Some(d) = dst {
                st.regs[d] = (typed(ty, RegVal::Open(SymExpr::Read(idx))), DepMask::single(idx));
            }
            st.pc += 1;
            return Ok(Some(st));
        }
        let known = known.expect("the operands of an RMW whose old value decides control flow are known");
        let mut out = Vec::new();
        for (mut s, old) in self.branch_read(st, acc.clone(), pc, Role::Thread, None) {
            let idx = s.events.len() - 1;
            s.events[idx].rmw_partner = Some(idx + 1);
            let new = match ty {
                None => rmw_result(op, old, &known),
                Some(t) => t.rmw(op, old, &known.iter().map(|k| k.0).collect::<Vec<_>>()),
            };
            self.push_write(&mut s, acc.clone(), typed(wty, RegVal::Known(new)), data.clone(), pc, Role::Thread, None);
            s.events[idx + 1].rmw_partner = Some(idx);
            if let Some(d) = dst {
                s.regs[d] = (typed(ty, RegVal::Known(old)), DepMask::single(idx));
            }
            out.push(s);
        }
        Ok(fork(stack, out))
    }

    /// `cp.async.mbarrier.arrive`: the pending-count increment (unless `.noinc`), then the
    /// arrive-on, an operation of its own async agent.
    fn cp_async_arrive(
        &self,
        st: State,
        bar: &Address,
        space: AccessSpace,
        noinc: bool,
        pc: usize,
        line: usize,
    ) -> Result<Vec<State>, ExploreError> {
        let acc = self.access(&st, bar, 0, 8, space, line)?;
        let mut states = vec![st];
        if !noinc {
            states = states
                .into_iter()
                .flat_map(|s| self.mb_update(s, acc.clone(), MbUpdate::IncPending, pc, Role::Thread, None, false))
                .map(|(s, _)| s)
                .collect();
        }
        let mut out = Vec::new();
        for mut s in states {
            // The arrive-on is an operation of its own async agent, triggered when
            // every prior cp.async of the thread completes (§9.7.9.25.3.4).
            let tracked: Vec<usize> = (0..s.ops.len()).filter(|&o| s.ops[o].kind == AsyncKind::Copy(CopyKind::CpAsync)).collect();
            let agent = s.ops.len();
            s.ops.push(AsyncOp { instr: pc, kind: AsyncKind::ArriveOn, events: Vec::new(), tracked, group: None });
            for (mut s2, _) in self.mb_update(s, acc.clone(), MbUpdate::ArriveOn, pc, Role::Signal, Some(agent), false) {
                let n = s2.events.len();
                s2.ops[agent].events.extend([n - 2, n - 1]);
                out.push(s2);
            }
        }
        Ok(out)
    }

    /// An mbarrier instruction: one run per result the thread may observe.
    #[allow(clippy::too_many_arguments)]
    fn mbarrier(
        &self,
        st: State,
        op: &MbOp,
        bar: &Address,
        space: AccessSpace,
        dst: Option<Reg>,
        pc: usize,
        line: usize,
    ) -> Result<Vec<State>, ExploreError> {
        let acc = self.access(&st, bar, 0, 8, space, line)?;
        let v = |st: &State, x: &Value| val(st, x).0;
        let update = match op {
            MbOp::Init { count } => MbUpdate::Init { count: v(&st, count) },
            MbOp::Inval => MbUpdate::Inval,
            MbOp::Arrive { count, expect_tx, no_complete, drop } => MbUpdate::Arrive {
                count: v(&st, count),
                expect_tx: expect_tx.as_ref().map(|x| v(&st, x)).unwrap_or(0),
                no_complete: *no_complete,
                drop: *drop,
            },
            MbOp::ExpectTx { bytes } => MbUpdate::ExpectTx { bytes: v(&st, bytes) },
            MbOp::CompleteTx { bytes } => MbUpdate::CompleteTx { bytes: v(&st, bytes) },
            MbOp::Wait { parity, operand } => MbUpdate::Wait { parity: *parity, operand: v(&st, operand) },
        };
        let mut out = Vec::new();
        // A result no instruction reads and the final state does not show stays unenumerated.
        let dst = dst.filter(|d| self.needed.contains(d));
        for (mut s, result) in self.mb_update(st, acc, update, pc, Role::Thread, None, dst.is_some()) {
            if let Some(d) = dst {
                // The result depends on the value read (the read half of the update).
                let read = s.events.iter().rposition(|e| e.op == TraceOp::Read).expect("an mbarrier op reads");
                s.regs[d] = (RegVal::Known(result), DepMask::single(read));
            }
            out.push(s);
        }
        Ok(out)
    }

    /// A branch: taken or not by the values it tests. A taken back edge of an await loop ends
    /// the run, as does the failed attempt of a retry loop (for the verdict); one of another
    /// loop is taken at most `unroll` times per instance of the loop (entering an outer loop's
    /// next iteration starts the inner loops afresh).
    fn branch(
        &self,
        mut st: State,
        stack: &mut Vec<State>,
        cond: Option<(CmpOp, Value, Value)>,
        target: usize,
        out: &mut ThreadTraces,
    ) -> Option<State> {
        let pc = st.pc;
        let taken = match cond {
            None => true,
            Some((cmp, a, b)) => {
                let (x, dx) = val(&st, &a);
                let (y, dy) = val(&st, &b);
                // Every event after a conditional branch depends on the values it tested.
                st.ctrl.union_with(&dx.union(&dy));
                match unknown::first(&[x, y]) {
                    // A branch on an unknown value goes both ways: the run that falls through
                    // is explored after this one.
                    Some(u) => {
                        out.unknown_branches.entry(pc).or_insert(unknown::origin(u).unwrap_or(0));
                        st.assumed.push(pc);
                        let mut fall = st.clone();
                        fall.pc += 1;
                        stack.push(fall);
                        true
                    }
                    None => compare(cmp, x, y),
                }
            }
        };
        if !taken {
            st.pc += 1;
            return Some(st);
        }
        if target <= pc {
            if self.spin[pc] {
                // A failed poll of an await loop: the exiting iteration is covered
                // by the sibling paths, so this path adds nothing to safety. For
                // liveness it is the run that polls forever.
                if self.liveness {
                    let from = st.iteration_start.get(&target).copied().unwrap_or(0);
                    let reads = (from..st.events.len()).filter(|&i| st.events[i].op == TraceOp::Read).collect();
                    let stuck = Stuck::Spin { back_edge: pc, header: target, reads };
                    out.stuck.push(st.finish(Some(stuck)));
                } else {
                    out.record_dropped(&st.events);
                }
                return None;
            }
            if self.retry[pc] && !self.liveness {
                let from = st.iteration_start.get(&target).copied().unwrap_or(0);
                if failed_attempt(&st.events, from) {
                    // The iteration read and wrote back what it read: an execution with it has
                    // the same final state as the one without it, whose sibling run (the
                    // attempt succeeding) is explored. For liveness the loop is unrolled.
                    out.record_dropped(&st.events);
                    return None;
                }
            }
            let n = st.back_edges.entry(pc).or_insert(0);
            *n += 1;
            let exceeded = *n > self.limits.unroll;
            let most = st.most_back_edges.entry(pc).or_insert(0);
            *most = (*most).max(*n);
            // Loops nested in this one start a new instance with its next iteration.
            for (inner, count) in st.back_edges.iter_mut() {
                let nested = matches!(self.thread.code[*inner].op, Op::Branch { target: t, .. } if t >= target);
                if *inner != pc && (target..pc).contains(inner) && nested {
                    *count = 0;
                }
            }
            if exceeded {
                let needs = self.needs_other_writers(&st.events);
                out.cut_runs.push(super::event::CutRun { back_edge: pc, needs });
                out.record_dropped(&st.events);
                return None;
            }
        }
        st.pc = target;
        Some(st)
    }
}

impl Cx<'_> {
    /// The unknown value a global address of `instr` holds, where that address is all that is
    /// unknown of it and the access decides nothing: a weak `ld.global`/`st.global` (a
    /// synchronizing access is never left out), the global source of a `cp.async` or bulk copy,
    /// the coordinates of a tensor copy (its global box), a bulk prefetch. The run goes on
    /// without the global events (a load's value is unknown, a copy writes unknown values), and
    /// the report lists the instruction as not checked. Shared memory, mbarrier operands, sizes
    /// and counts must still be known (`check_known`).
    fn unknown_global_address(&self, st: &State, instr: &crate::program::Instr) -> Option<i64> {
        let reg_unknown = |a: &Address| match a {
            Address::Reg(r, _) => match &st.regs[*r].0 {
                RegVal::Known(x) if unknown::is_unknown(*x) => Some(*x),
                _ => None,
            },
            _ => None,
        };
        let value_unknown = |v: &Value| match val(st, v).0 {
            x if unknown::is_unknown(x) => Some(x),
            _ => None,
        };
        let (found, rest): (Option<i64>, Vec<Value>) = match &instr.op {
            Op::Load { addr, sem: Sem::Weak, space: AccessSpace::Global, .. }
            | Op::LoadVector { addr, sem: Sem::Weak, space: AccessSpace::Global, .. }
            | Op::Store { addr, sem: Sem::Weak, space: AccessSpace::Global, .. }
            | Op::StoreVector { addr, sem: Sem::Weak, space: AccessSpace::Global, .. } => (reg_unknown(addr), Vec::new()),
            Op::Prefetch { bulk: Some((src, size)) } => (reg_unknown(src), vec![*size]),
            Op::AsyncCopy(c) => {
                let mut rest = Vec::new();
                let mut deciding = Vec::new();
                super::control::deciding_operands(&instr.op, &mut deciding);
                let global: Vec<Value> = match &c.tensor {
                    Some(t) => t.coords.clone(),
                    // (A reduction's source is never global: it reduces shared memory into global or
                    // another CTA's shared memory.)
                    None if c.src_space == AccessSpace::Global
                        && c.dst_space != AccessSpace::Global
                        && !matches!(c.kind, CopyKind::Reduce(..)) =>
                    {
                        match c.src {
                            Address::Reg(r, _) => vec![Value::Reg(r)],
                            _ => Vec::new(),
                        }
                    }
                    None => Vec::new(),
                };
                let found = global.iter().find_map(&value_unknown);
                // What the source bytes are decides nothing once the source is unknown.
                let moot: Vec<Value> =
                    if c.tensor.is_none() { c.src_size.iter().chain(&c.ignore_src).copied().collect() } else { Vec::new() };
                rest.extend(deciding.into_iter().filter(|v| !global.contains(v) && !moot.contains(v)));
                (found, rest)
            }
            _ => (None, Vec::new()),
        };
        let u = found?;
        rest.iter().all(|v| value_unknown(v).is_none()).then_some(u)
    }

    /// An instruction's deciding operands (addresses, sizes, counts, mbarrier operands) must be
    /// known: an unknown one stops the exploration at the instruction, naming where it comes from.
    fn check_known(&self, st: &State, instr: &crate::program::Instr) -> Result<(), ExploreError> {
        let mut deciding = Vec::new();
        super::control::deciding_operands(&instr.op, &mut deciding);
        for v in deciding {
            let Value::Reg(r) = v else { continue };
            if let (RegVal::Known(x), _) = &st.regs[r] {
                if unknown::is_unknown(*x) {
                    return Err(super::error::unknown_value(self.program, self.thread, instr, &self.thread.registers[r], *x));
                }
            }
        }
        Ok(())
    }

    /// Whether an address points into a kernel parameter.
    fn reads_param(&self, st: &State, addr: &Address) -> bool {
        let (a, _) = self.address_value(st, addr);
        self.program.decode_address(a).is_some_and(|(v, _)| self.program.variables[v].space == crate::program::Space::Param)
    }

    /// A read of kernel parameter bytes: each destination the `ty`-sized bytes at its offset
    /// (vector elements follow each other), depending on the address's reads only.
    fn param_load(&self, st: &mut State, dsts: &[Reg], ty: Ty, addr: &Address, line: usize) -> Result<(), ExploreError> {
        let (a, deps) = self.address_value(st, addr);
        let bytes = i64::from(ty.bits / 8).max(1);
        for (k, &d) in dsts.iter().enumerate() {
            let at = a + k as i64 * bytes;
            let v = self.program.param_bytes(at, bytes).ok_or_else(|| bad_address(self.program, self.thread, line, at))?;
            st.regs[d] = (RegVal::Known(ty.norm(v)), deps.clone());
        }
        Ok(())
    }

    /// `mapa` with an operand in a register: the address at the same CTA-relative offset in the
    /// shared memory of the CTA of rank `b` in the thread's cluster. A rank outside the cluster
    /// or an address with no counterpart there is undefined behaviour (a marker event with the
    /// reason); the register then keeps the address unmapped.
    fn mapa(&self, st: &mut State, dst: Reg, a: &Value, b: &Value) {
        let (addr, da) = val(st, a);
        let (rank, db) = val(st, b);
        let cluster = self.thread.placement.cluster;
        let mapped = match self.program.cta_of_rank(cluster, rank) {
            None => Err(format!("mapa: rank {rank} names no CTA of the cluster of P{} (PTX ISA, `mapa`)", self.thread.id)),
            Some(cta) => self.program.same_offset_in_cta(addr, cta).ok_or_else(|| {
                format!("mapa: the address is of no shared variable with a counterpart in CTA {cta} (rank {rank}) (PTX ISA, `mapa`)")
            }),
        };
        let value = match mapped {
            Ok(v) => v,
            Err(reason) => {
                let mut e = st.event(TraceOp::Marker, st.pc);
                e.ub = Some(reason);
                st.events.push(e);
                addr
            }
        };
        st.regs[dst] = (RegVal::Known(value), da.union(&db));
    }

    /// The values the run's own read-modify-writes of counters read (see `Trace::counter_claims`).
    fn counter_claims(&self, events: &[super::event::TraceEvent]) -> Vec<(usize, i64)> {
        events
            .iter()
            .filter(|e| e.op == TraceOp::Read && e.rmw_partner.is_some() && e.agent.is_none() && !e.symbolic && e.mb_op.is_none())
            .filter_map(|e| e.location.map(|l| (self.program.locations[l].physical, e.value)))
            .filter(|&(p, _)| self.counters[p])
            .collect()
    }

    /// The (physical location, value) pairs the run's reads can only get from another writer:
    /// each read by the thread itself of a value other than its own last write of that location
    /// (coherence puts the write it reads after the thread's own).
    fn needs_other_writers(&self, events: &[super::event::TraceEvent]) -> Vec<(usize, i64)> {
        let mut own: std::collections::HashMap<usize, Option<i64>> = std::collections::HashMap::new();
        let mut needs = Vec::new();
        for e in events.iter().filter(|e| e.agent.is_none() && e.mb_op.is_none()) {
            let Some(p) = e.location.map(|l| self.program.locations[l].physical) else { continue };
            match e.op {
                TraceOp::Write => {
                    own.insert(p, e.sym.is_none().then_some(e.value));
                }
                TraceOp::Read if !e.symbolic => {
                    if let Some(Some(w)) = own.get(&p) {
                        if *w != e.value {
                            needs.push((p, e.value));
                        }
                    }
                }
                _ => {}
            }
        }
        needs
    }
}

/// Whether the events of a run from index `from` on (one iteration of a retry loop) are a failed
/// attempt: reads, and read-modify-writes that wrote back the value they read, performed by the
/// thread itself, with known values and no undefined behaviour.
fn failed_attempt(events: &[super::event::TraceEvent], from: usize) -> bool {
    events[from..].iter().all(|e| {
        let plain = e.agent.is_none() && e.mb_op.is_none() && e.ub.is_none() && e.sym.is_none() && !e.symbolic;
        let wrote_back = || e.rmw_partner.is_some_and(|r| r >= from && events[r].op == TraceOp::Read && events[r].value == e.value);
        plain && (e.op == TraceOp::Read || (e.op == TraceOp::Write && wrote_back()))
    })
}

/// `cp.async.wait_group` / `cp.async.bulk.wait_group` / `wgmma.wait_group` (and `wait_all`): a
/// marker event, and the ops of every group it observes complete.
fn wait_group(st: &mut State, kind: GroupKind, n: i64, read: bool, all: bool, pc: usize) {
    let k = State::group_index(kind);
    if all {
        st.commit(kind);
    }
    // wait_group N: all but the N most recent committed groups are complete
    // (§9.7.9.25.3.3; groups complete in commit order).
    let committed = st.groups[k].len();
    let covered: Vec<usize> = st.groups[k][..committed.saturating_sub(n as usize)].iter().flatten().copied().collect();
    let e = st.event(TraceOp::Marker, pc);
    st.events.push(e);
    let marker = st.events.len() - 1;
    st.waits.push(GroupWait { marker, ops: covered, read_only: read });
}

/// Register arithmetic: known when the operands are, else an open expression.
fn local(st: &mut State, dst: Reg, op: LocalOp, ty: Option<Ty>, [a, b, c]: [&Value; 3]) {
    let (x, dx) = data_val(st, a);
    let (y, dy) = data_val(st, b);
    let (z, dz) = data_val(st, c);
    let value = match (x, y, z, ty) {
        (RegVal::Known(x), RegVal::Known(y), RegVal::Known(z), None) => RegVal::Known(local3_result(op, x, y, z)),
        (RegVal::Known(x), RegVal::Known(y), RegVal::Known(z), Some(t)) => RegVal::Known(t.local3(op, x, y, z)),
        (x, y, z, _) if op.ternary() => RegVal::Open(SymExpr::Local3(ty, op, Arc::new([x.expr(), y.expr(), z.expr()]))),
        (x, y, _, None) => RegVal::Open(SymExpr::Local(op, Arc::new(x.expr()), Arc::new(y.expr()))),
        (x, y, _, Some(t)) => RegVal::Open(SymExpr::TLocal(t, op, Arc::new(x.expr()), Arc::new(y.expr()))),
    };
    st.regs[dst] = (value, dx.union(&dy).union(&dz));
}

/// A run that stops at an address or an unknown value after a branch on an unknown value went
/// both ways may be a path no GPU takes: the message says which branch opened it.
fn on_assumed_path(e: ExploreError, program: &Program, thread: &Thread, assumed: &[usize], out: &ThreadTraces) -> ExploreError {
    let Some(&pc) = assumed.last() else { return e };
    let instr = &thread.code[pc];
    let origin = out.unknown_branches.get(&pc).and_then(|&o| program.unknowns.get(o as usize));
    let from = origin.map_or_else(|| "an unknown value".to_string(), |o| o.describe());
    let note = format!(
        " (this run took the branch at line {} (`{}`) both ways: its condition comes from {from}, so this path may be one no GPU takes{})",
        instr.line,
        instr.text.trim(),
        if assumed.len() > 1 { format!("; {} such branches on the way", assumed.len()) } else { String::new() }
    );
    match e {
        ExploreError::BadAddress { thread, line, col, detail } => ExploreError::BadAddress { thread, line, col, detail: detail + &note },
        ExploreError::Unknown { thread, line, col, detail } => ExploreError::Unknown { thread, line, col, detail: detail + &note },
        other => other,
    }
}

/// An instruction's text for a message, cut after 80 characters (a wgmma names 64 registers).
fn short_text(text: &str) -> String {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match text.char_indices().nth(80) {
        Some((i, _)) => format!("{}...", &text[..i]),
        None => text,
    }
}

impl Cx<'_> {
    /// A warp exchange (`exchange`): the run gives its source and takes each result its k-th
    /// exchange can get, one run per result (none yet: the run waits for a later round of the
    /// fixpoint, and what it wrote so far still feeds the domains). Results that need no lane
    /// the test models are computed here.
    fn exchange(
        &self,
        mut st: State,
        stack: &mut Vec<State>,
        out: &mut ThreadTraces,
        x: &crate::program::WarpExchange,
        pc: usize,
    ) -> Option<State> {
        use super::event::{ExchangeRecord, Source};
        use super::exchange::{evaluate, needed, Input, Lane};
        use crate::program::ExchangeForm;
        let (a, a_deps) = val(&st, &x.a);
        let (b, b_deps) = val(&st, &x.b);
        let (c, c_deps) = val(&st, &x.c);
        let (mask, mask_deps) = val(&st, &x.mask);
        let a = match x.form {
            ExchangeForm::Vote(_) if !unknown::is_unknown(a) => i64::from((a != 0) != x.negate),
            _ => a,
        };
        let source = Source { form: x.form, mask: mask as u32, a, b, c };
        let k = st.exchanges.len();
        out.exchange_sources.entry(k).or_default().insert((pc, source));
        if source.mask & (1 << x.lane) == 0 {
            let mut e = st.event(TraceOp::Marker, pc);
            e.ub = Some(format!(
                "{}: the membermask {:#x} does not include the executing lane {} (PTX ISA: \"The behavior of {} is undefined if the executing thread is not in the membermask\")",
                self.thread.code[pc].text.split_whitespace().next().unwrap_or("the exchange"),
                source.mask,
                x.lane,
                self.thread.code[pc].text.split('.').next().unwrap_or("it"),
            ));
            st.events.push(e);
        }
        let deps = a_deps.union(&b_deps).union(&c_deps).union(&mask_deps);
        let mut marker = st.event(TraceOp::Marker, pc);
        marker.data_deps = deps.clone();
        st.events.push(marker);
        let give = st.events.len() - 1;
        let take = st.event(TraceOp::Marker, pc);
        st.events.push(take);
        let event = st.events.len() - 1;
        let local = needed(x, &source).iter().all(|&j| !matches!(self.lanes.lane(self.t, x, j), Lane::Thread(_)));
        let results: Vec<(i64, i64)> = if local {
            let input = |j| match self.lanes.lane(self.t, x, j) {
                Lane::Unmodelled => Input::Unmodelled,
                _ => Input::Absent,
            };
            vec![evaluate(x, &source, &input)]
        } else {
            self.exchange_domains.get(&(self.t, k)).map(|r| r.iter().copied().collect()).unwrap_or_default()
        };
        if results.is_empty() {
            self.pruned.borrow_mut().record_dropped(&st.events);
            return None;
        }
        let states = results
            .into_iter()
            .map(|(d, p)| {
                let mut s = st.clone();
                for (reg, v) in [(x.d, d), (x.p, p)] {
                    if let Some(r) = reg {
                        s.regs[r] = (RegVal::Known(v), DepMask::single(event));
                    }
                }
                s.exchanges.push(ExchangeRecord { give, event, instr: pc, source, d, p, deps: deps.clone() });
                s
            })
            .collect();
        fork(stack, states)
    }
}
