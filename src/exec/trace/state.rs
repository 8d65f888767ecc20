//! A run in progress (`State`), the context every step of one thread's enumeration sees
//! (`Cx`), and the primitives that add events to a run: accesses, reads, writes, mbarrier
//! updates.

use super::deps::DepMask;
use super::error::{bad_address, ExploreError};
use super::event::{AsyncOp, GroupWait, MbKind, Role, Stuck, ThreadTraces, Trace, TraceEvent, TraceOp};
use super::values::{Domains, RegVal, SymExpr};
use crate::config::Limits;
use crate::program::mbarrier::MbUpdate;
use crate::program::{AccessSpace, Address, GroupKind, Program, Reg, Space, Thread, Value, VariableKind};
use std::collections::{BTreeSet, HashMap};

/// One run of a thread in progress.
#[derive(Clone)]
pub(super) struct State {
    pub(super) pc: usize,
    pub(super) regs: Vec<(RegVal, DepMask)>,
    pub(super) events: Vec<TraceEvent>,
    pub(super) ctrl: DepMask,
    /// Per back edge of a loop (not an await): how often the current instance of the loop took
    /// it, and the most any instance of it took it in this run.
    pub(super) back_edges: HashMap<usize, usize>,
    pub(super) most_back_edges: HashMap<usize, usize>,
    pub(super) path: Vec<usize>,
    /// Event index at which the current iteration of each spin loop began.
    pub(super) iteration_start: HashMap<usize, usize>,
    /// Asynchronous operations issued so far.
    pub(super) ops: Vec<AsyncOp>,
    /// Per group kind (cp.async, bulk): ops issued but not committed yet, and committed groups in order.
    pub(super) open: [Vec<usize>; 3],
    pub(super) groups: [Vec<Vec<usize>>; 3],
    pub(super) waits: Vec<GroupWait>,
    /// The branches on unknown values taken so far (`Trace::assumed`).
    pub(super) assumed: Vec<usize>,
    /// The tensor maps this run built (`tensormap.replace`) or copied (`tensormap.cp_fenceproxy`),
    /// by the address of the object: the fields and their values (`exec::trace::tensormap`).
    pub(super) built_maps: std::collections::BTreeMap<i64, BuiltMap>,
    /// The warp exchanges so far (`Trace::exchanges`).
    pub(super) exchanges: Vec<super::event::ExchangeRecord>,
}

/// The fields a run replaced in one tensor-map object (None: an unknown value), and the line of
/// the last replacement (`exec::trace::tensormap`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct BuiltMap {
    pub(super) fields: std::collections::BTreeMap<(crate::program::tensor::MapField, i64), Option<i64>>,
    pub(super) line: usize,
}

impl State {
    pub(super) fn new(regs: Vec<(RegVal, DepMask)>) -> Self {
        State {
            pc: 0,
            regs,
            events: Vec::new(),
            ctrl: DepMask::none(),
            back_edges: HashMap::new(),
            most_back_edges: HashMap::new(),
            path: Vec::new(),
            iteration_start: HashMap::new(),
            ops: Vec::new(),
            open: [Vec::new(), Vec::new(), Vec::new()],
            groups: [Vec::new(), Vec::new(), Vec::new()],
            waits: Vec::new(),
            assumed: Vec::new(),
            built_maps: Default::default(),
            exchanges: Vec::new(),
        }
    }

    pub(super) fn finish(self, stuck: Option<Stuck>) -> Trace {
        let symbolic_registers = self
            .regs
            .iter()
            .enumerate()
            .filter_map(|(r, (v, _))| if let RegVal::Open(e) = v { Some((r, e.clone())) } else { None })
            .collect();
        Trace {
            events: self.events,
            registers: self.regs.iter().map(|r| if let RegVal::Known(v) = r.0 { v } else { 0 }).collect(),
            path: self.path,
            stuck,
            ops: self.ops,
            waits: self.waits,
            symbolic_registers,
            counter_claims: Vec::new(),
            assumed: self.assumed,
            exchanges: self.exchanges,
        }
    }

    /// A new event of the issuing thread itself, under the current control dependencies.
    pub(super) fn event(&self, op: TraceOp, instr: usize) -> TraceEvent {
        TraceEvent {
            op,
            instr,
            location: None,
            value: 0,
            rmw_partner: None,
            addr_deps: DepMask::none(),
            data_deps: DepMask::none(),
            ctrl_deps: self.ctrl.clone(),
            agent: None,
            role: Role::Thread,
            mb: None,
            range: (0, 0),
            ub: None,
            wait_result: None,
            mb_op: None,
            mb_result: None,
            symbolic: false,
            sym: None,
            possible: None,
            tensormap: false,
        }
    }

    /// Close the open group of this kind (§9.7.9.25.3.2: an empty group is still a group).
    pub(super) fn commit(&mut self, kind: GroupKind) {
        let k = State::group_index(kind);
        let group = std::mem::take(&mut self.open[k]);
        for &op in &group {
            self.ops[op].group = Some(self.groups[k].len());
        }
        self.groups[k].push(group);
    }

    /// A memory event of the instruction at `pc` on `acc`, performed by `role` (of `agent`).
    pub(super) fn access_event(&self, op: TraceOp, pc: usize, acc: &Access, role: Role, agent: Option<usize>) -> TraceEvent {
        let mut e = self.event(op, pc);
        e.location = Some(acc.loc);
        e.addr_deps = acc.deps.clone();
        e.range = acc.range;
        e.ub = acc.ub.map(str::to_string);
        e.role = role;
        e.agent = agent;
        e
    }

    pub(super) fn group_index(kind: GroupKind) -> usize {
        match kind {
            GroupKind::CpAsync => 0,
            GroupKind::Bulk => 1,
            GroupKind::Wgmma => 2,
        }
    }
}

/// A memory access an instruction is about to make: where, and with which footprint.
#[derive(Clone)]
pub(super) struct Access {
    pub(super) loc: usize,
    pub(super) range: (i64, i64),
    pub(super) deps: DepMask,
    pub(super) ub: Option<&'static str>,
}

/// The value of an operand that decides something (an address, a branch, a size, an mbarrier
/// operand): always known, because every register such a use reads (transitively) holds known
/// values (`control_registers`).
pub(super) fn val(st: &State, v: &Value) -> (i64, DepMask) {
    match v {
        Value::Const(c) => (*c, DepMask::none()),
        Value::Reg(r) => match &st.regs[*r] {
            (RegVal::Known(x), d) => (*x, d.clone()),
            // Unreachable by construction; 0 keeps the enumeration going rather than panic.
            (RegVal::Open(_), d) => (0, d.clone()),
        },
    }
}

/// The value of an operand that only flows into data (a stored value, an arithmetic operand):
/// known or open.
pub(super) fn data_val(st: &State, v: &Value) -> (RegVal, DepMask) {
    match v {
        Value::Const(c) => (RegVal::Known(*c), DepMask::none()),
        Value::Reg(r) => st.regs[*r].clone(),
    }
}

/// What every step of one thread's enumeration needs to see.
pub(super) struct Cx<'a> {
    pub(super) program: &'a Program,
    /// The thread's index, and its code.
    pub(super) t: usize,
    pub(super) thread: &'a Thread,
    /// The lanes of the test's warps, and the results each exchange can get (`exchange`).
    pub(super) lanes: &'a super::exchange::Lanes,
    pub(super) exchange_domains: &'a super::exchange::ExchangeDomains,
    pub(super) domains: &'a Domains,
    /// Registers whose values decide control flow, addresses or operands (see
    /// [`control_registers`](super::control::control_registers)): the reads into them branch
    /// over their values.
    pub(super) control: BTreeSet<Reg>,
    /// Registers something reads or the final state shows (see
    /// [`needed_registers`](super::control::needed_registers)): an mbarrier result written to
    /// another register is not enumerated.
    pub(super) needed: BTreeSet<Reg>,
    /// Words whose events would mirror those of a kept word (see
    /// [`redundant_words`](super::words::redundant_words)).
    pub(super) elided: &'a [bool],
    /// The largest phase an arrive can return: one phase per mbarrier update instruction.
    pub(super) max_phase: i64,
    /// Physical locations only increments write (see `counters`).
    pub(super) counters: &'a [bool],
    /// The runs left out because a counter's read could only go below what the thread saw:
    /// what they wrote before (see `ThreadTraces::dropped_writes`).
    pub(super) pruned: std::cell::RefCell<ThreadTraces>,
    pub(super) limits: &'a Limits,
    /// What `.f32` bulk reductions do with subnormals (the reading `f32-reduce-flushes`).
    pub(super) f32_subnormals: crate::exec::reduce::F32Subnormals,
    /// For each instruction, whether it is the back edge of a side-effect-free loop.
    pub(super) spin: Vec<bool>,
    /// For each instruction, whether it is the back edge of a retry loop (see
    /// [`retry_back_edges`](super::loops::retry_back_edges)).
    pub(super) retry: Vec<bool>,
    /// Whether runs that stop forever are collected too.
    pub(super) liveness: bool,
    /// Where the words touched together are being surveyed (`survey`): every access is noted.
    pub(super) survey: Option<&'a super::survey::Survey>,
}

impl Cx<'_> {
    /// The word at byte `extra` of an address operand, checked against the state space the
    /// instruction names (PTX ISA §6.4.1: an address outside the window of its state space is
    /// undefined).
    pub(super) fn access(
        &self,
        st: &State,
        addr: &Address,
        extra: i64,
        width: i64,
        space: AccessSpace,
        line: usize,
    ) -> Result<Access, ExploreError> {
        // The footprint of this element: a vector access is one access per element (§8.2.4).
        let (value, deps) = self.address_value(st, addr);
        self.access_at(value + extra, value + extra, width, deps, space, line)
    }

    /// Word `k` of an access of `size` bytes at `addr` (a 64-bit access: both words carry the
    /// whole 8-byte range, so a 4-byte access to either overlaps it only partly).
    pub(super) fn access_word(
        &self,
        st: &State,
        addr: &Address,
        k: i64,
        size: i64,
        space: AccessSpace,
        line: usize,
    ) -> Result<Access, ExploreError> {
        let (value, deps) = self.address_value(st, addr);
        self.access_at(value + 4 * k, value, size, deps, space, line)
    }

    pub(super) fn space_violation(&self, var: usize, space: AccessSpace) -> Option<&'static str> {
        let here = self.thread.placement;
        match (space, self.program.variables[var].space) {
            (AccessSpace::Global, Space::Shared { .. }) => Some("U13: a .global access to a shared-memory variable (PTX ISA §6.4.1)"),
            (AccessSpace::SharedCta | AccessSpace::SharedCluster, Space::Global) => {
                Some("U13: a .shared access to a global variable (PTX ISA §6.4.1)")
            }
            (AccessSpace::SharedCta, Space::Shared { cta }) if cta != here.cta => {
                Some("U13: a .shared::cta address of another CTA's shared memory (PTX ISA §5.1.7: only the executing CTA's window)")
            }
            (AccessSpace::SharedCluster, Space::Shared { cta }) if self.program.cluster_of_cta(cta) != here.cluster => {
                Some("U13: a .shared::cluster address of a CTA outside the executing cluster (PTX ISA §5.1.7)")
            }
            (AccessSpace::Generic, Space::Shared { cta }) if self.program.cluster_of_cta(cta) != here.cluster => {
                Some("U13: a generic address of the shared memory of a CTA outside the executing cluster (PTX ISA §5.1.7: shared memory is reachable only from the CTA and its cluster)")
            }
            _ => None,
        }
    }

    /// A read whose register no instruction uses: one event, value left to reads-from.
    pub(super) fn symbolic_read(&self, st: &mut State, acc: Access, pc: usize, dst: Reg) {
        let mut e = st.access_event(TraceOp::Read, pc, &acc, Role::Thread, None);
        e.symbolic = true;
        let idx = st.events.len();
        st.events.push(e);
        st.regs[dst] = (RegVal::Open(SymExpr::Read(idx)), DepMask::single(idx));
    }

    /// Push one read per value the location may hold; each result is a state with the read as
    /// its last event, paired with the value read.
    pub(super) fn branch_read(&self, st: State, acc: Access, pc: usize, role: Role, agent: Option<usize>) -> Vec<(State, i64)> {
        let p = self.program.locations[acc.loc].physical;
        // A counter's thread never reads below what it already saw there (coherence).
        let floor = if self.counters[p] && agent.is_none() { self.seen_on(&st, p) } else { None };
        let values: Vec<i64> = self.domains[p].iter().copied().filter(|v| floor.is_none_or(|f| *v >= f)).collect();
        if values.len() < self.domains[p].len() {
            // The run's prefix still happens (in executions where the read sees a larger value).
            let mut pruned = self.pruned.borrow_mut();
            pruned.record_dropped(&st.events);
            pruned.counter_pruned = true;
        }
        let mut out = Vec::with_capacity(values.len());
        for v in &values {
            let mut s = st.clone();
            let mut e = s.access_event(TraceOp::Read, pc, &acc, role, agent);
            e.value = *v;
            s.events.push(e);
            out.push((s, *v));
        }
        out
    }

    /// The largest known value the thread itself (not its async agents) read or wrote at
    /// physical location `p` so far.
    fn seen_on(&self, st: &State, p: usize) -> Option<i64> {
        st.events
            .iter()
            .filter(|e| e.agent.is_none() && e.mb_op.is_none() && e.sym.is_none() && !e.symbolic)
            .filter(|e| matches!(e.op, TraceOp::Read | TraceOp::Write))
            .filter(|e| e.location.is_some_and(|l| self.program.locations[l].physical == p))
            .map(|e| e.value)
            .max()
    }

    /// A write of `value`; an open value also records every value it can take (from the
    /// value domains of the reads it depends on).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn push_write(
        &self,
        st: &mut State,
        acc: Access,
        value: RegVal,
        data: DepMask,
        pc: usize,
        role: Role,
        agent: Option<usize>,
    ) {
        let mut e = st.access_event(TraceOp::Write, pc, &acc, role, agent);
        match value {
            RegVal::Known(v) => e.value = v,
            RegVal::Open(expr) => {
                let events = &st.events;
                let domain = |r: usize| -> Vec<i64> {
                    events[r]
                        .location
                        .map(|l| self.domains[self.program.locations[l].physical].iter().copied().collect())
                        .unwrap_or_default()
                };
                // Beyond the domain limit the value set is not needed: the fixpoint reports it.
                e.possible = expr.possible(&domain, self.limits.max_domain).map(|v| v.into_iter().collect());
                e.sym = Some(expr);
            }
        }
        e.data_deps = data;
        st.events.push(e);
    }

    /// An mbarrier operation: a read of the object's state, and for updates the write of the new
    /// state (an RMW pair). The values are left symbolic: an mbarrier's updates are totally
    /// ordered and each reads its predecessor, so the values follow from that order, which the
    /// search builds per execution (`exec::mbgraph`) and replays. The trace only branches on
    /// what the thread itself sees: the phase an arrive returns and whether a wait returns True
    /// (when the instruction has a destination), recorded as the required result.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn mb_update(
        &self,
        st: State,
        acc: Access,
        update: MbUpdate,
        pc: usize,
        role: Role,
        agent: Option<usize>,
        result_used: bool,
    ) -> Vec<(State, i64)> {
        let kind = MbKind::of(&update);
        let mut st = st;
        let mut e = st.access_event(TraceOp::Read, pc, &acc, role, agent);
        e.mb = Some(kind);
        e.mb_op = Some(update);
        let idx = st.events.len();
        st.events.push(e);
        if !matches!(update, MbUpdate::Wait { .. }) {
            st.events[idx].rmw_partner = Some(idx + 1);
            self.push_write(&mut st, acc, RegVal::Known(0), DepMask::single(idx), pc, role, agent);
            st.events[idx + 1].rmw_partner = Some(idx);
            st.events[idx + 1].mb = Some(kind);
            st.events[idx + 1].mb_op = Some(update);
            st.events[idx + 1].ub = None;
        }
        let results: Vec<i64> = match update {
            _ if !result_used => return vec![(st, 0)],
            MbUpdate::Wait { .. } => vec![1, 0],
            MbUpdate::Arrive { .. } => (0..=self.max_phase).collect(),
            _ => return vec![(st, 0)],
        };
        results
            .into_iter()
            .map(|r| {
                let mut s = st.clone();
                s.events[idx].mb_result = Some(r);
                if matches!(update, MbUpdate::Wait { .. }) {
                    s.events[idx].wait_result = Some(r != 0);
                }
                (s, r)
            })
            .collect()
    }

    pub(super) fn address_value(&self, st: &State, a: &Address) -> (i64, DepMask) {
        match a {
            Address::Location(l) => (self.program.address_of(*l), DepMask::none()),
            Address::Byte(l, b) => (self.program.address_of(*l) + b, DepMask::none()),
            Address::Reg(r, off) => {
                let (v, d) = val(st, &Value::Reg(*r));
                (v + off, d)
            }
        }
    }

    /// The word holding an access of `bytes` (1 or 2) at an address operand, and the access's
    /// first byte in that word (little-endian: byte k is bits 8k..8k+8 of the word's pattern).
    /// The access's range is its own bytes, so it overlaps a 4-byte access of the word only partly.
    pub(super) fn sub_word_access(
        &self,
        st: &State,
        addr: &Address,
        bytes: i64,
        space: AccessSpace,
        line: usize,
    ) -> Result<(Access, i64), ExploreError> {
        let (value, deps) = self.address_value(st, addr);
        let byte = value.rem_euclid(4);
        let detail = match self.program.decode_address(value) {
            _ if value.rem_euclid(bytes) != 0 => Some(format!("the address of a {bytes}-byte access is not {bytes}-byte aligned")),
            Some((var, _)) if self.program.variables[var].kind == VariableKind::Mbarrier => {
                Some(format!("a {bytes}-byte access of the mbarrier object `{}`", self.program.variables[var].name))
            }
            Some((var, off)) => {
                if let Some(loc) = self.program.location_at(value - byte) {
                    self.note_kept(loc);
                    return Ok((Access { loc, range: (off, off + bytes), deps, ub: self.space_violation(var, space) }, byte));
                }
                None
            }
            None => None,
        };
        let mut e = bad_address(self.program, self.thread, line, value);
        if let (ExploreError::BadAddress { detail: d, .. }, Some(detail)) = (&mut e, detail) {
            *d = detail;
        }
        Err(e)
    }

    /// The word at absolute address `addr` of an access starting at `base` of `size` bytes.
    pub(super) fn access_at(
        &self,
        addr: i64,
        base: i64,
        size: i64,
        deps: DepMask,
        space: AccessSpace,
        line: usize,
    ) -> Result<Access, ExploreError> {
        let bad = || bad_address(self.program, self.thread, line, addr);
        let (var, _) = self.program.decode_address(addr).ok_or_else(bad)?;
        let loc = self.program.location_at(addr).ok_or_else(bad)?;
        let (_, off) = self.program.decode_address(base).ok_or_else(bad)?;
        let acc = Access { loc, range: (off, off + size), deps, ub: self.space_violation(var, space) };
        self.note(&acc, space);
        Ok(acc)
    }

    /// Tell the survey (if one is taken) of an access of the current instruction.
    pub(super) fn note(&self, acc: &Access, space: AccessSpace) {
        if let Some(survey) = self.survey {
            let op = &self.thread.code[survey.pc()].op;
            survey.note(self.program, op, acc.loc, acc.range, acc.ub.is_some(), space);
        }
    }

    /// Tell the survey (if one is taken) that a copy moves word `src`'s value into word `dst`.
    pub(super) fn note_flow(&self, src: usize, dst: usize) {
        if let Some(survey) = self.survey {
            survey.flow(src, dst);
        }
    }

    /// Tell the survey (if one is taken) of a word whose value matters.
    pub(super) fn note_kept(&self, loc: usize) {
        if let Some(survey) = self.survey {
            survey.keep(loc);
        }
    }
}
